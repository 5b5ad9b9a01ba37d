#!/usr/bin/python3
"""Generates the golden cases of the narrow float types inside fused loops (issue 7's fusion
must keep every op's rounding) and of f4e2m1fn / f8e8m0fnu arithmetic, under
testdata/golden/minifloat_<case>/.  Inputs and outputs are f32; the module converts to the
narrow type, computes in it, and converts back, so every intermediate is a fused member.

Expected values are computed here from the formats' definitions and XLA's conversion rules
(xla/service/elemental_ir_emitter.cc, read, not run): a convert to bf16 or f8e4m3fn rounds to
nearest even, while arithmetic results of the narrow types inside one fused loop keep f32
precision until the loop's f32 output (XLA's default excess precision in its fusions); f32 -> f4e2m1fn goes through f16 (round to nearest even), then to nearest
even on the grid {0, 0.5, 1, 1.5, 2, 3, 4, 6}, |x| >= 7 and infinities saturate to 6 and NaN
becomes -0; f32 -> f8e8m0fnu (2^(e-127), no zero, no sign) rounds the mantissa half up,
gives NaN for zero, negatives, values from 1.5 * 2^127 up, infinities and NaN, 2^-127 for
values up to 2^-127 and 2^-126 for the f32 subnormals above it.  Never hlorun's output.

Run:  /usr/bin/python3 testdata/golden/make_minifloat.py
"""
import math
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(23)


def case(name, hlo, inputs, expected, tol=None):
    write_case(os.path.join(HERE, "minifloat_" + name), "testdata/golden/make_minifloat.py", hlo, inputs, expected,
               tol)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def bf16(a):
    """f32 values rounded to bf16 (nearest even), as f32."""
    u = np.atleast_1d(f32(a)).view(np.uint32).astype(np.uint64)
    r = ((u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))) & np.uint64(0xFFFF0000)).astype(np.uint32)
    return r.view(np.float32).reshape(np.shape(a))


def minifloat(x, mbits, bias):
    """One float rounded to nearest even with mbits mantissa bits and this bias (subnormals
    kept; no overflow handling: the cases stay in range)."""
    if x == 0 or math.isnan(x):
        return x
    a = abs(x)
    e = max(math.floor(math.log2(a)), 1 - bias)
    step = 2.0 ** (e - mbits)
    q = float(np.rint(a / step)) * step
    return math.copysign(q, x)


def f4(x):
    h = float(np.float16(x))
    if math.isnan(h):
        return -0.0
    if abs(h) >= 7:
        return math.copysign(6.0, h)
    return minifloat(h, 1, 1)


def e8m0(x):
    x = float(np.float32(x))
    if not x > 0 or x >= 1.5 * 2.0 ** 127:
        return math.nan
    if x <= 2.0 ** -127:
        return 2.0 ** -127
    if x < 2.0 ** -126:  # an f32 subnormal above 2^-127: XLA's bit rule (bits + 2^22) >> 23 gives 1
        return 2.0 ** -126
    m, k = math.frexp(x)  # x = m * 2^k, m in [0.5, 1): mantissa 2m - 1 in [0, 1)
    return 2.0 ** (k if 2 * m - 1 >= 0.5 else k - 1)


def vec(f, xs):
    return f32([f(float(v)) for v in xs])


def f4_cases():
    xs = f32([0, 0.2, 0.25, 0.26, 0.74, 0.75, 0.9, 1.25, 1.2500001, 1.3, 1.75, 2.5, 2.6, 3.5, 5, 5.1, 6.9, 7,
              100, -0.1, -3.2, np.inf, -np.inf, np.nan])
    hlo = """HloModule minifloat_f4_convert
ENTRY main {
  x = f32[24] parameter(0)
  q = f4e2m1fn[24] convert(x)
  ROOT y = f32[24] convert(q)
}
"""
    case("f4_convert", hlo, [xs], [vec(f4, xs)])
    a = f32(RNG.uniform(-7, 7, 4096))
    b = f32(RNG.uniform(-7, 7, 4096))
    hlo = """HloModule minifloat_f4_arith
ENTRY main {
  a = f32[4096] parameter(0)
  b = f32[4096] parameter(1)
  qa = f4e2m1fn[4096] convert(a)
  qb = f4e2m1fn[4096] convert(b)
  s = f4e2m1fn[4096] add(qa, qb)
  p = f4e2m1fn[4096] multiply(s, qb)
  ROOT y = f32[4096] convert(p)
}
"""
    qa, qb = vec(f4, a), vec(f4, b)
    case("f4_arith", hlo, [a, b], [f32((qa + qb) * qb)])


