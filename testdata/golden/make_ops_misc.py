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
import os
import sys

import numpy as np

from golden_case import write_case

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make import hlo_type, module, module_with, shape_str  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20261125)


def case(name, hlo, inputs, expected, tol=None):
    write_case(os.path.join(HERE, name), "testdata/golden/make_ops_misc.py", hlo, inputs, expected, tol)


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


# ---- bounded dynamic dimensions --------------------------------------------------------------
# XLA's CPU backend keeps every dynamic array at its bound and tracks each dynamic dimension's
# size (DynamicDimensionInference); its DynamicPadder then masks the padding where it matters:
# a reduce reads the padding as its init value (the semantics document's SetDimensionSize
# example: sum of set_dimension_size(v, 5) is 1+2+3+4+5), a dot reads it as zero, and
# get-dimension-size returns the tracked size.  Elements past a size are otherwise computed
# from the padding like any other; hloc returns results at their bound (docs/ops.md).
ADD_F32 = """%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = f32[] add(%a, %b)
}
%mul (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %z = f32[] multiply(%x, %y)
}
%max (u: f32[], v: f32[]) -> f32[] {
  %u = f32[] parameter(0)
  %v = f32[] parameter(1)
  ROOT %w = f32[] maximum(%u, %v)
}"""


def dynamic_cases():
    # The semantics document's example, for sizes 5, 0 and 10 (the bound).
    v = np.arange(1, 11, dtype=np.float32)
    for n in (5, 0, 10):
        name = "dyn_set_size_sum_product_n%d_f32" % n
        body = ["%s = f32[<=10]{0} set-dimension-size(%p0, %p1), dimensions={0}",
                "%zero = f32[] constant(0)", "%one = f32[] constant(1)",
                "%sum = f32[] reduce(%s, %zero), dimensions={0}, to_apply=%add",
                "%prod = f32[] reduce(%s, %one), dimensions={0}, to_apply=%mul",
                "%size = s32[] get-dimension-size(%s), dimensions={0}",
                "%r = (f32[], f32[], s32[]) tuple(%sum, %prod, %size)"]
        hlo = module_with(name, ADD_F32, [(np.float32, (10,)), (np.int32, ())], body, "(f32[], f32[], s32[])")
        case(name, hlo, [v, np.int32(n)],
             [np.float32(v[:n].sum()), np.float32(np.prod(v[:n])), np.int32(n)])
    # 2-D: the size of dimension 1 flows through exp, a transpose and a broadcast-add; a max
    # over it reads the padding as -inf; the elementwise result leaves at its bound.
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    x[:, 3:] += 50.0  # padding larger than every real element: a max that read it would show
    name = "dyn_set_size_2d_max_transpose_f32"
    body = ["%s = f32[4,<=6]{1,0} set-dimension-size(%p0, %p1), dimensions={1}",
            "%e = f32[4,<=6]{1,0} exponential(%s)",
            "%t = f32[<=6,4]{1,0} transpose(%e), dimensions={1,0}",
            "%ninf = f32[] constant(-inf)",
            "%m = f32[4]{0} reduce(%t, %ninf), dimensions={0}, to_apply=%max",
            "%mb = f32[<=6,4]{1,0} broadcast(%m), dimensions={1}",
            "%d = f32[<=6,4]{1,0} subtract(%t, %mb)",
            "%zero = f32[] constant(0)",
            "%rs = f32[<=6]{0} reduce(%d, %zero), dimensions={1}, to_apply=%add",
            "%r = (f32[4]{0}, f32[<=6,4]{1,0}, f32[<=6]{0}) tuple(%m, %d, %rs)"]
    hlo = module_with(name, ADD_F32, [(np.float32, (4, 6)), (np.int32, ())], body,
                      "(f32[4]{0}, f32[<=6,4]{1,0}, f32[<=6]{0})")
    e = np.exp(x.astype(np.float64))
    m = e[:, :3].max(axis=1)
    d = e.T - m[None, :]
    case(name, hlo, [x, np.int32(3)], [m.astype(np.float32), d.astype(np.float32),
                                       d.sum(axis=1).astype(np.float32)], {"rtol": 2e-6, "atol": 1e-6})
    # dot contracting a sized dimension: the padding of both operands is zero, even NaN padding.
    a = RNG.standard_normal((3, 8)).astype(np.float32)
    b = RNG.standard_normal((8, 4)).astype(np.float32)
    a[:, 5:] = np.nan
    b[5:, :] = np.inf
    name = "dyn_set_size_dot_contracting_f32"
    body = ["%s = f32[3,<=8]{1,0} set-dimension-size(%p0, %p2), dimensions={1}",
            "%t = f32[<=8,4]{1,0} set-dimension-size(%p1, %p2), dimensions={0}",
            "%r = f32[3,4]{1,0} dot(%s, %t), lhs_contracting_dims={1}, rhs_contracting_dims={0}"]
    hlo = module(name, [(np.float32, (3, 8)), (np.float32, (8, 4)), (np.int32, ())], body, "f32[3,4]{1,0}")
    exp = (a[:, :5].astype(np.float64) @ b[:5, :].astype(np.float64)).astype(np.float32)
    case(name, hlo, [a, b, np.int32(5)], [exp], {"rtol": 1e-5, "atol": 1e-5})
    # A size on the lhs only: the rhs's matching rows are masked too.
    name = "dyn_set_size_dot_lhs_only_f32"
    body = ["%s = f32[3,<=8]{1,0} set-dimension-size(%p0, %p2), dimensions={1}",
            "%r = f32[3,4]{1,0} dot(%s, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"]
    hlo = module(name, [(np.float32, (3, 8)), (np.float32, (8, 4)), (np.int32, ())], body, "f32[3,4]{1,0}")
    case(name, hlo, [a, b, np.int32(5)], [exp], {"rtol": 1e-5, "atol": 1e-5})
    # An s32 reduce and an elementwise result at the bound (computed on every element).
    k = RNG.integers(-100, 100, size=(2, 7)).astype(np.int32)
    name = "dyn_set_size_elementwise_bound_s32"
    comps = """%adds (a: s32[], b: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %c = s32[] add(%a, %b)
}"""
    body = ["%s = s32[2,<=7]{1,0} set-dimension-size(%p0, %p1), dimensions={1}",
            "%m = s32[2,<=7]{1,0} multiply(%s, %s)",
            "%zero = s32[] constant(0)",
            "%sum = s32[2]{0} reduce(%m, %zero), dimensions={1}, to_apply=%adds",
            "%r = (s32[2,<=7]{1,0}, s32[2]{0}) tuple(%m, %sum)"]
    hlo = module_with(name, comps, [(np.int32, (2, 7)), (np.int32, ())], body, "(s32[2,<=7]{1,0}, s32[2]{0})")
    case(name, hlo, [k, np.int32(4)], [k * k, (k[:, :4] * k[:, :4]).sum(axis=1).astype(np.int32)])
    # slice of a sized dimension (XLA's DynamicDimensionInference::HandleSlice): the size becomes
    # (size - start + stride - 1) / stride; a one-element slice is static.
    v = np.arange(1, 11, dtype=np.float32)
    for n_ in (5, 1):
        name = "dyn_set_size_slice_n%d_f32" % n_
        body = ["%s = f32[<=10]{0} set-dimension-size(%p0, %p1), dimensions={0}",
                "%t = f32[<=4]{0} slice(%s), slice={[1:9:2]}",
                "%one = f32[1]{0} slice(%s), slice={[7:8]}",
                "%zero = f32[] constant(0)",
                "%sum = f32[] reduce(%t, %zero), dimensions={0}, to_apply=%add",
                "%sum1 = f32[] reduce(%one, %zero), dimensions={0}, to_apply=%add",
                "%g = s32[] get-dimension-size(%t), dimensions={0}",
                "%r = (f32[], f32[], s32[]) tuple(%sum, %sum1, %g)"]
        hlo = module_with(name, ADD_F32, [(np.float32, (10,)), (np.int32, ())], body, "(f32[], f32[], s32[])")
        size = (n_ - 1 + 2 - 1) // 2  # (size - start + stride - 1) / stride, start 1, stride 2
        case(name, hlo, [v, np.int32(n_)], [np.float32(v[1:9:2][:max(size, 0)].sum()), np.float32(v[7]),
                                           np.int32(size)])
    # dynamic-reshape of an operand that has sizes itself reads its elements within them, in
    # row-major order (XLA's dynamic arrays hold exactly those elements).
    x = np.random.default_rng(45).standard_normal((4, 5)).astype(np.float32)  # own stream: others stay
    for n0, n1 in ((3, 4), (2, 5)):
        name = "dyn_reshape_sized_operand_%dx%d_f32" % (n0, n1)
        body = ["%s0 = f32[<=4,5]{1,0} set-dimension-size(%p0, %p1), dimensions={0}",
                "%s = f32[<=4,<=5]{1,0} set-dimension-size(%s0, %p2), dimensions={1}",
                "%n = s32[] multiply(%p1, %p2)",
                "%d = f32[<=20]{0} dynamic-reshape(%s, %n)",
                "%zero = f32[] constant(0)",
                "%sum = f32[] reduce(%d, %zero), dimensions={0}, to_apply=%add",
                "%r = (f32[<=20]{0}, f32[]) tuple(%d, %sum)"]
        hlo = module_with(name, ADD_F32, [(np.float32, (4, 5)), (np.int32, ()), (np.int32, ())], body,
                          "(f32[<=20]{0}, f32[])")
        flat = np.zeros(20, dtype=np.float32)
        flat[:n0 * n1] = x[:n0, :n1].ravel()
        case(name, hlo, [x, np.int32(n0), np.int32(n1)], [flat, np.float32(x[:n0, :n1].astype(np.float64).sum())],
             {"rtol": 1e-6, "atol": 1e-6})
    # An entry parameter with a bounded dimension is passed at its bound: its size is the bound.
    name = "dyn_param_bound_get_size_f32"
    body = ["%g = s32[] get-dimension-size(%p0), dimensions={0}",
            "%zero = f32[] constant(0)",
            "%sum = f32[] reduce(%p0, %zero), dimensions={0}, to_apply=%add",
            "%r = (s32[], f32[]) tuple(%g, %sum)"]
    hlo = module_with(name, ADD_F32, [(np.float32, (8,)), (np.int32, ())], body, "(s32[], f32[])")
    hlo = hlo.replace("p0: f32[8]{0}", "p0: f32[<=8]{0}").replace("%p0 = f32[8]{0}", "%p0 = f32[<=8]{0}")
    w = np.arange(8, dtype=np.float32)
    case(name, hlo, [w, np.int32(0)], [np.int32(8), np.float32(w.sum())])
    # dynamic-reshape: a static f32[6] laid out row-major over runtime sizes (2, 3) in a
    # f32[<=4,<=3] buffer; past the sizes hloc writes zero; the row sums see only real rows.
    x6 = np.arange(1, 7, dtype=np.float32)
    for (r0, r1) in ((2, 3), (3, 2)):
        name = "dyn_reshape_%dx%d_f32" % (r0, r1)
        body = ["%d = f32[<=6,<=3]{1,0} dynamic-reshape(%p0, %p1, %p2)",
                "%zero = f32[] constant(0)",
                "%rs = f32[<=6]{0} reduce(%d, %zero), dimensions={1}, to_apply=%add",
                "%g0 = s32[] get-dimension-size(%d), dimensions={0}",
                "%g1 = s32[] get-dimension-size(%d), dimensions={1}",
                "%r = (f32[<=6,<=3]{1,0}, f32[<=6]{0}, s32[], s32[]) tuple(%d, %rs, %g0, %g1)"]
        hlo = module_with(name, ADD_F32, [(np.float32, (18,)), (np.int32, ()), (np.int32, ())], body,
                          "(f32[<=6,<=3]{1,0}, f32[<=6]{0}, s32[], s32[])")
        x18 = np.zeros(18, dtype=np.float32)
        x18[:6] = x6
        out = np.zeros((6, 3), dtype=np.float32)
        out[:r0, :r1] = x6.reshape(r0, r1)
        case(name, hlo, [x18, np.int32(r0), np.int32(r1)],
             [out, out.sum(axis=1).astype(np.float32), np.int32(r0), np.int32(r1)])


