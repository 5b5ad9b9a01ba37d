#!/usr/bin/python3
"""Golden cases for sort, topk, cholesky, triangular-solve, rng-bit-generator, rng and
rng-get-and-update-state (imported by make.py; also runnable alone to rewrite only these).

Expected values come from numpy formulas (stable argsort of XLA's total-order keys,
np.linalg.cholesky / solve), hand computation, Random123's published known-answer vectors,
and a Python transcription of XLA's counter layouts (xla/hlo/builder/lib/prng.cc) whose
block ciphers are themselves checked against those known answers below — never from hlorun.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make  # noqa: E402
from make import BF16, case, f32_to_bf16_bits, module, module_with, shape_str  # noqa: E402

R = np.random.default_rng(909)
NAMES = []


def add(name, hlo, inputs, expected, tol=None):
    NAMES.append(name)
    case(name, hlo, inputs, expected, tol)


def tup(shapes):
    return "(" + ", ".join(shapes) + ")"


# ---- sort ------------------------------------------------------------------------------------
def total_key(bits, width):
    """XLA's total order as unsigned keys: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN."""
    sign = np.uint64(1) << np.uint64(width - 1)
    mask = np.uint64((1 << width) - 1)
    b = bits.astype(np.uint64)
    return np.where(b & sign, ~b & mask, b | sign)


def less_cmp(t, direction="LT", extra=""):
    return ("%%lt {\n  %%a = %s[] parameter(0)\n  %%b = %s[] parameter(1)\n"
            "  ROOT %%c = pred[] compare(%%a, %%b), direction=%s%s\n}\n" % (t, t, direction, extra))


