#!/usr/bin/python3
"""Generates the golden cases of row reductions walked by runs and split into pieces
(compiler/codegen/fused.c emit_row_reduce): the reduced elements of one output lie in runs of
consecutive elements (NCHW reduced over N, H and W: runs of H x W), and a reduction of fewer
than 16 outputs is cut into pieces (runs, or elements of each run when there are fewer runs
than pieces), each summed in its own lanes, then combined in order after the initial value.
Cases under testdata/golden/row_reduce_<case>/ (model.hlo + in<i>.npy + expected<i>.npy +
tol.json), as make.py writes its cases.

Expected values are numpy formulas in float64 (rounded to the result type) -- never hlorun's
output.  They cover: an initial value that is not the identity (applied once, not once per
piece), a scalar sum cut into pieces of elements with an uneven end, pieces of runs, pieces
of the elements of each of two runs, a fused producer (x*x) per channel of NCHW, a product
over f64, runs whose length is not a multiple of the 32 lanes with 17 outputs (not split),
and a max over s32 (no lanes) by runs.

Run:  /usr/bin/python3 testdata/golden/make_row_reduce.py
"""
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(23)
F32 = {"rtol": 1e-5, "atol": 1e-4}


def case(name, hlo, inputs, expected, tol=None):
    write_case(os.path.join(HERE, "row_reduce_" + name), "testdata/golden/make_row_reduce.py", hlo, inputs, expected, tol)


def reducer(name, op, t):
    return "\n%s {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = %s[] %s(a, b)\n}\n" % (name, t, t, t, op)


def module(name, comps, body):
    return "HloModule %s\n%s\nENTRY main {\n%s}\n" % (name, comps, body)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def sum_case(name, shape, dims, init, producer=None):
    """f32 sum of x (or of x*x with producer) over dims, plus init."""
    x = f32(RNG.standard_normal(shape))
    kept = [d for d in range(len(shape)) if d not in dims]
    t = lambda s: "f32[%s]" % ",".join(str(v) for v in s)
    out = [shape[d] for d in kept]
    body = "  x = %s parameter(0)\n" % t(shape)
    src = "x"
    if producer:
        body += "  sq = %s multiply(x, x)\n" % t(shape)
        src = "sq"
    body += "  i = f32[] constant(%s)\n" % init
    body += "  ROOT y = %s reduce(%s, i), dimensions={%s}, to_apply=add\n" % (t(out), src, ",".join(map(str, dims)))
    v = x.astype(np.float64)
    v = v * v if producer else v
    case(name, module(name, reducer("add", "add", "f32"), body), [x], [f32(v.sum(axis=tuple(dims)) + init)], F32)


def multiply_f64():
    x = 1 + (RNG.random(70000) - 0.5) * 1e-4
    body = """  x = f64[70000] parameter(0)
  i = f64[] constant(2)
  ROOT y = f64[] reduce(x, i), dimensions={0}, to_apply=mul
"""
    case("multiply_f64", module("multiply_f64", reducer("mul", "multiply", "f64"), body), [x],
         [np.float64(2 * x.prod())], {"rtol": 1e-12, "atol": 0})


def max_s32():
    x = RNG.integers(-10**6, 10**6, size=(3, 4, 6, 7), dtype=np.int32)
    body = """  x = s32[3,4,6,7] parameter(0)
  i = s32[] constant(-2147483648)
  ROOT y = s32[4] reduce(x, i), dimensions={0,2,3}, to_apply=mx
"""
    case("max_s32", module("max_s32", reducer("mx", "maximum", "s32"), body), [x], [x.max(axis=(0, 2, 3))])


if __name__ == "__main__":
    sum_case("scalar_pieces", (100003,), [0], 5)
    sum_case("runs_pieces", (40, 1, 1000), [0, 2], 0)
    sum_case("nchw_square", (4, 3, 100, 100), [0, 2, 3], 0, producer=True)
    sum_case("elements_of_runs", (2, 1, 50000), [0, 2], -1)
    sum_case("nchw_runs_17", (3, 17, 5, 13), [0, 2, 3], 0)
    multiply_f64()
    max_s32()
