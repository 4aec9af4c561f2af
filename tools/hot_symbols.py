#!/usr/bin/env python3
"""Writes src/cli/hot_symbols.txt: the functions of `ukai` that `ukai booksim` runs.

The `ukai` executable is linked (with lld, src/cli/CMakeLists.txt) with these functions
first, so that the code a run touches sits on few pages: the kernel maps a file's pages
64 KiB at a time around each one touched, so code spread over the whole text segment made
most of it resident (docs/booksim.md, "Where ukai's memory goes"). A name that no longer
exists is ignored by the linker; a function missing from the list only costs memory. Run it
again when the simulator's code changed much.

Usage (needs valgrind; from the repository root, after a build):
    python3 tools/hot_symbols.py [build/src/cli/ukai [CONFIG ...]]
Runs callgrind on `ukai booksim` over the CONFIGs (default: a few short ones of
bench/booksim/configs and bench/booksim/indirect) and writes the mangled names of every function of the executable
that ran, the most executed first.
"""
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = ["configs/mesh4_bitcomp_r20.cfg", "configs/mesh8_min_adapt_r10.cfg",
           "configs/mesh8_valiant_r10.cfg", "configs/mesh8_planar_adapt_r20.cfg",
           "configs/mesh8_romm_r20.cfg", "configs/torus8_tornado_r10.cfg",
           "configs/mesh8_p4_zl.cfg", "configs/mesh8_transpose_r20.cfg",
           "indirect/cmesh4_uniform_r05.cfg", "indirect/dragonfly2_uniform_r01.cfg",
           "indirect/fattree4_uniform_r05.cfg", "indirect/flatfly4_uniform_r05.cfg"]


def executed(ukai, cfg, out):
    """Instructions per function of `ukai` in one run (callgrind, mangled names)."""
    with tempfile.NamedTemporaryFile(suffix=".cg") as f:
        subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no",
                        "--callgrind-out-file=" + f.name, ukai, "booksim", cfg],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        objects, names, current_object, current_fn = {}, {}, None, None
        after_call = False  # the line after calls= is the callee's inclusive cost
        exe = os.path.realpath(ukai)
        for line in open(f.name, errors="replace"):
            m = re.match(r"^(c?)(ob|fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
            if m:
                call, kind, ident, name = m.groups()
                table = objects if kind == "ob" else names
                if name:
                    table[ident] = name
                if not call and kind == "ob":
                    current_object = objects.get(ident)
                elif not call and kind == "fn":
                    current_fn = names.get(ident) if current_object == exe else None
                continue
            if line.startswith("calls="):
                after_call = True
                continue
            # a cost line of the current function: "<line> <instructions>"
            if re.match(r"^([+-]?\d+|\*) \d+$", line):
                if current_fn and not after_call:
                    out[current_fn] += int(line.split()[1])
                after_call = False


def main():
    ukai = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/src/cli/ukai")
    configs = sys.argv[2:] or [os.path.join(ROOT, "bench/booksim", c) for c in CONFIGS]
    cost = collections.Counter()
    for cfg in configs:
        executed(ukai, cfg, cost)
    names = [n.split("'")[0] for n, _ in cost.most_common()]  # 'N: a recursion cycle
    names = list(dict.fromkeys(n for n in names if n and " " not in n))
    path = os.path.join(ROOT, "src/cli/hot_symbols.txt")
    with open(path, "w") as f:
        f.write("".join(n + "\n" for n in names))
    print(f"wrote {len(names)} functions to {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
