#!/usr/bin/python3
"""Donated parameters (input_output_alias) are updated in place (issue 17).

    donate.py HLOC HLORUN WORK_DIR

testdata/models/donated_step.hlo donates w, v and u to its three results.  Checks, against
numpy's formulas: hlorun with and without --donate gives the same results (so a result written
over its donor never clobbers a value still to be read: nw is computed before w's last read,
nv reads its own donor); hlorun --donate -v says which results share their parameters' buffers
and counts no memory for them; the .npy input files are not modified (they are mapped
copy-on-write); and the buffer plan writes nu straight into u's buffer but gives nw a buffer of
its own (hloc --dump-dir's buffer-assignment.txt).
"""
import hashlib
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "testdata", "models", "donated_step.hlo")


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        print(" ".join(cmd), "\n", p.stdout, p.stderr)
        sys.exit(1)
    return p


def main():
    hloc, hlorun, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(5)
    w, v, g, u = (rng.standard_normal((64, 64), dtype=np.float32) for _ in range(4))
    names = []
    for n, a in zip("wvgu", (w, v, g, u)):
        names.append(os.path.join(work, n + ".npy"))
        np.save(names[-1], a)
    digest = [hashlib.sha256(open(n, "rb").read()).hexdigest() for n in names]
    so = os.path.join(work, "donated_step.so")
    run([hloc, MODEL, "-o", so, "--dump-dir", os.path.join(work, "dump")])
    plan = open(os.path.join(work, "dump", "buffer-assignment.txt")).read()
    c = (u.astype(np.float64) + g).astype(np.float32)
    want = [w - g, v + (w.astype(np.float64) @ c.astype(np.float64)).astype(np.float32),
            (g.astype(np.float64) @ g.astype(np.float64)).astype(np.float32)]
    outs = {}
    for mode in ("plain", "donate"):
        out = os.path.join(work, mode)
        cmd = [hlorun, so, "--output-dir", out, "-v"] + ["--input=" + n for n in names]
        if mode == "donate":
            cmd.insert(2, "--donate")
        p = run(cmd)
        outs[mode] = [np.load(os.path.join(out, "out%d.npy" % i)) for i in range(3)]
        for i, (got, exp) in enumerate(zip(outs[mode], want)):
            if not np.allclose(got, exp, rtol=1e-4, atol=1e-4):
                print("FAIL: %s result %d differs from numpy by %g" % (mode, i, np.abs(got - exp).max()))
                return 1
        if mode == "donate" and "results 0, 1, 2 are their donated parameters' buffers" not in p.stderr:
            print("FAIL: hlorun --donate -v does not say which results are donated:\n" + p.stderr)
            return 1
    for a, b in zip(outs["plain"], outs["donate"]):
        if not np.array_equal(a, b):
            print("FAIL: --donate changes the results")
            return 1
    if [hashlib.sha256(open(n, "rb").read()).hexdigest() for n in names] != digest:
        print("FAIL: an input file was modified")
        return 1
    print(plan)
    planned = [l.split(":")[1].strip() for l in plan.splitlines() if l.strip().startswith("plan:")]
    if any(p.startswith("%nu") for p in planned) or not any(p.startswith("%nw") for p in planned):
        print("FAIL: the plan should write nu into u's buffer directly and give nw a buffer")
        return 1
    print("ok: results equal with and without --donate, inputs untouched")
    return 0


if __name__ == "__main__":
    sys.exit(main())
