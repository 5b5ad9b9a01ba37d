#!/usr/bin/python3
"""Generates the numeric golden cases under testdata/golden/<case>/.

Each case is model.hlo + in<i>.npy + expected<i>.npy + tol.json.  The expected values come
from numpy / Python's math module formulas written here (an independent source), never
from hlorun.  bf16 is stored as uint16 raw bits (DESIGN.md); it is computed here in float32
and rounded to bf16 with round-to-nearest-even, as XLA's CPU backend does per operation.

Run:  /usr/bin/python3 testdata/golden/make.py      (rewrites every case; commit the result)

numpy computes f64 transcendental functions along different SIMD paths on different CPUs
(AVX-512 and AVX2 hosts), so about twenty f64 cases' expected values (and inputs derived
from them) change in their last bits when this runs on another CPU; every such difference
is far inside the cases' tolerances, so a rerun need not commit them.
"""
import json
import math
import os
import shutil
import sys

import numpy as np

import edges

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20261122)

HLO_TYPE = {
    np.bool_: "pred", np.int8: "s8", np.int16: "s16", np.int32: "s32", np.int64: "s64",
    np.uint8: "u8", np.uint16: "u16", np.uint32: "u32", np.uint64: "u64",
    np.float16: "f16", np.float32: "f32", np.float64: "f64",
    np.complex64: "c64", np.complex128: "c128",
}


# ---- bf16 helpers (numpy has no bfloat16) ------------------------------------------------
def f32_to_bf16_bits(x):
    x = np.asarray(x, dtype=np.float32)
    b = x.view(np.uint32).astype(np.uint64)
    nan = np.isnan(x)
    rounded = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(nan, np.uint16(0x7FC0), rounded).astype(np.uint16)


def bf16_bits_to_f32(b):
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


class BF16:
    """Marker dtype for bf16 arrays (stored as uint16 bits)."""


def hlo_type(dt):
    if dt is BF16:
        return "bf16"
    return HLO_TYPE[np.dtype(dt).type]


def shape_str(dt, shape):
    dims = ",".join(str(d) for d in shape)
    layout = ""
    if len(shape) > 0:
        layout = "{" + ",".join(str(i) for i in reversed(range(len(shape)))) + "}"
    return "%s[%s]%s" % (hlo_type(dt), dims, layout)


# ---- case writer ------------------------------------------------------------------------
CASES = []


def case(name, hlo, inputs, expected, tol=None):
    """inputs/expected: lists of numpy arrays (bf16 given as uint16 bits)."""
    CASES.append((name, hlo, inputs, expected, tol or {}))


def write_all():
    for d in os.listdir(HERE):
        p = os.path.join(HERE, d)
        # Cases of other generators (make_wrappers.py) carry a marker naming theirs.
        if os.path.isdir(p) and not os.path.exists(os.path.join(p, "GENERATOR")):
            shutil.rmtree(p)
    for name, hlo, inputs, expected, tol in CASES:
        d = os.path.join(HERE, name)
        os.makedirs(d)
        with open(os.path.join(d, "model.hlo"), "w") as f:
            f.write(hlo)
        for i, a in enumerate(inputs):
            np.save(os.path.join(d, "in%d.npy" % i), a)
        for i, a in enumerate(expected):
            np.save(os.path.join(d, "expected%d.npy" % i), a)
        with open(os.path.join(d, "tol.json"), "w") as f:
            json.dump(tol, f, sort_keys=True)
            f.write("\n")
    print("wrote %d cases" % len(CASES))


def module(name, params, body, root_shape):
    """params: list of (dtype, shape); body: instruction lines using p0..pN; last is ROOT."""
    sig = ", ".join("p%d: %s" % (i, shape_str(dt, s)) for i, (dt, s) in enumerate(params))
    lines = ["HloModule %s" % name, "", "ENTRY %%main (%s) -> %s {" % (sig, root_shape)]
    for i, (dt, s) in enumerate(params):
        lines.append("  %%p%d = %s parameter(%d)" % (i, shape_str(dt, s), i))
    for k, ln in enumerate(body):
        prefix = "  ROOT " if k == len(body) - 1 else "  "
        lines.append(prefix + ln)
    lines.append("}")
    return "\n".join(lines) + "\n"


def module_with(name, comps, params, body, root_shape):
    """Like module() but with sub-computations (text) placed before ENTRY."""
    m = module(name, params, body, root_shape)
    head, rest = m.split("\n\n", 1)
    return head + "\n\n" + comps.strip() + "\n\n" + rest


# ---- unary elementwise --------------------------------------------------------------------
def unary_float_cases():
    x = np.array([-2.5, -1.0, -0.3, 0.0, 0.4, 1.0, 2.0, 3.7], dtype=np.float64)
    pos = np.array([0.1, 0.5, 1.0, 2.0, 3.5, 10.0, 0.01, 7.25], dtype=np.float64)
    unit = np.array([-0.9, -0.5, -0.1, 0.0, 0.2, 0.5, 0.75, 0.99], dtype=np.float64)
    ge1 = np.array([1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 1.01, 100.0], dtype=np.float64)
    vec_erf = np.vectorize(math.erf)
    ops = [
        ("abs", x, np.abs), ("negate", x, np.negative), ("ceil", x, np.ceil),
        ("floor", x, np.floor), ("sign", x, np.sign), ("cosine", x, np.cos),
        ("sine", x, np.sin), ("tan", unit, np.tan), ("tanh", x, np.tanh),
        ("exponential", x, np.exp), ("exponential-minus-one", x, np.expm1),
        ("log", pos, np.log), ("log-plus-one", unit, np.log1p), ("sqrt", pos, np.sqrt),
        ("rsqrt", pos, lambda v: 1.0 / np.sqrt(v)), ("cbrt", x, np.cbrt),
        ("logistic", x, lambda v: 1.0 / (1.0 + np.exp(-v))), ("erf", x, vec_erf),
        ("acos", unit, np.arccos), ("asin", unit, np.arcsin), ("atan", x, np.arctan),
        ("acosh", ge1, np.arccosh), ("asinh", x, np.arcsinh), ("atanh", unit, np.arctanh),
        ("cosh", x, np.cosh), ("sinh", x, np.sinh),
        ("round-nearest-even", np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4, 2.6]), np.round),
        ("round-nearest-afz", np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4, 2.6]),
         lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)),
    ]
    for op, inp, fn in ops:
        for dt, tol in ((np.float32, 2e-6), (np.float64, 1e-13)):
            a = inp.astype(dt)
            e = fn(inp.astype(np.float64)).astype(dt)
            n = "unary_%s_%s" % (op.replace("-", "_"), hlo_type(dt))
            hlo = module(n, [(dt, a.shape)], ["%%r = %s %s(%%p0)" % (shape_str(dt, a.shape), op)],
                         shape_str(dt, a.shape))
            case(n, hlo, [a], [e], {"rtol": tol, "atol": tol})
    # f16 and bf16: computed in f32, rounded once per op.
    a = x.astype(np.float16)
    for op, fn in (("exponential", np.exp), ("tanh", np.tanh), ("negate", np.negative)):
        e = fn(a.astype(np.float32)).astype(np.float16)
        n = "unary_%s_f16" % op
        hlo = module(n, [(np.float16, a.shape)], ["%%r = f16[8]{0} %s(%%p0)" % op], "f16[8]{0}")
        case(n, hlo, [a], [e], {"rtol": 1e-3, "atol": 1e-3})
    b = f32_to_bf16_bits(x.astype(np.float32))
    for op, fn in (("exponential", np.exp), ("sqrt", lambda v: np.sqrt(np.abs(v))), ("abs", np.abs)):
        inp = b if op != "sqrt" else f32_to_bf16_bits(np.abs(x).astype(np.float32))
        e = f32_to_bf16_bits(fn(bf16_bits_to_f32(inp)))
        n = "unary_%s_bf16" % op
        hlo = module(n, [(BF16, inp.shape)], ["%%r = bf16[8]{0} %s(%%p0)" % op], "bf16[8]{0}")
        case(n, hlo, [inp], [e], {"bf16": True, "rtol": 8e-3, "atol": 8e-3})


def unary_int_cases():
    s = np.array([-128, -5, -1, 0, 1, 7, 100, 127], dtype=np.int8)
    u = np.array([0, 1, 2, 3, 15, 128, 200, 255], dtype=np.uint8)
    s32 = np.array([-2147483648, -5, -1, 0, 1, 7, 65535, 2147483647], dtype=np.int32)
    u64 = np.array([0, 1, 2**63, 2**64 - 1, 12345, 7, 1 << 40, 3], dtype=np.uint64)

    def clz(v, bits):
        out = []
        for t in v.astype(np.uint64) & np.uint64((1 << bits) - 1):
            t = int(t)
            out.append(bits - t.bit_length())
        return np.array(out)

    def popcnt(v, bits):
        return np.array([bin(int(t) & ((1 << bits) - 1)).count("1") for t in v.astype(np.int64)])

    for arr in (s, u, s32, u64):
        dt = arr.dtype.type
        bits = arr.dtype.itemsize * 8
        t = hlo_type(dt)
        sh = shape_str(dt, arr.shape)
        for op, fn in (("negate", lambda v: (-v.astype(np.int64 if dt != np.uint64 else np.uint64)).astype(dt)),
                       ("abs", lambda v: np.abs(v.astype(np.int64)).astype(dt) if dt != np.uint64 else v),
                       ("not", lambda v: np.invert(v)),
                       ("count-leading-zeros", lambda v: clz(v, bits).astype(dt)),
                       ("popcnt", lambda v: popcnt(v, bits).astype(dt)),
                       ("sign", lambda v: np.sign(v.astype(np.float64)).astype(dt))):
            if dt in (np.uint8, np.uint64) and op in ("negate",):
                e = (np.zeros_like(arr) - arr).astype(dt)
            else:
                with np.errstate(over="ignore"):
                    e = fn(arr)
            n = "unary_%s_%s" % (op.replace("-", "_"), t)
            hlo = module(n, [(dt, arr.shape)], ["%%r = %s %s(%%p0)" % (sh, op)], sh)
            case(n, hlo, [arr], [np.asarray(e, dtype=dt)])
    p = np.array([True, False, True, True])
    hlo = module("unary_not_pred", [(np.bool_, p.shape)], ["%r = pred[4]{0} not(%p0)"], "pred[4]{0}")
    case("unary_not_pred", hlo, [p], [~p])
    f = np.array([1.0, np.inf, -np.inf, np.nan, 0.0, -3.0], dtype=np.float32)
    hlo = module("unary_is_finite_f32", [(np.float32, f.shape)], ["%r = pred[6]{0} is-finite(%p0)"],
                 "pred[6]{0}")
    case("unary_is_finite_f32", hlo, [f], [np.isfinite(f)])


