#!/usr/bin/python3
"""Generates the golden cases of loops whose results compiler/codegen/fused.c may write with
non-temporal stores (nontemporal.c): a cheap loop with one result, flat or walked by rows of a
multiple of 64 bytes.  Their results are far below the default size (64 MiB), so the golden
suite takes the ordinary stores; golden_at.nontemporal (tests/golden.cmake) runs every case again
with --nontemporal-min-bytes=1, which streams these.  Cases under
testdata/golden/nontemporal_<case>/ (model.hlo + in<i>.npy + expected<i>.npy + tol.json).

Expected values are numpy formulas (float64 rounded once to the result type where the HLO
rounds once; integer arithmetic wraps as numpy's fixed-width types do) -- never hlorun's output.
They cover every element size (f64, f32, s32, f16, s8), a flat loop whose length leaves a
remainder after its 4,096-element chunks and after any vector width, a division (the one costly
op a streamed loop may hold), rows of 192 bytes (a broadcast row vector) and rows of 80 bytes
(not streamed: rows not 64-byte multiples), a rank-2 flat result, transposes walked in
32 x 32 tiles (f32 with a partial last tile, bf16), and a layer norm (a row fusion: two row
reductions, then the output pass that streams; its per-row rsqrt does not count as the
loop's arithmetic), and the runtime's batch-norm training, inference and grad kernels, whose
results stream when HLO_RT_NONTEMPORAL_MIN_BYTES (set by golden_at.nontemporal) allows.

Run:  /usr/bin/python3 testdata/golden/make_nontemporal.py
"""
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(18)
F32 = {"rtol": 1e-6, "atol": 1e-6}


def case(name, body, inputs, expected, tol=None):
    hlo = "HloModule nontemporal_%s\n\nENTRY main {\n%s}\n" % (name, body)
    write_case(os.path.join(HERE, "nontemporal_" + name), "testdata/golden/make_nontemporal.py", hlo, inputs,
               expected, tol)


def flat_f32():
    n = 3 * 4096 + 7
    x = RNG.standard_normal(n).astype(np.float32)
    a, b = np.float32(1.5), np.float32(-0.25)
    body = """  x = f32[%d] parameter(0)
  a = f32[] parameter(1)
  b = f32[] parameter(2)
  ba = f32[%d] broadcast(a), dimensions={}
  bb = f32[%d] broadcast(b), dimensions={}
  ax = f32[%d] multiply(ba, x)
  ROOT y = f32[%d] add(ax, bb)
""" % (n, n, n, n, n)
    # a*x is exact in f64; one rounding of a*x (f32) then one of the sum, as the HLO does.
    ax = (np.float64(a) * x.astype(np.float64)).astype(np.float32)
    y = (ax.astype(np.float64) + np.float64(b)).astype(np.float32)
    case("flat_f32", body, [x, np.array(a), np.array(b)], [y], F32)


def flat_f64_divide():
    n = 5000
    x = RNG.standard_normal(n)
    z = RNG.uniform(0.5, 3.0, n)
    body = """  x = f64[%d] parameter(0)
  z = f64[%d] parameter(1)
  c = f64[] constant(2)
  bc = f64[%d] broadcast(c), dimensions={}
  d = f64[%d] add(z, bc)
  ROOT y = f64[%d] divide(x, d)
""" % (n, n, n, n, n)
    case("flat_f64_divide", body, [x, z], [x / (z + 2.0)], {"rtol": 1e-15, "atol": 0})


def flat_s32():
    n = 8200
    x = RNG.integers(-2**31, 2**31 - 1, n, dtype=np.int32)
    y = RNG.integers(-2**31, 2**31 - 1, n, dtype=np.int32)
    body = """  x = s32[%d] parameter(0)
  y = s32[%d] parameter(1)
  c = s32[] constant(3)
  bc = s32[%d] broadcast(c), dimensions={}
  m = s32[%d] multiply(x, bc)
  s = s32[%d] add(m, y)
  k = s32[] constant(5)
  bk = s32[%d] broadcast(k), dimensions={}
  ROOT r = s32[%d] xor(s, bk)
""" % (n, n, n, n, n, n, n)
    with np.errstate(over="ignore"):
        r = ((x * np.int32(3)) + y) ^ np.int32(5)
    case("flat_s32", body, [x, y], [r.astype(np.int32)])