def sort_cases():
    # XLA's total order: NaN of both signs, -0/+0, infinities, ties; compared as bits.
    row = np.array([3.0, -0.0, np.nan, 0.0, -np.inf, 1.0, -np.nan, np.inf, 1.0, -2.0], dtype=np.float32)
    x = np.stack([row, row[::-1]])
    bits = x.view(np.uint32)
    order = np.argsort(total_key(bits, 32), axis=1, kind="stable")
    exp = np.take_along_axis(bits, order, axis=1)
    comps = less_cmp("f32", "LT", ", type=TOTALORDER")
    hlo = module_with("sort_totalorder_nan_negzero_f32", comps, [(np.float32, x.shape)],
                      ["%s = f32[2,10]{1,0} sort(%%p0), dimensions={1}, to_apply=%%lt" % "%s",
                       "%r = u32[2,10]{1,0} bitcast-convert(%s)"], "u32[2,10]{1,0}")
    add("sort_totalorder_nan_negzero_f32", hlo, [x], [exp])

    # JAX's argsort comparator on bf16 (canonicalised keys: -0 == +0, every NaN equal and last),
    # stable, 2 operands, 300 elements per row (radix path).
    comps = """%canon_lt {
  %a = bf16[] parameter(0)
  %b = bf16[] parameter(1)
  %i = s32[] parameter(2)
  %j = s32[] parameter(3)
  %nan = bf16[] constant(nan)
  %zero = bf16[] constant(0)
  %ane = pred[] compare(%a, %a), direction=NE
  %aeq = pred[] compare(%a, %zero), direction=EQ
  %az = bf16[] select(%aeq, %zero, %a)
  %ac = bf16[] select(%ane, %nan, %az)
  %bne = pred[] compare(%b, %b), direction=NE
  %beq = pred[] compare(%b, %zero), direction=EQ
  %bz = bf16[] select(%beq, %zero, %b)
  %bc = bf16[] select(%bne, %nan, %bz)
  ROOT %c = pred[] compare(%ac, %bc), direction=LT, type=TOTALORDER
}
"""
    vals = R.integers(-8, 8, size=(3, 300)).astype(np.float32) / 4
    vals[:, ::17] = np.nan
    vals[:, 5::23] = -0.0
    vals[1, 7::29] = -np.nan
    b = f32_to_bf16_bits(vals)
    canon = np.where(np.isnan(vals), np.float32(np.nan), np.where(vals == 0, np.float32(0), vals))
    key = total_key(canon.view(np.uint32) & np.uint32(0xffffffff), 32)
    key = np.where(np.isnan(vals), np.uint64(1 << 32), key)  # one NaN above everything
    order = np.argsort(key, axis=1, kind="stable")
    hlo = module_with("sort_jax_argsort_bf16", comps, [(BF16, (3, 300))],
                      ["%iota = s32[3,300]{1,0} iota(), iota_dimension=1",
                       "%s = (bf16[3,300]{1,0}, s32[3,300]{1,0}) sort(%p0, %iota), dimensions={1}, is_stable=true, "
                       "to_apply=%canon_lt",
                       "%v = bf16[3,300]{1,0} get-tuple-element(%s), index=0",
                       "%k = s32[3,300]{1,0} get-tuple-element(%s), index=1",
                       "%r = (bf16[3,300]{1,0}, s32[3,300]{1,0}) tuple(%v, %k)"], "(bf16[3,300]{1,0}, s32[3,300]{1,0})")
    add("sort_jax_argsort_bf16", hlo, [b], [np.take_along_axis(b, order, axis=1), order.astype(np.int32)],
        {"exact": True})

    # Descending (GT) on operand 0 carrying two more operands; ties keep their order.
    k = R.integers(0, 5, size=(4, 40)).astype(np.int32)
    f = R.standard_normal((4, 40)).astype(np.float32)
    u = R.integers(0, 255, size=(4, 40)).astype(np.uint8)
    comps = """%gt3 {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  %c = f32[] parameter(2)
  %d = f32[] parameter(3)
  %e = u8[] parameter(4)
  %g = u8[] parameter(5)
  ROOT %r = pred[] compare(%a, %b), direction=GT
}
"""
    order = np.argsort(-k.astype(np.int64), axis=1, kind="stable")
    shp = ["s32[4,40]{1,0}", "f32[4,40]{1,0}", "u8[4,40]{1,0}"]
    hlo = module_with("sort_descending_stable_3ops_s32", comps,
                      [(np.int32, (4, 40)), (np.float32, (4, 40)), (np.uint8, (4, 40))],
                      ["%%r = %s sort(%%p0, %%p1, %%p2), dimensions={1}, is_stable=true, to_apply=%%gt3" % tup(shp)],
                      tup(shp))
    add("sort_descending_stable_3ops_s32", hlo, [k, f, u],
        [np.take_along_axis(a, order, axis=1) for a in (k, f, u)], {"exact": True})

    # A comparator the fast path does not know (|a| < |b|), 1000 elements: the merge sort.
    comps = """%abs_lt {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  %i = s32[] parameter(2)
  %j = s32[] parameter(3)
  %aa = f64[] abs(%a)
  %ab = f64[] abs(%b)
  ROOT %c = pred[] compare(%aa, %ab), direction=LT
}
"""
    v = R.integers(-50, 50, size=(2, 1000)).astype(np.float64)
    order = np.argsort(np.abs(v), axis=1, kind="stable")
    shp = ["f64[2,1000]{1,0}", "s32[2,1000]{1,0}"]
    hlo = module_with("sort_general_comparator_abs_f64", comps, [(np.float64, (2, 1000))],
                      ["%iota = s32[2,1000]{1,0} iota(), iota_dimension=1",
                       "%%r = %s sort(%%p0, %%iota), dimensions={1}, is_stable=true, to_apply=%%abs_lt" % tup(shp)],
                      tup(shp))
    add("sort_general_comparator_abs_f64", hlo, [v],
        [np.take_along_axis(v, order, axis=1), order.astype(np.int32)], {"exact": True})

    # Lexicographic comparator on two keys (general path), sorting along dimension 0 of 3-D.
    comps = """%lex {
  %a = s16[] parameter(0)
  %b = s16[] parameter(1)
  %c = u64[] parameter(2)
  %d = u64[] parameter(3)
  %lt0 = pred[] compare(%a, %b), direction=LT
  %eq0 = pred[] compare(%a, %b), direction=EQ
  %lt1 = pred[] compare(%c, %d), direction=GT
  %and = pred[] and(%eq0, %lt1)
  ROOT %r = pred[] or(%lt0, %and)
}
"""
    a = R.integers(-2, 2, size=(6, 3, 2)).astype(np.int16)
    c = R.integers(0, 4, size=(6, 3, 2)).astype(np.uint64) * np.uint64(1 << 62)
    order = np.lexsort((-c.astype(np.float64), a), axis=0)
    shp = ["s16[6,3,2]{2,1,0}", "u64[6,3,2]{2,1,0}"]
    hlo = module_with("sort_lexicographic_dim0_s16_u64", comps, [(np.int16, a.shape), (np.uint64, c.shape)],
                      ["%%r = %s sort(%%p0, %%p1), dimensions={0}, is_stable=true, to_apply=%%lex" % tup(shp)], tup(shp))
    add("sort_lexicographic_dim0_s16_u64", hlo, [a, c],
        [np.take_along_axis(a, order, axis=0), np.take_along_axis(c, order, axis=0)], {"exact": True})

    # Plain LT along the middle dimension of u64 and pred arrays.
    w = R.integers(0, 2**63, size=(2, 7, 3), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    hlo = module_with("sort_dim1_u64", less_cmp("u64"), [(np.uint64, w.shape)],
                      ["%r = u64[2,7,3]{2,1,0} sort(%p0), dimensions={1}, to_apply=%lt"], "u64[2,7,3]{2,1,0}")
    add("sort_dim1_u64", hlo, [w], [np.sort(w, axis=1)])
    p = R.integers(0, 2, size=(3, 9)).astype(np.bool_)
    hlo = module_with("sort_pred", less_cmp("pred"), [(np.bool_, p.shape)],
                      ["%r = pred[3,9]{1,0} sort(%p0), dimensions={1}, to_apply=%lt"], "pred[3,9]{1,0}")
    add("sort_pred", hlo, [p], [np.sort(p, axis=1)])

    # Radix path (more than 32 per line) for 8-, 2- and 1-byte keys.
    v = R.integers(-2**62, 2**62, size=(2, 500), dtype=np.int64) * 2
    v[:, ::50] = v[:, 1:2]  # ties
    hlo = module_with("sort_radix_s64", less_cmp("s64", "GT"), [(np.int64, v.shape)],
                      ["%r = s64[2,500]{1,0} sort(%p0), dimensions={1}, is_stable=true, to_apply=%lt"], "s64[2,500]{1,0}")
    add("sort_radix_s64", hlo, [v], [-np.sort(-v, axis=1)])
    d = R.standard_normal((2, 300)) * 1e300
    d[:, ::31] = np.nan
    d[:, 1::37] = -np.nan
    d[:, 2::41] = -0.0
    d[:, 3::43] = np.inf
    d[:, 4::47] = 5e-324  # subnormal
    bits = d.view(np.uint64)
    order = np.argsort(total_key(bits, 64), axis=1, kind="stable")
    hlo = module_with("sort_radix_totalorder_f64", less_cmp("f64", "LT", ", type=TOTALORDER"), [(np.float64, d.shape)],
                      ["%s = f64[2,300]{1,0} sort(%p0), dimensions={1}, is_stable=true, to_apply=%lt",
                       "%r = u64[2,300]{1,0} bitcast-convert(%s)"], "u64[2,300]{1,0}")
    add("sort_radix_totalorder_f64", hlo, [d], [np.take_along_axis(bits, order, axis=1)])
    h = R.standard_normal((3, 100)).astype(np.float16)
    h[:, ::9] = np.float16(np.nan)
    h[:, 1::11] = np.float16(-0.0)
    hb = h.view(np.uint16)
    order = np.argsort(~total_key(hb, 16) & np.uint64(0xFFFF), axis=1, kind="stable")
    hlo = module_with("sort_radix_totalorder_desc_f16", less_cmp("f16", "GT", ", type=TOTALORDER"),
                      [(np.float16, h.shape)],
                      ["%s = f16[3,100]{1,0} sort(%p0), dimensions={1}, is_stable=true, to_apply=%lt",
                       "%r = u16[3,100]{1,0} bitcast-convert(%s)"], "u16[3,100]{1,0}")
    add("sort_radix_totalorder_desc_f16", hlo, [h], [np.take_along_axis(hb, order, axis=1)])
    q = R.integers(0, 256, size=(4, 64)).astype(np.uint8)
    iq = np.broadcast_to(np.arange(64, dtype=np.int32), (4, 64)).copy()
    comps = """%u8gt {
  %a = u8[] parameter(0)
  %b = u8[] parameter(1)
  %i = s32[] parameter(2)
  %j = s32[] parameter(3)
  ROOT %c = pred[] compare(%b, %a), direction=LT
}
"""
    order = np.argsort(255 - q.astype(np.int64), axis=1, kind="stable")
    shp = ["u8[4,64]{1,0}", "s32[4,64]{1,0}"]
    hlo = module_with("sort_radix_desc_swapped_u8", comps, [(np.uint8, q.shape), (np.int32, iq.shape)],
                      ["%%r = %s sort(%%p0, %%p1), dimensions={1}, is_stable=true, to_apply=%%u8gt" % tup(shp)],
                      tup(shp))
    add("sort_radix_desc_swapped_u8", hlo, [q, iq], [np.take_along_axis(q, order, axis=1), order.astype(np.int32)])

    # Empty dimensions: nothing to sort, empty results.
    e = np.zeros((0, 5), dtype=np.float32)
    hlo = module_with("sort_empty_f32", less_cmp("f32"), [(np.float32, (0, 5))],
                      ["%r = f32[0,5]{1,0} sort(%p0), dimensions={1}, to_apply=%lt"], "f32[0,5]{1,0}")
    add("sort_empty_f32", hlo, [e], [e])
    e = np.zeros((3, 0), dtype=np.int32)
    hlo = module_with("sort_empty_dim_s32", less_cmp("s32"), [(np.int32, (3, 0))],
                      ["%r = s32[3,0]{1,0} sort(%p0), dimensions={1}, to_apply=%lt"], "s32[3,0]{1,0}")
    add("sort_empty_dim_s32", hlo, [e], [e])


# ---- topk -------------------------------------------------------------------------------------
def topk_case(name, x, k, largest, dt, key):
    order = np.argsort(-key.astype(np.float64) if largest else key.astype(np.float64), axis=-1, kind="stable")[..., :k]
    vals = np.take_along_axis(x, order, axis=-1)
    t = make.hlo_type(dt)
    shp = [shape_str(dt, vals.shape), shape_str(np.int32, vals.shape)]
    hlo = module(name, [(dt, x.shape)],
                 ["%%r = %s topk(%%p0), k=%d, largest=%s" % (tup(shp), k, "true" if largest else "false")], tup(shp))
    add(name, hlo, [x], [vals, order.astype(np.int32)], {"exact": True, "bf16": t == "bf16"})


def topk_cases():
    # Ties broken by the lower index first; NaN is largest (XLA's total order), -0 < +0.
    x = np.array([[1.0, 3.0, 3.0, np.nan, -0.0, 0.0], [2.0, 2.0, 2.0, 2.0, -1.0, 5.0],
                  [-0.0, 0.0, -0.0, 0.0, -np.inf, -1.0]], dtype=np.float32)
    topk_case("topk_ties_nan_f32", x, 3, True, np.float32, total_key(x.view(np.uint32), 32))
    s = R.integers(-3, 3, size=(2, 3, 8)).astype(np.int32)
    topk_case("topk_smallest_s32", s, 2, False, np.int32, s)
    b = f32_to_bf16_bits(R.integers(-4, 4, size=(4, 5)).astype(np.float32))
    topk_case("topk_k_equals_n_bf16", b, 5, True, BF16, total_key(b, 16))


# ---- cholesky ----------------------------------------------------------------------------------
def spd(n, batch=(), cplx=False):
    m = R.standard_normal(batch + (n, n))
    if cplx:
        m = m + 1j * R.standard_normal(batch + (n, n))
    return m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)


