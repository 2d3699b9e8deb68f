#!/bin/sh
# build.sh - build bench/ns3/fattree.cc against the installed ns-3 (Debian
# libns3-dev 3.37), for `make bench-vs-ns3`.
#   build.sh SOURCE OUTPUT
# Debian's ns-3 .pc files need two repairs: a malformed "-I/usr;" token in
# the cflags, and absolute paths to libraries (libgsl.so) that exist only
# with their -dev packages, which the ns-3 libraries do not need at link
# time (they name their own runtime dependencies). Its libraries are built
# with NS_LOG compiled in: NS3_LOG_ENABLE keeps class layouts in the
# headers (UdpClient) the same as theirs.
set -eu
modules="ns3-core ns3-network ns3-internet ns3-point-to-point ns3-applications ns3-traffic-control"
cflags=""
for t in $(pkg-config --cflags $modules); do
    case "$t" in *";"*) continue ;; esac
    cflags="$cflags $t"
done
libs=""
for t in $(pkg-config --libs $modules); do
    case "$t" in /*) [ -e "$t" ] || continue ;; esac
    libs="$libs $t"
done
${CXX:-g++} -O2 -std=c++17 -DNS3_LOG_ENABLE $cflags -o "$2" "$1" $libs