def flat_f16():
    n = 4100
    x = RNG.standard_normal(n).astype(np.float16)
    y = RNG.standard_normal(n).astype(np.float16)
    body = """  x = f16[%d] parameter(0)
  y = f16[%d] parameter(1)
  ROOT s = f16[%d] add(x, y)
""" % (n, n, n)
    # The f32 sum of two f16 values is exact; rounding it to f16 is the correctly rounded sum.
    s = (x.astype(np.float32) + y.astype(np.float32)).astype(np.float16)
    case("flat_f16", body, [x, y], [s])


def flat_s8():
    n = 8256
    x = RNG.integers(-128, 127, n, dtype=np.int8)
    y = RNG.integers(-128, 127, n, dtype=np.int8)
    body = """  x = s8[%d] parameter(0)
  y = s8[%d] parameter(1)
  ROOT s = s8[%d] add(x, y)
""" % (n, n, n)
    with np.errstate(over="ignore"):
        s = (x + y).astype(np.int8)
    case("flat_s8", body, [x, y], [s])


def rows(name, r, c):
    x = RNG.standard_normal((r, c)).astype(np.float32)
    w = RNG.standard_normal(c).astype(np.float32)
    body = """  x = f32[%d,%d] parameter(0)
  w = f32[%d] parameter(1)
  bw = f32[%d,%d] broadcast(w), dimensions={1}
  m = f32[%d,%d] multiply(x, bw)
  one = f32[] constant(1)
  b1 = f32[%d,%d] broadcast(one), dimensions={}
  ROOT y = f32[%d,%d] add(m, b1)
""" % (r, c, c, r, c, r, c, r, c, r, c)
    m = (x.astype(np.float64) * w.astype(np.float64)).astype(np.float32)
    y = (m.astype(np.float64) + 1.0).astype(np.float32)
    case(name, body, [x, w], [y], F32)


def flat_rank2():
    x = RNG.standard_normal((3, 4100)).astype(np.float32)
    y = RNG.standard_normal((3, 4100)).astype(np.float32)
    body = """  x = f32[3,4100] parameter(0)
  y = f32[3,4100] parameter(1)
  ROOT d = f32[3,4100] subtract(x, y)
"""
    d = (x.astype(np.float64) - y.astype(np.float64)).astype(np.float32)
    case("flat_rank2", body, [x, y], [d], F32)


def row_fusion_layernorm():
    r, c = 300, 48
    x = RNG.standard_normal((r, c)).astype(np.float32)
    g = RNG.standard_normal(c).astype(np.float32)
    body = """  x = f32[%d,%d] parameter(0)
  g = f32[%d] parameter(1)
  zero = f32[] constant(0)
  s = f32[%d] reduce(x, zero), dimensions={1}, to_apply=add
  n = f32[] constant(%d)
  bn = f32[%d] broadcast(n), dimensions={}
  mean = f32[%d] divide(s, bn)
  bmean = f32[%d,%d] broadcast(mean), dimensions={0}
  d = f32[%d,%d] subtract(x, bmean)
  d2 = f32[%d,%d] multiply(d, d)
  q = f32[%d] reduce(d2, zero), dimensions={1}, to_apply=add
  var = f32[%d] divide(q, bn)
  eps = f32[] constant(1e-05)
  beps = f32[%d] broadcast(eps), dimensions={}
  ve = f32[%d] add(var, beps)
  rs = f32[%d] rsqrt(ve)
  brs = f32[%d,%d] broadcast(rs), dimensions={0}
  nrm = f32[%d,%d] multiply(d, brs)
  bg = f32[%d,%d] broadcast(g), dimensions={1}
  ROOT y = f32[%d,%d] multiply(nrm, bg)
""" % ((r, c, c, r, c, r, r, r, c, r, c, r, c, r, r, r, r, r, r, c, r, c, r, c, r, c))
    x64 = x.astype(np.float64)
    d = x64 - x64.mean(1, keepdims=True)
    y = d / np.sqrt((d * d).mean(1, keepdims=True) + 1e-5) * g.astype(np.float64)
    add = "\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
    hlo = "HloModule nontemporal_row_fusion_layernorm\n%s\nENTRY main {\n%s}\n" % (add, body)
    write_case(os.path.join(HERE, "nontemporal_row_fusion_layernorm"), "testdata/golden/make_nontemporal.py", hlo,
               [x, g], [y.astype(np.float32)], {"rtol": 1e-4, "atol": 1e-5})