def cholesky_case(name, a, lower, dt, expected, tol):
    hlo = module(name, [(dt, a.shape)],
                 ["%%r = %s cholesky(%%p0), lower=%s" % (shape_str(dt, a.shape), "true" if lower else "false")],
                 shape_str(dt, a.shape))
    add(name, hlo, [a.astype(dt)], [expected.astype(dt)], tol)


def cholesky_cases():
    a = spd(4, (2,))
    cholesky_case("cholesky_lower_batched_f64", a, True, np.float64, np.linalg.cholesky(a), {"rtol": 1e-12, "atol": 1e-12})
    a = spd(5).astype(np.float32)
    junk = a + np.tril(np.full((5, 5), 100.0), -1)  # the upper form never reads below the diagonal
    cholesky_case("cholesky_upper_f32", junk, False, np.float32, np.linalg.cholesky(a.astype(np.float64)).T,
                  {"rtol": 1e-5, "atol": 1e-5})
    a = spd(3, (2,), cplx=True)
    junk = a + np.triu(np.full((3, 3), 7 + 7j), 1)  # the lower form never reads above the diagonal
    cholesky_case("cholesky_lower_batched_c128", junk, True, np.complex128, np.linalg.cholesky(a),
                  {"rtol": 1e-12, "atol": 1e-12})
    # Upper, complex: XLA factors the transpose and transposes back, U = chol(A^T)^T, U^H U = A.
    a = spd(4, cplx=True)
    cholesky_case("cholesky_upper_c64", a, False, np.complex64, np.swapaxes(np.linalg.cholesky(a.T), -1, -2),
                  {"rtol": 1e-5, "atol": 1e-5})
    # Not positive definite (second matrix: pivot 1 - 4 < 0): XLA's expander returns NaNs for
    # the whole matrix; the positive definite one beside it is unaffected.
    a = np.array([[[4.0, 2.0], [2.0, 5.0]], [[1.0, 2.0], [2.0, 1.0]]])
    exp = np.array([[[2.0, 0.0], [1.0, 2.0]], [[np.nan, np.nan], [np.nan, np.nan]]])
    cholesky_case("cholesky_not_positive_definite_f64", a, True, np.float64, exp, {"exact": True})
    cholesky_case("cholesky_empty_f32", np.zeros((2, 0, 0)), True, np.float32, np.zeros((2, 0, 0)), {"exact": True})


