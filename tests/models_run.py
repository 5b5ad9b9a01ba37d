#!/usr/bin/python3
"""Compiles and runs a real model (../shared/models/*.hlo) with random inputs.

    models_run.py --hlorun PATH [--hlorun-arg=-O0] MODEL.hlo

Passes when hlorun exits 0 and every floating-point output is finite, or when hlorun stops
with a clear error naming an op that a later milestone adds (exit 1 or 2 with a message
"... opcode 'X' ..."); fails on a crash, a timeout, non-finite outputs, or any other error.

--overflow-ok is for training steps whose gradients, with random weights uniform in [-1, 1)
instead of a scaled initialization, grow layer after layer until they overflow: non-finite
outputs then pass only if the finite outputs show that growth (some magnitude of at least
1e30); NaNs among small values still fail.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np


def result_leaf_types(text):
    """Element types of the ENTRY result leaves, from entry_computation_layout's '->' part."""
    m = re.search(r"entry_computation_layout=\{\(.*?\)->(.*?)\}(,|\s*$)", text, re.M)
    return re.findall(r"([a-z0-9]+)\[", m.group(1)) if m else []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hlorun", required=True)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--hlorun-arg", action="append", default=[], help="passed on to hlorun (e.g. -O0)")
    ap.add_argument("--overflow-ok", action="store_true", help="see the module comment")
    ap.add_argument("model")
    args = ap.parse_args()
    name = os.path.basename(args.model)
    with tempfile.TemporaryDirectory(prefix="hlomodel-") as tmp:
        out_dir = os.path.join(tmp, "out")
        os.mkdir(out_dir)
        cmd = [args.hlorun, args.model, "--random-inputs=1", "--output-dir", out_dir] + args.hlorun_arg
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print("FAIL %s: timeout after %gs" % (name, args.timeout))
            return 1
        err = proc.stderr.decode("utf-8", "replace").strip()
        if proc.returncode < 0:
            print("FAIL %s: killed by signal %d" % (name, -proc.returncode))
            return 1
        if proc.returncode != 0:
            first = next((ln for ln in err.splitlines() if "error" in ln), err.splitlines()[-1] if err else "")
            if re.search(r"opcode '[a-z0-9-]+' cannot be compiled yet", first):
                print("STOPPED %s (later milestone): %s" % (name, first))
                return 0
            print("FAIL %s: exit %d: %s" % (name, proc.returncode, first))
            return 1
        outs = sorted(glob.glob(os.path.join(out_dir, "*.npy")))
        if not outs:
            print("FAIL %s: no outputs written" % name)
            return 1
        leaf_types = result_leaf_types(open(args.model).read())
        outs.sort(key=lambda p: int(re.search(r"(\d+)\.npy$", p).group(1)))  # out2 before out10
        nonfinite, largest = [], 0.0
        for k, p in enumerate(outs):
            a = np.load(p)
            if a.dtype == np.uint16 and k < len(leaf_types) and leaf_types[k] == "bf16":
                a = (a.astype(np.uint32) << 16).view(np.float32)  # bf16 raw bits
            if a.dtype.kind not in "fc" or a.size == 0:
                continue
            finite = np.isfinite(a)
            if not np.all(finite):
                nonfinite.append(os.path.basename(p))
            if np.any(finite):
                largest = max(largest, float(np.max(np.abs(a[finite]))))
        if nonfinite and not (args.overflow_ok and largest >= 1e30):
            print("FAIL %s: %s has non-finite values (largest finite magnitude %g)" % (name, nonfinite[0], largest))
            return 1
        if nonfinite:
            print("OK %s: %d outputs; %d overflowed (from %s on) after finite values grew to %g" %
                  (name, len(outs), len(nonfinite), nonfinite[0], largest))
            return 0
        print("OK %s: %d outputs, all finite" % (name, len(outs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
