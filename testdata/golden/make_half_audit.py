#!/usr/bin/python3
"""Generates the golden cases of issue 16's f16 audit under testdata/golden/half_<case>/: the
operations whose code differs on a CPU with AVX512-FP16 (LLVM then selects the native f16
instructions): conversions to and from integers and other floats with NaN, infinities, zeros,
subnormals, ties and values out of range; maximum, minimum and clamp with NaN; rounding; and
f16 arithmetic, each result rounded to f16.  bf16 and 8-bit floats converted to integers go
with them (they compute in f32, but share the saturating conversion).

Expected values come from numpy and XLA's semantics (../shared/spec: convert truncates toward
zero and saturates, NaN gives 0; maximum/minimum propagate NaN), never from hlorun.  numpy's
float16 arithmetic rounds each result to f16, as f16 arithmetic does.  CI runs these cases at
the host's CPU and at generic and x86-64-v3 (tests/cross_cpu.py): the bits must agree.

Run:  /usr/bin/python3 testdata/golden/make_half_audit.py
"""
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = "testdata/golden/make_half_audit.py"

INT_TYPES = [("s8", np.int8), ("s16", np.int16), ("s32", np.int32), ("s64", np.int64), ("u8", np.uint8),
             ("u16", np.uint16), ("u32", np.uint32), ("u64", np.uint64)]

# Values whose conversions to integers hit every rule: NaN, infinities, zeros, truncation of
# both signs, the edges of every integer range (as near as the float type gets), subnormals.
SPECIALS = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 2.5, -2.5, 127.0,
            127.9, 128.0, -128.0, -129.0, 255.0, 256.0, 300.7, -300.7, 32767.0, 32768.0, -32768.0, -32800.0,
            65504.0, -65504.0, 6e-8, -6e-8, 1e-5, 1e6, -1e6, 3e9, -3e9, 5e18, 1e19, -1e19, 2e19, 1e30, -1e30]


def case(name, hlo, inputs, expected, tol=None):
    write_case(os.path.join(HERE, "half_" + name), GEN, hlo, inputs, expected, tol)


def to_int(x, dt):
    """XLA's convert from a float to an integer: toward zero, saturating, NaN -> 0."""
    info = np.iinfo(dt)
    x = np.asarray(x, dtype=np.float64)
    t = np.trunc(np.nan_to_num(x, nan=0.0, posinf=np.inf, neginf=-np.inf))
    out = np.empty(x.shape, dtype=dt)
    for i, v in enumerate(t):
        if v <= info.min:
            out[i] = info.min
        elif v >= info.max:
            out[i] = info.max
        else:
            out[i] = int(v)
    return out


def to_pred(x):
    return np.asarray(x, dtype=np.float64) != 0  # NaN != 0 is true


def convert_tuple(src_type, n, extra=""):
    outs = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
    lines = ["  c%d = %s[%d] convert(x)" % (i, t, n) for i, t in enumerate(outs)]
    lines.append("  c8 = pred[%d] convert(x)" % n)
    shapes = ", ".join("%s[%d]" % (t, n) for t in outs + ["pred"])
    names = ", ".join("c%d" % i for i in range(9))
    return lines, shapes, names


