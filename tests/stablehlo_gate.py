#!/usr/bin/python3
"""Runs every StableHLO test file of ../shared/stablehlo/testdata through hlorun, as
StableHLO's interpreter runs them (each file's check ops decide), and fails when fewer pass
than the committed minimum (tests/stablehlo_min.txt, a count that only goes up) or when any
file crashes hlorun (a signal, or an exit status other than 0, 1 and 2).

    stablehlo_gate.py HLORUN SHARED_DIR [BUILD_DIR] [-jN]

Prints the failures grouped by their first error line and `N passed, M failed`.  The compile
cache (XDG_CACHE_HOME) is a fresh folder inside BUILD_DIR, removed afterwards.
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def run_one(hlorun, path, env):
    try:
        p = subprocess.run([hlorun, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=300)
    except subprocess.TimeoutExpired:
        return path, -1000, "timed out after 300 s"
    err = p.stderr.decode(errors="replace").splitlines()
    first = next((l for l in err if "error:" in l or "failed" in l), err[0] if err else "")
    return path, p.returncode, first


def cause(msg):
    msg = re.sub(r"^\S+:\d+:\d+: ", "", msg)
    msg = re.sub(r"^hlorun: \S+: ", "", msg)
    return re.sub(r"-?\d[\d.e+-]*", "N", msg)[:110]


def main():
    jobs = 2
    args = []
    for a in sys.argv[1:]:
        if a.startswith("-j"):
            jobs = int(a[2:])
        else:
            args.append(a)
    if len(args) not in (2, 3):
        print(__doc__)
        return 2
    hlorun, shared = args[0], args[1]
    build = args[2] if len(args) == 3 else None
    here = os.path.dirname(os.path.abspath(__file__))
    minimum = int(open(os.path.join(here, "stablehlo_min.txt")).read().split()[0])
    folder = os.path.join(shared, "stablehlo", "testdata")
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".mlir"))
    cache = tempfile.mkdtemp(prefix="stablehlo-cache-", dir=build)
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    t0 = time.time()
    results = []
    try:
        with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
            results = list(ex.map(lambda f: run_one(hlorun, f, env), files))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    passed = [r for r in results if r[1] == 0]
    crashed = [r for r in results if r[1] not in (0, 1, 2)]
    failed = [r for r in results if r[1] != 0]
    groups = {}
    for path, rc, msg in failed:
        groups.setdefault(cause(msg), []).append(os.path.basename(path))
    for c, names in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print("%4d  %s\n      %s" % (len(names), c, " ".join(names[:6]) + (" ..." if len(names) > 6 else "")))
    for path, rc, msg in crashed:
        print("CRASH (exit %d): %s: %s" % (rc, os.path.basename(path), msg))
    print("%d passed, %d failed (%d crashed) of %d in %.0f s; minimum %d" %
          (len(passed), len(failed), len(crashed), len(files), time.time() - t0, minimum))
    return 0 if len(passed) >= minimum and not crashed else 1


if __name__ == "__main__":
    sys.exit(main())
