#!/usr/bin/python3
"""check_layers.py - the simulator's folders form layers, each including
only headers of its own layer or of layers below it (docs/architecture.md).

Reads every `#include "..."` under sim/, builds the folder graph, prints it,
and fails when a file includes a header of a layer above its own, when the
folders depend on each other in a circle, when a folder is not a known
layer, when a file includes a header private to another folder, or when a
simulator file includes a codec header that is not public (installed).

Usage: check_layers.py [TOP_SRCDIR]
"""
import os
import re
import sys

# Bottom to top. A folder may include headers of its own folder and of the
# folders before it in this list. "sim.h" at the top of sim/ is the public
# API: it declares the outputs that observe/ writes and the network that
# network/ builds and runs, and includes only the engine, so it counts as
# the layer "api" between the models and those two.
LAYERS = ["engine", "config", "net", "pcie", "fabric", "host", "api", "observe", "network"]
TOP_HEADER_LAYER = "api"

# Headers only their own folder may include: the loader's YAML side stays
# inside config/, whose plain-data headers (cfg*.h, wire.h) are what the
# run-time layers see.
PRIVATE = {"config/loader.h": "config"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def public_codec_headers(top):
    """The codec headers `make install` installs (include_HEADERS)."""
    text = open(os.path.join(top, "Makefile.am")).read()
    # the fragments Makefile.am includes add to the list too
    for inc in re.findall(r"^include\s+(\S+)$", text, re.M):
        text += "\n" + open(os.path.join(top, inc)).read()
    text = text.replace("\\\n", " ")
    names = set()
    for m in re.finditer(r"^include_HEADERS\s*\+?=(.*)$", text, re.M):
        names.update(os.path.basename(w) for w in m.group(1).split())
    return names


def layer_of_header(inc):
    if "/" in inc:
        return inc.split("/", 1)[0]
    if inc == "sim.h":
        return TOP_HEADER_LAYER
    return None  # not a simulator header


def find_cycles(graph):
    """Every elementary cycle's folders, found by depth-first search."""
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif not state.get(nxt):
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if not state.get(node):
            visit(node, [])
    return cycles


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TOP_SRCDIR", ".")
    simdir = os.path.join(top, "sim")
    codec_public = public_codec_headers(top)
    codec_all = {f for f in os.listdir(os.path.join(top, "codec")) if f.endswith(".h")}
    rank = {name: i for i, name in enumerate(LAYERS)}
    graph, errors, counts = {}, [], {}

    for folder in sorted(os.listdir(simdir)):
        path = os.path.join(simdir, folder)
        if not os.path.isdir(path) or folder.startswith("."):
            continue
        if folder not in rank:
            errors.append(f"sim/{folder}/: not a known layer (add it to LAYERS in {sys.argv[0]})")
            continue
        graph.setdefault(folder, set())
        # a layer's subfolders (host/cc/) belong to the layer
        sources = sorted(os.path.relpath(os.path.join(d, n), path)
                         for d, _, names in os.walk(path) for n in names if n.endswith((".c", ".h")))
        for name in sources:
            sub = os.path.dirname(name)
            counts.setdefault(folder, {})
            counts[folder][sub] = counts[folder].get(sub, 0) + 1
            text = open(os.path.join(path, name)).read()
            for inc in INCLUDE.findall(text):
                where = f"sim/{folder}/{name}"
                if inc in codec_all:
                    if inc not in codec_public:
                        errors.append(f"{where}: includes {inc}, a private header of the codec")
                    continue
                dep = layer_of_header(inc)
                if dep is None:
                    continue
                if inc in PRIVATE and PRIVATE[inc] != folder:
                    errors.append(f"{where}: includes {inc}, private to {PRIVATE[inc]}/")
                if dep not in rank:
                    errors.append(f"{where}: includes {inc} from unknown folder {dep}/")
                    continue
                if dep != folder:
                    graph[folder].add(dep)
                if rank[dep] > rank[folder]:
                    errors.append(f"{where}: includes {inc}, of layer {dep}/ above {folder}/")

    print("sim/ folder graph (a -> b: a includes headers of b), bottom layer first:")
    for folder in LAYERS:
        if folder in graph:
            deps = sorted(graph[folder], key=lambda d: rank.get(d, 99))
            n = counts.get(folder, {})
            files = f"{n.get('', 0):2} files" + "".join(f", {k}/ {v}" for k, v in sorted(n.items()) if k)
            print(f"  {folder:8} ({files}) -> {', '.join(deps) if deps else '-'}")
    for cycle in find_cycles(graph):
        errors.append("folders depend on each other in a circle: " + " -> ".join(cycle))
    for e in errors:
        print("error: " + e)
    if errors:
        print(f"{len(errors)} layering error(s)")
        return 1
    print("no upward include, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