# ---- stochastic-convert -----------------------------------------------------------------------
# The semantics document has no section on it; XLA's CPU pipeline runs its
# StochasticConvertDecomposer (xla/service/stochastic_convert_decomposer.cc), whose formula is
# transcribed here with exact Python arithmetic: t = floor(|x|), frac = |x| - t,
# fixed = floor(frac * 2^bits(random)); round up (away from zero) when random < fixed; negate
# for x < 0; x <= min(T) gives min(T), x >= max(T) gives max(T); NaN gives 0.  Only signed
# integer results are defined.
def stochastic_ref(xs, rs, rbits, tdt):
    info = np.iinfo(tdt)
    out = []
    for x, r in zip(xs, rs):
        x = float(x)
        if x != x:
            out.append(0)
            continue
        if x <= info.min:
            out.append(info.min)
            continue
        if x >= info.max:
            out.append(info.max)
            continue
        a = abs(x)
        t = int(np.floor(a))
        frac = a - t  # exact: a and t are dyadic rationals of the operand's precision
        fixed = int(np.floor(np.ldexp(frac, rbits)))  # exact power-of-two scaling
        y = t + (1 if int(r) < fixed else 0)
        out.append(-y if x < 0 else y)
    return np.array(out, dtype=tdt)


def stochastic_cases():
    from make import BF16, f32_to_bf16_bits
    base = [0.0, -0.0, 0.25, -0.25, 0.5, -0.5, 0.75, 1.0, -1.0, 1.5, -1.5, 2.125, -7.875, 100.5,
            1e-30, -1e-30, np.nan, np.inf, -np.inf, 3e9, -3e9, 126.5, 127.0, 127.5, -128.0,
            -128.5, -129.0, 32767.5, -32768.5, 40000.25]
    combos = [(np.float32, np.uint32, 32, np.int32), (np.float32, np.uint32, 32, np.int8),
              (np.float16, np.uint16, 16, np.int16), (np.float16, np.uint16, 16, np.int8),
              (BF16, np.uint16, 16, np.int32), (np.float64, np.uint64, 64, np.int64),
              (np.float64, np.uint64, 64, np.int16), (np.float32, np.uint32, 32, np.int64)]
    for fdt, rdt, rbits, tdt in combos:
        vals = np.array(base * 3, dtype=np.float64)
        rmax = np.iinfo(rdt).max
        rs = np.array([0] * len(base) + [int(rmax)] * len(base) +
                      [int(v) for v in RNG.integers(0, rmax, size=len(base), dtype=rdt, endpoint=True)],
                      dtype=rdt)
        if fdt is BF16:
            xin = f32_to_bf16_bits(vals.astype(np.float32))
            xval = (xin.astype(np.uint32) << 16).view(np.float32)
        else:
            with np.errstate(over="ignore"):
                xin = vals.astype(fdt)
            xval = xin
        n = "stochastic_convert_%s_%s" % (hlo_type(fdt), hlo_type(tdt))
        body = ["%%r = %s stochastic-convert(%%p0, %%p1)" % shape_str(tdt, xin.shape)]
        hlo = module(n, [(fdt, xin.shape), (rdt, rs.shape)], body, shape_str(tdt, xin.shape))
        case(n, hlo, [xin, rs], [stochastic_ref(xval, rs, rbits, tdt)])
    # An 8-bit float (f8e4m3fn, random u8), from constants: values exactly representable in it.
    vals = [1.25, -2.5, 448.0, -0.125, 0.0, 3.75, -1.75, 0.5]
    rs = [63, 128, 0, 31, 255, 191, 192, 127]
    n = "stochastic_convert_f8e4m3fn_s8"
    body = ["%%x = f8e4m3fn[8]{0} constant({%s})" % ", ".join(repr(v) for v in vals),
            "%%rb = u8[8]{0} constant({%s})" % ", ".join(str(v) for v in rs),
            "%r = s8[8]{0} stochastic-convert(%x, %rb)"]
    case(n, module(n, [], body, "s8[8]{0}"), [], [stochastic_ref(vals, rs, 8, np.int8)])
    # Probability: 0.3 and -2.7 with 4096 evenly spread random words round away from zero in
    # exactly the fraction floor(frac * 2^32) / 2^32 of them.
    k = 4096
    rs = (np.arange(k, dtype=np.uint64) * (1 << 20)).astype(np.uint32)
    xs = np.array([0.3] * k + [-2.7] * k, dtype=np.float32)
    rr = np.concatenate([rs, rs])
    n = "stochastic_convert_fraction_f32_s32"
    body = ["%%r = %s stochastic-convert(%%p0, %%p1)" % shape_str(np.int32, xs.shape)]
    hlo = module(n, [(np.float32, xs.shape), (np.uint32, rr.shape)], body, shape_str(np.int32, xs.shape))
    case(n, hlo, [xs, rr], [stochastic_ref(xs, rr, 32, np.int32)])
    # Empty, and fused after a multiply.
    e = np.zeros((0,), dtype=np.float32)
    n = "stochastic_convert_empty_f32_s32"
    hlo = module(n, [(np.float32, (0,)), (np.uint32, (0,))], ["%r = s32[0]{0} stochastic-convert(%p0, %p1)"],
                 "s32[0]{0}")
    case(n, hlo, [e, np.zeros((0,), dtype=np.uint32)], [np.zeros((0,), dtype=np.int32)])
    x = RNG.standard_normal((8, 40)).astype(np.float32) * 10
    r = RNG.integers(0, 1 << 32, size=(8, 40), dtype=np.uint64).astype(np.uint32)
    n = "fused_scale_stochastic_convert_f32_s16"
    body = ["%k = f32[] constant(3.5)", "%kb = f32[8,40]{1,0} broadcast(%k), dimensions={}",
            "%m = f32[8,40]{1,0} multiply(%p0, %kb)",
            "%s = s16[8,40]{1,0} stochastic-convert(%m, %p1)",
            "%one = s16[] constant(1)", "%ob = s16[8,40]{1,0} broadcast(%one), dimensions={}",
            "%r = s16[8,40]{1,0} add(%s, %ob)"]
    hlo = module(n, [(np.float32, x.shape), (np.uint32, r.shape)], body, "s16[8,40]{1,0}")
    m = (x * np.float32(3.5)).astype(np.float32)
    exp = (stochastic_ref(m.ravel(), r.ravel(), 32, np.int16).astype(np.int32) + 1).astype(np.int16).reshape(x.shape)
    case(n, hlo, [x, r], [exp])