def complex_cases():
    z = np.array([1 + 2j, -3 + 0.5j, 0 - 1j, 2.5 + 2.5j], dtype=np.complex64)
    w = np.array([0.5 - 1j, 2 + 2j, -1 + 0.25j, 1 + 0j], dtype=np.complex64)
    for dt, ft, tol in ((np.complex64, np.float32, 1e-6), (np.complex128, np.float64, 1e-14)):
        a, b = z.astype(dt), w.astype(dt)
        t = hlo_type(dt)
        ftn = hlo_type(ft)
        sh = shape_str(dt, a.shape)
        fsh = shape_str(ft, a.shape)
        for op, fn in (("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
                       ("divide", np.divide)):
            n = "complex_%s_%s" % (op, t)
            hlo = module(n, [(dt, a.shape), (dt, b.shape)], ["%%r = %s %s(%%p0, %%p1)" % (sh, op)], sh)
            case(n, hlo, [a, b], [fn(a.astype(np.complex128), b.astype(np.complex128)).astype(dt)],
                 {"rtol": tol * 4, "atol": tol * 4})
        for op, fn, rsh, rdt in (("real", np.real, fsh, ft), ("imag", np.imag, fsh, ft),
                                 ("abs", np.abs, fsh, ft), ("negate", np.negative, sh, dt),
                                 ("exponential", np.exp, sh, dt), ("sqrt", np.sqrt, sh, dt),
                                 ("log", np.log, sh, dt)):
            n = "complex_%s_%s" % (op, t)
            hlo = module(n, [(dt, a.shape)], ["%%r = %s %s(%%p0)" % (rsh, op)], rsh)
            case(n, hlo, [a], [fn(a.astype(np.complex128)).astype(rdt)],
                 {"rtol": tol * 8, "atol": tol * 8})
        re, im = np.real(a).astype(ft), np.imag(a).astype(ft)
        n = "complex_complex_%s" % t
        hlo = module(n, [(ft, re.shape), (ft, im.shape)], ["%%r = %s complex(%%p0, %%p1)" % sh], sh)
        case(n, hlo, [re, im], [a])


# ---- binary elementwise -------------------------------------------------------------------
def binary_cases():
    x = np.array([-3.5, -1.0, 0.0, 0.5, 2.0, 7.25, -0.0, 100.0])
    y = np.array([2.0, -4.0, 3.0, 0.25, -2.0, 1.5, 5.0, -0.125])
    fops = [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
            ("divide", np.divide), ("maximum", np.maximum), ("minimum", np.minimum),
            ("remainder", np.fmod), ("atan2", np.arctan2),
            ("power", lambda a, b: np.power(np.abs(a), b))]
    for op, fn in fops:
        for dt, tol in ((np.float32, 2e-6), (np.float64, 1e-14)):
            a = (np.abs(x) if op == "power" else x).astype(dt)
            b = y.astype(dt)
            sh = shape_str(dt, a.shape)
            n = "binary_%s_%s" % (op, hlo_type(dt))
            hlo = module(n, [(dt, a.shape), (dt, b.shape)], ["%%r = %s %s(%%p0, %%p1)" % (sh, op)], sh)
            with np.errstate(all="ignore"):
                e = fn(a.astype(np.float64), b.astype(np.float64)).astype(dt)
            case(n, hlo, [a, b], [e], {"rtol": tol, "atol": tol})
    # NaN propagation in maximum/minimum (XLA: NaN wins).
    a = np.array([np.nan, 1.0, -np.inf, 2.0], dtype=np.float32)
    b = np.array([1.0, np.nan, 3.0, np.inf], dtype=np.float32)
    for op, fn in (("maximum", np.maximum), ("minimum", np.minimum)):
        n = "binary_%s_nan_f32" % op
        hlo = module(n, [(np.float32, (4,)), (np.float32, (4,))],
                     ["%%r = f32[4]{0} %s(%%p0, %%p1)" % op], "f32[4]{0}")
        case(n, hlo, [a, b], [fn(a, b)])
    # f16 / bf16 add and multiply: rounded once.
    a16 = x.astype(np.float16)
    b16 = y.astype(np.float16)
    for op, fn in (("add", np.add), ("multiply", np.multiply)):
        n = "binary_%s_f16" % op
        hlo = module(n, [(np.float16, (8,)), (np.float16, (8,))],
                     ["%%r = f16[8]{0} %s(%%p0, %%p1)" % op], "f16[8]{0}")
        case(n, hlo, [a16, b16], [fn(a16.astype(np.float32), b16.astype(np.float32)).astype(np.float16)])
        ab, bb = f32_to_bf16_bits(x.astype(np.float32) * 1.013), f32_to_bf16_bits(y.astype(np.float32) * 0.77)
        n = "binary_%s_bf16" % op
        hlo = module(n, [(BF16, (8,)), (BF16, (8,))],
                     ["%%r = bf16[8]{0} %s(%%p0, %%p1)" % op], "bf16[8]{0}")
        case(n, hlo, [ab, bb], [f32_to_bf16_bits(fn(bf16_bits_to_f32(ab), bf16_bits_to_f32(bb)))],
             {"bf16": True})


def int_binary_cases():
    def xla_div(a, b, dt):
        info = np.iinfo(dt)
        out = []
        for p, q in zip(a.tolist(), b.tolist()):
            if q == 0:
                out.append(-1 if info.min < 0 else info.max)
            elif info.min < 0 and p == info.min and q == -1:
                out.append(info.min)
            else:
                r = abs(p) // abs(q)
                out.append(r if (p >= 0) == (q >= 0) else -r)
        return np.array(out, dtype=dt)

    def xla_rem(a, b, dt):
        info = np.iinfo(dt)
        out = []
        for p, q in zip(a.tolist(), b.tolist()):
            if q == 0:
                out.append(p)
            elif info.min < 0 and p == info.min and q == -1:
                out.append(0)
            else:
                r = abs(p) % abs(q)
                out.append(r if p >= 0 else -r)
        return np.array(out, dtype=dt)

    def shifts(a, b, dt, kind):
        bits = np.dtype(dt).itemsize * 8
        mask = (1 << bits) - 1
        out = []
        for p, q in zip(a.tolist(), b.tolist()):
            uq = q & mask
            up = p & mask
            if kind == "shift-left":
                v = 0 if uq >= bits else (up << uq) & mask
            elif kind == "shift-right-logical":
                v = 0 if uq >= bits else up >> uq
            else:
                sp = up - (1 << bits) if (np.iinfo(dt).min < 0 and up >> (bits - 1)) else up
                if np.iinfo(dt).min >= 0:
                    sp = up - (1 << bits) if up >> (bits - 1) else up
                v = (sp >> min(uq, bits - 1)) & mask
            if np.iinfo(dt).min < 0 and v >> (bits - 1):
                v -= 1 << bits
            out.append(v)
        return np.array(out, dtype=dt)

    for dt in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64):
        info = np.iinfo(dt)
        if info.min < 0:
            a = np.array([info.min, info.min, -7, 7, 0, 100, info.max, -1], dtype=dt)
            b = np.array([-1, 0, 2, -2, 0, 7, 3, 1], dtype=dt)
            sh_b = np.array([1, 0, 3, 100, info.max, -1, 7, 64], dtype=np.int64).astype(dt)
        else:
            a = np.array([info.max, 0, 7, 100, 5, 1, 255, 3], dtype=dt)
            b = np.array([0, 0, 2, 7, 9, 1, 16, 3], dtype=dt)
            sh_b = np.array([1, 0, 3, 100, 8, 255, 7, 2], dtype=np.uint64).astype(dt)
        t = hlo_type(dt)
        sh = shape_str(dt, a.shape)
        with np.errstate(over="ignore"):
            ops = [("add", (a + b).astype(dt)), ("subtract", (a - b).astype(dt)),
                   ("multiply", (a * b).astype(dt)), ("divide", xla_div(a, b, dt)),
                   ("remainder", xla_rem(a, b, dt)), ("maximum", np.maximum(a, b)),
                   ("minimum", np.minimum(a, b)), ("and", a & b), ("or", a | b), ("xor", a ^ b)]
        for op, e in ops:
            n = "binary_%s_%s" % (op, t)
            hlo = module(n, [(dt, a.shape), (dt, b.shape)], ["%%r = %s %s(%%p0, %%p1)" % (sh, op)], sh)
            case(n, hlo, [a, b], [e])
        for op in ("shift-left", "shift-right-logical", "shift-right-arithmetic"):
            n = "binary_%s_%s" % (op.replace("-", "_"), t)
            hlo = module(n, [(dt, a.shape), (dt, sh_b.shape)], ["%%r = %s %s(%%p0, %%p1)" % (sh, op)], sh)
            case(n, hlo, [a, sh_b], [shifts(a, sh_b, dt, op)])
    # integer power (XLA: negative exponent gives 0 unless the base is 1 or -1)
    a = np.array([2, -3, 1, -1, 5, 0, 2, 7], dtype=np.int32)
    b = np.array([10, 3, -5, 3, 0, 0, -1, 2], dtype=np.int32)
    e = []
    for p, q in zip(a.tolist(), b.tolist()):
        e.append((1 if p == 1 else 0) if q < 0 else p ** q)
    hlo = module("binary_power_s32", [(np.int32, (8,)), (np.int32, (8,))],
                 ["%r = s32[8]{0} power(%p0, %p1)"], "s32[8]{0}")
    case("binary_power_s32", hlo, [a, b], [np.array(e, dtype=np.int32)])
    p, q = np.array([True, True, False, False]), np.array([True, False, True, False])
    for op, e in (("and", p & q), ("or", p | q), ("xor", p ^ q)):
        n = "binary_%s_pred" % op
        hlo = module(n, [(np.bool_, (4,)), (np.bool_, (4,))], ["%%r = pred[4]{0} %s(%%p0, %%p1)" % op],
                     "pred[4]{0}")
        case(n, hlo, [p, q], [e])


def compare_cases():
    a = np.array([1.0, np.nan, -0.0, 2.0, -np.inf, 3.0], dtype=np.float32)
    b = np.array([1.0, 1.0, 0.0, np.nan, -np.inf, 2.0], dtype=np.float32)
    for d, fn in (("EQ", np.equal), ("NE", np.not_equal), ("LT", np.less), ("LE", np.less_equal),
                  ("GT", np.greater), ("GE", np.greater_equal)):
        n = "compare_%s_f32" % d.lower()
        hlo = module(n, [(np.float32, (6,)), (np.float32, (6,))],
                     ["%%r = pred[6]{0} compare(%%p0, %%p1), direction=%s" % d], "pred[6]{0}")
        with np.errstate(invalid="ignore"):
            case(n, hlo, [a, b], [fn(a, b)])

    # TOTALORDER: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN
    def total_key(v):
        i = np.asarray(v, dtype=np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF) - 1, i)

    ta = np.array([-0.0, 0.0, np.nan, 1.0, -np.nan, -np.inf], dtype=np.float32)
    tb = np.array([0.0, -0.0, np.inf, np.nan, -np.inf, -np.nan], dtype=np.float32)
    for d, fn in (("LT", np.less), ("EQ", np.equal), ("GE", np.greater_equal)):
        n = "compare_totalorder_%s_f32" % d.lower()
        hlo = module(n, [(np.float32, (6,)), (np.float32, (6,))],
                     ["%%r = pred[6]{0} compare(%%p0, %%p1), direction=%s, type=TOTALORDER" % d],
                     "pred[6]{0}")
        case(n, hlo, [ta, tb], [fn(total_key(ta), total_key(tb))])
    for dt, ty in ((np.int32, "SIGNED"), (np.uint32, "UNSIGNED"), (np.int8, "SIGNED"), (np.uint64, "UNSIGNED")):
        info = np.iinfo(dt)
        a = np.array([info.min, 0, 5, info.max], dtype=dt)
        b = np.array([0, info.max, 5, 1], dtype=dt)
        t = hlo_type(dt)
        for d, fn in (("LT", np.less), ("GE", np.greater_equal), ("NE", np.not_equal)):
            n = "compare_%s_%s" % (d.lower(), t)
            hlo = module(n, [(dt, (4,)), (dt, (4,))],
                         ["%%r = pred[4]{0} compare(%%p0, %%p1), direction=%s, type=%s" % (d, ty)],
                         "pred[4]{0}")
            case(n, hlo, [a, b], [fn(a, b)])
    z = np.array([1 + 1j, 2 + 0j, 0 + 3j], dtype=np.complex64)
    w = np.array([1 + 1j, 2 + 1j, 1 + 3j], dtype=np.complex64)
    hlo = module("compare_eq_c64", [(np.complex64, (3,)), (np.complex64, (3,))],
                 ["%r = pred[3]{0} compare(%p0, %p1), direction=EQ"], "pred[3]{0}")
    case("compare_eq_c64", hlo, [z, w], [z == w])
    p = np.array([True, False, True]), np.array([False, False, True])
    hlo = module("compare_lt_pred", [(np.bool_, (3,)), (np.bool_, (3,))],
                 ["%r = pred[3]{0} compare(%p0, %p1), direction=LT"], "pred[3]{0}")
    case("compare_lt_pred", hlo, list(p), [p[0] < p[1]])


