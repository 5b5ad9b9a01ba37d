#!/usr/bin/python3
"""bench/conv_compare.py -- the convolution workloads of bench/run.py (conv, conv_dw, conv_1x1)
timed interleaved, round after round, so that a busy machine's noise falls on every contender
alike: one or more hlorun builds (e.g. with and without oneDNN, -DHLOC_DNNL=OFF), oneDNN
(bench/c/conv_dnnl.c, when libdnnl-dev is installed) and im2col + OpenBLAS (3x3 only).
Prints per contender the median over rounds of each round's median, and the min..max spread.

usage: python3 bench/conv_compare.py [--rounds 5] [--reps 10] [--threads N]
                                     [--hlorun NAME=PATH ...] [--only conv,conv_dw]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import run as bench  # noqa: E402  (the workloads, their inputs and the C builder)


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def time_hlorun(exe, hlo, wdir, n_in, reps, threads):
    cmd = [exe, hlo, "--threads", str(threads), "--benchmark", str(reps)]
    for i in range(n_in):
        cmd += ["--input", os.path.join(wdir, "in%d.npy" % i)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    mo = re.search(r"benchmark:.*median_ms=([0-9.eE+-]+)", r.stdout + r.stderr)
    return float(mo.group(1)) if mo else None


def time_c(exe, wdir, reps, threads, dims):
    r = subprocess.run([exe, wdir, str(reps), str(threads)] + [str(d) for d in dims], capture_output=True, text=True)
    mo = re.search(r"^median_ms=([0-9.eE+-]+)", r.stdout, re.M)
    return float(mo.group(1)) if mo else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--hlorun", action="append", help="NAME=PATH (repeatable; default hloc=build/hlorun)")
    ap.add_argument("--only", default="conv,conv_dw,conv_1x1")
    args = ap.parse_args()
    runs = [h.split("=", 1) for h in (args.hlorun or ["hloc=" + os.path.join(ROOT, "build", "hlorun")])]
    bench.np = np
    scratch = tempfile.mkdtemp(prefix="hloc-conv-")
    notes = []
    builder = bench.Builder(scratch, notes)
    names = args.only.split(",")
    table = []
    for w in [w for w in bench.workloads(False) if w["name"] in names]:
        wdir = os.path.join(scratch, w["name"])
        os.makedirs(wdir)
        rng = np.random.default_rng(sum(map(ord, w["name"])) * 7919)
        inputs = [np.asarray(x) for x in w["make"](rng)]
        for i, x in enumerate(inputs):
            np.save(os.path.join(wdir, "in%d.npy" % i), x)
            x.tofile(os.path.join(wdir, "in%d.bin" % i))
        hlo = os.path.join(HERE, "workloads", w["hlo"])
        contenders = [(name, lambda exe=exe: time_hlorun(exe, hlo, wdir, len(inputs), args.reps, args.threads))
                      for name, exe in runs]
        if w["dnnl"] and bench.have_dnnl():
            exe = builder.build(w["dnnl"][0])
            if exe:
                contenders.append(("oneDNN", lambda exe=exe: time_c(exe, wdir, args.reps, args.threads,
                                                                     w["dnnl"][1])))
        if w["blas"] and bench.have_openblas():
            exe = builder.build(w["blas"][0], blas=True)
            if exe:
                contenders.append(("im2col+OpenBLAS", lambda exe=exe: time_c(exe, wdir, args.reps, args.threads,
                                                                              w["blas"][1])))
        times = {name: [] for name, _ in contenders}
        for _ in range(args.rounds):
            for name, fn in contenders:
                t = fn()
                if t is not None:
                    times[name].append(t)
        for name, ts in times.items():
            if ts:
                table.append((w["name"], name, median(ts), min(ts), max(ts), len(ts)))
        print(w["name"], "done", flush=True)
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    mo = re.search(r"Model name:\s*(.*)", lscpu)
    print("CPU: %s; %d threads; %d rounds of %d reps; load %s" % (
        mo.group(1).strip() if mo else "?", args.threads, args.rounds, args.reps, os.getloadavg()))
    print("| workload | contender | median ms | min..max ms | rounds |")
    print("|---|---|---:|---:|---:|")
    for row in table:
        print("| %s | %s | %.2f | %.2f..%.2f | %d |" % row)
    for n in notes:
        print("note:", n)


if __name__ == "__main__":
    main()
