#!/usr/bin/python3
"""test_check_layers.py - the layering check fails on what it should: an
upward include, a cycle, a private header, an unknown folder, and passes
on a tree that keeps the rules. Each case is a small tree of its own."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check_layers.py")


def tree(files):
    top = tempfile.mkdtemp(prefix="layers_")
    os.makedirs(os.path.join(top, "codec"))
    with open(os.path.join(top, "Makefile.am"), "w") as f:
        f.write("include_HEADERS = codec/rdma_codec.h\n")
    for name in ("rdma_codec.h", "bytes.h"):
        open(os.path.join(top, "codec", name), "w").close()
    for path, text in files.items():
        full = os.path.join(top, "sim", path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    return top


def run(files):
    top = tree(files)
    try:
        p = subprocess.run([sys.executable, CHECK, top], capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(top)
    return p.returncode, p.stdout


CASES = [
    ("clean", {"engine/engine.h": "", "net/port.c": '#include "engine/engine.h"\n#include "rdma_codec.h"\n'},
     0, "no upward include, no cycle"),
    ("upward", {"net/net.h": "", "host/nic.h": "", "net/port.c": '#include "host/nic.h"\n'},
     1, "sim/net/port.c: includes host/nic.h, of layer host/ above net/"),
    ("cycle", {"net/a.h": '#include "host/b.h"\n', "host/b.h": '#include "net/a.h"\n'},
     1, "in a circle: host -> net -> host"),
    ("private", {"config/loader.h": "", "net/port.c": '#include "config/loader.h"\n'},
     1, "private to config/"),
    ("codec", {"net/port.c": '#include "bytes.h"\n'}, 1, "a private header of the codec"),
    ("unknown", {"misc/x.c": ""}, 1, "sim/misc/: not a known layer"),
    ("subfolder", {"host/nic.h": "", "net/net.h": "", "host/cc/dcqcn.c": '#include "host/nic.h"\n',
                   "net/port.c": '#include "host/cc/cc.h"\n'},
     1, "sim/net/port.c: includes host/cc/cc.h, of layer host/ above net/"),
]

failed = 0
for name, files, want_rc, want_text in CASES:
    rc, out = run(files)
    if rc != want_rc or want_text not in out:
        failed += 1
        print(f"FAIL {name}: exit {rc} (want {want_rc}), output lacks {want_text!r}:\n{out}")
    else:
        print(f"ok   {name}")
print(f"{len(CASES) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
