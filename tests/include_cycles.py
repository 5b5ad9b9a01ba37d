#!/usr/bin/python3
"""No include circles in compiler/, runtime/, grammar/ or tools/ (issue 20).

    include_cycles.py SOURCE_DIR

Reads every `#include "..."` line of the .c, .h and .def files under those folders, resolves
it against the folders the build puts on the include path (the source root, compiler/,
runtime/include/, and the including file's own folder), and fails naming the files of every
circle it finds (a header that, through the headers it includes, includes itself).
"""
import os
import re
import sys

ROOTS = ["compiler", "runtime", "grammar", "tools"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def files(src):
    for root in ROOTS:
        for d, _, names in os.walk(os.path.join(src, root)):
            for n in names:
                if n.endswith((".c", ".h", ".def")):
                    yield os.path.relpath(os.path.join(d, n), src)


def resolve(src, including, name):
    for base in (os.path.dirname(including), "", "compiler", "runtime/include", "runtime/src"):
        p = os.path.normpath(os.path.join(base, name))
        if os.path.exists(os.path.join(src, p)):
            return p
    return None


def main():
    src = sys.argv[1]
    graph = {}
    for f in files(src):
        text = open(os.path.join(src, f), errors="replace").read()
        graph[f] = [r for r in (resolve(src, f, n) for n in INCLUDE.findall(text)) if r]
    circles, state, stack = [], {}, []

    def visit(f):
        state[f] = 1
        stack.append(f)
        for g in graph.get(f, []):
            if state.get(g) == 1:
                circles.append(stack[stack.index(g):] + [g])
            elif g not in state:
                visit(g)
        stack.pop()
        state[f] = 2

    sys.setrecursionlimit(10000)
    for f in sorted(graph):
        if f not in state:
            visit(f)
    for c in circles:
        print("include circle: " + " -> ".join(c))
    print("%d files, %d includes, %d circles" % (len(graph), sum(len(v) for v in graph.values()), len(circles)))
    return 1 if circles else 0


if __name__ == "__main__":
    sys.exit(main())
