#!/usr/bin/python3
"""Stages call downward only (issue 20): no cycle in the file-level call graph of
compiler/codegen, compiler/driver and runtime/src (kernels, context, base together).

    call_layers.py SOURCE_DIR

For each of those folders: reads its .c files but the tests, finds which file defines each
external function (any definition not marked static) and which of them each file calls, and
fails naming the files of every cycle of "file A calls a function defined in file B"
(Tarjan's strongly connected components).  docs/architecture.md "Code generation's layers"
draws the layers this keeps in codegen; runtime/src/context/services.h draws the runtime's.
"""
import glob
import os
import re
import sys

DEFINITION = re.compile(r"^(?!static\b)(?:[A-Za-z_][\w \*]*?)\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*\{", re.M)
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
FOLDERS = ["compiler/codegen", "compiler/driver", "runtime/src"]


def call_graph(src, folder):
    files = sorted(f for f in glob.glob(os.path.join(src, folder, "**", "*.c"), recursive=True)
                   if not f.endswith("_test.c"))
    text = {f: open(f).read() for f in files}
    defined = {}
    for f, s in text.items():
        for m in DEFINITION.finditer(s):
            defined[m.group(1)] = f
    return {f: {defined[n] for n in set(CALL.findall(s)) if n in defined and defined[n] != f} for f, s in text.items()}


def cycles(edges):
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "."
    failed = 0
    for folder in FOLDERS:
        edges = call_graph(src, folder)
        found = cycles(edges)
        for comp in found:
            print("%s: cycle: %s" % (folder, " <-> ".join(os.path.relpath(f, os.path.join(src, folder)) for f in comp)))
        print("%s: %d files, %d call edges, %d cycles" % (folder, len(edges), sum(len(e) for e in edges.values()), len(found)))
        failed += len(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