def select_clamp_cases():
    c = np.array([[True, False, True], [False, False, True]])
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = -np.arange(6, dtype=np.float32).reshape(2, 3) - 10
    hlo = module("select_f32", [(np.bool_, (2, 3)), (np.float32, (2, 3)), (np.float32, (2, 3))],
                 ["%r = f32[2,3]{1,0} select(%p0, %p1, %p2)"], "f32[2,3]{1,0}")
    case("select_f32", hlo, [c, a, b], [np.where(c, a, b)])
    ai, bi = a.astype(np.int64), b.astype(np.int64)
    hlo = module("select_scalar_pred_s64", [(np.bool_, ()), (np.int64, (2, 3)), (np.int64, (2, 3))],
                 ["%r = s64[2,3]{1,0} select(%p0, %p1, %p2)"], "s64[2,3]{1,0}")
    case("select_scalar_pred_s64", hlo, [np.array(False), ai, bi], [bi])
    x = np.array([-5, -1, 0, 3, 9, 12], dtype=np.int32)
    lo, hi = np.array(-2, dtype=np.int32), np.array(8, dtype=np.int32)
    hlo = module("clamp_s32", [(np.int32, ()), (np.int32, (6,)), (np.int32, ())],
                 ["%r = s32[6]{0} clamp(%p0, %p1, %p2)"], "s32[6]{0}")
    case("clamp_s32", hlo, [lo, x, hi], [np.clip(x, lo, hi)])
    xf = np.array([-5.5, -1, 0, 3, 9, np.nan], dtype=np.float64)
    lof = np.array([-2, -2, -2, 4, 4, 0], dtype=np.float64)
    hif = np.array([8, 8, 8, 8, 8, 1], dtype=np.float64)
    hlo = module("clamp_f64", [(np.float64, (6,)), (np.float64, (6,)), (np.float64, (6,))],
                 ["%r = f64[6]{0} clamp(%p0, %p1, %p2)"], "f64[6]{0}")
    case("clamp_f64", hlo, [lof, xf, hif], [np.minimum(np.maximum(xf, lof), hif)])


def convert_cases():
    f = np.array([-1e10, -129.7, -1.5, -0.5, 0.5, 1.5, 300.2, 1e10, np.nan, np.inf], dtype=np.float32)

    def sat(v, dt):
        info = np.iinfo(dt)
        out = []
        for t in v.tolist():
            if math.isnan(t):
                out.append(0)
            elif t <= info.min:
                out.append(info.min)
            elif t >= info.max:
                out.append(info.max)
            else:
                out.append(int(t))  # truncation toward zero
        return np.array(out, dtype=dt)

    for dt in (np.int8, np.int32, np.int64, np.uint8, np.uint32):
        t = hlo_type(dt)
        n = "convert_f32_to_%s" % t
        hlo = module(n, [(np.float32, f.shape)], ["%%r = %s convert(%%p0)" % shape_str(dt, f.shape)],
                     shape_str(dt, f.shape))
        case(n, hlo, [f], [sat(f, dt)])
    i = np.array([-2**31, -1, 0, 1, 2**24 + 1, 2**31 - 1], dtype=np.int32)
    for dt in (np.float32, np.float64, np.float16, np.int8, np.uint16, np.int64, np.bool_):
        t = hlo_type(dt)
        n = "convert_s32_to_%s" % t
        hlo = module(n, [(np.int32, i.shape)], ["%%r = %s convert(%%p0)" % shape_str(dt, i.shape)],
                     shape_str(dt, i.shape))
        with np.errstate(over="ignore"):
            e = (i != 0) if dt == np.bool_ else i.astype(dt)
        case(n, hlo, [i], [e])
    d = np.array([1.0000001192092896, 3.4e38, 1e39, -1e-46, 0.1, np.nan], dtype=np.float64)
    hlo = module("convert_f64_to_f32", [(np.float64, d.shape)], ["%r = f32[6]{0} convert(%p0)"], "f32[6]{0}")
    with np.errstate(over="ignore"):
        case("convert_f64_to_f32", hlo, [d], [d.astype(np.float32)])
    x = np.array([1.0, 1.00390625, 1.01171875, 3.14159, -2.5e-3, 65504.0, 1e30, np.nan], dtype=np.float32)
    hlo = module("convert_f32_to_bf16", [(np.float32, x.shape)], ["%r = bf16[8]{0} convert(%p0)"], "bf16[8]{0}")
    case("convert_f32_to_bf16", hlo, [x], [f32_to_bf16_bits(x)], {"bf16": True, "exact": True})
    hlo = module("convert_f32_to_f16", [(np.float32, x.shape)], ["%r = f16[8]{0} convert(%p0)"], "f16[8]{0}")
    with np.errstate(over="ignore"):
        case("convert_f32_to_f16", hlo, [x], [x.astype(np.float16)])
    b = f32_to_bf16_bits(x)
    hlo = module("convert_bf16_to_f32", [(BF16, x.shape)], ["%r = f32[8]{0} convert(%p0)"], "f32[8]{0}")
    case("convert_bf16_to_f32", hlo, [b], [bf16_bits_to_f32(b)])
    p = np.array([True, False, True])
    hlo = module("convert_pred_to_f32", [(np.bool_, (3,))], ["%r = f32[3]{0} convert(%p0)"], "f32[3]{0}")
    case("convert_pred_to_f32", hlo, [p], [p.astype(np.float32)])
    z = np.array([1.5 - 2j, -3 + 4j], dtype=np.complex64)
    hlo = module("convert_f32_to_c64", [(np.float32, (2,))], ["%r = c64[2]{0} convert(%p0)"], "c64[2]{0}")
    case("convert_f32_to_c64", hlo, [np.real(z).astype(np.float32)], [np.real(z).astype(np.complex64)])
    hlo = module("convert_c64_to_c128", [(np.complex64, (2,))], ["%r = c128[2]{0} convert(%p0)"], "c128[2]{0}")
    case("convert_c64_to_c128", hlo, [z], [z.astype(np.complex128)])


def bitcast_convert_cases():
    f = np.array([1.0, -2.0, 0.0, np.inf], dtype=np.float32)
    hlo = module("bitcast_convert_f32_to_s32", [(np.float32, (4,))], ["%r = s32[4]{0} bitcast-convert(%p0)"],
                 "s32[4]{0}")
    case("bitcast_convert_f32_to_s32", hlo, [f], [f.view(np.int32)])
    hlo = module("bitcast_convert_f32_to_u8x4", [(np.float32, (4,))],
                 ["%r = u8[4,4]{1,0} bitcast-convert(%p0)"], "u8[4,4]{1,0}")
    case("bitcast_convert_f32_to_u8x4", hlo, [f], [f.view(np.uint8).reshape(4, 4)])
    u = np.arange(8, dtype=np.uint16).reshape(4, 2) * 4099
    hlo = module("bitcast_convert_u16x2_to_f32", [(np.uint16, (4, 2))],
                 ["%r = f32[4]{0} bitcast-convert(%p0)"], "f32[4]{0}")
    case("bitcast_convert_u16x2_to_f32", hlo, [u], [u.reshape(-1).view(np.float32)])
    d = np.array([1.0, -0.5], dtype=np.float64)
    hlo = module("bitcast_convert_f64_to_u64", [(np.float64, (2,))], ["%r = u64[2]{0} bitcast-convert(%p0)"],
                 "u64[2]{0}")
    case("bitcast_convert_f64_to_u64", hlo, [d], [d.view(np.uint64)])


def reduce_precision_cases():
    x = np.array([1.0, 1.00390625, 1.005859375, 3.14159265, 1e-40, 3.4e38, np.nan, -np.inf], dtype=np.float32)
    # To bf16 precision (8 exponent bits, 7 mantissa bits): equals bf16 rounding.
    hlo = module("reduce_precision_e8m7_f32", [(np.float32, x.shape)],
                 ["%r = f32[8]{0} reduce-precision(%p0), exponent_bits=8, mantissa_bits=7"], "f32[8]{0}")
    e = bf16_bits_to_f32(f32_to_bf16_bits(x))
    case("reduce_precision_e8m7_f32", hlo, [x], [e], {"exact": True})
    # To f16 precision (5, 10): equals f16 rounding incl. overflow to inf and flush of tiny values.
    y = np.array([1.0, 1.0004883, 65519.0, 65520.0, 1e-8, 6.2e-5, np.nan, -3.0], dtype=np.float32)
    hlo = module("reduce_precision_e5m10_f32", [(np.float32, y.shape)],
                 ["%r = f32[8]{0} reduce-precision(%p0), exponent_bits=5, mantissa_bits=10"], "f32[8]{0}")
    with np.errstate(over="ignore"):
        e = y.astype(np.float16).astype(np.float32)
    case("reduce_precision_e5m10_f32", hlo, [y], [e], {"exact": True})