# ---- triangular-solve -----------------------------------------------------------------------------
def op_a(a, lower, unit, transpose):
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        idx = np.arange(a.shape[-1])
        t[..., idx, idx] = 1
    if transpose == "TRANSPOSE":
        t = np.swapaxes(t, -1, -2)
    elif transpose == "ADJOINT":
        t = np.conj(np.swapaxes(t, -1, -2))
    return t


def trsolve_case(name, dt, batch, m, n, left, lower, unit, transpose, tol):
    cplx = np.dtype(dt).kind == "c"
    a = R.standard_normal(batch + (m, m)) + (1j * R.standard_normal(batch + (m, m)) if cplx else 0)
    a = a + 4 * np.eye(m)
    bshape = batch + ((m, n) if left else (n, m))
    b = R.standard_normal(bshape) + (1j * R.standard_normal(bshape) if cplx else 0)
    a, b = a.astype(dt), b.astype(dt)
    t = op_a(a.astype(np.complex128 if cplx else np.float64), lower, unit, transpose)
    bb = b.astype(t.dtype)
    if left:
        x = np.linalg.solve(t, bb)
    else:  # X T = B  <=>  T^T X^T = B^T
        x = np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(bb, -1, -2)), -1, -2)
    attrs = "left_side=%s, lower=%s, unit_diagonal=%s, transpose_a=%s" % (
        "true" if left else "false", "true" if lower else "false", "true" if unit else "false", transpose)
    hlo = module(name, [(dt, a.shape), (dt, b.shape)],
                 ["%%r = %s triangular-solve(%%p0, %%p1), %s" % (shape_str(dt, b.shape), attrs)], shape_str(dt, b.shape))
    add(name, hlo, [a, b], [x.astype(dt)], tol)