# ---- ragged-dot -------------------------------------------------------------------------------
# XLA's RaggedDotRewriter (xla/hlo/transforms/expanders/ragged_dot_rewriter.cc) and the
# parser tests' modules: group g owns indices [start_g, end_g) of the lhs ragged dimension,
# end = running sum of group_sizes, start = end - group_sizes.  Ragged non-contracting: row i
# of group g is multiplied by rhs[g] (rows past the last group give 0); ragged contracting:
# result[g] sums only the contracting indices of group g; ragged batch: the plain dot.
def group_of(i, sizes):
    end = 0
    for g, n in enumerate(sizes):
        start, end = end, end + int(n)
        if start <= i < end:
            return g
    return -1


def ragged_nc_ref(lhs, rhs, sizes):
    """lhs [m, k], rhs [G, k, n] -> [m, n]"""
    out = np.zeros((lhs.shape[0], rhs.shape[2]), dtype=np.float64)
    for i in range(lhs.shape[0]):
        g = group_of(i, sizes)
        if g >= 0:
            out[i] = lhs[i].astype(np.float64) @ rhs[g].astype(np.float64)
    return out


def ragged_cases():
    from make import BF16, bf16_bits_to_f32, f32_to_bf16_bits
    lhs = RNG.standard_normal((6, 4)).astype(np.float32)
    rhs = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    attrs = "lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}"
    # The module of XLA's RaggedDotTest.NonContracting (s64 group sizes), with sizes that cover
    # every row, leave rows past the last group, and include an empty group.
    for tag, sizes in (("full", (2, 3, 1)), ("short", (1, 0, 3))):
        n = "ragged_dot_noncontracting_%s_f32" % tag
        hlo = module(n, [(np.float32, (6, 4)), (np.float32, (3, 4, 5)), (np.int64, (3,))],
                     ["%%r = f32[6,5]{1,0} ragged-dot(%%p0, %%p1, %%p2), %s" % attrs], "f32[6,5]{1,0}")
        gs = np.array(sizes, dtype=np.int64)
        case(n, hlo, [lhs, rhs, gs], [ragged_nc_ref(lhs, rhs, sizes).astype(np.float32)], {"rtol": 1e-5, "atol": 1e-5})
    # f64 and s32 operands, s32 group sizes.
    for dt, tol in ((np.float64, {"rtol": 1e-12, "atol": 1e-12}), (np.int32, None)):
        if dt == np.int32:
            a = RNG.integers(-5, 6, size=(6, 4)).astype(dt)
            b = RNG.integers(-5, 6, size=(3, 4, 5)).astype(dt)
        else:
            a, b = lhs.astype(dt), rhs.astype(dt)
        n = "ragged_dot_noncontracting_%s" % hlo_type(dt)
        t = hlo_type(dt)
        hlo = module(n, [(dt, (6, 4)), (dt, (3, 4, 5)), (np.int32, (3,))],
                     ["%%r = %s[6,5]{1,0} ragged-dot(%%p0, %%p1, %%p2), %s" % (t, attrs)], "%s[6,5]{1,0}" % t)
        exp = ragged_nc_ref(a, b, (3, 1, 2))
        exp = np.rint(exp).astype(dt) if dt == np.int32 else exp.astype(dt)
        case(n, hlo, [a, b, np.array([3, 1, 2], dtype=np.int32)], [exp], tol)
    # bf16 operands, f32 result.
    lb, rb = f32_to_bf16_bits(lhs), f32_to_bf16_bits(rhs)
    n = "ragged_dot_noncontracting_bf16_f32"
    hlo = module(n, [(BF16, (6, 4)), (BF16, (3, 4, 5)), (np.int32, (3,))],
                 ["%%r = f32[6,5]{1,0} ragged-dot(%%p0, %%p1, %%p2), %s" % attrs], "f32[6,5]{1,0}")
    exp = ragged_nc_ref(bf16_bits_to_f32(lb), bf16_bits_to_f32(rb), (2, 2, 2)).astype(np.float32)
    case(n, hlo, [lb, rb, np.array([2, 2, 2], dtype=np.int32)], [exp], {"rtol": 1e-5, "atol": 1e-5})
    # Batch dimensions on both sides: lhs [2,5,3] (batch 0, ragged 1), rhs [2,4,3,6] (batch 0,
    # group 1, contracting 2).
    a = RNG.standard_normal((2, 5, 3)).astype(np.float32)
    b = RNG.standard_normal((2, 4, 3, 6)).astype(np.float32)
    sizes = (1, 2, 0, 2)
    n = "ragged_dot_noncontracting_batch_f32"
    hlo = module(n, [(np.float32, a.shape), (np.float32, b.shape), (np.int32, (4,))],
                 ["%r = f32[2,5,6]{2,1,0} ragged-dot(%p0, %p1, %p2), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                  "lhs_contracting_dims={2}, rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={1}"],
                 "f32[2,5,6]{2,1,0}")
    exp = np.stack([ragged_nc_ref(a[j], b[j], sizes) for j in range(2)]).astype(np.float32)
    case(n, hlo, [a, b, np.array(sizes, dtype=np.int32)], [exp], {"rtol": 1e-5, "atol": 1e-5})
    # group_sizes [2, G]: its leading dimension indexes the lhs's dimension 0 (the MHLO export
    # test's form, lhs [19,11,5] with group sizes [19,3]).
    a = RNG.standard_normal((2, 5, 3)).astype(np.float32)
    b = RNG.standard_normal((3, 3, 4)).astype(np.float32)
    gs = np.array([[2, 2, 1], [0, 4, 1]], dtype=np.int32)
    n = "ragged_dot_noncontracting_prefix_sizes_f32"
    hlo = module(n, [(np.float32, a.shape), (np.float32, b.shape), (np.int32, gs.shape)],
                 ["%r = f32[2,5,4]{2,1,0} ragged-dot(%p0, %p1, %p2), lhs_contracting_dims={2}, "
                  "rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={0}"], "f32[2,5,4]{2,1,0}")
    exp = np.stack([ragged_nc_ref(a[j], b, gs[j]) for j in range(2)]).astype(np.float32)
    case(n, hlo, [a, b, gs], [exp], {"rtol": 1e-5, "atol": 1e-5})
    # Ragged contracting dimension: lhs [4,7], rhs [7,3], 3 groups -> [3,4,3].
    a = RNG.standard_normal((4, 7)).astype(np.float32)
    b = RNG.standard_normal((7, 3)).astype(np.float32)
    sizes = (2, 4, 0)
    n = "ragged_dot_contracting_f32"
    hlo = module(n, [(np.float32, a.shape), (np.float32, b.shape), (np.int64, (3,))],
                 ["%r = f32[3,4,3]{2,1,0} ragged-dot(%p0, %p1, %p2), lhs_contracting_dims={1}, "
                  "rhs_contracting_dims={0}, lhs_ragged_dims={1}"], "f32[3,4,3]{2,1,0}")
    exp = np.zeros((3, 4, 3))
    for kk in range(7):
        g = group_of(kk, sizes)
        if g >= 0:
            exp[g] += np.outer(a[:, kk].astype(np.float64), b[kk].astype(np.float64))
    case(n, hlo, [a, b, np.array(sizes, dtype=np.int64)], [exp.astype(np.float32)], {"rtol": 1e-5, "atol": 1e-5})
    # Ragged contracting dimension with a batch dimension and per-batch group sizes [2, G].
    a = RNG.standard_normal((2, 3, 5)).astype(np.float32)
    b = RNG.standard_normal((2, 5, 4)).astype(np.float32)
    gs = np.array([[3, 2], [1, 1]], dtype=np.int32)
    n = "ragged_dot_contracting_batch_prefix_f32"
    hlo = module(n, [(np.float32, a.shape), (np.float32, b.shape), (np.int32, gs.shape)],
                 ["%r = f32[2,2,3,4]{3,2,1,0} ragged-dot(%p0, %p1, %p2), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                  "lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={2}"], "f32[2,2,3,4]{3,2,1,0}")
    exp = np.zeros((2, 2, 3, 4))
    for j in range(2):
        for kk in range(5):
            g = group_of(kk, gs[j])
            if g >= 0:
                exp[g, j] += np.outer(a[j, :, kk].astype(np.float64), b[j, kk].astype(np.float64))
    case(n, hlo, [a, b, gs], [exp.astype(np.float32)], {"rtol": 1e-5, "atol": 1e-5})
    # Ragged batch dimension: the plain batched dot.
    a = RNG.standard_normal((3, 2, 4)).astype(np.float32)
    b = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    n = "ragged_dot_batch_f32"
    hlo = module(n, [(np.float32, a.shape), (np.float32, b.shape), (np.int32, (2,))],
                 ["%r = f32[3,2,5]{2,1,0} ragged-dot(%p0, %p1, %p2), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                  "lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0}"], "f32[3,2,5]{2,1,0}")
    case(n, hlo, [a, b, np.array([1, 2], dtype=np.int32)],
         [np.einsum("bmk,bkn->bmn", a.astype(np.float64), b.astype(np.float64)).astype(np.float32)],
         {"rtol": 1e-5, "atol": 1e-5})


# ---- scaled-dot -------------------------------------------------------------------------------
# XLA's ScaledDotRewriter (xla/backends/gpu/transforms/scaled_dot_rewriter.cc): an operand
# whose scale is not a scalar is converted with it to a common type (bf16 when both are
# narrower than 16 bits, the type when equal, f32 for equal widths, else the wider) and
# multiplied by the scale repeated over blocks of operand_dim / scale_dim; a scalar scale
# leaves its operand as it is.  Then the plain dot.
def block_repeat(scale, shape):
    out = scale
    for d, n in enumerate(shape):
        out = np.repeat(out, n // scale.shape[d], axis=d)
    return out


def scaled_cases():
    from make import BF16, bf16_bits_to_f32, f32_to_bf16_bits
    a = RNG.standard_normal((4, 8)).astype(np.float32)
    b = RNG.standard_normal((8, 3)).astype(np.float32)
    sa = RNG.uniform(0.5, 4, size=(4, 2)).astype(np.float32)
    sb = RNG.uniform(0.5, 4, size=(2, 3)).astype(np.float32)
    n = "scaled_dot_block_f32"
    hlo = module(n, [(np.float32, a.shape), (np.float32, b.shape), (np.float32, sa.shape), (np.float32, sb.shape)],
                 ["%r = f32[4,3]{1,0} scaled-dot(%p0, %p1, %p2, %p3), lhs_contracting_dims={1}, "
                  "rhs_contracting_dims={0}"], "f32[4,3]{1,0}")
    da = (a * block_repeat(sa, a.shape)).astype(np.float32)
    db = (b * block_repeat(sb, b.shape)).astype(np.float32)
    case(n, hlo, [a, b, sa, sb], [(da.astype(np.float64) @ db.astype(np.float64)).astype(np.float32)],
         {"rtol": 1e-5, "atol": 1e-5})
    # bf16 operands and scales (products rounded to bf16, as the common type says), both
    # contracting dims last, an f32 result; lhs scale [1,1] scales everything by one number.
    a = RNG.standard_normal((5, 16)).astype(np.float32)
    b = RNG.standard_normal((6, 16)).astype(np.float32)
    ab, bb = f32_to_bf16_bits(a), f32_to_bf16_bits(b)
    sa = f32_to_bf16_bits(np.array([[2.5]], dtype=np.float32))
    sb = f32_to_bf16_bits(RNG.uniform(0.5, 4, size=(6, 4)).astype(np.float32))
    n = "scaled_dot_bf16_f32"
    hlo = module(n, [(BF16, (5, 16)), (BF16, (6, 16)), (BF16, (1, 1)), (BF16, (6, 4))],
                 ["%r = f32[5,6]{1,0} scaled-dot(%p0, %p1, %p2, %p3), lhs_contracting_dims={1}, "
                  "rhs_contracting_dims={1}"], "f32[5,6]{1,0}")
    da = bf16_bits_to_f32(f32_to_bf16_bits(bf16_bits_to_f32(ab) * np.float32(2.5)))
    db = bf16_bits_to_f32(f32_to_bf16_bits(bf16_bits_to_f32(bb) * block_repeat(bf16_bits_to_f32(sb), (6, 16))))
    case(n, hlo, [ab, bb, sa, sb], [(da.astype(np.float64) @ db.astype(np.float64).T).astype(np.float32)],
         {"rtol": 1e-5, "atol": 1e-5})
    # f16 operands with f32 scales (common type f32), batch dims; a scalar rhs scale is left out.
    a = RNG.standard_normal((2, 3, 8)).astype(np.float16)
    b = RNG.standard_normal((2, 8, 4)).astype(np.float16)
    sa = RNG.uniform(0.5, 4, size=(2, 3, 4)).astype(np.float32)
    n = "scaled_dot_f16_scalar_rhs_scale_f32"
    hlo = module(n, [(np.float16, a.shape), (np.float16, b.shape), (np.float32, sa.shape), (np.float16, ())],
                 ["%r = f32[2,3,4]{2,1,0} scaled-dot(%p0, %p1, %p2, %p3), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                  "lhs_contracting_dims={2}, rhs_contracting_dims={1}"], "f32[2,3,4]{2,1,0}")
    da = a.astype(np.float32) * block_repeat(sa, a.shape)
    exp = np.einsum("bmk,bkn->bmn", da.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    case(n, hlo, [a, b, sa, np.float16(8.0)], [exp], {"rtol": 1e-5, "atol": 1e-5})


# ---- shuffle ----------------------------------------------------------------------------------
# The semantics document has no section on shuffle; XLA's ShuffleExpander and its tests
# (xla/hlo/transforms/expanders/shuffle_expander{,_test}.cc) and xla/shuffle.cc define it:
# mode=rotate rotates each listed dimension left by its shift modulo the size
# (NormalizeShift: ((s % n) + n) % n), i.e. np.roll(x, -s, axis); mode=permute takes, for each
# result element, the operand element whose listed coordinates the indices give (the
# innermost index dimension holds one coordinate per listed dimension in the order listed, or
# is left out for one dimension; other index dimensions are the operand's or 1 = shared),
# through a gather, so out-of-range coordinates clamp to [0, n - 1].
def permute_ref(x, dims, idx):
    idx = np.asarray(idx, dtype=np.int64)
    coord = idx.ndim == x.ndim + 1
    out = np.empty_like(x)
    for e in np.ndindex(*x.shape):
        at = tuple(0 if idx.shape[d] == 1 else e[d] for d in range(x.ndim))
        c = list(e)
        for j, d in enumerate(dims):
            v = idx[at + (j,)] if coord else idx[at]
            c[d] = min(max(int(v), 0), x.shape[d] - 1)
        out[e] = x[tuple(c)]
    return out


def lit_text(a):
    """An HLO integer literal: type, shape with layout, nested braces."""
    def nest(v):
        if v.ndim == 0:
            return str(int(v))
        return "{ " + ", ".join(nest(w) for w in v) + " }" if v.ndim > 1 else "{" + ", ".join(str(int(w)) for w in v) + "}"
    return "%s %s" % (shape_str(a.dtype.type, a.shape), nest(a))


def shuffle_cases():
    from make import BF16, f32_to_bf16_bits
    # rotate: XLA's test modules (1-D shift 1, 2-D shifts {1,2}, shift 0), plus negative and
    # larger-than-size shifts, over several element types.
    rot = [("rotate_1d", (4,), [0], [1]), ("rotate_2d", (2, 3), [0, 1], [1, 2]), ("rotate_zero", (4,), [0], [0]),
           ("rotate_negative_big", (3, 5), [1, 0], [-7, 4]), ("rotate_empty", (0, 3), [0, 1], [2, 1])]
    types = [np.float32, np.int8, np.complex64, np.bool_, BF16]
    for k, (tag, shape, dims, shifts) in enumerate(rot):
        dt = types[k % len(types)]
        base = np.arange(int(np.prod(shape))).reshape(shape)
        if dt is BF16:
            x = f32_to_bf16_bits(base.astype(np.float32))
        elif dt == np.bool_:
            x = (base % 3 == 0)
        elif dt == np.complex64:
            x = (base + 1j * base[::-1] if base.ndim else base).astype(np.complex64)
        else:
            x = base.astype(dt)
        exp = x
        for d, sh in zip(dims, shifts):
            exp = np.roll(exp, -sh, axis=d)
        n = "shuffle_%s_%s" % (tag, hlo_type(dt))
        sh_ = shape_str(dt, shape)
        hlo = module(n, [(dt, shape)], ["%%r = %s shuffle(%%p0), dimensions={%s}, mode=rotate, shifts={%s}"
                                         % (sh_, ",".join(map(str, dims)), ",".join(map(str, shifts)))], sh_)
        case(n, hlo, [x], [np.ascontiguousarray(exp)], {"bf16": True} if dt is BF16 else None)
    # permute: XLA's test modules (one dimension with shared [3,1] indices, every dimension in
    # order and out of order, rank 1, non-adjacent dimensions with a shared middle dimension,
    # s8 indices), plus out-of-range coordinates that clamp.
    perm = [("one_dim", (3, 2), [0], np.array([[2], [0], [1]], dtype=np.int32)),
            ("every_dim", (3, 2), [0, 1], np.array([[[2, 0], [0, 1]], [[0, 0], [2, 1]], [[1, 0], [1, 1]]], dtype=np.int32)),
            ("rank1", (4,), [0], np.array([3, 1, 0, 2], dtype=np.int32)),
            ("out_of_order", (3, 2), [1, 0], np.array([[[0, 2], [1, 0]], [[0, 0], [1, 2]], [[0, 1], [1, 1]]], dtype=np.int32)),
            ("non_adjacent", (2, 2, 2), [0, 2], np.array([[[[1, 1], [1, 0]]], [[[0, 1], [0, 0]]]], dtype=np.int32)),
            ("narrow_s8", (3, 2), [0, 1], np.array([[[2, 0], [0, 1]], [[0, 0], [2, 1]], [[1, 0], [1, 1]]], dtype=np.int8)),
            ("clamp", (5,), [0], np.array([-3, 7, 4, 0, 100], dtype=np.int64))]
    for k, (tag, shape, dims, idx) in enumerate(perm):
        dt = [np.float32, np.int32, np.float64, np.uint16, np.float32, np.int64, np.float32][k]
        x = (np.arange(int(np.prod(shape))).reshape(shape) * 3 + 1).astype(dt)
        n = "shuffle_permute_%s_%s" % (tag, hlo_type(dt))
        sh_ = shape_str(dt, shape)
        hlo = module(n, [(dt, shape)], ["%%r = %s shuffle(%%p0), dimensions={%s}, mode=permute, indices=%s"
                                         % (sh_, ",".join(map(str, dims)), lit_text(idx))], sh_)
        case(n, hlo, [x], [permute_ref(x, dims, idx)])


def main():
    mulhi_cases()
    dynamic_cases()
    stochastic_cases()
    ragged_cases()
    scaled_cases()
    shuffle_cases()


if __name__ == "__main__":
    main()