# ---- data movement ------------------------------------------------------------------------
def data_cases():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    hlo = module("broadcast_f32", [(np.float32, (3,))],
                 ["%r = f32[2,3,4]{2,1,0} broadcast(%p0), dimensions={1}"], "f32[2,3,4]{2,1,0}")
    v = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    case("broadcast_f32", hlo, [v], [np.broadcast_to(v[None, :, None], (2, 3, 4)).copy()])
    hlo = module("broadcast_scalar_s16", [(np.int16, ())], ["%r = s16[2,2]{1,0} broadcast(%p0), dimensions={}"],
                 "s16[2,2]{1,0}")
    case("broadcast_scalar_s16", hlo, [np.array(-7, dtype=np.int16)], [np.full((2, 2), -7, dtype=np.int16)])
    hlo = module("reshape_f32", [(np.float32, (2, 3, 4))], ["%r = f32[4,6]{1,0} reshape(%p0)"], "f32[4,6]{1,0}")
    case("reshape_f32", hlo, [a], [a.reshape(4, 6)])
    hlo = module("transpose_f32", [(np.float32, (2, 3, 4))],
                 ["%r = f32[4,2,3]{2,1,0} transpose(%p0), dimensions={2,0,1}"], "f32[4,2,3]{2,1,0}")
    case("transpose_f32", hlo, [a], [np.transpose(a, (2, 0, 1)).copy()])
    c = (np.arange(12).reshape(3, 4) + 1j * np.arange(12).reshape(3, 4)).astype(np.complex128)
    hlo = module("transpose_c128", [(np.complex128, (3, 4))],
                 ["%r = c128[4,3]{1,0} transpose(%p0), dimensions={1,0}"], "c128[4,3]{1,0}")
    case("transpose_c128", hlo, [c], [c.T.copy()])
    m = np.arange(60, dtype=np.int32).reshape(6, 10)
    hlo = module("slice_strided_s32", [(np.int32, (6, 10))],
                 ["%r = s32[3,3]{1,0} slice(%p0), slice={[1:6:2], [0:9:3]}"], "s32[3,3]{1,0}")
    case("slice_strided_s32", hlo, [m], [m[1:6:2, 0:9:3].copy()])
    hlo = module("slice_u8", [(np.uint8, (6, 10))], ["%r = u8[2,4]{1,0} slice(%p0), slice={[4:6], [3:7]}"],
                 "u8[2,4]{1,0}")
    case("slice_u8", hlo, [m.astype(np.uint8)], [m.astype(np.uint8)[4:6, 3:7].copy()])
    # dynamic-slice with clamping: start (5, -3) clamped to (6-2, 0) = (4, 0)
    body = ["%i = s32[] parameter(1)", "%j = s32[] parameter(2)",
            "%r = s32[2,4]{1,0} dynamic-slice(%p0, %i, %j), dynamic_slice_sizes={2,4}"]
    hlo = module("dynamic_slice_clamp_s32", [(np.int32, (6, 10))], body, "s32[2,4]{1,0}")
    hlo = hlo.replace("(p0: s32[6,10]{1,0})", "(p0: s32[6,10]{1,0}, i: s32[], j: s32[])")
    case("dynamic_slice_clamp_s32", hlo, [m, np.array(5, np.int32), np.array(-3, np.int32)], [m[4:6, 0:4].copy()])
    upd = -np.ones((2, 3), dtype=np.float64)
    mf = m.astype(np.float64)
    exp = mf.copy()
    exp[4:6, 7:10] = upd  # start (9, 8) clamped to (4, 7)
    body = ["%u = f64[2,3]{1,0} parameter(1)", "%i = s64[] parameter(2)", "%j = s64[] parameter(3)",
            "%r = f64[6,10]{1,0} dynamic-update-slice(%p0, %u, %i, %j)"]
    hlo = module("dynamic_update_slice_clamp_f64", [(np.float64, (6, 10))], body, "f64[6,10]{1,0}")
    hlo = hlo.replace("(p0: f64[6,10]{1,0})", "(p0: f64[6,10]{1,0}, u: f64[2,3]{1,0}, i: s64[], j: s64[])")
    case("dynamic_update_slice_clamp_f64", hlo, [mf, upd, np.array(9, np.int64), np.array(8, np.int64)], [exp])
    x, y = np.arange(6, dtype=np.int64).reshape(2, 3), -np.arange(8, dtype=np.int64).reshape(2, 4)
    hlo = module("concatenate_s64", [(np.int64, (2, 3)), (np.int64, (2, 4))],
                 ["%r = s64[2,7]{1,0} concatenate(%p0, %p1), dimensions={1}"], "s64[2,7]{1,0}")
    case("concatenate_s64", hlo, [x, y], [np.concatenate([x, y], axis=1)])
    # pad: low -1 (crop), high 2, interior 1 on dim 0; low 1 high 0 on dim 1
    p = np.arange(1, 7, dtype=np.float32).reshape(3, 2)
    inter = np.zeros((5, 2), dtype=np.float32) + 9
    inter[::2] = p
    exp = np.full((5 - 1 + 2, 3), 9, dtype=np.float32)
    exp[0:4, 1:3] = inter[1:5]
    body = ["%v = f32[] parameter(1)", "%r = f32[6,3]{1,0} pad(%p0, %v), padding=-1_2_1x1_0"]
    hlo = module("pad_negative_interior_f32", [(np.float32, (3, 2))], body, "f32[6,3]{1,0}")
    hlo = hlo.replace("(p0: f32[3,2]{1,0})", "(p0: f32[3,2]{1,0}, v: f32[])")
    case("pad_negative_interior_f32", hlo, [p, np.array(9, np.float32)], [exp])
    hlo = module("iota_s32", [], ["%r = s32[3,4]{1,0} iota(), iota_dimension=1"], "s32[3,4]{1,0}")
    case("iota_s32", hlo, [], [np.broadcast_to(np.arange(4, dtype=np.int32), (3, 4)).copy()])
    hlo = module("iota_f16", [], ["%r = f16[5]{0} iota(), iota_dimension=0"], "f16[5]{0}")
    case("iota_f16", hlo, [], [np.arange(5, dtype=np.float16)])
    hlo = module("reverse_f32", [(np.float32, (2, 3, 4))],
                 ["%r = f32[2,3,4]{2,1,0} reverse(%p0), dimensions={0,2}"], "f32[2,3,4]{2,1,0}")
    case("reverse_f32", hlo, [a], [a[::-1, :, ::-1].copy()])
    hlo = module("copy_bf16", [(BF16, (2, 2))], ["%r = bf16[2,2]{1,0} copy(%p0)"], "bf16[2,2]{1,0}")
    bb = f32_to_bf16_bits(np.array([[1.5, -2], [3.25, 0.1]], dtype=np.float32))
    case("copy_bf16", hlo, [bb], [bb], {"bf16": True, "exact": True})
    hlo = module("bitcast_f32", [(np.float32, (2, 3, 4))], ["%r = f32[6,4]{1,0} bitcast(%p0)"], "f32[6,4]{1,0}")
    case("bitcast_f32", hlo, [a], [a.reshape(6, 4)])
    big = (np.arange(4096, dtype=np.float32) * 0.25 - 100).reshape(64, 64)
    vals = ", ".join("{%s}" % ", ".join(repr(float(v)) for v in row) for row in big)
    body = ["%%c = f32[64,64]{1,0} constant({%s})" % vals, "%r = f32[64,64]{1,0} add(%p0, %c)"]
    hlo = module("constant_large_f32", [(np.float32, (64, 64))], body, "f32[64,64]{1,0}")
    ones = np.ones((64, 64), dtype=np.float32)
    case("constant_large_f32", hlo, [ones], [ones + big])
    body = ["%c = c64[2]{0} constant({(1, 2), (-3.5, 0.25)})", "%r = c64[2]{0} multiply(%p0, %c)"]
    hlo = module("constant_c64", [(np.complex64, (2,))], body, "c64[2]{0}")
    z = np.array([2 + 1j, 1 - 1j], dtype=np.complex64)
    case("constant_c64", hlo, [z], [z * np.array([1 + 2j, -3.5 + 0.25j], dtype=np.complex64)])
    body = ["%c = pred[3]{0} constant({true, false, true})", "%r = pred[3]{0} and(%p0, %c)"]
    hlo = module("constant_pred", [(np.bool_, (3,))], body, "pred[3]{0}")
    case("constant_pred", hlo, [np.array([True, True, False])], [np.array([True, False, False])])
    # tuple / get-tuple-element / opt-barrier / after-all
    body = ["%t = (f32[2]{0}, s32[]) tuple(%p0, %p1)",
            "%b = (f32[2]{0}, s32[]) opt-barrier(%t)",
            "%tok = token[] after-all()",
            "%g0 = f32[2]{0} get-tuple-element(%b), index=0",
            "%g1 = s32[] get-tuple-element(%b), index=1",
            "%n = f32[2]{0} negate(%g0)",
            "%r = (s32[], f32[2]{0}, f32[2]{0}) tuple(%g1, %n, %p0)"]
    hlo = module("tuple_gte_opt_barrier", [(np.float32, (2,)), (np.int32, ())], body,
                 "(s32[], f32[2]{0}, f32[2]{0})")
    fv = np.array([1.5, -2.0], dtype=np.float32)
    case("tuple_gte_opt_barrier", hlo, [fv, np.array(7, np.int32)], [np.array(7, np.int32), -fv, fv])


# ---- reductions, dot, control flow ------------------------------------------------------
ADD_F32 = """%add_f32 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}"""


def reduce_cases():
    a = (np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7) * 0.5
    body = ["%z = f32[] constant(0)", "%r = f32[3]{0} reduce(%p0, %z), dimensions={0,2}, to_apply=%add_f32"]
    hlo = module_with("reduce_sum_f32", ADD_F32, [(np.float32, (2, 3, 4))], body, "f32[3]{0}")
    case("reduce_sum_f32", hlo, [a], [a.sum(axis=(0, 2))], {"rtol": 1e-6, "atol": 1e-6})
    mx = """%max_s32 (a: s32[], b: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %m = s32[] maximum(%a, %b)
}"""
    ai = np.array([[3, -9, 12], [7, 7, -1]], dtype=np.int32)
    body = ["%z = s32[] constant(-2147483648)", "%r = s32[2]{0} reduce(%p0, %z), dimensions={1}, to_apply=%max_s32"]
    hlo = module_with("reduce_max_s32", mx, [(np.int32, (2, 3))], body, "s32[2]{0}")
    case("reduce_max_s32", hlo, [ai], [ai.max(axis=1)])
    # variadic: argmax along dim 1 (value, index), ties -> smaller index
    am = """%argmax (av: f32[], ai: s32[], bv: f32[], bi: s32[]) -> (f32[], s32[]) {
  %av = f32[] parameter(0)
  %ai = s32[] parameter(1)
  %bv = f32[] parameter(2)
  %bi = s32[] parameter(3)
  %gt = pred[] compare(%av, %bv), direction=GT
  %eq = pred[] compare(%av, %bv), direction=EQ
  %lt = pred[] compare(%ai, %bi), direction=LT
  %tie = pred[] and(%eq, %lt)
  %take_a = pred[] or(%gt, %tie)
  %v = f32[] select(%take_a, %av, %bv)
  %i = s32[] select(%take_a, %ai, %bi)
  ROOT %t = (f32[], s32[]) tuple(%v, %i)
}"""
    v = np.array([[1.0, 5.0, 5.0, -2.0], [0.5, -1.0, 3.0, 3.5]], dtype=np.float32)
    body = ["%idx = s32[2,4]{1,0} iota(), iota_dimension=1", "%ninf = f32[] constant(-inf)",
            "%z = s32[] constant(0)",
            "%r = (f32[2]{0}, s32[2]{0}) reduce(%p0, %idx, %ninf, %z), dimensions={1}, to_apply=%argmax"]
    hlo = module_with("reduce_variadic_argmax", am, [(np.float32, (2, 4))], body, "(f32[2]{0}, s32[2]{0})")
    case("reduce_variadic_argmax", hlo, [v], [v.max(axis=1), v.argmax(axis=1).astype(np.int32)])
    andc = """%and_pred (a: pred[], b: pred[]) -> pred[] {
  %a = pred[] parameter(0)
  %b = pred[] parameter(1)
  ROOT %r = pred[] and(%a, %b)
}"""
    pv = np.array([[True, True], [True, False], [False, False]])
    body = ["%t = pred[] constant(true)", "%r = pred[3]{0} reduce(%p0, %t), dimensions={1}, to_apply=%and_pred"]
    hlo = module_with("reduce_and_pred", andc, [(np.bool_, (3, 2))], body, "pred[3]{0}")
    case("reduce_and_pred", hlo, [pv], [pv.all(axis=1)])
    addf64 = ADD_F32.replace("f32", "f64").replace("add_f32", "add_f64")
    d = np.linspace(-1, 1, 30).reshape(5, 6)
    body = ["%z = f64[] constant(0)", "%r = f64[] reduce(%p0, %z), dimensions={0,1}, to_apply=%add_f64"]
    hlo = module_with("reduce_all_f64", addf64, [(np.float64, (5, 6))], body, "f64[]")
    case("reduce_all_f64", hlo, [d], [np.array(d.sum())], {"rtol": 1e-14, "atol": 1e-14})