def e8m0_cases():
    xs = f32([1, 1.49, 1.5, 3, 0.75, 0, -1, 1e-39, 6e-39, 3e38, np.inf, np.nan, 2.0 ** 100, 1e-30, 0.3, -0.0])
    hlo = """HloModule minifloat_e8m0_convert
ENTRY main {
  x = f32[16] parameter(0)
  q = f8e8m0fnu[16] convert(x)
  ROOT y = f32[16] convert(q)
}
"""
    case("e8m0_convert", hlo, [xs], [vec(e8m0, xs)])
    a = f32(2.0 ** RNG.integers(-60, 60, 1024) * RNG.uniform(1, 2, 1024))
    b = f32(2.0 ** RNG.integers(-60, 60, 1024) * RNG.uniform(1, 2, 1024))
    hlo = """HloModule minifloat_e8m0_arith
ENTRY main {
  a = f32[1024] parameter(0)
  b = f32[1024] parameter(1)
  qa = f8e8m0fnu[1024] convert(a)
  qb = f8e8m0fnu[1024] convert(b)
  p = f8e8m0fnu[1024] multiply(qa, qb)
  d = f8e8m0fnu[1024] divide(p, qb)
  ROOT y = f32[1024] convert(d)
}
"""
    qa, qb = vec(e8m0, a), vec(e8m0, b)
    case("e8m0_arith", hlo, [a, b], [f32(qa.astype(np.float64) * qb / qb)])


def fused_rounding_cases():
    n = 1 << 16  # large enough to run over threads
    x = f32(RNG.standard_normal(n) * 3)
    hlo = """HloModule minifloat_bf16_chain
ENTRY main {
  x = f32[65536] parameter(0)
  q = bf16[65536] convert(x)
  c = bf16[] constant(0.3)
  cb = bf16[65536] broadcast(c), dimensions={}
  m = bf16[65536] multiply(q, cb)
  s = bf16[65536] add(m, q)
  e = bf16[65536] exponential(s)
  ROOT y = f32[65536] convert(e)
}
"""
    q = bf16(x).astype(np.float64)
    e = np.exp(q * bf16(0.3) + q)
    case("bf16_chain", hlo, [x], [f32(e)], {"rtol": 1e-6, "atol": 0})
    hlo = """HloModule minifloat_bf16_roundtrip
ENTRY main {
  x = f32[65536] parameter(0)
  q = bf16[65536] convert(x)
  ROOT y = f32[65536] convert(q)
}
"""
    case("bf16_roundtrip", hlo, [x], [bf16(x)])
    v = f32(RNG.uniform(-12, 12, n))
    hlo = """HloModule minifloat_f8_square
ENTRY main {
  x = f32[65536] parameter(0)
  q = f8e4m3fn[65536] convert(x)
  p = f8e4m3fn[65536] multiply(q, q)
  ROOT y = f32[65536] convert(p)
}
"""
    q = vec(lambda t: minifloat(t, 3, 7), v)
    case("f8_square", hlo, [v], [f32(q.astype(np.float64) * q)])


def mx_scaled_dot():
    """scaled-dot of MX operands (f4e2m1fn values, f8e8m0fnu scales per block of 32 along the
    contracting dimension), as the expand-dots pass rewrites it (docs/ops.md): each operand
    times its scale repeated over the block, then the dot; every product is exact here."""
    x = f32(RNG.uniform(-6, 6, (4, 64)))
    w = f32(RNG.uniform(-6, 6, (64, 3)))
    ls = f32(2.0 ** RNG.integers(-4, 4, (4, 2)))
    rs = f32(2.0 ** RNG.integers(-4, 4, (2, 3)))
    hlo = """HloModule minifloat_mx_scaled_dot
ENTRY main {
  x = f32[4,64] parameter(0)
  w = f32[64,3] parameter(1)
  ls = f32[4,2] parameter(2)
  rs = f32[2,3] parameter(3)
  qx = f4e2m1fn[4,64] convert(x)
  qw = f4e2m1fn[64,3] convert(w)
  qls = f8e8m0fnu[4,2] convert(ls)
  qrs = f8e8m0fnu[2,3] convert(rs)
  ROOT r = f32[4,3] scaled-dot(qx, qw, qls, qrs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""
    xa = vec(f4, x.ravel()).reshape(x.shape).astype(np.float64) * np.repeat(ls.astype(np.float64), 32, axis=1)
    wb = vec(f4, w.ravel()).reshape(w.shape).astype(np.float64) * np.repeat(rs.astype(np.float64), 32, axis=0)
    case("mx_scaled_dot", hlo, [x, w, ls, rs], [f32(xa @ wb)], {"rtol": 1e-6, "atol": 1e-6})


if __name__ == "__main__":
    mx_scaled_dot()
    f4_cases()
    e8m0_cases()
    fused_rounding_cases()
