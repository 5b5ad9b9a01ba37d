#!/usr/bin/python3
"""Runs ../shared/conformance/run.py against hlorun and fails when fewer cases pass than the
committed minimum (tests/conformance_min.txt): today every case (530); the suite may grow
with ops a later milestone adds, so the gate is a minimum that only ever goes up
(docs/conformance.md).

    conformance_gate.py HLORUN SHARED_DIR [BUILD_DIR] [-O0|-O1|-O2|-O3]

An optimization level runs every case compiled at that level (hlorun's default is -O2; the
suite must pass at -O0 and -O3 too).  The compile cache (XDG_CACHE_HOME) is a fresh folder inside BUILD_DIR (default: the system's
temporary folder), removed afterwards, so every case is compiled by this hlorun.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def main():
    args = [a for a in sys.argv[1:] if not re.fullmatch(r"-O[0-3]", a)]
    levels = [a for a in sys.argv[1:] if re.fullmatch(r"-O[0-3]", a)]
    if len(args) not in (2, 3) or len(levels) > 1:
        print(__doc__)
        return 2
    hlorun, shared = args[0], args[1]
    build = args[2] if len(args) == 3 else None
    here = os.path.dirname(os.path.abspath(__file__))
    minimum = int(open(os.path.join(here, "conformance_min.txt")).read().split()[0])
    runner = os.path.join(shared, "conformance", "run.py")
    cache = tempfile.mkdtemp(prefix="conformance-cache-", dir=build)
    if levels:  # run.py takes one program: a wrapper that adds the level
        wrapper = os.path.join(cache, "hlorun" + levels[0])
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\nexec "%s" %s "$@"\n' % (hlorun, levels[0]))
        os.chmod(wrapper, 0o755)
        hlorun = wrapper
    try:
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        proc = subprocess.run(["/usr/bin/python3", runner, "--hlorun", hlorun, "--jobs", "2", "--timeout", "120"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    out = proc.stdout.decode("utf-8", "replace")
    print(out)
    m = re.search(r"^(\d+) passed, (\d+) failed", out, re.M)
    if not m:
        print("conformance_gate: no summary line from run.py (exit status %d)" % proc.returncode)
        return 1
    passed = int(m.group(1))
    print("conformance: %d passed (minimum %d)" % (passed, minimum))
    return 0 if passed >= minimum else 1


if __name__ == "__main__":
    sys.exit(main())