def dot_cases():
    a = RNG.standard_normal((4, 5)).astype(np.float32)
    b = RNG.standard_normal((5, 3)).astype(np.float32)
    hlo = module("dot_matmul_f32", [(np.float32, (4, 5)), (np.float32, (5, 3))],
                 ["%r = f32[4,3]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"],
                 "f32[4,3]{1,0}")
    case("dot_matmul_f32", hlo, [a, b], [(a.astype(np.float64) @ b).astype(np.float32)], {"rtol": 1e-5, "atol": 1e-5})
    # batch dims and transposed operands: lhs [K, B, M], rhs [N, B, K] -> [B, M, N]
    lhs = RNG.standard_normal((6, 2, 3))
    rhs = RNG.standard_normal((4, 2, 6))
    e = np.einsum("kbm,nbk->bmn", lhs, rhs)
    hlo = module("dot_batch_transposed_f64", [(np.float64, (6, 2, 3)), (np.float64, (4, 2, 6))],
                 ["%r = f64[2,3,4]{2,1,0} dot(%p0, %p1), lhs_batch_dims={1}, lhs_contracting_dims={0}, "
                  "rhs_batch_dims={1}, rhs_contracting_dims={2}"], "f64[2,3,4]{2,1,0}")
    case("dot_batch_transposed_f64", hlo, [lhs, rhs], [e], {"rtol": 1e-12, "atol": 1e-12})
    # two contracting dims
    l2 = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    r2 = RNG.standard_normal((4, 5, 2)).astype(np.float32)
    hlo = module("dot_two_contracting_f32", [(np.float32, (3, 4, 5)), (np.float32, (4, 5, 2))],
                 ["%r = f32[3,2]{1,0} dot(%p0, %p1), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}"],
                 "f32[3,2]{1,0}")
    case("dot_two_contracting_f32", hlo, [l2, r2],
         [np.einsum("ikl,klj->ij", l2.astype(np.float64), r2).astype(np.float32)], {"rtol": 1e-5, "atol": 1e-5})
    # big enough for a GEMM kernel
    A = RNG.standard_normal((67, 129)).astype(np.float32)
    B = RNG.standard_normal((129, 45)).astype(np.float32)
    hlo = module("dot_large_f32", [(np.float32, (67, 129)), (np.float32, (129, 45))],
                 ["%r = f32[67,45]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"],
                 "f32[67,45]{1,0}")
    case("dot_large_f32", hlo, [A, B], [(A.astype(np.float64) @ B).astype(np.float32)], {"rtol": 1e-4, "atol": 1e-4})
    # s8 x s8 -> s32 (preferred element type)
    i1 = RNG.integers(-128, 128, (3, 16)).astype(np.int8)
    i2 = RNG.integers(-128, 128, (16, 2)).astype(np.int8)
    hlo = module("dot_s8_to_s32", [(np.int8, (3, 16)), (np.int8, (16, 2))],
                 ["%r = s32[3,2]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"],
                 "s32[3,2]{1,0}")
    case("dot_s8_to_s32", hlo, [i1, i2], [(i1.astype(np.int32) @ i2.astype(np.int32))])
    # bf16 x bf16 -> f32
    bl = f32_to_bf16_bits(RNG.standard_normal((2, 8)).astype(np.float32))
    br = f32_to_bf16_bits(RNG.standard_normal((8, 3)).astype(np.float32))
    hlo = module("dot_bf16_to_f32", [(BF16, (2, 8)), (BF16, (8, 3))],
                 ["%r = f32[2,3]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"],
                 "f32[2,3]{1,0}")
    case("dot_bf16_to_f32", hlo, [bl, br],
         [(bf16_bits_to_f32(bl).astype(np.float64) @ bf16_bits_to_f32(br)).astype(np.float32)],
         {"rtol": 1e-5, "atol": 1e-5})
    # vector dot and c64
    z1 = (RNG.standard_normal(5) + 1j * RNG.standard_normal(5)).astype(np.complex64)
    z2 = (RNG.standard_normal(5) + 1j * RNG.standard_normal(5)).astype(np.complex64)
    hlo = module("dot_vector_c64", [(np.complex64, (5,)), (np.complex64, (5,))],
                 ["%r = c64[] dot(%p0, %p1), lhs_contracting_dims={0}, rhs_contracting_dims={0}"], "c64[]")
    case("dot_vector_c64", hlo, [z1, z2], [np.array(np.dot(z1.astype(np.complex128), z2), dtype=np.complex64)],
         {"rtol": 1e-5, "atol": 1e-5})


def control_cases():
    # while: sum of 1..10 with a (counter, acc) tuple state
    comps = """%cond (s: (s32[], s32[])) -> pred[] {
  %s = (s32[], s32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (s: (s32[], s32[])) -> (s32[], s32[]) {
  %s = (s32[], s32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %acc = s32[] get-tuple-element(%s), index=1
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %acc1 = s32[] add(%acc, %i1)
  ROOT %t = (s32[], s32[]) tuple(%i1, %acc1)
}"""
    body = ["%z = s32[] constant(0)", "%init = (s32[], s32[]) tuple(%z, %p0)",
            "%w = (s32[], s32[]) while(%init), condition=%cond, body=%body",
            "%r = s32[] get-tuple-element(%w), index=1"]
    hlo = module_with("while_sum_s32", comps, [(np.int32, ())], body, "s32[]")
    case("while_sum_s32", hlo, [np.array(100, np.int32)], [np.array(155, np.int32)])
    # while over an array state: x <- x * 2 until x[0] >= 100
    comps = """%cond (x: f32[3]) -> pred[] {
  %x = f32[3]{0} parameter(0)
  %x0 = f32[1]{0} slice(%x), slice={[0:1]}
  %s = f32[] reshape(%x0)
  %lim = f32[] constant(100)
  ROOT %lt = pred[] compare(%s, %lim), direction=LT
}

%body (x: f32[3]) -> f32[3] {
  %x = f32[3]{0} parameter(0)
  ROOT %d = f32[3]{0} add(%x, %x)
}"""
    body = ["%r = f32[3]{0} while(%p0), condition=%cond, body=%body"]
    hlo = module_with("while_array_f32", comps, [(np.float32, (3,))], body, "f32[3]{0}")
    case("while_array_f32", hlo, [np.array([3, 1, -2], np.float32)], [np.array([192, 64, -128], np.float32)])
    # conditional with pred
    comps = """%neg (x: f32[2]) -> f32[2] {
  %x = f32[2]{0} parameter(0)
  ROOT %n = f32[2]{0} negate(%x)
}

%dbl (y: f32[2]) -> f32[2] {
  %y = f32[2]{0} parameter(0)
  ROOT %d = f32[2]{0} add(%y, %y)
}"""
    v = np.array([1.5, -4], np.float32)
    for flag, e in ((True, -v), (False, v + v)):
        n = "conditional_pred_%s" % str(flag).lower()
        body = ["%c = pred[] parameter(1)",
                "%r = f32[2]{0} conditional(%c, %p0, %p0), true_computation=%neg, false_computation=%dbl"]
        hlo = module_with(n, comps, [(np.float32, (2,))], body, "f32[2]{0}")
        hlo = hlo.replace("(p0: f32[2]{0})", "(p0: f32[2]{0}, c: pred[])")
        case(n, hlo, [v, np.array(flag)], [e])
    comps3 = comps + """

%sq (z: f32[2]) -> f32[2] {
  %z = f32[2]{0} parameter(0)
  ROOT %m = f32[2]{0} multiply(%z, %z)
}"""
    for idx, e in ((0, -v), (1, v + v), (2, v * v), (7, v * v), (-1, v * v)):
        n = "conditional_index_%s" % (str(idx) if idx >= 0 else "neg1")
        body = ["%k = s32[] parameter(1)",
                "%r = f32[2]{0} conditional(%k, %p0, %p0, %p0), branch_computations={%neg, %dbl, %sq}"]
        hlo = module_with(n, comps3, [(np.float32, (2,))], body, "f32[2]{0}")
        hlo = hlo.replace("(p0: f32[2]{0})", "(p0: f32[2]{0}, k: s32[])")
        case(n, hlo, [v, np.array(idx, np.int32)], [e])
    # call
    comps = """%fma (a: f64[3], b: f64[3], c: f64[3]) -> f64[3] {
  %a = f64[3]{0} parameter(0)
  %b = f64[3]{0} parameter(1)
  %c = f64[3]{0} parameter(2)
  %m = f64[3]{0} multiply(%a, %b)
  ROOT %s = f64[3]{0} add(%m, %c)
}"""
    x = np.array([1.0, 2.0, -3.0])
    body = ["%r = f64[3]{0} call(%p0, %p0, %p0), to_apply=%fma"]
    hlo = module_with("call_f64", comps, [(np.float64, (3,))], body, "f64[3]{0}")
    case("call_f64", hlo, [x], [x * x + x])
    # map with a two-operand computation
    comps = """%hyp (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %aa = f32[] multiply(%a, %a)
  %bb = f32[] multiply(%b, %b)
  %s = f32[] add(%aa, %bb)
  ROOT %r = f32[] sqrt(%s)
}"""
    p0 = np.array([[3, 5], [8, 0]], np.float32)
    p1 = np.array([[4, 12], [15, 2]], np.float32)
    body = ["%r = f32[2,2]{1,0} map(%p0, %p1), dimensions={0,1}, to_apply=%hyp"]
    hlo = module_with("map_hypot_f32", comps, [(np.float32, (2, 2)), (np.float32, (2, 2))], body, "f32[2,2]{1,0}")
    case("map_hypot_f32", hlo, [p0, p1], [np.hypot(p0, p1)])


