#!/usr/bin/python3
"""compiler/codegen calls downward only (issue 20): no cycle in its file-level call graph.

    codegen_layers.py SOURCE_DIR

Reads every compiler/codegen/*.c but the tests, finds which file defines each cg_* function
and which cg_* functions each file calls, and fails naming the files of every cycle of
"file A calls a function defined in file B" (Tarjan's strongly connected components).
docs/architecture.md "Code generation's layers" draws the layers this keeps.
"""
import glob
import os
import re
import sys

DEFINITION = re.compile(r"^(?:[A-Za-z_][\w \*]*?)\b(cg_\w+)\s*\([^;{]*\)\s*\{", re.M)
CALL = re.compile(r"\b(cg_\w+)\s*\(")


def call_graph(src):
    files = sorted(f for f in glob.glob(os.path.join(src, "compiler", "codegen", "*.c")) if not f.endswith("_test.c"))
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
    edges = call_graph(src)
    found = cycles(edges)
    for comp in found:
        print("cycle: " + " <-> ".join(os.path.basename(f) for f in comp))
    print("%d files, %d call edges, %d cycles" % (len(edges), sum(len(e) for e in edges.values()), len(found)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
