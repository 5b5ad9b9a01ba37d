#!/usr/bin/python3
"""Generates the golden cases of dots read in place (2026-11-27), under
testdata/golden/dotin_<case>/ (model.hlo + in<i>.npy + expected<i>.npy + tol.json +
GENERATOR), as make.py does for the other cases; it writes only its own folders.

What they pin down:
- compiler/passes/fold_dot_transposes.c: a dot of a transposed operand reads the operand
  where it lies (lhs and rhs, a batched one, a transpose that also has another user), and a
  transpose that reorders the free dimensions stays;
- the f32 GEMM reading A in place (runtime/src/kernels/rt_gemm_impl.h, direct_a): 64 and 128
  columns, row counts that leave a remainder of 6;
- the bf16 few-rows path (runtime/src/kernels/rt_gemm_bf16.c, bf_small_*): a language model's
  logits (one row by a transposed embedding), a row-major weight, and Flax's x . W[heads, d, h]
  whose columns the kernel reads as runs of h through offset tables;
- f16 dots widened as they are read (runtime/src/kernels/rt_gemm.c, hlo_rt_gemm_*_f16): the
  few-rows kernels (dot products, column tiles, streamed rows) and the packed path, with f16
  subnormals among the inputs.

Expected values are numpy formulas in float64 (bf16 rounding by bit arithmetic) -- never
hlorun's output.

Run:  /usr/bin/python3 testdata/golden/make_dot_operands.py
"""
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = "testdata/golden/make_dot_operands.py"
RNG = np.random.default_rng(1127)
F32_TOL = {"rtol": 1e-4, "atol": 1e-4}
BF16_TOL = {"bf16": True, "rtol": 2e-2, "atol": 2e-2}


def case(name, hlo, inputs, expected, tol):
    write_case(os.path.join(HERE, "dotin_" + name), GEN, hlo, inputs, expected, tol)


def f32(shape):
    return RNG.standard_normal(shape).astype(np.float32)


def bf16_bits(x):
    """f32 values rounded to bf16 (nearest even), as uint16 bits."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def bf16_input(shape):
    return bf16_bits(RNG.standard_normal(shape))


def folded_transposes():
    a, b = f32((8, 16)), f32((32, 16))
    a2, b2 = f32((16, 8)), f32((16, 32))
    q, k = f32((2, 5, 4)), f32((2, 6, 4))
    x, w = f32((3, 4)), f32((5, 6, 4))
    hlo = """HloModule dotin_folded_transposes