def bf16_bits(x):
    """f32 values (exactly representable in bf16) as bf16 bits."""
    return (np.asarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def convert_to_ints():
    # f16: the specials as f16 (out-of-range ones become infinities, as an f16 input would be)
    with np.errstate(over="ignore"):
        x = np.array(SPECIALS, dtype=np.float16)
    n = len(x)
    lines, shapes, names = convert_tuple("f16", n)
    hlo = "HloModule half_convert_to_int\n\nENTRY main {\n  x = f16[%d] parameter(0)\n%s\n  ROOT t = (%s) tuple(%s)\n}\n" % (
        n, "\n".join(lines), shapes, names)
    exp = [to_int(x, dt) for _, dt in INT_TYPES] + [to_pred(x)]
    case("convert_to_int", hlo, [x], exp)

    # bf16: values exactly representable in bf16 (every f32 special truncated to bf16 bits)
    xf = np.array(SPECIALS, dtype=np.float32)
    bits = bf16_bits(xf)
    xv = (bits.astype(np.uint32) << 16).view(np.float32)
    hlo = "HloModule bf16_convert_to_int\n\nENTRY main {\n  x = bf16[%d] parameter(0)\n%s\n  ROOT t = (%s) tuple(%s)\n}\n" % (
        n, "\n".join(lines), shapes, names)
    exp = [to_int(xv, dt) for _, dt in INT_TYPES] + [to_pred(xv)]
    write_case(os.path.join(HERE, "bf16_convert_to_int"), GEN, hlo, [bits], exp, {"bf16": True})


def convert_f8_to_ints():
    # f32 inputs exactly representable in the 8-bit type; NaN gives 0 after the round trip
    e5m2 = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -1.5, 2.5, -3.5, 112.0, 57344.0, -57344.0,
                     0.75, -0.75], dtype=np.float32)
    e4m3fn = np.array([np.nan, 0.0, -0.0, 1.5, -1.5, 2.5, -3.5, 112.0, 448.0, -448.0, 0.875, -0.875],
                      dtype=np.float32)
    n1, n2 = len(e5m2), len(e4m3fn)
    hlo = """HloModule f8_convert_to_int

ENTRY main {
  a = f32[%(n1)d] parameter(0)
  b = f32[%(n2)d] parameter(1)
  a8 = f8e5m2[%(n1)d] convert(a)
  b8 = f8e4m3fn[%(n2)d] convert(b)
  a0 = s8[%(n1)d] convert(a8)
  a1 = s16[%(n1)d] convert(a8)
  a2 = u8[%(n1)d] convert(a8)
  a3 = s64[%(n1)d] convert(a8)
  b0 = s8[%(n2)d] convert(b8)
  b1 = u16[%(n2)d] convert(b8)
  b2 = s32[%(n2)d] convert(b8)
  ROOT t = (s8[%(n1)d], s16[%(n1)d], u8[%(n1)d], s64[%(n1)d], s8[%(n2)d], u16[%(n2)d], s32[%(n2)d]) tuple(a0, a1, a2, a3, b0, b1, b2)
}
""" % {"n1": n1, "n2": n2}
    exp = [to_int(e5m2, np.int8), to_int(e5m2, np.int16), to_int(e5m2, np.uint8), to_int(e5m2, np.int64),
           to_int(e4m3fn, np.int8), to_int(e4m3fn, np.uint16), to_int(e4m3fn, np.int32)]
    write_case(os.path.join(HERE, "f8_convert_to_int"), GEN, hlo, [e5m2, e4m3fn], exp)


def minmax_clamp():
    a = np.array([np.nan, 1.0, np.nan, -np.inf, np.inf, 0.5, -2.0, 65504.0, -65504.0, 6e-8, 3.0, -3.0, 1.0, np.nan],
                 dtype=np.float16)
    b = np.array([1.0, np.nan, np.nan, 0.0, 7.0, 0.25, -1.0, np.inf, -np.inf, -6e-8, 2.0, -1.0, 1.0, -np.nan],
                 dtype=np.float16)
    n = len(a)
    lo, hi = np.float16(-1.0), np.float16(2.0)
    hlo = """HloModule half_minmax_clamp

ENTRY main {
  a = f16[%(n)d] parameter(0)
  b = f16[%(n)d] parameter(1)
  lo = f16[] constant(-1)
  hi = f16[] constant(2)
  mx = f16[%(n)d] maximum(a, b)
  mn = f16[%(n)d] minimum(a, b)
  cl = f16[%(n)d] clamp(lo, a, hi)
  cv = f16[%(n)d] clamp(b, a, b)
  ROOT t = (f16[%(n)d], f16[%(n)d], f16[%(n)d], f16[%(n)d]) tuple(mx, mn, cl, cv)
}
""" % {"n": n}
    cv = np.minimum(np.maximum(a, b), b)
    exp = [np.maximum(a, b), np.minimum(a, b), np.minimum(np.maximum(a, lo), hi), cv]
    case("minmax_clamp", hlo, [a, b], exp, {"exact": True})


def rounding():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49976, -0.49976, 1023.5, -1023.5, 2047.0, 0.0, -0.0, np.inf,
                  -np.inf, np.nan, 6e-8, -6e-8, 3.7, -3.7, 65504.0, 0.25, 2.0, 1e-4], dtype=np.float16)
    n = len(x)
    ops = ["round-nearest-even", "round-nearest-afz", "floor", "ceil", "sqrt", "sign", "abs", "negate"]
    lines = "\n".join("  r%d = f16[%d] %s(x)" % (i, n, op) for i, op in enumerate(ops))
    hlo = "HloModule half_rounding\n\nENTRY main {\n  x = f16[%d] parameter(0)\n%s\n  ROOT t = (%s) tuple(%s)\n}\n" % (
        n, lines, ", ".join("f16[%d]" % n for _ in ops), ", ".join("r%d" % i for i in range(len(ops))))
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        afz = np.where(np.isfinite(x64), np.copysign(np.floor(np.abs(x64) + 0.5), x64), x64)
        exp = [np.rint(x64).astype(np.float16), afz.astype(np.float16), np.floor(x), np.ceil(x), np.sqrt(x),
               np.sign(x), np.abs(x), -x]
    case("rounding", hlo, [x], exp, {"exact": True})


