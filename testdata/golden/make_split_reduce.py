#!/usr/bin/python3
"""Generates the golden cases of split column reductions (issue 7): reductions whose reduced
dimensions are the outer ones and whose kept part is small, which compiler/codegen/fused.c
splits over blocks of rows (one partial per block in the kernel's arena scratch, combined in
order after the initial value).  Cases under testdata/golden/split_reduce_<case>/ (model.hlo +
in<i>.npy + expected<i>.npy + tol.json), as make.py writes its cases.

Expected values are numpy formulas in float64 (rounded to the result type) -- never hlorun's
output.  They cover: an initial value that is not the identity (it must be applied once), row
counts that split unevenly and leave rows over after the groups of four, two reduced
dimensions, two kept dimensions, a fused producer (x*x), max over s32, min with a NaN, a
multiply over f64, and a kept part too large to split (the column-block path).

Run:  /usr/bin/python3 testdata/golden/make_split_reduce.py
"""
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(11)


def case(name, hlo, inputs, expected, tol=None):
    write_case(os.path.join(HERE, "split_reduce_" + name), "testdata/golden/make_split_reduce.py", hlo, inputs, expected, tol)


def reducer(name, op, t):
    return """
%s {
  a = %s[] parameter(0)
  b = %s[] parameter(1)
  ROOT r = %s[] %s(a, b)
}
""" % (name, t, t, t, op)


def module(name, comps, body):
    return "HloModule %s\n%s\nENTRY main {\n%s}\n" % (name, comps, body)


F32 = {"rtol": 1e-5, "atol": 1e-4}


def f32(a):
    return np.asarray(a, dtype=np.float32)


def init_once():
    x = f32(RNG.standard_normal((4099, 300)))
    body = """  x = f32[4099,300] parameter(0)
  i = f32[] constant(5)
  ROOT y = f32[300] reduce(x, i), dimensions={0}, to_apply=add
"""
    case("init_once", module("init_once", reducer("add", "add", "f32"), body), [x],
         [f32(x.astype(np.float64).sum(0) + 5)], F32)


def two_reduced_dims():
    x = f32(RNG.standard_normal((64, 41, 200)))
    body = """  x = f32[64,41,200] parameter(0)
  z = f32[] constant(0)
  ROOT y = f32[200] reduce(x, z), dimensions={0,1}, to_apply=add
"""
    case("two_reduced_dims", module("two_reduced", reducer("add", "add", "f32"), body), [x],
         [f32(x.astype(np.float64).sum((0, 1)))], F32)


def two_kept_dims():
    x = f32(RNG.standard_normal((2001, 12, 30)))
    body = """  x = f32[2001,12,30] parameter(0)
  z = f32[] constant(0)
  ROOT y = f32[12,30] reduce(x, z), dimensions={0}, to_apply=add
"""
    case("two_kept_dims", module("two_kept", reducer("add", "add", "f32"), body), [x],
         [f32(x.astype(np.float64).sum(0))], F32)


def fused_square():
    x = f32(RNG.standard_normal((3001, 257)))
    body = """  x = f32[3001,257] parameter(0)
  sq = f32[3001,257] multiply(x, x)
  z = f32[] constant(0)
  ROOT y = f32[257] reduce(sq, z), dimensions={0}, to_apply=add
"""
    case("fused_square", module("fused_square", reducer("add", "add", "f32"), body), [x],
         [f32((x.astype(np.float64) ** 2).sum(0))], F32)


def max_s32():
    x = RNG.integers(-10**6, 10**6, size=(2050, 100), dtype=np.int32)
    body = """  x = s32[2050,100] parameter(0)
  i = s32[] constant(-2147483648)
  ROOT y = s32[100] reduce(x, i), dimensions={0}, to_apply=mx
"""
    case("max_s32", module("max_s32", reducer("mx", "maximum", "s32"), body), [x], [x.max(0)])


def min_nan():
    x = f32(RNG.standard_normal((1500, 64)))
    x[777, 5] = np.nan
    body = """  x = f32[1500,64] parameter(0)
  i = f32[] constant(inf)
  ROOT y = f32[64] reduce(x, i), dimensions={0}, to_apply=mn
"""
    case("min_nan", module("min_nan", reducer("mn", "minimum", "f32"), body), [x], [x.min(0)], F32)


def multiply_f64():
    x = 1 + (RNG.random((1024, 64)) - 0.5) * 1e-3
    body = """  x = f64[1024,64] parameter(0)
  i = f64[] constant(2)
  ROOT y = f64[64] reduce(x, i), dimensions={0}, to_apply=mul
"""
    case("multiply_f64", module("multiply_f64", reducer("mul", "multiply", "f64"), body), [x],
         [2 * x.prod(0)], {"rtol": 1e-12, "atol": 0})


def wide_kept():
    x = f32(RNG.standard_normal((40, 20000)))
    body = """  x = f32[40,20000] parameter(0)
  z = f32[] constant(1)
  ROOT y = f32[20000] reduce(x, z), dimensions={0}, to_apply=add
"""
    case("wide_kept", module("wide_kept", reducer("add", "add", "f32"), body), [x],
         [f32(x.astype(np.float64).sum(0) + 1)], F32)


if __name__ == "__main__":
    init_once()
    two_reduced_dims()
    two_kept_dims()
    fused_square()
    max_s32()
    min_nan()
    multiply_f64()
    wide_kept()