def transpose(name, t, np_t, r, c):
    if np_t is np.uint16:  # bf16 bits: any pattern moves unchanged
        x = RNG.integers(0, 2**16, (r, c), dtype=np.uint16)
    else:
        x = RNG.standard_normal((r, c)).astype(np_t)
    body = """  x = %s[%d,%d] parameter(0)
  ROOT y = %s[%d,%d] transpose(x), dimensions={1,0}
""" % (t, r, c, t, c, r)
    case(name, body, [x], [np.ascontiguousarray(x.T)])


def batch_norms():
    """The runtime's batch-norm kernels stream y or grad_x (rows of 32 floats, a multiple of
    either vector) when HLO_RT_NONTEMPORAL_MIN_BYTES allows (golden_at.nontemporal sets 1)."""
    shape, nf, eps = (3, 4, 4, 8), 4, 0.001
    x = RNG.standard_normal(shape).astype(np.float32)
    dy = RNG.standard_normal(shape).astype(np.float32)
    scale = RNG.uniform(0.5, 2.0, nf).astype(np.float32)
    offset = RNG.standard_normal(nf).astype(np.float32)
    b = (1, nf, 1, 1)
    x64 = x.astype(np.float64)
    mean, var = x64.mean(axis=(0, 2, 3)), x64.var(axis=(0, 2, 3))
    norm = (x64 - mean.reshape(b)) / np.sqrt(var.reshape(b) + eps) * scale.reshape(b) + offset.reshape(b)
    xs, fs = "f32[3,4,4,8]", "f32[4]"
    body = """  x = %s parameter(0)
  s = %s parameter(1)
  o = %s parameter(2)
  ROOT t = (%s, %s, %s) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
""" % (xs, fs, fs, xs, fs, fs)
    case("batch_norm_training", body, [x, scale, offset],
         [norm.astype(np.float32), mean.astype(np.float32), var.astype(np.float32)], {"rtol": 1e-4, "atol": 1e-4})
    m = RNG.standard_normal(nf).astype(np.float32)
    v = RNG.uniform(0.5, 3.0, nf).astype(np.float32)
    inf = (x64 - m.reshape(b)) / np.sqrt(v.astype(np.float64).reshape(b) + eps) * scale.reshape(b) + offset.reshape(b)
    body = """  x = %s parameter(0)
  s = %s parameter(1)
  o = %s parameter(2)
  m = %s parameter(3)
  v = %s parameter(4)
  ROOT y = %s batch-norm-inference(x, s, o, m, v), epsilon=0.001, feature_index=1
""" % (xs, fs, fs, fs, fs, xs)
    case("batch_norm_inference", body, [x, scale, offset, m, v], [inf.astype(np.float32)], {"rtol": 1e-5, "atol": 1e-5})
    # grad: the semantics document's formulas in float64, mean and variance taken as given.
    mu, ve = m.astype(np.float64).reshape(b), v.astype(np.float64).reshape(b) + eps
    d64 = dy.astype(np.float64)
    n = x.size // nf
    c = (d64 * (x64 - mu) / ve).sum(axis=(0, 2, 3), keepdims=True) / n
    d = d64.sum(axis=(0, 2, 3), keepdims=True) / n
    gx = scale.astype(np.float64).reshape(b) / np.sqrt(ve) * (d64 - d - c * (x64 - mu))
    gs = (d64 * (x64 - mu) / np.sqrt(ve)).sum(axis=(0, 2, 3))
    go = d64.sum(axis=(0, 2, 3))
    body = """  x = %s parameter(0)
  s = %s parameter(1)
  m = %s parameter(2)
  v = %s parameter(3)
  dy = %s parameter(4)
  ROOT g = (%s, %s, %s) batch-norm-grad(x, s, m, v, dy), epsilon=0.001, feature_index=1
""" % (xs, fs, fs, fs, xs, xs, fs, fs)
    case("batch_norm_grad", body, [x, scale, m, v, dy],
         [gx.astype(np.float32), gs.astype(np.float32), go.astype(np.float32)], {"rtol": 1e-4, "atol": 1e-4})


if __name__ == "__main__":
    flat_f32()
    flat_f64_divide()
    flat_s32()
    flat_f16()
    flat_s8()
    rows("rows_192_bytes", 130, 48)
    rows("rows_80_bytes", 70, 20)
    flat_rank2()
    transpose("transpose_f32", "f32", np.float32, 80, 96)
    transpose("transpose_bf16", "bf16", np.uint16, 96, 64)
    row_fusion_layernorm()
    batch_norms()