def arithmetic():
    rng = np.random.default_rng(16)
    vals = np.concatenate([
        rng.standard_normal(40) * 100,
        [65504.0, -65504.0, 6e-8, -6e-8, 6.1e-5, 1e-7, 0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, 1.0 / 3.0]])
    a = vals.astype(np.float16)
    b = np.roll(vals, 7).astype(np.float16)
    c = np.roll(vals, 19).astype(np.float16)
    n = len(a)
    hlo = """HloModule half_arithmetic

ENTRY main {
  a = f16[%(n)d] parameter(0)
  b = f16[%(n)d] parameter(1)
  c = f16[%(n)d] parameter(2)
  s = f16[%(n)d] add(a, b)
  d = f16[%(n)d] subtract(a, b)
  m = f16[%(n)d] multiply(a, b)
  q = f16[%(n)d] divide(a, b)
  fma = f16[%(n)d] add(m, c)
  ROOT t = (f16[%(n)d], f16[%(n)d], f16[%(n)d], f16[%(n)d], f16[%(n)d]) tuple(s, d, m, q, fma)
}
""" % {"n": n}
    with np.errstate(all="ignore"):
        m = a * b
        exp = [a + b, a - b, m, a / b, m + c]  # each result rounded to f16: no fused multiply-add
    case("arithmetic", hlo, [a, b, c], exp, {"exact": True})


def convert_from():
    f32 = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 65504.0, 65519.99, 65520.0, -65520.0, 1e6, 2049.0, 2051.0,
                    1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, 6e-8, 2.0 ** -25, 2.0 ** -25 * 1.5, 3e-8, -3e-8,
                    0.1, -0.1, 1e-30], dtype=np.float32)
    f64 = np.array([np.nan, np.inf, 65519.999999, 65520.0, 1.0 + 2.0 ** -11 + 2.0 ** -40, 2.0 ** -25,
                    2.0 ** -25 + 2.0 ** -60, 0.1, -1e300, 1e-300], dtype=np.float64)
    s32 = np.array([0, 1, -1, 2049, 2051, 4097, 65504, 65519, 65520, -65520, 100000, 2 ** 31 - 1, -2 ** 31],
                   dtype=np.int32)
    u64 = np.array([0, 1, 2049, 65519, 65520, 2 ** 63, 2 ** 64 - 1], dtype=np.uint64)
    h = np.array([np.nan, np.inf, -np.inf, -0.0, 6e-8, 65504.0, 0.1], dtype=np.float16)
    hlo = """HloModule half_convert_from

ENTRY main {
  a = f32[%d] parameter(0)
  b = f64[%d] parameter(1)
  c = s32[%d] parameter(2)
  d = u64[%d] parameter(3)
  e = f16[%d] parameter(4)
  ha = f16[%d] convert(a)
  hb = f16[%d] convert(b)
  hc = f16[%d] convert(c)
  hd = f16[%d] convert(d)
  ef = f32[%d] convert(e)
  ed = f64[%d] convert(e)
  ROOT t = (f16[%d], f16[%d], f16[%d], f16[%d], f32[%d], f64[%d]) tuple(ha, hb, hc, hd, ef, ed)
}
""" % ((len(f32), len(f64), len(s32), len(u64), len(h), len(f32), len(f64), len(s32), len(u64), len(h), len(h),
        len(f32), len(f64), len(s32), len(u64), len(h), len(h)))
    with np.errstate(over="ignore"):
        # numpy converts f32 and f64 to f16 with one rounding (nearest even); integers through
        # f64, exact for these magnitudes; what overflows f16 becomes an infinity
        exp = [f32.astype(np.float16), f64.astype(np.float16), s32.astype(np.float64).astype(np.float16),
               u64.astype(np.float64).astype(np.float16), h.astype(np.float32), h.astype(np.float64)]
    case("convert_from", hlo, [f32, f64, s32, u64, h], exp, {"exact": True})


def main():
    convert_to_ints()
    convert_f8_to_ints()
    minmax_clamp()
    rounding()
    arithmetic()
    convert_from()


if __name__ == "__main__":
    main()
