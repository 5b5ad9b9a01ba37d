#!/usr/bin/python3
"""Runs numeric golden cases (testdata/golden/<case>/) against hlorun.

    golden.py --hlorun PATH [--target-cpu CPU] [--opt -ON] [--nontemporal-min-bytes N] [--calls N] [--jobs N]
              CASE_DIR [CASE_DIR...]

For each case: hlorun model.hlo --input in0.npy ... --output out0.npy ..., then compares every
output with expected<i>.npy: same shape and dtype, values exact for integers and pred, and for
floats within tol.json's atol + rtol*|expected| (exact when tol.json gives none); NaN matches
NaN.  bf16 arrays are uint16 bits ("bf16": true) and are compared as float32.
Prints one line per failing case and `N passed, M failed`; exit 1 when anything failed.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def as_float(a, bf16):
    if bf16 and a.dtype == np.uint16:
        return (a.astype(np.uint32) << 16).view(np.float32)
    return a


def compare(got, exp, tol):
    if got.shape != exp.shape:
        return "shape %s, expected %s" % (got.shape, exp.shape)
    if got.dtype != exp.dtype:
        return "dtype %s, expected %s" % (got.dtype, exp.dtype)
    bf16 = tol.get("bf16", False)
    g, e = as_float(got, bf16), as_float(exp, bf16)
    if g.dtype.kind in "biu":
        bad = g != e
    else:
        rtol, atol = tol.get("rtol", 0.0), tol.get("atol", 0.0)
        if tol.get("exact"):
            rtol = atol = 0.0
        parts = [(g.real, e.real), (g.imag, e.imag)] if g.dtype.kind == "c" else [(g, e)]
        bad = np.zeros(g.shape, dtype=bool)
        for gp, ep in parts:
            gp, ep = gp.astype(np.float64), ep.astype(np.float64)
            both_nan = np.isnan(gp) & np.isnan(ep)
            with np.errstate(invalid="ignore"):
                same_inf = np.isinf(ep) & (gp == ep)
                close = np.abs(gp - ep) <= atol + rtol * np.abs(ep)
            bad |= ~(both_nan | same_inf | close)
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        return "at %s got %r expected %r" % (idx, g[idx] if g.ndim else g, e[idx] if e.ndim else e)
    return None


def run_case(hlorun, d, target_cpu=None, opt=None, nontemporal=None, calls=1):
    ins = sorted(glob.glob(os.path.join(d, "in*.npy")), key=lambda p: int(os.path.basename(p)[2:-4]))
    exps = sorted(glob.glob(os.path.join(d, "expected*.npy")), key=lambda p: int(os.path.basename(p)[8:-4]))
    with open(os.path.join(d, "tol.json")) as f:
        tol = json.load(f)
    with tempfile.TemporaryDirectory(prefix="hlogold-") as tmp:
        outs = [os.path.join(tmp, "out%d.npy" % i) for i in range(len(exps))]
        cmd = [hlorun, os.path.join(d, "model.hlo")]
        if target_cpu:
            cmd.append("--target-cpu=" + target_cpu)
        if opt:
            cmd.append(opt)
        if nontemporal:
            cmd.append("--nontemporal-min-bytes=" + nontemporal)
        if calls > 1:  # the results written are the last call's
            cmd += ["--benchmark", str(calls - 1)]
        for p in ins:
            cmd += ["--input", p]
        for p in outs:
            cmd += ["--output", p]
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        except subprocess.TimeoutExpired:
            return "timeout"
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            return "exit %d: %s" % (proc.returncode, err[0] if err else "")
        for i, (o, e) in enumerate(zip(outs, exps)):
            if not os.path.exists(o):
                return "output %d not written" % i
            why = compare(np.load(o), np.load(e), tol)
            if why:
                return "output %d: %s" % (i, why)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hlorun", required=True)
    ap.add_argument("--target-cpu", help="compile for this CPU (hlorun --target-cpu)")
    ap.add_argument("--opt", choices=["-O0", "-O1", "-O2", "-O3"], help="optimization level (hlorun -ON)")
    ap.add_argument("--nontemporal-min-bytes", help="hlorun --nontemporal-min-bytes (1: every result that can be)")
    ap.add_argument("--calls", type=int, default=1,
                    help="call each model this many times in one process (hlorun --benchmark N-1) and compare "
                         "the last call's results: what a context keeps between calls")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("cases", nargs="+", help="case folders, or folders of them")
    args = ap.parse_args()
    cases = []
    for d in args.cases:
        if os.path.exists(os.path.join(d, "model.hlo")):
            cases.append(d)
        else:
            cases += sorted(os.path.dirname(m) for m in glob.glob(os.path.join(d, "*", "model.hlo")))
    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        results = list(ex.map(lambda d: run_case(args.hlorun, d, args.target_cpu, args.opt, args.nontemporal_min_bytes,
                                                    args.calls), cases))
    for d, why in zip(cases, results):
        if why:
            failed += 1
            print("FAIL %s: %s" % (os.path.basename(d.rstrip("/")), why))
        else:
            passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
