#!/usr/bin/python3
"""Generates the golden cases of XLA's mixed-precision forms (issue 16) under
testdata/golden/mixed_<case>/: modules that XLA's verifier accepts with allow_mixed_precision
(the default of its tests, HloTestBase) and its evaluator computes.

- copy of f32 into bf16: converts, rounding to nearest even;
- reduce of a bf16 array by an f32 add: the elements are summed in f32 and the sum rounded to
  bf16 when stored.

Expected values from numpy (bf16 rounding by bit arithmetic), never from hlorun.
Run:  /usr/bin/python3 testdata/golden/make_mixed_precision.py
"""
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = "testdata/golden/make_mixed_precision.py"


def bf16_bits(x):
    """f32 values rounded to bf16 (nearest even; NaN stays NaN), as uint16 bits."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, np.uint16(0x7FC0), r).astype(np.uint16)


def from_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def copy_case():
    x = np.array([1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8, 2.5, -3.3, 1e-3, 3.0e38, -0.0, np.inf, np.nan, 7.0, 1.0 / 3,
                  65504.0], dtype=np.float32)
    hlo = """HloModule mixed_copy

ENTRY main {
  p = f32[%d] parameter(0)
  ROOT c = bf16[%d] copy(p)
}
""" % (len(x), len(x))
    write_case(os.path.join(HERE, "mixed_copy_f32_to_bf16"), GEN, hlo, [x], [bf16_bits(x)],
               {"bf16": True, "exact": True})


def reduce_case():
    rng = np.random.default_rng(16)
    bits = bf16_bits(rng.standard_normal((8, 16)).astype(np.float32) * 4)
    vals = from_bits(bits).astype(np.float64)
    exp = bf16_bits(vals.sum(axis=1).astype(np.float32))
    hlo = """HloModule mixed_reduce

add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = bf16[8,16] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[8] reduce(x, z), dimensions={1}, to_apply=add_f32
}
"""
    # the f32 sum of 16 bf16 values is exact to f32 rounding; one bf16 ulp covers the order
    write_case(os.path.join(HERE, "mixed_reduce_bf16_f32_add"), GEN, hlo, [bits], [exp],
               {"bf16": True, "rtol": 0.008, "atol": 0.01})


if __name__ == "__main__":
    copy_case()
    reduce_case()