ENTRY main {
  a = f32[8,16] parameter(0)
  b = f32[32,16] parameter(1)
  a2 = f32[16,8] parameter(2)
  b2 = f32[16,32] parameter(3)
  q = f32[2,5,4] parameter(4)
  k = f32[2,6,4] parameter(5)
  x = f32[3,4] parameter(6)
  w = f32[5,6,4] parameter(7)
  bt = f32[16,32] transpose(b), dimensions={1,0}
  d1 = f32[8,32] dot(a, bt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  at = f32[8,16] transpose(a2), dimensions={1,0}
  d2 = f32[8,32] dot(at, b2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  kt = f32[2,4,6] transpose(k), dimensions={0,2,1}
  d3 = f32[2,5,6] dot(q, kt), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  wt = f32[4,6,5] transpose(w), dimensions={2,1,0}
  d4 = f32[3,6,5] dot(x, wt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  also = f32[16,32] negate(bt)
  ROOT r = (f32[8,32], f32[8,32], f32[2,5,6], f32[3,6,5], f32[16,32]) tuple(d1, d2, d3, d4, also)
}
"""
    d = lambda t: t.astype(np.float64)
    want = [d(a) @ d(b).T, d(a2).T @ d(b2), np.einsum("bik,bjk->bij", d(q), d(k)),
            np.einsum("ik,abk->iba", d(x), d(w)), -d(b).T]
    case("folded_transposes", hlo, [a, b, a2, b2, q, k, x, w], [t.astype(np.float32) for t in want], F32_TOL)


def f32_direct_a():
    p, v = f32((2, 3, 131, 200)), f32((2, 3, 200, 64))
    x, w = f32((301, 300)), f32((300, 128))
    hlo = """HloModule dotin_f32_direct_a

ENTRY main {
  p = f32[2,3,131,200] parameter(0)
  v = f32[2,3,200,64] parameter(1)
  x = f32[301,300] parameter(2)
  w = f32[300,128] parameter(3)
  o = f32[2,3,131,64] dot(p, v), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}
  y = f32[301,128] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[2,3,131,64], f32[301,128]) tuple(o, y)
}
"""
    d = lambda t: t.astype(np.float64)
    want = [d(p) @ d(v), d(x) @ d(w)]
    case("f32_direct_a", hlo, [p, v, x, w], [t.astype(np.float32) for t in want], F32_TOL)


def bf16_few_rows():
    h, e = bf16_input((1, 96)), bf16_input((3000, 96))
    x, w = bf16_input((13, 80)), bf16_input((80, 200))
    t, wh = bf16_input((1, 5, 64)), bf16_input((4, 64, 128))
    hlo = """HloModule dotin_bf16_few_rows

ENTRY main {
  h = bf16[1,96] parameter(0)
  e = bf16[3000,96] parameter(1)
  x = bf16[13,80] parameter(2)
  w = bf16[80,200] parameter(3)
  t = bf16[1,5,64] parameter(4)
  wh = bf16[4,64,128] parameter(5)
  et = bf16[96,3000] transpose(e), dimensions={1,0}
  logits = bf16[1,3000] dot(h, et), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y = bf16[13,200] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  heads = bf16[1,5,4,128] dot(t, wh), lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT r = (bf16[1,3000], bf16[13,200], bf16[1,5,4,128]) tuple(logits, y, heads)
}
"""
    want = [from_bf16(h) @ from_bf16(e).T, from_bf16(x) @ from_bf16(w),
            np.einsum("bsd,ndh->bsnh", from_bf16(t), from_bf16(wh))]
    case("bf16_few_rows", hlo, [h, e, x, w, t, wh], [bf16_bits(v) for v in want], BF16_TOL)


def f16_widened():
    def f16(shape):
        v = RNG.standard_normal(shape)
        v[..., ::7] *= 1e-5  # every 7th element below f16's normal range (6.1e-5): subnormals
        return v.astype(np.float16)
    h, e = f16((1, 96)), f16((3000, 96))
    x, w = f16((13, 80)), f16((80, 200))
    g, w2 = f16((3, 700)), f16((700, 64))
    a, b = f16((40, 300)), f16((300, 70))
    hlo = """HloModule dotin_f16_widened

ENTRY main {
  h = f16[1,96] parameter(0)
  e = f16[3000,96] parameter(1)
  x = f16[13,80] parameter(2)
  w = f16[80,200] parameter(3)
  g = f16[3,700] parameter(4)
  w2 = f16[700,64] parameter(5)
  a = f16[40,300] parameter(6)
  b = f16[300,70] parameter(7)
  logits = f32[1,3000] dot(h, e), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  y = f16[13,200] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f16[3,64] dot(g, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f16[40,70] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[1,3000], f16[13,200], f16[3,64], f16[40,70]) tuple(logits, y, z, c)
}
"""
    d = lambda t: t.astype(np.float64)
    want = [(d(h) @ d(e).T).astype(np.float32), (d(x) @ d(w)).astype(np.float16),
            (d(g) @ d(w2)).astype(np.float16), (d(a) @ d(b)).astype(np.float16)]
    case("f16_widened", hlo, [h, e, x, w, g, w2, a, b], want, {"rtol": 2e-3, "atol": 2e-3})


def main():
    folded_transposes()
    f32_direct_a()
    bf16_few_rows()
    f16_widened()


if __name__ == "__main__":
    main()