def trsolve_cases():
    t64, t32 = {"rtol": 1e-11, "atol": 1e-11}, {"rtol": 2e-4, "atol": 2e-4}
    trsolve_case("triangular_solve_left_lower_batched_f64", np.float64, (2,), 4, 3, True, True, False, "NO_TRANSPOSE", t64)
    trsolve_case("triangular_solve_right_upper_transpose_f32", np.float32, (), 5, 2, False, False, False, "TRANSPOSE", t32)
    trsolve_case("triangular_solve_left_upper_adjoint_unit_c128", np.complex128, (2, 1), 4, 2, True, False, True,
                 "ADJOINT", t64)
    trsolve_case("triangular_solve_right_lower_adjoint_c64", np.complex64, (3,), 3, 4, False, True, False, "ADJOINT", t32)
    trsolve_case("triangular_solve_left_lower_transpose_unit_f64", np.float64, (), 6, 1, True, True, True, "TRANSPOSE", t64)
    # Singular (zero pivot), by hand: x0 = 1/0 = inf, x1 = (2 - 1*inf)/1 = -inf; second column
    # x0 = 0/0 = NaN, x1 = NaN.
    a = np.array([[0.0, 9.0], [1.0, 1.0]])
    b = np.array([[1.0, 0.0], [2.0, 1.0]])
    exp = np.array([[np.inf, np.nan], [-np.inf, np.nan]])
    hlo = module("triangular_solve_singular_f64", [(np.float64, (2, 2)), (np.float64, (2, 2))],
                 ["%r = f64[2,2]{1,0} triangular-solve(%p0, %p1), left_side=true, lower=true, transpose_a=NO_TRANSPOSE"],
                 "f64[2,2]{1,0}")
    add("triangular_solve_singular_f64", hlo, [a, b], [exp], {"exact": True})


# ---- rng-bit-generator ------------------------------------------------------------------------------
M32 = 0xFFFFFFFF


def threefry2x32(c, k):
    """Threefry-2x32-20 (Salmon et al. 2011), written from the paper's description."""
    rot = [13, 15, 26, 6, 17, 29, 16, 24]
    ks = [k[0], k[1], 0x1BD11BDA ^ k[0] ^ k[1]]
    x = [(c[0] + ks[0]) & M32, (c[1] + ks[1]) & M32]
    for blk in range(5):
        for r in range(4):
            x[0] = (x[0] + x[1]) & M32
            d = rot[(blk % 2) * 4 + r]
            x[1] = (((x[1] << d) | (x[1] >> (32 - d))) & M32) ^ x[0]
        x[0] = (x[0] + ks[(blk + 1) % 3]) & M32
        x[1] = (x[1] + ks[(blk + 2) % 3] + blk + 1) & M32
    return x


def philox4x32(c, k):
    """Philox-4x32-10 (Salmon et al. 2011)."""
    x, k = list(c), list(k)
    for _ in range(10):
        p0, p1 = 0xD2511F53 * x[0], 0xCD9E8D57 * x[2]
        x = [((p1 >> 32) ^ x[1] ^ k[0]) & M32, p1 & M32, ((p0 >> 32) ^ x[3] ^ k[1]) & M32, p0 & M32]
        k = [(k[0] + 0x9E3779B9) & M32, (k[1] + 0xBB67AE85) & M32]
    return x


