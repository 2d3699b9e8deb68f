#!/usr/bin/python3
"""Write the configuration of the fat-tree workload the simulator is
compared on (docs/performance.md): a k-ary fat-tree of 100 Gb/s links with
1 us of propagation delay, where host i writes SIZE bytes to host
i + H/2 (H hosts), all starting at once, with payload: none.

usage: fattree_shift.py K SIZE [ROUTING]     (ROUTING: dmodk, the default, or ecmp)
With dmodk every directed link carries one flow (the shift permutation on
destination-mod-k routes), so nothing queues and every message completes
in its ideal time."""
import sys


def config(k, size, routing="dmodk"):
    hosts = k * k * k // 4
    lines = [
        "# written by bench/fattree_shift.py %d %s %s" % (k, size, routing),
        "seed: 1",
        "payload: none",
        "topology:",
        "  routing: %s" % routing,
        "  generate:",
        "    kind: fat-tree",
        "    k: %d" % k,
        "    host_link: {rate: 100Gbps, delay: 1us}",
        "    fabric_link: {rate: 100Gbps, delay: 1us}",
        "workload:",
        "  messages:",
    ]
    for i in range(hosts):
        lines.append("    - {src: h%d, dst: h%d, size: %s}" % (i, (i + hosts // 2) % hosts, size))
    return "\n".join(lines) + "\n"


def main(argv):
    if len(argv) not in (3, 4) or argv[3:] not in ([], ["dmodk"], ["ecmp"]):
        sys.exit(__doc__.split("\n\n")[1])
    sys.stdout.write(config(int(argv[1]), argv[2], *argv[3:]))


if __name__ == "__main__":
    main(sys.argv)
