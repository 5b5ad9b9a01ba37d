#!/usr/bin/python3
"""Makes XLA-comparison cases of real models: DEST/NAME/model.hlo plus random inputs.

    prepare_models.py DEST MODEL.hlo...

Inputs are deterministic (seed 1): floats uniform in [-1, 1) (bf16 written as raw <u2 bits of
an exactly representable value, so both sides read the same number), integers in [0, 8),
pred 0/1.  Models with tuple parameters or elided constants are skipped with a note.
"""
import os
import re
import shutil
import sys

import numpy as np

INTS = {"s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
        "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}


def entry_params(text):
    """(element type, dims) per entry parameter, from entry_computation_layout or else from
    the ENTRY computation's parameter instructions; None for tuple parameters."""
    m = re.search(r"entry_computation_layout=\{\((.*?)\)->", text)
    if m:
        if "(" in m.group(1):
            return None
        found = re.findall(r"([a-z][a-z0-9]*)\[([0-9,]*)\]", m.group(1))
    else:
        entry = text[text.find("ENTRY"):]
        entry = entry[:entry.find("\n}")]
        numbered = re.findall(r"= ([a-z][a-z0-9]*)\[([0-9,]*)\]\S* parameter\((\d+)\)", entry)
        found = [(et, dims) for et, dims, _ in sorted(numbered, key=lambda t: int(t[2]))]
    return [(et, tuple(int(d) for d in dims.split(",") if d)) for et, dims in found]


def make(et, shape, rng):
    if et == "pred":
        return rng.integers(0, 2, shape).astype(np.bool_)
    if et in INTS:
        return rng.integers(0, 8, shape).astype(INTS[et])
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    if et == "bf16":
        return (x.view(np.uint32) >> 16).astype(np.uint16)
    return x.astype({"f16": np.float16, "f32": np.float32, "f64": np.float64}[et])


def main():
    dest, models = sys.argv[1], sys.argv[2:]
    rng = np.random.default_rng(1)
    for path in models:
        name = os.path.basename(path)[:-len(".hlo")]
        text = open(path).read()
        params = entry_params(text)
        if params is None or "constant({...})" in text:
            print("skip %s (tuple parameters, elided constants or no entry layout)" % name)
            continue
        d = os.path.join(dest, name)
        os.makedirs(d, exist_ok=True)
        shutil.copy(path, os.path.join(d, "model.hlo"))
        for i, (et, shape) in enumerate(params):
            np.save(os.path.join(d, "in%d.npy" % i), make(et, shape, rng))
        print("case %s: %d inputs" % (name, len(params)))


if __name__ == "__main__":
    main()
