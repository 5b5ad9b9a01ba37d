#!/usr/bin/python3
"""Checks that compiled models give the same bits on every target CPU (issue 16).

    cross_cpu.py --hlorun PATH [--cpus native,generic,x86-64-v3[,x86-64-v4]] [--jobs N] DIR...
    cross_cpu.py --hloc PATH --compile-only --cpus sapphirerapids,znver4,x86-64-v2 DIR...

Each DIR is a case folder (model.hlo, in<k>.npy) or a folder of case folders: the golden
cases (testdata/golden) and the conformance suite (../shared/conformance/cases) have that
layout.  Run mode: every case runs once per CPU (hlorun --target-cpu=CPU, each CPU with its
own compile cache) and every output must equal the first CPU's bit for bit, except in a model
that uses one of the vector-math functions (CONTRACTING below: their polynomials use
llvm.fmuladd, one FMA instruction where the CPU has FMA and a multiply and an add where it has
not): those outputs may differ by DEFAULT_ULPS units in the last place, or by the ulps that
tests/cross_cpu_tolerance.txt gives the case (chains that amplify the difference;
docs/conformance.md "Results across CPUs").  A case whose first CPU fails to run
is reported and counted as failed: the ordinary golden and conformance tests say why.
Compile-only mode: `hloc --emit=obj --target-cpu=CPU` of every case for CPUs LLVM can target
without running them, which catches instruction-selection crashes early.
Prints one line per failing case and `N passed, M failed`; exit 1 when anything failed.
"""
import argparse
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CONTRACTING = ("exponential", "exponential-minus-one", "log", "log-plus-one", "sine", "cosine", "tanh", "erf",
               "logistic", "power")
DEFAULT_ULPS = 4
# The runtime's kernels pick their instruction set from the running CPU, not from --target-cpu:
# HLO_RT_ISA caps them at what the named CPU has, so that a run "at x86-64-v3" is the run an
# AVX2 host makes, runtime included.  hloc's own GEMM forms give the same bits on every CPU;
# the libraries it calls do not (LIBRARY_ORDERED).  generic is not capped here: without FMA a
# product rounds each multiply and each add, so its dots differ by design; golden_at.generic
# checks that run against the expected values instead (tests/golden.cmake).
# x86-64-v4 with the runtime held to AVX-512 is the machine AMD's Zen 4 and 5 are to hloc: AVX-512
# without AMX and without AVX512-FP16; the default run adds it where this host can run its code.
RUNTIME_ISA = {"x86-64-v3": "avx2", "x86-64-v4": "avx512"}
AVX512_FLAGS = {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}
# Models whose results come partly from a library that orders its sums by the CPU's
# instruction set: oneDNN's convolutions (its AVX2 and AVX-512 kernels block the channels
# differently) and bf16 dots (AMX's tiles, or f32 FMAs without AMX).  Between a CPU and a
# capped one their float results may differ by LIBRARY_REL of the output's largest magnitude,
# bf16 results by one unit in the last place (docs/conformance.md, "Results across CPUs").
LIBRARY_REL = 2.0 ** -16


def library_ordered(d):
    with open(os.path.join(d, "model.hlo"), errors="replace") as f:
        text = f.read()
    return "convolution(" in text or ("dot(" in text and "bf16" in text)


def library_close(a, b):
    """Whether two results of a library-ordered model agree as LIBRARY_REL says."""
    if a.dtype == np.uint16:  # bf16 bits
        return int(np.abs(a.astype(np.int64) - b.astype(np.int64)).max(initial=0)) <= 1
    if a.dtype.kind not in "fc":
        return False
    both_nan = np.isnan(a) & np.isnan(b)
    diff = np.where(both_nan, 0, np.abs(a.astype(np.complex128) - b.astype(np.complex128)))
    scale = max(float(np.abs(a[~np.isnan(a)]).max(initial=0)), np.finfo(a.dtype).tiny)
    return float(diff.max(initial=0)) <= LIBRARY_REL * scale


def contracting(d):
    """Whether the case's model uses a vector-math function (results may differ by FMA)."""
    with open(os.path.join(d, "model.hlo"), errors="replace") as f:
        text = f.read()
    return re.search(r"\b(%s)\(" % "|".join(re.escape(op) for op in CONTRACTING), text) is not None


def case_dirs(roots):
    found = []
    for r in roots:
        if os.path.exists(os.path.join(r, "model.hlo")):
            found.append(r)
        else:
            found += sorted(os.path.dirname(m) for m in glob.glob(os.path.join(r, "*", "model.hlo")))
    return found


def numbered(d, prefix):
    paths = glob.glob(os.path.join(d, prefix + "*.npy"))
    return sorted(paths, key=lambda p: int(os.path.basename(p)[len(prefix):-4]))


