#!/usr/bin/python3
"""Every repository path that docs/*.md, README.md and the sources' comments name exists
(issue 20: docs and comments that say what is).

    docs_paths.py REPO_ROOT

A path is a word starting with one of the repository's top-level folders (compiler/,
runtime/, tools/, tests/, testdata/, bench/, docs/, grammar/, fuzz/, python/, cmake/, .ci/)
followed by more path characters; a trailing `/`, `.`, `,`, `:` or `)` is not part of it.
Globs (`*`), placeholders (`<name>`, `NAME`, `...`) and build outputs are skipped.  Prints
each missing path with the file and line that names it, then `N passed, M failed`.
"""
import os
import re
import sys

TOP = ("compiler", "runtime", "tools", "tests", "testdata", "bench", "docs", "grammar", "fuzz", "python", "cmake",
       ".ci")
PATH = re.compile(r"(?<![\w./-])((?:%s)/[\w./+-]*)" % "|".join(re.escape(t) for t in TOP))


def main():
    root = sys.argv[1]
    files = [os.path.join(root, "README.md")] + sorted(
        os.path.join(root, "docs", f) for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
    for top in ("compiler", "runtime", "tools", "grammar", "tests"):  # and the sources' comments
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            files += sorted(os.path.join(dirpath, n) for n in names if n.endswith((".c", ".h", ".cmake", ".def")))
    checked = missing = 0
    for f in files:
        with open(f, encoding="utf-8") as fh:
            source = not f.endswith(".md")
            for n, line in enumerate(fh, 1):
                if source and not re.match(r"\s*(/\*|\*|//|#)", line):
                    continue  # in sources, comment lines only
                for m in PATH.finditer(line):
                    p = m.group(1).rstrip("./,:;)")
                    rest = line[m.end():m.end() + 1]
                    if not p or "*" in p or "<" in p or "..." in p or rest in ("*", "<", "{") or re.search(r"[A-Z]{3,}", p):
                        continue
                    checked += 1
                    if not os.path.exists(os.path.join(root, p)):
                        missing += 1
                        print("%s:%d: %s does not exist" % (os.path.relpath(f, root), n, p))
    print("%d passed, %d failed" % (checked - missing, missing))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
