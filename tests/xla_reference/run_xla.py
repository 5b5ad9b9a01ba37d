#!/usr/bin/env python3
"""Runs HLO cases on XLA's own CPU backend (through JAX) and saves what XLA computes.

    run_xla.py OUT.npz CASE_DIR...

Each CASE_DIR holds model.hlo and in0.npy, in1.npy, ... (one per entry parameter, bf16 as
raw <u2 bits or as float32).  The module text goes through XLA's HLO parser, is converted to
StableHLO by XLA's own importer and compiled by the CPU client; the results are stored in
OUT.npz as CASE/out<i> (narrow floats as their raw bits), with OUT.json next to it naming each
result's element type and every case XLA refused, with its message.  Needs jax and
ml_dtypes; it is the reference side of tests/xla_reference/compare.py (see docs/testing.md).
"""
import glob
import json
import os
import re
import sys
import traceback

import numpy as np

NARROW = {"bf16": "bfloat16", "f8e4m3fn": "float8_e4m3fn", "f8e5m2": "float8_e5m2",
          "f8e4m3fnuz": "float8_e4m3fnuz", "f8e5m2fnuz": "float8_e5m2fnuz", "f8e4m3b11fnuz": "float8_e4m3b11fnuz"}
NUMPY = {"pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64, "u8": np.uint8,
         "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "f16": np.float16, "f32": np.float32,
         "f64": np.float64, "c64": np.complex64, "c128": np.complex128}


def param_types(text):
    """Element types of the entry parameters, from entry_computation_layout or the ENTRY signature."""
    m = re.search(r"entry_computation_layout=\{\((.*?)\)->", text)
    if not m:
        m = re.search(r"ENTRY\s+%?[\w.\-]+\s*\((.*?)\)\s*->", text)
    if not m:
        return []
    return re.findall(r"([a-z][a-z0-9]*)\[", re.sub(r"/\*.*?\*/", "", m.group(1)))


def to_param(a, et):
    import ml_dtypes
    if et in NARROW:
        dt = getattr(ml_dtypes, NARROW[et])
        if a.dtype.itemsize == np.dtype(dt).itemsize and a.dtype.kind in "uV":
            return a.view(dt)
        return a.astype(np.float32).astype(dt)
    return a.astype(NUMPY[et]) if et in NUMPY else a


def from_result(a):
    import ml_dtypes
    for et, name in NARROW.items():
        if a.dtype == np.dtype(getattr(ml_dtypes, name)):
            return a.view(np.uint8 if a.dtype.itemsize == 1 else np.uint16), et
    for et, t in NUMPY.items():
        if a.dtype == np.dtype(t):
            return a, et
    return a, str(a.dtype)


class XlaCpu:
    def __init__(self):
        import jax
        jax.config.update("jax_enable_x64", True)  # s64/u64/f64/c128 arguments stay as they are
        from jax._src.lib import xla_client as xc
        self.jax, self.xc = jax, xc
        self.ext = xc._xla
        try:  # where the HLO text parser lives moved between jaxlib versions
            import jaxlib._hlo as hlo
            self.parse = hlo.hlo_module_from_text
        except ImportError:
            self.parse = self.ext.hlo_module_from_text
        self.dev = jax.devices("cpu")[0]
        self.client = self.dev.client

    def compile(self, text):
        mod = self.parse(text)
        mlir = self.ext.mlir.hlo_to_stablehlo(mod.as_serialized_hlo_module_proto())
        opts = self.xc.CompileOptions()
        if hasattr(self.client, "compile_and_load"):
            return self.client.compile_and_load(mlir, self.xc.DeviceList((self.dev,)), opts)
        return self.client.compile(mlir, opts)

    def run(self, exe, args):
        arrays = [self.jax.device_put(a, self.dev) for a in args]
        if hasattr(exe, "execute_sharded"):
            res = exe.execute_sharded(arrays)
            outs = [o[0] for o in res.disassemble_into_single_device_arrays()]
        else:
            outs = exe.execute(arrays)
        return [np.asarray(o) for o in outs]


def main():
    out_path, dirs = sys.argv[1], sys.argv[2:]
    xla = XlaCpu()
    results, meta = {}, {"types": {}, "errors": {}}
    for d in dirs:
        name = os.path.basename(os.path.normpath(d))
        try:
            text = open(os.path.join(d, "model.hlo")).read()
            ets = param_types(text)
            ins = [np.load(p) for p in sorted(glob.glob(os.path.join(d, "in*.npy")),
                                              key=lambda p: int(re.sub(r"\D", "", os.path.basename(p))))]
            args = [to_param(a, ets[i] if i < len(ets) else "") for i, a in enumerate(ins)]
            outs = xla.run(xla.compile(text), args)
            meta["types"][name] = []
            for i, o in enumerate(outs):
                raw, et = from_result(o)
                results["%s/out%d" % (name, i)] = raw
                meta["types"][name].append(et)
        except Exception as e:  # a refused case is recorded, never fatal
            meta["errors"][name] = (str(e).strip().splitlines() or [repr(e)])[0][:400]
            if len(meta["errors"]) <= 3:
                traceback.print_exc()
    np.savez_compressed(out_path, **results)
    json.dump(meta, open(os.path.splitext(out_path)[0] + ".json", "w"), indent=1)
    print("xla: %d cases ran, %d refused" % (len(meta["types"]), len(meta["errors"])))


if __name__ == "__main__":
    main()
