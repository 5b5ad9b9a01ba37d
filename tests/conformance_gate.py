#!/usr/bin/python3
"""Runs ../shared/conformance/run.py against hlorun and fails when fewer cases pass than the
committed minimum (tests/conformance_min.txt).  The suite includes ops that later milestones
add, so it cannot be all-pass yet; the minimum only ever goes up.

    conformance_gate.py HLORUN SHARED_DIR
"""
import os
import re
import subprocess
import sys


def main():
    hlorun, shared = sys.argv[1], sys.argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    minimum = int(open(os.path.join(here, "conformance_min.txt")).read().split()[0])
    runner = os.path.join(shared, "conformance", "run.py")
    proc = subprocess.run(["/usr/bin/python3", runner, "--hlorun", hlorun, "--jobs", "2", "--timeout", "120"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.decode("utf-8", "replace")
    print(out)
    m = re.search(r"^(\d+) passed, (\d+) failed", out, re.M)
    if not m:
        print("conformance_gate: no summary line from run.py")
        return 1
    passed = int(m.group(1))
    print("conformance: %d passed (minimum %d)" % (passed, minimum))
    return 0 if passed >= minimum else 1


if __name__ == "__main__":
    sys.exit(main())