def load_tolerances():
    """case name -> allowed ulps, from tests/cross_cpu_tolerance.txt (`NAME ULPS  # why`)."""
    tol = {}
    with open(os.path.join(HERE, "cross_cpu_tolerance.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line:
                tol[line[0]] = int(line[1])
    return tol


def ulp_distance(a, b):
    """Largest distance in units in the last place between two float arrays of one dtype."""
    if a.dtype.kind == "c":
        return max(ulp_distance(a.real.copy(), b.real.copy()), ulp_distance(a.imag.copy(), b.imag.copy()))
    if a.dtype.kind != "f" or a.size == 0:
        return None
    it = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ia, ib = a.view(it).astype(np.int64), b.view(it).astype(np.int64)
    # map the sign-magnitude order onto a line so that adjacent floats are 1 apart
    bias = np.int64(1) << (8 * a.dtype.itemsize - 1)
    ia = np.where(ia < 0, -(ia + bias), ia)
    ib = np.where(ib < 0, -(ib + bias), ib)
    both_nan = np.isnan(a) & np.isnan(b)
    d = np.where(both_nan, 0, np.abs(ia - ib))
    return int(d.max())


def default_cpus():
    """native, generic and x86-64-v3, and x86-64-v4 where this CPU runs AVX-512 code."""
    cpus = ["native", "generic", "x86-64-v3"]
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((set(l.split(":", 1)[1].split()) for l in f if l.startswith("flags")), set())
    except OSError:
        flags = set()
    return cpus + (["x86-64-v4"] if AVX512_FLAGS <= flags else [])


def run_outputs(hlorun, d, cpu, cache, tmp):
    ins = numbered(d, "in")
    n_out = len(numbered(d, "expected"))
    outs = [os.path.join(tmp, "%s.out%d.npy" % (cpu, i)) for i in range(n_out)]
    cmd = [hlorun, os.path.join(d, "model.hlo"), "--target-cpu=" + cpu]
    for p in ins:
        cmd += ["--input", p]
    for p in outs:
        cmd += ["--output", p]
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(cache, cpu))
    if cpu in RUNTIME_ISA:
        env["HLO_RT_ISA"] = RUNTIME_ISA[cpu]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300, env=env)
    except subprocess.TimeoutExpired:
        return None, "timeout at %s" % cpu
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, "exit %d at %s: %s" % (proc.returncode, cpu, err[0] if err else "")
    return [np.load(o) for o in outs], None


def check_run(hlorun, d, cpus, cache, tol):
    name = os.path.basename(d.rstrip("/"))
    with tempfile.TemporaryDirectory(prefix="crosscpu-") as tmp:
        ref, why = run_outputs(hlorun, d, cpus[0], cache, tmp)
        if why:
            return why
        for cpu in cpus[1:]:
            got, why = run_outputs(hlorun, d, cpu, cache, tmp)
            if why:
                return why
            for i, (a, b) in enumerate(zip(ref, got)):
                if a.shape != b.shape or a.dtype != b.dtype:
                    return "output %d: %s%s at %s, %s%s at %s" % (i, a.dtype, a.shape, cpus[0], b.dtype, b.shape, cpu)
                if a.tobytes() == b.tobytes():
                    continue
                ulps = ulp_distance(a, b)
                allowed = tol.get(name, DEFAULT_ULPS) if contracting(d) else None
                if allowed is not None and ulps is not None and ulps <= allowed:
                    continue
                if cpu in RUNTIME_ISA and library_ordered(d) and library_close(a, b):
                    continue
                flat_a, flat_b = a.reshape(-1), b.reshape(-1)
                diff = [j for j in range(a.size) if flat_a[j:j + 1].tobytes() != flat_b[j:j + 1].tobytes()]
                k = diff[0] if diff else 0
                return "output %d differs at flat index %d: %r at %s, %r at %s (%s ulps%s)" % (
                    i, k, flat_a[k], cpus[0], flat_b[k], cpu, ulps,
                    "" if allowed is None else ", %d allowed" % allowed)
    return None


def check_compile(hloc, d, cpus, tmp_root):
    with tempfile.TemporaryDirectory(prefix="crosscpu-", dir=tmp_root) as tmp:
        for cpu in cpus:
            cmd = [hloc, os.path.join(d, "model.hlo"), "--emit=obj", "--target-cpu=" + cpu,
                   "-o", os.path.join(tmp, "model.o")]
            try:
                proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
            except subprocess.TimeoutExpired:
                return "compile timeout at %s" % cpu
            if proc.returncode != 0:
                err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
                return "hloc exit %d at %s: %s" % (proc.returncode, cpu, err[0] if err else "")
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hlorun")
    ap.add_argument("--hloc")
    ap.add_argument("--compile-only", action="store_true")
    ap.add_argument("--cpus", help="comma-separated; default native,generic,x86-64-v3 and, on an "
                    "AVX-512 host, x86-64-v4")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--filter", default=None, help="only cases whose name contains SUBSTR")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    cpus = a.cpus.split(",") if a.cpus else default_cpus()
    cases = case_dirs(a.dirs)
    if a.filter:
        cases = [c for c in cases if a.filter in os.path.basename(c)]
    if not cases:
        print("cross_cpu: no cases under %s" % " ".join(a.dirs))
        return 2
    if a.compile_only and not a.hloc or not a.compile_only and not a.hlorun:
        ap.error("--compile-only needs --hloc; a run needs --hlorun")
    tol = load_tolerances()
    cache = tempfile.mkdtemp(prefix="crosscpu-cache-")
    failed = []
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            if a.compile_only:
                futs = {ex.submit(check_compile, a.hloc, d, cpus, cache): d for d in cases}
            else:
                futs = {ex.submit(check_run, a.hlorun, d, cpus, cache, tol): d for d in cases}
            for fut in concurrent.futures.as_completed(futs):
                why = fut.result()
                if why:
                    name = os.path.basename(futs[fut].rstrip("/"))
                    failed.append(name)
                    print("FAIL %s: %s" % (name, why), flush=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print("cross-cpu (%s, %s): %d cases" % ("compile only" if a.compile_only else "run", ",".join(cpus), len(cases)))
    print("%d passed, %d failed" % (len(cases) - len(failed), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
