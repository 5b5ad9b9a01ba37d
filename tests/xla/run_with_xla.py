#!/usr/bin/env python3
"""Runs HLO cases through XLA's own CPU backend (via jaxlib) and compares with expected*.npy.

Used on a machine with JAX installed (not in CI) to check that the golden expectations made
from numpy formulas agree with XLA:  python3 tests/xla/run_with_xla.py testdata/golden/*/
Prints one line per disagreement and a summary.
"""
import glob
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import golden  # noqa: E402

import jax  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402

jax.config.update("jax_enable_x64", True)
CPU = jax.devices("cpu")[0]
BACKEND = CPU.client


def compile_hlo(text):
    mod = xc._xla.hlo_module_from_text(text)
    comp = xc.XlaComputation(mod.as_serialized_hlo_module_proto())
    mlir = xc._xla.mlir.xla_computation_to_mlir_module(comp)
    opts = xc.CompileOptions()
    try:
        return BACKEND.compile_and_load(mlir, xc.DeviceList((CPU,)), opts)
    except AttributeError:
        return BACKEND.compile(mlir, opts)


def to_device(a, is_bf16):
    if is_bf16:
        import ml_dtypes
        a = a.view(ml_dtypes.bfloat16)
    return jax.device_put(a, CPU)


def main():
    bad = ok = err = 0
    for d in sys.argv[1:]:
        d = d.rstrip("/")
        text = open(os.path.join(d, "model.hlo")).read()
        ins = sorted(glob.glob(os.path.join(d, "in*.npy")), key=lambda p: int(os.path.basename(p)[2:-4]))
        exps = sorted(glob.glob(os.path.join(d, "expected*.npy")), key=lambda p: int(os.path.basename(p)[8:-4]))
        tol = json.load(open(os.path.join(d, "tol.json")))
        try:
            exe = compile_hlo(text)
            args = []
            for p in ins:
                a = np.load(p)
                isb = a.dtype == np.uint16 and "bf16" in text.split("parameter(%d)" % len(args))[0].splitlines()[-1]
                args.append(to_device(a, isb))
            outs = exe.execute(args)
            outs = [np.asarray(o) for o in outs]
        except Exception as e:  # noqa: BLE001
            err += 1
            print("ERROR %s: %s" % (os.path.basename(d), str(e).splitlines()[0][:200]))
            continue
        msgs = []
        for i, (o, e) in enumerate(zip(outs, exps)):
            exp = np.load(e)
            if o.dtype.name == "bfloat16":
                o = o.view(np.uint16)
            why = golden.compare(o, exp, tol)
            if why:
                msgs.append("output %d: %s" % (i, why))
        if msgs:
            bad += 1
            print("DIFF %s: %s" % (os.path.basename(d), "; ".join(msgs)))
        else:
            ok += 1
    print("xla agrees: %d, differs: %d, errors: %d" % (ok, bad, err))


if __name__ == "__main__":
    main()
