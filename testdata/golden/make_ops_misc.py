#!/usr/bin/python3
"""Generates the golden cases of mulhi, the dynamic-shape ops (get-dimension-size,
set-dimension-size, dynamic-reshape, bounded dynamic dimensions), stochastic-convert,
ragged-dot and scaled-dot under testdata/golden/<case>/ (model.hlo + in<i>.npy +
expected<i>.npy + tol.json), as make.py does for the other cases.  It writes only its own case
folders (each carries a GENERATOR file naming this script, so make.py leaves them alone).

Expected values are formulas written here from the semantics (Python's exact integers for
mulhi, numpy for the rest) -- never hlorun's output.  Where the operation semantics document is
silent, the comment above each group names the XLA source the formula was read from.

Run:  /usr/bin/python3 testdata/golden/make_ops_misc.py
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make import hlo_type, module, module_with, shape_str  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20261125)


def case(name, hlo, inputs, expected, tol=None):
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    with open(os.path.join(d, "model.hlo"), "w") as f:
        f.write(hlo.lstrip())
    for i, a in enumerate(inputs):
        np.save(os.path.join(d, "in%d.npy" % i), a)
    for i, a in enumerate(expected):
        np.save(os.path.join(d, "expected%d.npy" % i), a)
    with open(os.path.join(d, "tol.json"), "w") as f:
        json.dump(tol or {}, f, sort_keys=True)
        f.write("\n")
    with open(os.path.join(d, "GENERATOR"), "w") as f:  # make.py leaves this case alone
        f.write("testdata/golden/make_ops_misc.py\n")


# ---- mulhi ------------------------------------------------------------------------------------
# The high half of the exact 2n-bit product of two n-bit integers (signed operands are
# sign-extended, unsigned zero-extended: XLA's elemental IR emitter widens, multiplies and
# shifts right by n).  Python integers are exact, so the formula is floor(a * b / 2**n).
INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def mulhi_ref(a, b, dt):
    bits = np.iinfo(dt).bits
    out = [(int(x) * int(y)) >> bits for x, y in zip(a.ravel(), b.ravel())]
    return np.array(out, dtype=dt).reshape(a.shape)


def mulhi_cases():
    for dt in INT_TYPES:
        info = np.iinfo(dt)
        edge = [info.min, info.max, 0, 1, info.max - 1, info.min + 1]
        if info.min < 0:
            edge += [-1, -2]
        pairs = [(x, y) for x in edge for y in edge]
        rand_a = RNG.integers(info.min, info.max, size=16, dtype=dt, endpoint=True)
        rand_b = RNG.integers(info.min, info.max, size=16, dtype=dt, endpoint=True)
        a = np.concatenate([np.array([p[0] for p in pairs], dtype=dt), rand_a])
        b = np.concatenate([np.array([p[1] for p in pairs], dtype=dt), rand_b])
        n = "binary_mulhi_%s" % hlo_type(dt)
        s = shape_str(dt, a.shape)
        hlo = module(n, [(dt, a.shape), (dt, b.shape)], ["%%r = %s mulhi(%%p0, %%p1)" % s], s)
        case(n, hlo, [a, b], [mulhi_ref(a, b, dt)])
    # Empty operands.
    e = np.zeros((0, 3), dtype=np.int32)
    s = shape_str(np.int32, e.shape)
    hlo = module("binary_mulhi_empty_s32", [(np.int32, e.shape), (np.int32, e.shape)],
                 ["%%r = %s mulhi(%%p0, %%p1)" % s], s)
    case("binary_mulhi_empty_s32", hlo, [e, e], [e])
    # Inside a fused loop: a broadcast scalar multiplier, then an add (the fusion pass puts the
    # broadcast, mulhi and add in one kLoop group).
    for dt in (np.uint32, np.int64):
        info = np.iinfo(dt)
        a = RNG.integers(info.min, info.max, size=(4, 33), dtype=dt, endpoint=True)
        k = dt(info.max // 3)
        c = RNG.integers(0, 100, size=(4, 33), dtype=dt)
        s = shape_str(dt, a.shape)
        n = "fused_mulhi_bcast_add_%s" % hlo_type(dt)
        body = ["%%k = %s[] constant(%d)" % (hlo_type(dt), int(k)),
                "%%kb = %s broadcast(%%k), dimensions={}" % s,
                "%%m = %s mulhi(%%p0, %%kb)" % s,
                "%%r = %s add(%%m, %%p1)" % s]
        hlo = module(n, [(dt, a.shape), (dt, c.shape)], body, s)
        hi = mulhi_ref(a, np.full(a.shape, k, dtype=dt), dt)
        exp = np.array([(int(x) + int(y)) % (1 << info.bits) for x, y in zip(hi.ravel(), c.ravel())],
                       dtype=np.uint64).astype(dt).reshape(a.shape)
        case(n, hlo, [a, c], [exp])


def main():
    mulhi_cases()


if __name__ == "__main__":
    main()
