#!/usr/bin/python3
"""Compiles and runs a real model (../shared/models/*.hlo) with random inputs.

    models_run.py --hlorun PATH [--hlorun-arg=-O0] MODEL.hlo

Passes when hlorun exits 0 and every floating-point output is finite, or when hlorun stops
with a clear error naming an op that a later milestone adds (exit 1 or 2 with a message
"... opcode 'X' ..."); fails on a crash, a timeout, non-finite outputs, or any other error.

--scaled-inputs makes the inputs here instead (seed 1), as a training step expects them: every
float parameter of rank 2 or more uniform in +-sqrt(3 / fan-in) (fan-in: the product of all but
the first dimension), rank-1 floats (batch norm's scale, offset, running mean and variance) in
[0.5, 1.5), float scalars SCALAR (--scalar), integers in [0, 8).  With hlorun's inputs in
[-1, 1) instead, a deep network's activations or gradients can overflow f32 by design.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "xla_reference"))
from prepare_models import entry_params  # noqa: E402


def result_leaf_types(text):
    """Element types of the ENTRY result leaves, from entry_computation_layout's '->' part."""
    m = re.search(r"entry_computation_layout=\{\(.*?\)->(.*?)\}(,|\s*$)", text, re.M)
    return re.findall(r"([a-z0-9]+)\[", m.group(1)) if m else []


def write_scaled_inputs(text, scalar, tmp):
    """The --scaled-inputs inputs as .npy files in tmp; returns hlorun's --input arguments."""
    rng = np.random.default_rng(1)
    args = []
    for i, (et, shape) in enumerate(entry_params(text)):
        if et in ("f16", "f32", "f64"):
            if len(shape) >= 2:
                a = rng.uniform(-1, 1, shape) * np.sqrt(3.0 / max(1, int(np.prod(shape[1:]))))
            elif len(shape) == 1:
                a = rng.uniform(0.5, 1.5, shape)
            else:
                a = np.array(scalar)
            a = a.astype(et.replace("f", "float"))
        elif et == "pred":
            a = rng.integers(0, 2, shape).astype(np.bool_)
        elif re.fullmatch(r"[su](8|16|32|64)", et):
            a = rng.integers(0, 8, shape).astype(et.replace("s", "int").replace("u", "uint"))
        else:
            raise SystemExit("--scaled-inputs: parameter %d has element type %s, which it does not make" % (i, et))
        path = os.path.join(tmp, "in%d.npy" % i)
        np.save(path, a)
        args += ["--input", path]
    return args


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hlorun", required=True)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--hlorun-arg", action="append", default=[], help="passed on to hlorun (e.g. -O0)")
    ap.add_argument("--scaled-inputs", action="store_true", help="see the module comment")
    ap.add_argument("--scalar", type=float, default=1.0, help="float scalar inputs with --scaled-inputs")
    ap.add_argument("model")
    args = ap.parse_args()
    name = os.path.basename(args.model)
    with tempfile.TemporaryDirectory(prefix="hlomodel-") as tmp:
        out_dir = os.path.join(tmp, "out")
        os.mkdir(out_dir)
        if args.scaled_inputs:
            inputs = write_scaled_inputs(open(args.model).read(), args.scalar, tmp)
        else:
            inputs = ["--random-inputs=1"]
        cmd = [args.hlorun, args.model, "--output-dir", out_dir] + inputs + args.hlorun_arg
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
        for k, p in enumerate(outs):
            a = np.load(p)
            if a.dtype == np.uint16 and k < len(leaf_types) and leaf_types[k] == "bf16":
                a = (a.astype(np.uint32) << 16).view(np.float32)  # bf16 raw bits
            if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
                print("FAIL %s: %s has non-finite values" % (name, os.path.basename(p)))
                return 1
        print("OK %s: %d outputs, all finite" % (name, len(outs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