# Random123 known-answer vectors (Random123 tests/kat_vectors, "threefry2x32 20" and
# "philox4x32 10"; the Threefry ones are also in JAX's random_test.py testThreefry2x32).
TF_KAT = [((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
          ((M32, M32), (M32, M32), (0x1CB996FC, 0xBB002BE7)),
          ((0x243F6A88, 0x85A308D3), (0x13198A2E, 0x03707344), (0xC4923A9C, 0x483DF7A0))]
PH_KAT = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
          ((M32,) * 4, (M32, M32), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
          ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
           (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
for _c, _k, _o in TF_KAT:
    assert tuple(threefry2x32(_c, _k)) == _o
for _c, _k, _o in PH_KAT:
    assert tuple(philox4x32(_c, _k)) == _o


def u64(lo, hi):
    return lo | (hi << 32)


def rbg_module(name, alg, state_n, out_shape):
    st = "u64[%d]{0}" % state_n
    shp = [st, out_shape]
    return module(name, [(np.uint64, (state_n,))],
                  ["%%r = %s rng-bit-generator(%%p0), algorithm=%s" % (tup(shp), alg)], tup(shp))


def rbg_kat_cases():
    # THREE_FRY, u64[1]: state (key, counter); the element is x0 | x1 << 32 of block
    # threefry(counter words, key words) — each Random123 vector in its own module.
    for i, (c, k, o) in enumerate(TF_KAT):
        st = np.array([u64(*k), u64(*c)], dtype=np.uint64)
        exp_state = np.array([u64(*k), (u64(*c) + 1) % 2**64], dtype=np.uint64)
        name = "rng_bit_generator_threefry_random123_kat%d" % i
        add(name, rbg_module(name, "rng_three_fry", 2, "u64[1]{0}"), [st],
            [exp_state, np.array([u64(*o)], dtype=np.uint64)])
    # XLA's own output (PJRT CPU), printed to 5 digits in r-xla/anvil's documentation
    # (reference/nvl_rng_bit_generator.md): THREE_FRY from state (0, 0) into u32[3,2] gives
    # [[1.7973e9, 2.5791e9], [1.3515e9, 3.2358e9], [1.6886e9, 4.2293e9]] and state (0, 3).  The
    # data is compared through f64 within the printed precision.
    name = "rng_bit_generator_threefry_u32_3x2_xla_pjrt"
    shp = ["u64[2]{0}", "u32[3,2]{1,0}"]
    hlo = module(name, [(np.uint64, (2,))],
                 ["%%g = %s rng-bit-generator(%%p0), algorithm=rng_three_fry" % tup(shp),
                  "%s = u64[2]{0} get-tuple-element(%g), index=0",
                  "%d = u32[3,2]{1,0} get-tuple-element(%g), index=1",
                  "%f = f64[3,2]{1,0} convert(%d)",
                  "%r = (u64[2]{0}, f64[3,2]{1,0}) tuple(%s, %f)"], "(u64[2]{0}, f64[3,2]{1,0})")
    add(name, hlo, [np.zeros(2, dtype=np.uint64)],
        [np.array([0, 3], dtype=np.uint64),
         np.array([[1.7973e9, 2.5791e9], [1.3515e9, 3.2358e9], [1.6886e9, 4.2293e9]])], {"rtol": 1e-4})
    # PHILOX with a u64[3] state (key, counter low, counter high): u32[4] is one block.
    for i, (c, k, o) in enumerate(PH_KAT):
        lo, hi = u64(c[0], c[1]), u64(c[2], c[3])
        st = np.array([u64(*k), lo, hi], dtype=np.uint64)
        nlo = (lo + 1) % 2**64
        nhi = (hi + (1 if nlo == 0 else 0)) % 2**64
        name = "rng_bit_generator_philox_random123_kat%d" % i
        add(name, rbg_module(name, "rng_philox", 3, "u32[4]{0}"), [st],
            [np.array([u64(*k), nlo, nhi], dtype=np.uint64), np.array(o, dtype=np.uint32)])


def xla_threefry(state, dims, bits):
    """XLA's ThreeFryBitGenerator layouts (prng.cc): 64-bit elements use counter + linear index;
    32-bit and narrower split the shape in halves along its first even dimension (else its
    first largest): element (pre, i, post) is word i % 2 of counter + index of (pre, i // 2, post)."""
    key, init = int(state[0]), int(state[1])
    kw = (key & M32, key >> 32)
    n = int(np.prod(dims)) if dims else 1
    if bits == 64:
        out = []
        for e in range(n):
            c = (init + e) % 2**64
            x = threefry2x32((c & M32, c >> 32), kw)
            out.append(x[0] | (x[1] << 32))
        return np.array(out, dtype=np.uint64).reshape(dims), (init + n) % 2**64
    if not dims:
        c = init
        return np.array(threefry2x32((c & M32, c >> 32), kw)[0]), (init + 1) % 2**64
    sd = next((d for d in range(len(dims)) if dims[d] % 2 == 0), None)
    if sd is None:
        sd = int(np.argmax(dims))
    pre, post, ds = int(np.prod(dims[:sd])), int(np.prod(dims[sd + 1:])), dims[sd]
    h = (ds + 1) // 2
    out = np.zeros((pre, ds, post), dtype=np.uint64)
    for p in range(pre):
        for i in range(ds):
            for q in range(post):
                c = (init + (p * h + i // 2) * post + q) % 2**64
                out[p, i, q] = threefry2x32((c & M32, c >> 32), kw)[i % 2]
    return out.reshape(dims), (init + pre * h * post) % 2**64


def xla_philox(state, n, bits):
    """XLA's PhiloxBitGenerator (prng.cc + RngBitGeneratorExpander): u64[2] state is read
    reversed (counter = state[1] low, key high); blocks of 4 words (32-bit) or 2 words (64-bit)."""
    key = int(state[0])
    lo, hi = int(state[1]), int(state[2]) if len(state) == 3 else key
    kw = (key & M32, key >> 32)
    per = 2 if bits == 64 else 4
    blocks = (n + per - 1) // per
    out = []
    for v in range(blocks):
        c = ((hi << 64) | lo) + v
        l, hh = c & (2**64 - 1), (c >> 64) & (2**64 - 1)
        w = philox4x32((l & M32, l >> 32, hh & M32, hh >> 32), kw)
        out += [w[0] | (w[1] << 32), w[2] | (w[3] << 32)] if bits == 64 else w
    nc = ((hi << 64) | lo) + blocks
    return out[:n], [key, nc & (2**64 - 1)] + ([(nc >> 64) & (2**64 - 1)] if len(state) == 3 else [])


def rbg_layout_cases():
    mask = {8: 0xFF, 16: 0xFFFF, 32: M32, 64: 2**64 - 1}
    for dims, t, dt, bits in [((3, 5), "u32", np.uint32, 32), ((4, 3), "u32", np.uint32, 32),
                              ((5,), "u8", np.uint8, 8), ((2, 3), "u64", np.uint64, 64), ((7,), "u16", np.uint16, 16)]:
        st = np.array([0x0123456789ABCDEF, 0xFFFFFFFFFFFFFFFE], dtype=np.uint64)
        vals, nst = xla_threefry(st, list(dims), bits)
        name = "rng_bit_generator_threefry_%s_%s" % (t, "x".join(map(str, dims)))
        out_shape = "%s[%s]{%s}" % (t, ",".join(map(str, dims)), ",".join(str(i) for i in reversed(range(len(dims)))))
        vals = (np.asarray(vals, dtype=object) & mask[bits]).astype(np.uint64).astype(dt)
        add(name, rbg_module(name, "rng_three_fry", 2, out_shape), [st],
            [np.array([st[0], nst], dtype=np.uint64), vals])
    for n, t, dt, bits, st in [(7, "u32", np.uint32, 32, [5, 0xFFFFFFFFFFFFFFFF]),
                               (5, "u64", np.uint64, 64, [0xDEADBEEF, 3, 9]),
                               (6, "u16", np.uint16, 16, [42, 0]),
                               (3, "u8", np.uint8, 8, [1, 2, 3])]:
        st = np.array(st, dtype=np.uint64)
        vals, nst = xla_philox([int(s) for s in st], n, bits)
        vals = np.array([v & mask[bits] for v in vals], dtype=np.uint64)
        vals = vals.astype({8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]).view(dt)
        alg = "rng_default" if t == "u16" else "rng_philox"
        name = "rng_bit_generator_%s_%s_%d_state%d" % ("default" if t == "u16" else "philox", t, n, len(st))
        add(name, rbg_module(name, alg, len(st), "%s[%d]{0}" % (t, n)), [st],
            [np.array(nst, dtype=np.uint64), vals], {"exact": True})


# ---- rng and rng-get-and-update-state: statistics that can fail --------------------------------------
STATS = """%add {
  %x = f64[] parameter(0)
  %y = f64[] parameter(1)
  ROOT %s = f64[] add(%x, %y)
}

%min {
  %x = f64[] parameter(0)
  %y = f64[] parameter(1)
  ROOT %s = f64[] minimum(%x, %y)
}

%max {
  %x = f64[] parameter(0)
  %y = f64[] parameter(1)
  ROOT %s = f64[] maximum(%x, %y)
}
"""


def stats_body(n, rng_line, bounds):
    """Lines computing (mean, variance, ok) of %x, an rng result of n elements, in f64; ok says
    that the minimum lies in (bounds[0], bounds[1]) and the maximum in (bounds[2], bounds[3])."""
    lines = [rng_line,
             "%%xd = f64[%d]{0} convert(%%x)" % n,
             "%zero = f64[] constant(0)", "%inf = f64[] constant(inf)", "%ninf = f64[] constant(-inf)",
             "%%cnt = f64[] constant(%d)" % n,
             "%sum = f64[] reduce(%xd, %zero), dimensions={0}, to_apply=%add",
             "%mean = f64[] divide(%sum, %cnt)",
             "%%mb = f64[%d]{0} broadcast(%%mean), dimensions={}" % n,
             "%%dev = f64[%d]{0} subtract(%%xd, %%mb)" % n,
             "%%sq = f64[%d]{0} multiply(%%dev, %%dev)" % n,
             "%ss = f64[] reduce(%sq, %zero), dimensions={0}, to_apply=%add",
             "%var = f64[] divide(%ss, %cnt)",
             "%lo = f64[] reduce(%xd, %inf), dimensions={0}, to_apply=%min",
             "%hi = f64[] reduce(%xd, %ninf), dimensions={0}, to_apply=%max"]
    for i, v in enumerate(bounds):
        lines.append("%%b%d = f64[] constant(%r)" % (i, float(v)))
    lines += ["%c0 = pred[] compare(%lo, %b0), direction=GT", "%c1 = pred[] compare(%lo, %b1), direction=LT",
              "%c2 = pred[] compare(%hi, %b2), direction=GT", "%c3 = pred[] compare(%hi, %b3), direction=LT",
              "%a0 = pred[] and(%c0, %c1)", "%a1 = pred[] and(%c2, %c3)", "%ok = pred[] and(%a0, %a1)",
              "%r = (f64[], f64[], pred[]) tuple(%mean, %var, %ok)"]
    return lines


def rng_stats_case(name, t, dt, n, a, b, dist, mean, var, bounds, atol):
    line = "%%x = %s[%d]{0} rng(%%p0, %%p1), distribution=%s" % (t, n, dist)
    hlo = module_with(name, STATS, [(dt, ()), (dt, ())], stats_body(n, line, bounds), "(f64[], f64[], pred[])")
    conv = (lambda v: f32_to_bf16_bits(np.array([v], np.float32))[0]) if dt is BF16 else (lambda v: np.array(v, dtype=dt))
    add(name, hlo, [conv(a), conv(b)], [np.array(mean), np.array(var), np.array(True)], {"atol": atol})


def rng_cases():
    # Uniform on [a, b): mean (a+b)/2 and variance (b-a)^2/12 within atol (with n = 200000 the
    # standard error of the mean is below 0.005 in every case, so atol is > 4 sigma); every value
    # in [a, b) and the extremes within 0.3 % of the range from the bounds (a miss has
    # probability < e^-600).
    n = 200000
    rng_stats_case("rng_uniform_stats_f32", "f32", np.float32, n, 2.0, 5.0, "rng_uniform", 3.5, 0.75,
                   [2.0 - 1e-12, 2.01, 4.99, 5.0], 0.02)
    rng_stats_case("rng_uniform_stats_f64", "f64", np.float64, n, -1.0, 1.0, "rng_uniform", 0.0, 1.0 / 3,
                   [-1.0 - 1e-12, -0.99, 0.99, 1.0], 0.01)
    # bf16: f32 values rounded to bf16, so the largest may round up to b itself.
    rng_stats_case("rng_uniform_stats_bf16", "bf16", BF16, n, 0.0, 8.0, "rng_uniform", 4.0, 64.0 / 12,
                   [-1e-12, 0.05, 7.9, 8.0 + 1e-9], 0.1)
    # Integers uniform on [-3, 7): mean 1.5, variance (10^2 - 1)/12 = 8.25, extremes -3 and 6.
    rng_stats_case("rng_uniform_stats_s32", "s32", np.int32, n, -3, 7, "rng_uniform", 1.5, 8.25,
                   [-3.5, -2.5, 5.5, 6.5], 0.05)
    # Normal(mu, sigma): mean mu, variance sigma^2 (standard errors 0.0045 sigma and 0.0032
    # sigma^2); among 200000 draws the extremes lie beyond 3.5 sigma (a miss has probability
    # < e^-46) and within 7 sigma.
    rng_stats_case("rng_normal_stats_f32", "f32", np.float32, n, 1.0, 2.0, "rng_normal", 1.0, 4.0,
                   [1.0 - 14, 1.0 - 7, 1.0 + 7, 1.0 + 14], 0.05)
    rng_stats_case("rng_normal_stats_f64", "f64", np.float64, n, 0.0, 1.0, "rng_normal", 0.0, 1.0,
                   [-7.0, -3.5, 3.5, 7.0], 0.02)
    # rng-get-and-update-state on a fresh context returns XLA's initial state 0x7012395
    # (xla/backends/cpu/runtime/rng_state_lib.cc kRngStateInitialValue), low word first.
    hlo = module("rng_get_and_update_state_initial", [], ["%r = u64[2]{0} rng-get-and-update-state(), delta=16"],
                 "u64[2]{0}")
    add("rng_get_and_update_state_initial", hlo, [], [np.array([0x7012395, 0], dtype=np.uint64)])


def all_cases():
    sort_cases()
    topk_cases()
    cholesky_cases()
    trsolve_cases()
    rbg_kat_cases()
    rbg_layout_cases()
    rng_cases()


if __name__ == "__main__":
    all_cases()
    # Rewrite only these cases (make.py rewrites everything, these included).
    keep = list(make.CASES)
    make.CASES[:] = [c for c in keep if c[0] in NAMES]
    here = make.HERE
    import shutil
    for name in NAMES:
        p = os.path.join(here, name)
        if os.path.isdir(p):
            shutil.rmtree(p)
    real = os.listdir
    make.os.listdir = lambda d: []  # write_all must not remove the other cases
    make.write_all()
    make.os.listdir = real