def batch_norm_cases():
    x = (np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 0.37 - 2).astype(np.float32)
    scale = np.array([1.0, 0.5, 2.0], np.float32)
    offset = np.array([0.0, 1.0, -1.0], np.float32)
    eps = 0.001
    mean = x.astype(np.float64).mean(axis=(0, 2))
    var = x.astype(np.float64).var(axis=(0, 2))
    norm = (x - mean[None, :, None]) / np.sqrt(var[None, :, None] + eps) * scale[None, :, None] + offset[None, :, None]
    hlo = module("batch_norm_training_f32", [(np.float32, (2, 3, 4)), (np.float32, (3,)), (np.float32, (3,))],
                 ["%r = (f32[2,3,4]{2,1,0}, f32[3]{0}, f32[3]{0}) batch-norm-training(%p0, %p1, %p2), "
                  "epsilon=0.001, feature_index=1"], "(f32[2,3,4]{2,1,0}, f32[3]{0}, f32[3]{0})")
    case("batch_norm_training_f32", hlo, [x, scale, offset],
         [norm.astype(np.float32), mean.astype(np.float32), var.astype(np.float32)], {"rtol": 1e-4, "atol": 1e-4})
    m = np.array([0.5, -1.0, 2.0], np.float32)
    v = np.array([1.0, 4.0, 0.25], np.float32)
    inf = (x - m[None, :, None]) / np.sqrt(v[None, :, None] + eps) * scale[None, :, None] + offset[None, :, None]
    params = [(np.float32, (2, 3, 4))] + [(np.float32, (3,))] * 4
    hlo = module("batch_norm_inference_f32", params,
                 ["%r = f32[2,3,4]{2,1,0} batch-norm-inference(%p0, %p1, %p2, %p3, %p4), epsilon=0.001, feature_index=1"],
                 "f32[2,3,4]{2,1,0}")
    case("batch_norm_inference_f32", hlo, [x, scale, offset, m, v], [inf.astype(np.float32)], {"rtol": 1e-5, "atol": 1e-5})
    batch_norm_grad_cases()


def batch_norm_grad_reference(x, scale, mean, var, dy, eps, feature_index):
    """The semantics document's formulas, in float64: c and d per feature, then the three grads."""
    axes = tuple(a for a in range(x.ndim) if a != feature_index)
    bshape = [1] * x.ndim
    bshape[feature_index] = -1
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    mu = mean.astype(np.float64).reshape(bshape)
    var_eps = var.astype(np.float64).reshape(bshape) + eps
    gamma = scale.astype(np.float64).reshape(bshape)
    n = x.size // x.shape[feature_index]
    c = (dy * (x - mu) / var_eps).sum(axis=axes, keepdims=True) / n
    d = dy.sum(axis=axes, keepdims=True) / n
    grad_x = gamma / np.sqrt(var_eps) * (dy - d - c * (x - mu))
    grad_scale = (dy * (x - mu) / np.sqrt(var_eps)).sum(axis=axes)
    grad_offset = dy.sum(axis=axes)
    return grad_x, grad_scale, grad_offset


def batch_norm_grad_cases():
    for dt, fi, shape in ((np.float32, 1, (2, 3, 4)), (np.float64, 2, (3, 2, 5))):
        tn = hlo_type(dt)
        nf = shape[fi]
        x = (np.arange(np.prod(shape)).reshape(shape) * 0.31 - 1.5).astype(dt)
        dy = (np.cos(np.arange(np.prod(shape))).reshape(shape) * 0.8).astype(dt)
        scale = np.linspace(0.5, 2.0, nf).astype(dt)
        mean = np.linspace(-0.25, 0.75, nf).astype(dt)  # not the batch's statistics: the formula
        var = np.linspace(0.5, 3.0, nf).astype(dt)       # takes them as given
        gx, gs, go = batch_norm_grad_reference(x, scale, mean, var, dy, 0.01, fi)
        xs, fs = shape_str(dt, shape), shape_str(dt, (nf,))
        name = "batch_norm_grad_%s" % tn
        result = "(%s, %s, %s)" % (xs, fs, fs)
        hlo = module(name, [(dt, shape), (dt, (nf,)), (dt, (nf,)), (dt, (nf,)), (dt, shape)],
                     ["%%r = %s batch-norm-grad(%%p0, %%p1, %%p2, %%p3, %%p4), epsilon=0.01, feature_index=%d"
                      % (result, fi)], result)
        tol = {"rtol": 1e-5, "atol": 1e-5} if dt == np.float32 else {"rtol": 1e-12, "atol": 1e-12}
        case(name, hlo, [x, scale, mean, var, dy], [gx.astype(dt), gs.astype(dt), go.astype(dt)], tol)


def conv_reference(x, w, stride, pad, lhs_dilate=(1, 1), rhs_dilate=(1, 1), reversal=(0, 0), groups=1):
    """XLA convolution of NCHW x and OIHW w, straight from the semantics: the input dilated
    (zeros between elements) and padded, the kernel dilated and reversed where asked, each
    output the sum over its group's input features and the window."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    b, c, h, wd = x.shape
    xd = np.zeros((b, c, (h - 1) * lhs_dilate[0] + 1, (wd - 1) * lhs_dilate[1] + 1))
    xd[:, :, ::lhs_dilate[0], ::lhs_dilate[1]] = x
    xp = np.pad(xd, ((0, 0), (0, 0), pad[0], pad[1]))
    if reversal[0]:
        w = w[:, :, ::-1, :]
    if reversal[1]:
        w = w[:, :, :, ::-1]
    o, cg, kh, kw = w.shape
    eh, ew = (kh - 1) * rhs_dilate[0] + 1, (kw - 1) * rhs_dilate[1] + 1
    oh = (xp.shape[2] - eh) // stride[0] + 1
    ow = (xp.shape[3] - ew) // stride[1] + 1
    out = np.zeros((b, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                win = xs[:, :, i * rhs_dilate[0]:i * rhs_dilate[0] + (oh - 1) * stride[0] + 1:stride[0],
                         j * rhs_dilate[1]:j * rhs_dilate[1] + (ow - 1) * stride[1] + 1:stride[1]]
                out[:, g * og:(g + 1) * og] += np.einsum("bchw,oc->bohw", win, w[g * og:(g + 1) * og, :, i, j])
    return out


def convolution_cases():
    """Convolutions large enough for hloc's GEMM path (im2col + the runtime's matrix product)."""
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (2, 8, 9, 9)).astype(np.float32)
    w = rng.uniform(-1, 1, (16, 8, 3, 3)).astype(np.float32)
    ref = conv_reference(x, w, (2, 2), ((1, 1), (1, 1)))
    hlo = module("conv_gemm_nchw_f32", [(np.float32, x.shape), (np.float32, w.shape)],
                 ["%%r = %s convolution(%%p0, %%p1), window={size=3x3 stride=2x2 pad=1_1x1_1}, "
                  "dim_labels=bf01_oi01->bf01" % shape_str(np.float32, ref.shape)], shape_str(np.float32, ref.shape))
    case("conv_gemm_nchw_f32", hlo, [x, w], [ref.astype(np.float32)], {"rtol": 1e-5, "atol": 1e-5})
    # NHWC input, HWIO kernel, two feature groups, dilated kernel rows
    x = rng.uniform(-1, 1, (2, 12, 12, 8)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 3, 4, 12)).astype(np.float32)
    ref = conv_reference(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 1), ((1, 1), (1, 1)),
                         rhs_dilate=(2, 1), groups=2).transpose(0, 2, 3, 1)
    hlo = module("conv_gemm_groups_nhwc_f32", [(np.float32, x.shape), (np.float32, w.shape)],
                 ["%%r = %s convolution(%%p0, %%p1), window={size=3x3 pad=1_1x1_1 rhs_dilate=2x1}, "
                  "dim_labels=b01f_01io->b01f, feature_group_count=2" % shape_str(np.float32, ref.shape)],
                 shape_str(np.float32, ref.shape))
    case("conv_gemm_groups_nhwc_f32", hlo, [x, w], [ref.astype(np.float32)], {"rtol": 1e-5, "atol": 1e-5})
    # a transposed convolution (dilated input), the kernel reversed in its first spatial dimension
    x = rng.uniform(-1, 1, (1, 6, 5, 5))
    w = rng.uniform(-1, 1, (8, 6, 3, 3))
    ref = conv_reference(x, w, (1, 1), ((2, 2), (2, 2)), lhs_dilate=(2, 2), reversal=(1, 0))
    hlo = module("conv_gemm_lhs_dilated_f64", [(np.float64, x.shape), (np.float64, w.shape)],
                 ["%%r = %s convolution(%%p0, %%p1), window={size=3x3 pad=2_2x2_2 lhs_dilate=2x2 "
                  "rhs_reversal=1x0}, dim_labels=bf01_oi01->bf01" % shape_str(np.float64, ref.shape)],
                 shape_str(np.float64, ref.shape))
    case("conv_gemm_lhs_dilated_f64", hlo, [x, w], [ref], {"rtol": 1e-12, "atol": 1e-12})
    direct_convolution_cases(rng)


def direct_convolution_cases(rng):
    """Depthwise and grouped convolutions (hloc's direct kernel, runtime/src/rt_conv.c); bf16
    and f16 accumulate in f32 and round once, so the expected value is the exact sum of the
    rounded operands, rounded once."""
    # bf16 depthwise NCHW 3x3 pad 1 (the shape of models/depthwise_conv_3x3, scaled down)
    x = f32_to_bf16_bits(rng.uniform(-1, 1, (2, 16, 13, 19)).astype(np.float32))
    w = f32_to_bf16_bits(rng.uniform(-1, 1, (16, 1, 3, 3)).astype(np.float32))
    ref = conv_reference(bf16_bits_to_f32(x), bf16_bits_to_f32(w), (1, 1), ((1, 1), (1, 1)), groups=16)
    hlo = module("conv_depthwise_nchw_bf16", [(BF16, x.shape), (BF16, w.shape)],
                 ["%%r = %s convolution(%%p0, %%p1), window={size=3x3 pad=1_1x1_1}, "
                  "dim_labels=bf01_oi01->bf01, feature_group_count=16" % shape_str(BF16, ref.shape)],
                 shape_str(BF16, ref.shape))
    case("conv_depthwise_nchw_bf16", hlo, [x, w], [f32_to_bf16_bits(ref.astype(np.float32))],
         {"bf16": True, "rtol": 8e-3, "atol": 1e-6})
    # f16 depthwise NHWC, multiplier 2, stride 2, dilated and reversed window, f32 result
    x = rng.uniform(-1, 1, (1, 11, 10, 6)).astype(np.float16)
    w = rng.uniform(-1, 1, (3, 3, 1, 12)).astype(np.float16)
    ref = conv_reference(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (2, 2), ((2, 1), (2, 2)),
                         rhs_dilate=(2, 1), reversal=(1, 1), groups=6).transpose(0, 2, 3, 1)
    hlo = module("conv_depthwise_nhwc_f16", [(np.float16, x.shape), (np.float16, w.shape)],
                 ["%%r = %s convolution(%%p0, %%p1), window={size=3x3 stride=2x2 pad=2_1x2_2 rhs_dilate=2x1 "
                  "rhs_reversal=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=6" %
                  shape_str(np.float32, ref.shape)], shape_str(np.float32, ref.shape))
    case("conv_depthwise_nhwc_f16", hlo, [x, w], [ref.astype(np.float32)], {"rtol": 1e-5, "atol": 1e-5})
    # f32 grouped NHWC: 4 groups of 2 input features, 3 outputs each, odd sizes
    x = rng.uniform(-1, 1, (2, 7, 9, 8)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 2, 2, 12)).astype(np.float32)
    ref = conv_reference(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 1), ((1, 1), (0, 1)),
                         groups=4).transpose(0, 2, 3, 1)
    hlo = module("conv_grouped_nhwc_f32", [(np.float32, x.shape), (np.float32, w.shape)],
                 ["%%r = %s convolution(%%p0, %%p1), window={size=3x2 pad=1_1x0_1}, "
                  "dim_labels=b01f_01io->b01f, feature_group_count=4" % shape_str(np.float32, ref.shape)],
                 shape_str(np.float32, ref.shape))
    case("conv_grouped_nhwc_f32", hlo, [x, w], [ref.astype(np.float32)], {"rtol": 1e-5, "atol": 1e-5})


def parse_labels(labels):
    """'bf01_oi01->bf01' -> (lhs, rhs, out) axis maps: the lhs's {'b','f',spatial index} axes etc."""
    lhs, rest = labels.split("_")
    rhs, out = rest.split("->")
    return [{ch if not ch.isdigit() else int(ch): i for i, ch in enumerate(t)} for t in (lhs, rhs, out)]


def hlo_conv_reference(x, w, labels, stride=(1, 1), pad=((0, 0), (0, 0)), lhs_dilate=(1, 1), rhs_dilate=(1, 1),
                       reversal=(0, 0), fgc=1, bgc=1):
    """An HLO convolution of any dim_labels (one or two spatial dimensions): the operands
    brought to NCHW / OIHW, conv_reference per batch group, the result to the output labels."""
    lm, rm, om = parse_labels(labels)
    ns = len(lm) - 2
    xs = np.transpose(x, [lm["b"], lm["f"]] + [lm[i] for i in range(ns)])
    ws = np.transpose(w, [rm["o"], rm["i"]] + [rm[i] for i in range(ns)])
    if ns == 1:
        xs, ws = xs[:, :, None, :], ws[:, :, None, :]
        stride, pad, lhs_dilate, rhs_dilate, reversal = ((1,) + tuple(stride), ((0, 0),) + tuple(pad),
                                                         (1,) + tuple(lhs_dilate), (1,) + tuple(rhs_dilate),
                                                         (0,) + tuple(reversal))
    nb, og = xs.shape[0] // bgc, ws.shape[0] // bgc
    out = np.concatenate([conv_reference(xs[g * nb:(g + 1) * nb], ws[g * og:(g + 1) * og], stride, pad, lhs_dilate,
                                         rhs_dilate, reversal, fgc) for g in range(bgc)], axis=1)
    if ns == 1:
        out = out[:, :, 0, :]
    order = [None] * (ns + 2)
    for k, src in zip(["b", "f"] + list(range(ns)), range(ns + 2)):
        order[om[k]] = src
    return np.transpose(out, order)


def window_text(size, stride, pad, lhs_dilate, rhs_dilate):
    j = lambda v: "x".join(str(a) for a in v)
    t = "size=%s" % j(size)
    if any(s != 1 for s in stride):
        t += " stride=%s" % j(stride)
    if any(p != (0, 0) for p in pad):
        t += " pad=%s" % "x".join("%d_%d" % p for p in pad)
    if any(s != 1 for s in lhs_dilate):
        t += " lhs_dilate=%s" % j(lhs_dilate)
    if any(s != 1 for s in rhs_dilate):
        t += " rhs_dilate=%s" % j(rhs_dilate)
    return t


def model_conv_case(rng, name, xs, ws, labels, size, stride=(1, 1), pad=((0, 0), (0, 0)), lhs_dilate=(1, 1),
                    rhs_dilate=(1, 1), fgc=1, bgc=1, dt=np.float32):
    """One f32 (or dt) convolution in a form of the real models (PyTorch/XLA training steps:
    forward, input and weight gradients; NCHW), expected values from hlo_conv_reference."""
    x = rng.uniform(-1, 1, xs).astype(dt)
    w = rng.uniform(-1, 1, ws).astype(dt)
    n = len(size)
    stride, pad, lhs_dilate, rhs_dilate = stride[:n], pad[:n], lhs_dilate[:n], rhs_dilate[:n]
    ref = hlo_conv_reference(x, w, labels, stride, pad, lhs_dilate, rhs_dilate, fgc=fgc, bgc=bgc)
    attrs = ""
    if fgc > 1:
        attrs += ", feature_group_count=%d" % fgc
    if bgc > 1:
        attrs += ", batch_group_count=%d" % bgc
    hlo = module(name, [(dt, x.shape), (dt, w.shape)],
                 ["%%r = %s convolution(%%p0, %%p1), window={%s}, dim_labels=%s%s" %
                  (shape_str(dt, ref.shape), window_text(size, stride, pad, lhs_dilate, rhs_dilate), labels,
                   attrs)], shape_str(dt, ref.shape))
    tol = {"rtol": 1e-4, "atol": 1e-5} if dt == np.float32 else {"rtol": 1e-12, "atol": 1e-13}
    case(name, hlo, [x, w], [ref.astype(dt)], tol)


def model_convolution_cases():
    """The convolution forms of models/mobilenet_v2.hlo and ssd_mobilenet, scaled down: these
    are what oneDNN runs in builds with libdnnl-dev (compiler/codegen/conv_dnnl.c) and hloc's
    own kernels otherwise; both must give these values."""
    rng = np.random.default_rng(23)
    p1 = ((1, 1), (1, 1))
    # forward: dense 1x1, dense 3x3 stride 2 from 3 channels, depthwise stride 1 and 2
    model_conv_case(rng, "conv_model_1x1_nchw", (3, 24, 7, 6), (40, 24, 1, 1), "bf01_oi01->bf01", (1, 1))
    model_conv_case(rng, "conv_model_first_nchw", (2, 3, 15, 14), (8, 3, 3, 3), "bf01_oi01->bf01", (3, 3), (2, 2), p1)
    model_conv_case(rng, "conv_model_dw_nchw", (3, 20, 9, 8), (20, 1, 3, 3), "bf01_oi01->bf01", (3, 3), pad=p1,
                    fgc=20)
    model_conv_case(rng, "conv_model_dw_s2_nchw", (2, 18, 11, 10), (18, 1, 3, 3), "bf01_oi01->bf01", (3, 3), (2, 2),
                    p1, fgc=18)
    # input gradients: 1x1 (kernel as 01oi), depthwise stride 1, depthwise of a stride-2
    # layer (dilated input, padding 1_2) and the dense first layer's
    model_conv_case(rng, "conv_model_bwd_data_1x1", (3, 40, 7, 6), (1, 1, 24, 40), "bf01_01oi->bf01", (1, 1))
    model_conv_case(rng, "conv_model_bwd_data_dw", (2, 20, 9, 8), (3, 3, 20, 1), "bf01_01oi->bf01", (3, 3), pad=p1,
                    fgc=20)
    model_conv_case(rng, "conv_model_bwd_data_dw_s2", (2, 18, 6, 5), (3, 3, 18, 1), "bf01_01oi->bf01", (3, 3),
                    pad=((1, 2), (1, 2)), lhs_dilate=(2, 2), fgc=18)
    model_conv_case(rng, "conv_model_bwd_data_first", (2, 8, 8, 7), (3, 3, 3, 8), "bf01_01oi->bf01", (3, 3),
                    pad=((1, 2), (1, 2)), lhs_dilate=(2, 2))
    # weight gradients: dense 1x1, depthwise (batch_group_count) stride 1 and 2, the first
    # layer's (window dilation = the forward stride)
    model_conv_case(rng, "conv_model_bwd_weights_1x1", (4, 24, 7, 6), (4, 40, 7, 6), "fb01_io01->01bf", (7, 6))
    model_conv_case(rng, "conv_model_bwd_weights_dw", (4, 20, 9, 8), (4, 20, 9, 8), "fb01_io01->01bf", (9, 8), pad=p1,
                    bgc=20)
    model_conv_case(rng, "conv_model_bwd_weights_dw_s2", (4, 18, 12, 10), (4, 18, 6, 5), "fb01_io01->01bf", (6, 5),
                    pad=((1, 0), (1, 0)), rhs_dilate=(2, 2), bgc=18)
    model_conv_case(rng, "conv_model_bwd_weights_first", (4, 3, 16, 14), (4, 8, 8, 7), "fb01_io01->01bf", (8, 7),
                    pad=((1, 0), (1, 0)), rhs_dilate=(2, 2))
    # NHWC (the bench's b01f_01io), and one spatial dimension
    model_conv_case(rng, "conv_model_3x3_nhwc", (2, 9, 8, 16), (3, 3, 16, 24), "b01f_01io->b01f", (3, 3), pad=p1)
    model_conv_case(rng, "conv_model_1d_nwc", (2, 17, 6), (5, 6, 10), "b0f_0io->b0f", (5,), (2,), ((2, 1),),
                    rhs_dilate=(1,))
    # NHWC with enough features for oneDNN's blocked layouts on AVX2 hosts (rt_dnnl.c blocked_faster)
    model_conv_case(rng, "conv_model_3x3_nhwc_wide", (2, 10, 9, 40), (3, 3, 40, 48), "b01f_01io->b01f", (3, 3), pad=p1)
    model_conv_case(rng, "conv_model_3x3_s2_nhwc_wide", (1, 11, 12, 32), (3, 3, 32, 40), "b01f_01io->b01f", (3, 3),
                    (2, 2), ((0, 1), (1, 1)))
    # NCHW depthwise on the direct kernel's plane path (runtime/src/kernels/rt_conv.c): rows of
    # 41 (one pass per row, not one flat run), a channel multiplier of 2 with uneven padding
    # and stride 3 across (three phases per cached row), a 5x5 window with dilation 2 (three
    # taps then two per pass)
    model_conv_case(rng, "conv_model_dw_wide_nchw", (2, 6, 11, 41), (6, 1, 3, 3), "bf01_oi01->bf01", (3, 3), pad=p1,
                    fgc=6)
    model_conv_case(rng, "conv_model_dw_multiplier_nchw", (2, 4, 12, 40), (8, 1, 3, 3), "bf01_oi01->bf01", (3, 3),
                    (1, 3), ((2, 0), (0, 2)), fgc=4)
    model_conv_case(rng, "conv_model_dw_5x5_dil2_nchw", (1, 5, 14, 36), (5, 1, 5, 5), "bf01_oi01->bf01", (5, 5),
                    pad=((4, 4), (3, 5)), rhs_dilate=(2, 2), fgc=5)
    # short rows in 64 planes and more: one flat run over each zero-padded plane
    model_conv_case(rng, "conv_model_dw_7x7_nchw", (4, 24, 7, 7), (24, 1, 3, 3), "bf01_oi01->bf01", (3, 3), pad=p1,
                    fgc=24)
    # 1x1 over minor positions as one product per image (compiler/codegen/conv.c
    # conv_pointwise; with oneDNN from 28x28 positions): NCHW with 812 positions, its input
    # gradient's 01oi kernel, f64, and one spatial dimension
    model_conv_case(rng, "conv_model_1x1_pointwise_nchw", (2, 8, 28, 29), (12, 8, 1, 1), "bf01_oi01->bf01", (1, 1))
    model_conv_case(rng, "conv_model_1x1_pointwise_bwd_data", (2, 12, 28, 29), (1, 1, 8, 12), "bf01_01oi->bf01",
                    (1, 1))
    model_conv_case(rng, "conv_model_1x1_pointwise_f64", (2, 5, 9, 7), (6, 5, 1, 1), "bf01_oi01->bf01", (1, 1),
                    dt=np.float64)
    model_conv_case(rng, "conv_model_1x1_pointwise_1d", (3, 6, 900), (5, 6, 1), "bf0_oi0->bf0", (1,))
    # (their own generator, so the cases above keep their data)
    rng = np.random.default_rng(29)
    # depthwise weight gradients on hloc's own kernel (runtime/src/kernels/rt_conv_wgrad.c):
    # rows past its 16 lanes with a tail, a 5x5 window with uneven padding, a dilated forward
    # convolution (window stride 2), stride 2 over wide rows
    model_conv_case(rng, "conv_model_bwd_weights_dw_wide", (3, 6, 10, 37), (3, 6, 10, 37), "fb01_io01->01bf",
                    (10, 37), pad=p1, bgc=6)
    model_conv_case(rng, "conv_model_bwd_weights_dw_5x5", (2, 4, 13, 21), (2, 4, 11, 19), "fb01_io01->01bf",
                    (11, 19), pad=((1, 2), (2, 1)), bgc=4)
    model_conv_case(rng, "conv_model_bwd_weights_dw_dil2", (2, 5, 12, 34), (2, 5, 12, 34), "fb01_io01->01bf",
                    (12, 34), stride=(2, 2), pad=((2, 2), (2, 2)), bgc=5)
    model_conv_case(rng, "conv_model_bwd_weights_dw_s2_wide", (2, 3, 15, 70), (2, 3, 8, 35), "fb01_io01->01bf",
                    (8, 35), pad=((1, 0), (1, 0)), rhs_dilate=(2, 2), bgc=3)


def half_conv_case(rng, name, dt, out_dt, xs, ws, labels, size, stride=(1, 1), pad=((0, 0), (0, 0)), fgc=1):
    """One bf16 or f16 convolution on hloc's GEMM path (compiler/codegen/conv.c: the
    half-precision GEMM entries, f32 accumulation): the exact sum of the rounded operands in
    float64, rounded once to the result type (bf16 through float32, round to nearest even)."""
    if dt is BF16:
        x = f32_to_bf16_bits(rng.uniform(-1, 1, xs).astype(np.float32))
        w = f32_to_bf16_bits(rng.uniform(-1, 1, ws).astype(np.float32))
        xv, wv = bf16_bits_to_f32(x), bf16_bits_to_f32(w)
    else:
        x, w = rng.uniform(-1, 1, xs).astype(np.float16), rng.uniform(-1, 1, ws).astype(np.float16)
        xv, wv = x, w
    ref = hlo_conv_reference(xv, wv, labels, stride, pad, fgc=fgc)
    if out_dt is BF16:
        expected, tol = f32_to_bf16_bits(ref.astype(np.float32)), {"bf16": True, "rtol": 8e-3, "atol": 1e-6}
    elif out_dt == np.float16:
        expected, tol = ref.astype(np.float16), {"rtol": 1e-3, "atol": 1e-3}
    else:
        expected, tol = ref.astype(np.float32), {"rtol": 1e-5, "atol": 1e-5}
    attrs = ", feature_group_count=%d" % fgc if fgc > 1 else ""
    hlo = module(name, [(dt, x.shape), (dt, w.shape)],
                 ["%%r = %s convolution(%%p0, %%p1), window={%s}, dim_labels=%s%s" %
                  (shape_str(out_dt, ref.shape), window_text(size, stride, pad, (1, 1), (1, 1)), labels, attrs)],
                 shape_str(out_dt, ref.shape))
    case(name, hlo, [x, w], [expected], tol)


def half_convolution_cases():
    """Dense bf16 and f16 convolutions: oneDNN takes bf16 ones only on CPUs with AVX512_BF16,
    elsewhere (and f16 everywhere) they are hloc's GEMM path.  ssd_mobilenet's forms (NHWC,
    stride 2 with padding 0_1, 1x1) with the bf16 result rounded by the kernel, a grouped NCHW
    one (rounded where scattered), f16, and f32 results written in place or scattered."""
    rng = np.random.default_rng(41)
    s2 = ((0, 1), (0, 1))
    p1 = ((1, 1), (1, 1))
    half_conv_case(rng, "conv_gemm_nhwc_s2_bf16", BF16, BF16, (1, 13, 13, 24), (3, 3, 24, 40), "b01f_01io->b01f",
                   (3, 3), (2, 2), s2)
    half_conv_case(rng, "conv_gemm_1x1_nhwc_bf16", BF16, BF16, (2, 7, 9, 64), (1, 1, 64, 48), "b01f_01io->b01f",
                   (1, 1))
    half_conv_case(rng, "conv_gemm_groups_nchw_bf16", BF16, BF16, (2, 32, 9, 9), (24, 16, 3, 3), "bf01_oi01->bf01",
                   (3, 3), pad=p1, fgc=2)
    half_conv_case(rng, "conv_gemm_nhwc_f16", np.float16, np.float16, (2, 8, 8, 16), (3, 3, 16, 20),
                   "b01f_01io->b01f", (3, 3), pad=p1)
    half_conv_case(rng, "conv_gemm_bf16_to_f32", BF16, np.float32, (2, 9, 8, 32), (3, 3, 32, 24), "b01f_01io->b01f",
                   (3, 3), pad=p1)
    half_conv_case(rng, "conv_gemm_groups_f16_to_f32", np.float16, np.float32, (2, 10, 9, 32), (3, 3, 16, 24),
                   "b01f_01io->b01f", (3, 3), (2, 1), p1, fgc=2)


def half_dot_cases():
    """bf16/f16 dots through the f32 GEMM: exact products of the rounded operands, summed in
    float64 here, rounded once to the result type."""
    rng = np.random.default_rng(11)
    # attention-shaped batched bf16: [2,2,48,32] x [2,2,48,32] contracting the last dims
    q = f32_to_bf16_bits(rng.uniform(-1, 1, (2, 2, 48, 32)).astype(np.float32))
    k = f32_to_bf16_bits(rng.uniform(-1, 1, (2, 2, 48, 32)).astype(np.float32))
    e = np.einsum("bhqd,bhkd->bhqk", bf16_bits_to_f32(q).astype(np.float64), bf16_bits_to_f32(k))
    hlo = module("dot_batched_attention_bf16", [(BF16, q.shape), (BF16, k.shape)],
                 ["%r = bf16[2,2,48,48]{3,2,1,0} dot(%p0, %p1), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, "
                  "rhs_batch_dims={0,1}, rhs_contracting_dims={3}"], "bf16[2,2,48,48]{3,2,1,0}")
    case("dot_batched_attention_bf16", hlo, [q, k], [f32_to_bf16_bits(e.astype(np.float32))],
         {"bf16": True, "rtol": 8e-3, "atol": 1e-6})
    # f16 operands, f32 result, odd sizes
    a = rng.uniform(-1, 1, (37, 129)).astype(np.float16)
    b = rng.uniform(-1, 1, (129, 53)).astype(np.float16)
    hlo = module("dot_f16_to_f32_odd", [(np.float16, a.shape), (np.float16, b.shape)],
                 ["%r = f32[37,53]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"],
                 "f32[37,53]{1,0}")
    case("dot_f16_to_f32_odd", hlo, [a, b], [(a.astype(np.float64) @ b).astype(np.float32)],
         {"rtol": 1e-5, "atol": 1e-5})
    # f16 result, transposed rhs
    a = rng.uniform(-1, 1, (67, 65)).astype(np.float16)
    b = rng.uniform(-1, 1, (33, 65)).astype(np.float16)
    hlo = module("dot_f16_transposed", [(np.float16, a.shape), (np.float16, b.shape)],
                 ["%r = f16[67,33]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={1}"],
                 "f16[67,33]{1,0}")
    case("dot_f16_transposed", hlo, [a, b], [(a.astype(np.float64) @ b.T.astype(np.float64)).astype(np.float16)],
         {"rtol": 1e-3, "atol": 1e-3})
    bf16_kernel_cases()


def bf16_kernel_cases():
    """bf16 x bf16 dots the bf16 GEMM takes (runtime/src/rt_gemm_bf16.c: AMX or AVX512_BF16):
    odd sizes across its 32 x 32 tiles and 512-deep panels, a transposed lhs, an f32 result.
    Expected: exact products of the bf16 values summed in float64, rounded once to the
    result type (bf16 by round-to-nearest-even through float32)."""
    rng = np.random.default_rng(18)
    a = f32_to_bf16_bits(rng.uniform(-1, 1, (70, 600)).astype(np.float32))
    b = f32_to_bf16_bits(rng.uniform(-1, 1, (600, 90)).astype(np.float32))
    e = bf16_bits_to_f32(a).astype(np.float64) @ bf16_bits_to_f32(b).astype(np.float64)
    hlo = module("dot_bf16_kernel_odd", [(BF16, a.shape), (BF16, b.shape)],
                 ["%r = bf16[70,90]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"],
                 "bf16[70,90]{1,0}")
    case("dot_bf16_kernel_odd", hlo, [a, b], [f32_to_bf16_bits(e.astype(np.float32))],
         {"bf16": True, "rtol": 8e-3, "atol": 1e-6})
    a = f32_to_bf16_bits(rng.uniform(-1, 1, (300, 40)).astype(np.float32))
    b = f32_to_bf16_bits(rng.uniform(-1, 1, (300, 70)).astype(np.float32))
    e = bf16_bits_to_f32(a).astype(np.float64).T @ bf16_bits_to_f32(b).astype(np.float64)
    hlo = module("dot_bf16_kernel_lhs_t_f32", [(BF16, a.shape), (BF16, b.shape)],
                 ["%r = f32[40,70]{1,0} dot(%p0, %p1), lhs_contracting_dims={0}, rhs_contracting_dims={0}"],
                 "f32[40,70]{1,0}")
    case("dot_bf16_kernel_lhs_t_f32", hlo, [a, b], [e.astype(np.float32)], {"rtol": 1e-5, "atol": 1e-4})


def main():
    unary_float_cases()
    unary_int_cases()
    complex_cases()
    binary_cases()
    int_binary_cases()
    compare_cases()
    select_clamp_cases()
    convert_cases()
    bitcast_convert_cases()
    reduce_precision_cases()
    data_cases()
    reduce_cases()
    dot_cases()
    control_cases()
    batch_norm_cases()
    convolution_cases()
    model_convolution_cases()
    half_convolution_cases()
    import make_ops_sort  # sort, topk, linear algebra, random numbers (make_ops_sort.py)
    make_ops_sort.all_cases()
    edges.edge_cases(case, module, module_with)
    half_dot_cases()
    write_all()


if __name__ == "__main__":
    # make_ops_sort.py does `import make`: without this it would get a second copy of this
    # module, add its cases to that copy's CASES, and write_all here would delete them.
    sys.modules.setdefault("make", sys.modules[__name__])
    main()
