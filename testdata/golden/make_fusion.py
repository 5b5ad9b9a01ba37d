#!/usr/bin/python3
"""Generates the golden cases of fusion (issue 7): modules whose instructions the fusion pass
groups (compiler/passes/fusion.c) and the fused loop kernels compute (compiler/codegen/fused.c),
under testdata/golden/fusion_<case>/ (model.hlo + in<i>.npy + expected<i>.npy + tol.json), as
make.py does for the other cases.  It writes only its own case folders.

Expected values are numpy formulas in float64 (rounded to the result type) -- never hlorun's
output.  The cases cover each loop shape the emitter picks: 1-D (elementwise chains with scalar
broadcasts), rows (broadcast along a minor dimension, slice, pad, concatenate, reverse, iota),
32x32 tiles (a transpose of the minor dimension, sizes not multiples of 32), row reductions
(reassociated sums), column reductions (kept minor dimension, blocks of 1024 columns), row
fusion (softmax and layernorm: reductions of the minor dimension broadcast back), a reduce
whose max reducer sees NaN, a module that already holds XLA-style `fusion` instructions
(kind=kLoop / kInput, calls=), as XLA's after-optimization dumps do, kOutput fusions (a dot
or convolution with its epilogue, and one that must not fuse; dots whose epilogue the GEMM
kernel runs in its tile loop, batched and larger than one block), and the buffer assignment's
in-place cases (dynamic-update-slice chains, a while loop's pass-through state and its
scan-shaped updates), and multi-output fusions of siblings that read the same input (kLoop
outputs of one shape, reductions over the same dimensions, a loop output with a row
reduction, siblings that must not merge because one depends on the other or because they
read different slices of their operand, and XLA's own tuple-rooted fusions), and the row
stash (stash_*: softmax-shaped row fusions whose later passes load a kept exp(x - max)), and
loops by rows whose concatenate reads one operand per row (concat_rows_*).

Run:  /usr/bin/python3 testdata/golden/make_fusion.py
"""
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(7)


def case(name, hlo, inputs, expected, tol=None):
    write_case(os.path.join(HERE, "fusion_" + name), "testdata/golden/make_fusion.py", hlo, inputs, expected, tol)


ADD = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""
MAX = """
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
"""


def f32(a):
    return np.asarray(a, dtype=np.float32)


def softmax():
    r, n = 37, 300
    x = f32(RNG.standard_normal((r, n)) * 4)
    x[3, 7] = 80.0  # a large logit: exp(x - max) must not overflow
    hlo = ("HloModule softmax\n" + ADD + MAX + """
ENTRY main {
  x = f32[37,300] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[37] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[37,300] broadcast(mx), dimensions={0}
  d = f32[37,300] subtract(x, mb)
  e = f32[37,300] exponential(d)
  z = f32[] constant(0)
  s = f32[37] reduce(e, z), dimensions={1}, to_apply=add
  sb = f32[37,300] broadcast(s), dimensions={0}
  ROOT r = f32[37,300] divide(e, sb)
}
""")
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(1, keepdims=True))
    case("softmax_rows", hlo, [x], [f32(e / e.sum(1, keepdims=True))], {"rtol": 1e-5, "atol": 1e-7})


def layernorm():
    x = f32(RNG.standard_normal((6, 5, 257)) * 3 + 2)
    g = f32(RNG.standard_normal(257))
    b = f32(RNG.standard_normal(257))
    hlo = ("HloModule layernorm\n" + ADD + """
ENTRY main {
  x = f32[6,5,257] parameter(0)
  g = f32[257] parameter(1)
  b = f32[257] parameter(2)
  z = f32[] constant(0)
  s = f32[6,5] reduce(x, z), dimensions={2}, to_apply=add
  n = f32[] constant(257)
  nb = f32[6,5] broadcast(n), dimensions={}
  mean = f32[6,5] divide(s, nb)
  mb = f32[6,5,257] broadcast(mean), dimensions={0,1}
  d = f32[6,5,257] subtract(x, mb)
  d2 = f32[6,5,257] multiply(d, d)
  v = f32[6,5] reduce(d2, z), dimensions={2}, to_apply=add
  var = f32[6,5] divide(v, nb)
  eps = f32[] constant(1e-5)
  eb = f32[6,5] broadcast(eps), dimensions={}
  rs = f32[6,5] rsqrt(f32[6,5] add(var, eb))
  rb = f32[6,5,257] broadcast(rs), dimensions={0,1}
  y = f32[6,5,257] multiply(d, rb)
  gb = f32[6,5,257] broadcast(g), dimensions={2}
  bb = f32[6,5,257] broadcast(b), dimensions={2}
  ROOT o = f32[6,5,257] add(f32[6,5,257] multiply(y, gb), bb)
}
""")
    xd = x.astype(np.float64)
    m = xd.mean(-1, keepdims=True)
    v = ((xd - m) ** 2).mean(-1, keepdims=True)
    case("layernorm_rows", hlo, [x, g, b], [f32((xd - m) / np.sqrt(v + 1e-5) * g + b)], {"rtol": 1e-5, "atol": 1e-5})


def data_movement():
    x = f32(RNG.standard_normal((33, 70)))
    y = f32(RNG.standard_normal((33, 5)))
    hlo = """
HloModule moves
ENTRY main {
  x = f32[33,70] parameter(0)
  y = f32[33,5] parameter(1)
  s = f32[33,20] slice(x), slice={[0:33], [3:63:3]}
  r = f32[33,20] reverse(s), dimensions={1}
  c = f32[33,25] concatenate(r, y), dimensions={1}
  zero = f32[] constant(0.5)
  p = f32[35,31] pad(c, zero), padding=1_1x2_4_0
  i = s32[35,31] iota(), iota_dimension=1
  fi = f32[35,31] convert(i)
  ROOT o = f32[35,31] add(p, fi)
}
"""
    s = x[:, 3:63:3][:, ::-1]
    c = np.concatenate([s, y], axis=1)
    p = np.full((35, 31), 0.5, np.float64)
    p[1:34, 2:27] = c
    case("data_movement_rows", hlo, [x, y], [f32(p + np.arange(31)[None, :])], {"rtol": 0, "atol": 0, "exact": True})


def transpose_tiles():
    x = f32(RNG.standard_normal((3, 70, 45)))
    hlo = """
HloModule tiles
ENTRY main {
  x = f32[3,70,45] parameter(0)
  t = f32[3,45,70] transpose(x), dimensions={0,2,1}
  two = f32[] constant(2)
  tb = f32[3,45,70] broadcast(two), dimensions={}
  ROOT o = f32[3,45,70] multiply(t, tb)
}
"""
    case("transpose_tiles", hlo, [x], [f32(np.transpose(x, (0, 2, 1)) * 2)], {"exact": True})


def reductions():
    x = f32(RNG.standard_normal((2100, 37)))
    x[5, 3] = np.nan
    hlo = ("HloModule sums\n" + ADD + MAX + """
ENTRY main {
  x = f32[2100,37] parameter(0)
  z = f32[] constant(0)
  sq = f32[2100,37] multiply(x, x)
  cols = f32[37] reduce(sq, z), dimensions={0}, to_apply=add
  rows = f32[2100] reduce(x, z), dimensions={1}, to_apply=add
  ninf = f32[] constant(-inf)
  colmax = f32[37] reduce(x, ninf), dimensions={0}, to_apply=max
  ROOT t = (f32[37], f32[2100], f32[37]) tuple(cols, rows, colmax)
}
""")
    xd = x.astype(np.float64)
    case("reductions_rows_columns", hlo, [x],
         [f32((xd * xd).sum(0)), f32(xd.sum(1)), f32(np.max(xd, axis=0))], {"rtol": 2e-5, "atol": 1e-4})


def column_blocks():
    x = f32(RNG.standard_normal((3, 40, 2500)))
    hlo = ("HloModule colblocks\n" + ADD + """
ENTRY main {
  x = f32[3,40,2500] parameter(0)
  z = f32[] constant(0)
  ROOT s = f32[3,2500] reduce(x, z), dimensions={1}, to_apply=add
}
""")
    case("column_blocks", hlo, [x], [f32(x.astype(np.float64).sum(1))], {"rtol": 1e-5, "atol": 1e-5})


def prefused():
    # Written as XLA's after-optimization dumps write fusions: the fused computations first,
    # then `fusion(...), kind=..., calls=...`.
    x = f32(RNG.standard_normal((64, 48)))
    w = f32(RNG.standard_normal((48,)))
    hlo = ("HloModule prefused\n" + ADD + """
%fused_computation (param_0: f32[64,48], param_1: f32[48]) -> f32[64,48] {
  %param_0 = f32[64,48]{1,0} parameter(0)
  %param_1 = f32[48]{0} parameter(1)
  %broadcast.1 = f32[64,48]{1,0} broadcast(f32[48]{0} %param_1), dimensions={1}
  %multiply.1 = f32[64,48]{1,0} multiply(f32[64,48]{1,0} %param_0, f32[64,48]{1,0} %broadcast.1)
  ROOT %tanh.1 = f32[64,48]{1,0} tanh(f32[64,48]{1,0} %multiply.1)
}

%fused_computation.1 (param_0.1: f32[64,48]) -> f32[64] {
  %param_0.1 = f32[64,48]{1,0} parameter(0)
  %constant.1 = f32[] constant(0)
  ROOT %reduce.1 = f32[64]{0} reduce(f32[64,48]{1,0} %param_0.1, f32[] %constant.1), dimensions={1}, to_apply=%add
}

ENTRY %main (x: f32[64,48], w: f32[48]) -> (f32[64,48], f32[64]) {
  %x = f32[64,48]{1,0} parameter(0)
  %w = f32[48]{0} parameter(1)
  %fusion = f32[64,48]{1,0} fusion(f32[64,48]{1,0} %x, f32[48]{0} %w), kind=kLoop, calls=%fused_computation
  %fusion.1 = f32[64]{0} fusion(f32[64,48]{1,0} %fusion), kind=kInput, calls=%fused_computation.1
  ROOT %tuple = (f32[64,48]{1,0}, f32[64]{0}) tuple(%fusion, %fusion.1)
}
""")
    t = np.tanh(x.astype(np.float64) * w)
    case("xla_prefused", hlo, [x, w], [f32(t), f32(t.sum(1))], {"rtol": 1e-5, "atol": 1e-5})


def in_place_updates():
    """dynamic-update-slice chains whose operand dies there update it in place (module.c's
    buffer assignment): starts clamped as the semantics say (2000 -> 1024-16, -5 -> 0)."""
    rng = np.random.default_rng(11)
    x = f32(rng.standard_normal((1024, 64)))
    u = f32(rng.standard_normal((16, 64)))
    hlo = """HloModule in_place_updates

ENTRY main {
  x = f32[1024,64] parameter(0)
  u = f32[16,64] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  z = s32[] constant(0)
  a = f32[1024,64] add(x, x)
  b = f32[1024,64] dynamic-update-slice(a, u, i, z)
  c = f32[1024,64] dynamic-update-slice(b, u, j, z)
  n = f32[16,64] negate(u)
  d = f32[1024,64] dynamic-update-slice(c, n, z, z)
  ROOT r = f32[1024,64] multiply(d, d)
}
"""
    a = x.astype(np.float64) * 2
    a[1024 - 16:] = u
    a[0:16] = u
    a[0:16] = -u
    case("in_place_updates", hlo, [x, u, np.array(2000, np.int32), np.array(-5, np.int32)], [f32(a * a)],
         {"rtol": 1e-6, "atol": 0})


def loop_passthrough():
    """A while loop whose body passes a large state element through unchanged (module.c and
    control.c keep one buffer for it, no copies per iteration) while it updates the others
    with it: acc += w[i % 64] for 100 iterations, w itself returned unchanged."""
    rng = np.random.default_rng(12)
    w = f32(rng.standard_normal((64, 256)))
    hlo = """HloModule loop_passthrough

cond {
  p = (s32[], f32[64,256], f32[256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(100)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[64,256], f32[256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  w = f32[64,256] get-tuple-element(p), index=1
  acc = f32[256] get-tuple-element(p), index=2
  k64 = s32[] constant(64)
  r = s32[] remainder(i, k64)
  z = s32[] constant(0)
  row = f32[1,256] dynamic-slice(w, r, z), dynamic_slice_sizes={1,256}
  v = f32[256] reshape(row)
  acc2 = f32[256] add(acc, v)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[64,256], f32[256]) tuple(i2, w, acc2)
}

ENTRY main {
  w = f32[64,256] parameter(0)
  z = s32[] constant(0)
  zf = f32[] constant(0)
  acc = f32[256] broadcast(zf), dimensions={}
  init = (s32[], f32[64,256], f32[256]) tuple(z, w, acc)
  loop = (s32[], f32[64,256], f32[256]) while(init), condition=cond, body=body
  wout = f32[64,256] get-tuple-element(loop), index=1
  aout = f32[256] get-tuple-element(loop), index=2
  ROOT r = (f32[64,256], f32[256]) tuple(wout, aout)
}
"""
    wd = w.astype(np.float64)
    acc = np.zeros(256)
    for i in range(100):
        acc += wd[i % 64]
    case("loop_passthrough", hlo, [w], [w, f32(acc)], {"rtol": 1e-6, "atol": 1e-5})


def loop_scan_updates():
    """A scan-shaped while loop: the body writes row i of an output carried in its state with a
    dynamic-update-slice that is that state's only reader, so the loop updates it in place
    (control.c) while a recurrence h = 0.5 h + 1 runs alongside."""
    rng = np.random.default_rng(13)
    h0 = f32(rng.standard_normal(32))
    hlo = """HloModule loop_scan_updates

cond {
  p = (s32[], f32[64,32], f32[32]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(64)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[64,32], f32[32]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  ys = f32[64,32] get-tuple-element(p), index=1
  h = f32[32] get-tuple-element(p), index=2
  c = f32[] constant(0.5)
  cb = f32[32] broadcast(c), dimensions={}
  one = f32[] constant(1)
  ob = f32[32] broadcast(one), dimensions={}
  h2 = f32[32] multiply(h, cb)
  h3 = f32[32] add(h2, ob)
  y = f32[1,32] reshape(h3)
  z = s32[] constant(0)
  ys2 = f32[64,32] dynamic-update-slice(ys, y, i, z)
  k1 = s32[] constant(1)
  i2 = s32[] add(i, k1)
  ROOT t = (s32[], f32[64,32], f32[32]) tuple(i2, ys2, h3)
}

ENTRY main {
  h0 = f32[32] parameter(0)
  z = s32[] constant(0)
  zf = f32[] constant(-7)
  ys = f32[64,32] broadcast(zf), dimensions={}
  init = (s32[], f32[64,32], f32[32]) tuple(z, ys, h0)
  loop = (s32[], f32[64,32], f32[32]) while(init), condition=cond, body=body
  ROOT out = f32[64,32] get-tuple-element(loop), index=1
}
"""
    h = h0.astype(np.float64)
    ys = np.zeros((64, 32))
    for i in range(64):
        h = h * 0.5 + 1
        ys[i] = h
    case("loop_scan_updates", hlo, [h0], [f32(ys)], {"rtol": 1e-6, "atol": 1e-6})


def output_fusions():
    """kOutput fusions: a dot with its bias and ReLU epilogue and a convolution with its bias,
    each computed into the result buffer and finished in place; and a dot whose epilogue
    reads it transposed, which must stay outside (read at another element's index)."""
    rng = np.random.default_rng(14)
    x = f32(rng.standard_normal((37, 50)))
    w = f32(rng.standard_normal((50, 45)))
    b = f32(rng.standard_normal(45))
    hlo = """HloModule output_dot

ENTRY main {
  x = f32[37,50] parameter(0)
  w = f32[50,45] parameter(1)
  b = f32[45] parameter(2)
  d = f32[37,45] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[37,45] broadcast(b), dimensions={1}
  a = f32[37,45] add(d, bb)
  z = f32[] constant(0)
  zb = f32[37,45] broadcast(z), dimensions={}
  ROOT r = f32[37,45] maximum(a, zb)
}
"""
    r = np.maximum(x.astype(np.float64) @ w + b, 0)
    case("output_dot_bias_relu", hlo, [x, w, b], [f32(r)], {"rtol": 1e-5, "atol": 1e-5})

    img = f32(rng.standard_normal((2, 9, 9, 8)))
    k = f32(rng.standard_normal((3, 3, 8, 16)))
    cb = f32(rng.standard_normal(16))
    hlo = """HloModule output_conv

ENTRY main {
  x = f32[2,9,9,8] parameter(0)
  k = f32[3,3,8,16] parameter(1)
  b = f32[16] parameter(2)
  c = f32[2,9,9,16] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[2,9,9,16] broadcast(b), dimensions={3}
  ROOT r = f32[2,9,9,16] add(c, bb)
}
"""
    xp = np.pad(img.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    out = np.zeros((2, 9, 9, 16))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nhwc,co->nhwo", xp[:, i:i + 9, j:j + 9, :], k[i, j].astype(np.float64))
    case("output_conv_bias", hlo, [img, k, cb], [f32(out + cb)], {"rtol": 1e-5, "atol": 1e-5})

    sq = f32(rng.standard_normal((40, 40)))
    hlo = """HloModule output_dot_transposed

ENTRY main {
  x = f32[40,40] parameter(0)
  d = f32[40,40] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[40,40] transpose(d), dimensions={1,0}
  ROOT r = f32[40,40] add(d, t)
}
"""
    dd = sq.astype(np.float64) @ sq
    case("output_dot_transposed", hlo, [sq], [f32(dd + dd.T)], {"rtol": 1e-5, "atol": 1e-4})


def mof_loop_siblings():
    """kLoop siblings: three loops of one shape read x (one of them an s32 output) and become
    one multi-output fusion writing all three in one pass (large enough to split over threads)."""
    rng = np.random.default_rng(21)
    x = f32(rng.standard_normal((300, 200)) * 2)
    hlo = """HloModule mof_loop_siblings

ENTRY main {
  x = f32[300,200] parameter(0)
  two = f32[] constant(2)
  tb = f32[300,200] broadcast(two), dimensions={}
  e = f32[300,200] exponential(x)
  a = f32[300,200] multiply(e, tb)
  t = f32[300,200] tanh(x)
  b = f32[300,200] add(t, tb)
  four = f32[] constant(4)
  fb = f32[300,200] broadcast(four), dimensions={}
  q = f32[300,200] floor(f32[300,200] multiply(x, fb))
  c = s32[300,200] convert(q)
  ROOT out = (f32[300,200], f32[300,200], s32[300,200]) tuple(a, b, c)
}
"""
    xd = x.astype(np.float64)
    case("mof_loop_siblings", hlo, [x], [f32(np.exp(xd) * 2), f32(np.tanh(xd) + 2), np.floor(x * np.float32(4)).astype(np.int32)],
         {"rtol": 1e-6, "atol": 1e-6})


def mof_reduce_siblings():
    """kInput siblings: the max and the sum of each row (softmax's statistics), the sum and the
    sum of squares of each column (batch-norm statistics), and of dimensions {0,2} of a 3-D
    array: each pair is one pass over its input."""
    rng = np.random.default_rng(22)
    x = f32(rng.standard_normal((700, 90)))
    y = f32(rng.standard_normal((4, 50, 33)))
    hlo = ("HloModule mof_reduce_siblings\n" + ADD + MAX + """
ENTRY main {
  x = f32[700,90] parameter(0)
  y = f32[4,50,33] parameter(1)
  z = f32[] constant(0)
  ninf = f32[] constant(-inf)
  rmax = f32[700] reduce(x, ninf), dimensions={1}, to_apply=max
  rsum = f32[700] reduce(x, z), dimensions={1}, to_apply=add
  csum = f32[90] reduce(x, z), dimensions={0}, to_apply=add
  sq = f32[700,90] multiply(x, x)
  csq = f32[90] reduce(sq, z), dimensions={0}, to_apply=add
  ysum = f32[50] reduce(y, z), dimensions={0,2}, to_apply=add
  ya = f32[4,50,33] abs(y)
  ymax = f32[50] reduce(ya, ninf), dimensions={0,2}, to_apply=max
  ROOT out = (f32[700], f32[700], f32[90], f32[90], f32[50], f32[50]) tuple(rmax, rsum, csum, csq, ysum, ymax)
}
""")
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    case("mof_reduce_siblings", hlo, [x, y],
         [f32(xd.max(1)), f32(xd.sum(1)), f32(xd.sum(0)), f32((xd * xd).sum(0)), f32(yd.sum((0, 2))),
          f32(np.abs(yd).max((0, 2)))], {"rtol": 2e-5, "atol": 1e-4})


def mof_reduce_with_loop():
    """A loop output of x's shape joins the row reductions of x: one pass over x computes the
    row sums and maxima and writes x * 3 + 1."""
    rng = np.random.default_rng(23)
    x = f32(rng.standard_normal((512, 130)))
    hlo = ("HloModule mof_reduce_with_loop\n" + ADD + MAX + """
ENTRY main {
  x = f32[512,130] parameter(0)
  z = f32[] constant(0)
  s = f32[512] reduce(x, z), dimensions={1}, to_apply=add
  three = f32[] constant(3)
  tb = f32[512,130] broadcast(three), dimensions={}
  one = f32[] constant(1)
  ob = f32[512,130] broadcast(one), dimensions={}
  y = f32[512,130] add(f32[512,130] multiply(x, tb), ob)
  ninf = f32[] constant(-inf)
  m = f32[512] reduce(x, ninf), dimensions={1}, to_apply=max
  ROOT out = (f32[512], f32[512,130], f32[512]) tuple(s, y, m)
}
""")
    xd = x.astype(np.float64)
    case("mof_reduce_with_loop", hlo, [x], [f32(xd.sum(1)), f32(xd * 3 + 1), f32(xd.max(1))], {"rtol": 1e-5, "atol": 1e-4})


def mof_siblings_dependent():
    """Siblings that must not merge: %a reads x as %b and %e do, but %b reads %a directly and
    %e through a dot of %a (merging either with %a would make a cycle); %b, %c (which reads %a
    too) and %e may merge."""
    rng = np.random.default_rng(24)
    x = f32(rng.standard_normal((64, 64)) * 0.5)
    w = f32(rng.standard_normal((64, 64)) * 0.1)
    hlo = """HloModule mof_siblings_dependent

ENTRY main {
  x = f32[64,64] parameter(0)
  w = f32[64,64] parameter(1)
  a = f32[64,64] exponential(x)
  b = f32[64,64] add(x, a)
  c = f32[64,64] multiply(a, a)
  d = f32[64,64] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[64,64] subtract(x, d)
  ROOT out = (f32[64,64], f32[64,64], f32[64,64], f32[64,64]) tuple(b, c, d, e)
}
"""
    xd, wd = x.astype(np.float64), w.astype(np.float64)
    a = np.exp(xd)
    d = a @ wd
    case("mof_siblings_dependent", hlo, [x, w], [f32(xd + a), f32(a * a), f32(d), f32(xd - d)], {"rtol": 1e-5, "atol": 1e-5})


def mof_xla_prefused():
    """XLA's own multi-output fusions, as its after-optimization dumps print them: a kInput
    fusion whose root is a tuple of two reductions of one input, a kLoop fusion whose root is a
    tuple of two loops, and a kInput fusion of a column reduction with a loop of its input's
    shape, each output read through get-tuple-element."""
    rng = np.random.default_rng(25)
    x = f32(rng.standard_normal((64, 48)))
    w = f32(rng.standard_normal(48))
    hlo = ("HloModule mof_xla_prefused\n" + ADD + """
%fused_computation (param_0: f32[64,48]) -> (f32[64], f32[64]) {
  %param_0 = f32[64,48]{1,0} parameter(0)
  %constant.1 = f32[] constant(0)
  %reduce.1 = f32[64]{0} reduce(f32[64,48]{1,0} %param_0, f32[] %constant.1), dimensions={1}, to_apply=%add
  %multiply.1 = f32[64,48]{1,0} multiply(f32[64,48]{1,0} %param_0, f32[64,48]{1,0} %param_0)
  %reduce.2 = f32[64]{0} reduce(f32[64,48]{1,0} %multiply.1, f32[] %constant.1), dimensions={1}, to_apply=%add
  ROOT %tuple.1 = (f32[64]{0}, f32[64]{0}) tuple(f32[64]{0} %reduce.1, f32[64]{0} %reduce.2)
}

%fused_computation.1 (param_0.1: f32[64,48], param_1.1: f32[48]) -> (f32[64,48], f32[64,48]) {
  %param_0.1 = f32[64,48]{1,0} parameter(0)
  %param_1.1 = f32[48]{0} parameter(1)
  %broadcast.1 = f32[64,48]{1,0} broadcast(f32[48]{0} %param_1.1), dimensions={1}
  %add.1 = f32[64,48]{1,0} add(f32[64,48]{1,0} %param_0.1, f32[64,48]{1,0} %broadcast.1)
  %tanh.1 = f32[64,48]{1,0} tanh(f32[64,48]{1,0} %param_0.1)
  ROOT %tuple.2 = (f32[64,48]{1,0}, f32[64,48]{1,0}) tuple(f32[64,48]{1,0} %add.1, f32[64,48]{1,0} %tanh.1)
}

%fused_computation.2 (param_0.2: f32[64,48]) -> (f32[48], f32[64,48]) {
  %param_0.2 = f32[64,48]{1,0} parameter(0)
  %constant.2 = f32[] constant(0)
  %reduce.3 = f32[48]{0} reduce(f32[64,48]{1,0} %param_0.2, f32[] %constant.2), dimensions={0}, to_apply=%add
  %multiply.2 = f32[64,48]{1,0} multiply(f32[64,48]{1,0} %param_0.2, f32[64,48]{1,0} %param_0.2)
  ROOT %tuple.3 = (f32[48]{0}, f32[64,48]{1,0}) tuple(f32[48]{0} %reduce.3, f32[64,48]{1,0} %multiply.2)
}

ENTRY %main (x: f32[64,48], w: f32[48]) -> (f32[64], f32[64], f32[64,48], f32[64,48], f32[48], f32[64,48]) {
  %x = f32[64,48]{1,0} parameter(0)
  %w = f32[48]{0} parameter(1)
  %fusion = (f32[64]{0}, f32[64]{0}) fusion(f32[64,48]{1,0} %x), kind=kInput, calls=%fused_computation
  %get-tuple-element = f32[64]{0} get-tuple-element((f32[64]{0}, f32[64]{0}) %fusion), index=0
  %get-tuple-element.1 = f32[64]{0} get-tuple-element((f32[64]{0}, f32[64]{0}) %fusion), index=1
  %fusion.1 = (f32[64,48]{1,0}, f32[64,48]{1,0}) fusion(f32[64,48]{1,0} %x, f32[48]{0} %w), kind=kLoop, calls=%fused_computation.1
  %get-tuple-element.2 = f32[64,48]{1,0} get-tuple-element((f32[64,48]{1,0}, f32[64,48]{1,0}) %fusion.1), index=0
  %get-tuple-element.3 = f32[64,48]{1,0} get-tuple-element((f32[64,48]{1,0}, f32[64,48]{1,0}) %fusion.1), index=1
  %fusion.2 = (f32[48]{0}, f32[64,48]{1,0}) fusion(f32[64,48]{1,0} %x), kind=kInput, calls=%fused_computation.2
  %get-tuple-element.4 = f32[48]{0} get-tuple-element((f32[48]{0}, f32[64,48]{1,0}) %fusion.2), index=0
  %get-tuple-element.5 = f32[64,48]{1,0} get-tuple-element((f32[48]{0}, f32[64,48]{1,0}) %fusion.2), index=1
  ROOT %tuple = (f32[64]{0}, f32[64]{0}, f32[64,48]{1,0}, f32[64,48]{1,0}, f32[48]{0}, f32[64,48]{1,0}) tuple(%get-tuple-element, %get-tuple-element.1, %get-tuple-element.2, %get-tuple-element.3, %get-tuple-element.4, %get-tuple-element.5)
}
""")
    xd = x.astype(np.float64)
    case("mof_xla_prefused", hlo, [x, w], [f32(xd.sum(1)), f32((xd * xd).sum(1)), f32(xd + w), f32(np.tanh(xd)),
                                          f32(xd.sum(0)), f32(xd * xd)], {"rtol": 1e-5, "atol": 1e-5})


def mof_slices_apart():
    """Siblings that read one operand only through slices at different offsets share no
    element of it: they stay apart (XLA's non-overlapping parameter slices)."""
    rng = np.random.default_rng(26)
    x = f32(rng.standard_normal((64, 96)))
    hlo = """HloModule mof_slices_apart

ENTRY main {
  x = f32[64,96] parameter(0)
  lo = f32[64,48] slice(x), slice={[0:64], [0:48]}
  hi = f32[64,48] slice(x), slice={[0:64], [48:96]}
  a = f32[64,48] exponential(lo)
  b = f32[64,48] tanh(hi)
  ROOT out = (f32[64,48], f32[64,48]) tuple(a, b)
}
"""
    xd = x.astype(np.float64)
    case("mof_slices_apart", hlo, [x], [f32(np.exp(xd[:, :48])), f32(np.tanh(xd[:, 48:]))], {"rtol": 1e-6, "atol": 1e-6})


def output_epilogue_batched():
    """A kOutput fusion whose dot the GEMM kernel runs with the epilogue inside its tile loop
    (fused.c output_epilogue): batched, the rhs with two free dimensions (each GEMM row spans
    several rows of the result), a bias broadcast along the minor dimension and a maximum with
    a transposed parameter, sizes above one micro tile and one B chunk."""
    rng = np.random.default_rng(15)
    x = f32(rng.standard_normal((2, 30, 40)))
    w = f32(rng.standard_normal((2, 40, 6, 9)))
    b = f32(rng.standard_normal(9))
    s = f32(rng.standard_normal((2, 9, 6, 30)))
    hlo = """HloModule output_dot_epilogue_batched

ENTRY main {
  x = f32[2,30,40] parameter(0)
  w = f32[2,40,6,9] parameter(1)
  b = f32[9] parameter(2)
  s = f32[2,9,6,30] parameter(3)
  d = f32[2,30,6,9] dot(x, w), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  bb = f32[2,30,6,9] broadcast(b), dimensions={3}
  a = f32[2,30,6,9] add(d, bb)
  t = f32[2,30,6,9] transpose(s), dimensions={0,3,2,1}
  ROOT r = f32[2,30,6,9] maximum(a, t)
}
"""
    dd = np.einsum("bip,bpjk->bijk", x.astype(np.float64), w.astype(np.float64))
    r = np.maximum(dd + b, np.transpose(s, (0, 3, 2, 1)))
    case("output_dot_epilogue_batched", hlo, [x, w, b, s], [f32(r)], {"rtol": 1e-5, "atol": 1e-5})

    rng = np.random.default_rng(16)
    x = f32(rng.standard_normal((40, 70)))
    w = f32(rng.standard_normal((70, 530)))
    b = f32(rng.standard_normal(530))
    hlo = """HloModule output_dot_epilogue_large

ENTRY main {
  x = f32[40,70] parameter(0)
  w = f32[70,530] parameter(1)
  b = f32[530] parameter(2)
  d = f32[40,530] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[40,530] broadcast(b), dimensions={1}
  a = f32[40,530] add(d, bb)
  z = f32[] constant(0)
  zb = f32[40,530] broadcast(z), dimensions={}
  ROOT r = f32[40,530] maximum(a, zb)
}
"""
    r = np.maximum(x.astype(np.float64) @ w + b, 0)
    case("output_dot_epilogue_large", hlo, [x, w, b], [f32(r)], {"rtol": 1e-5, "atol": 1e-5})


def concat_rows():
    """Loops by rows whose concatenate (along a dimension other than the minor one) reads one
    operand per row (fused.c row_concat: the row's loop emitted once per operand): along rows
    with an exp after it; 3-D along dimension 1 behind a convert, a slice of stride 1 (the row
    index shifted) and a reshape of the same dimensions; an empty operand. And loops where it
    must not: a slice of stride 2 along the concatenated dimension; one concatenate read
    through two slices (two ways to it; written as XLA's prefused kLoop fusion, since the
    fusion pass itself computes such a concatenate once), times a concatenate along the minor
    dimension."""
    rng = np.random.default_rng(41)
    a = f32(rng.uniform(-2, 2, (3, 70)))
    b = f32(rng.uniform(-2, 2, (5, 70)))
    c = f32(rng.uniform(-2, 2, (4, 70)))
    hlo = """HloModule concat_rows_exp

ENTRY main {
  a = f32[3,70] parameter(0)
  b = f32[5,70] parameter(1)
  c = f32[4,70] parameter(2)
  k = f32[12,70] concatenate(a, b, c), dimensions={0}
  ROOT e = f32[12,70] exponential(k)
}
"""
    case("concat_rows_exp", hlo, [a, b, c], [f32(np.exp(np.concatenate([a, b, c]).astype(np.float64)))],
         {"rtol": 1e-6, "atol": 1e-7})

    x = f32(rng.uniform(-2, 2, (2, 6, 33)))
    y = f32(rng.uniform(-2, 2, (2, 0, 33)))
    z = f32(rng.uniform(-2, 2, (2, 9, 33)))
    w = f32(rng.uniform(-2, 2, (2, 4, 33)))
    hlo = """HloModule concat_rows_shifted

ENTRY main {
  x = f32[2,6,33] parameter(0)
  y = f32[2,0,33] parameter(1)
  z = f32[2,9,33] parameter(2)
  w = f32[2,4,33] parameter(3)
  k = f32[2,19,33] concatenate(x, y, z, w), dimensions={1}
  h = bf16[2,19,33] convert(k)
  l = bf16[2,19,33] logistic(h)
  s = bf16[2,12,32] slice(l), slice={[0:2], [5:17], [1:33]}
  ROOT r = bf16[2,12,32] reshape(s)
}
"""
    kk = np.concatenate([x, y, z, w], axis=1)
    h = from_bf16(bf16_bits(kk)).astype(np.float64)
    lg = 1 / (1 + np.exp(-h))
    case("concat_rows_shifted", hlo, [x, y, z, w], [bf16_bits(lg[:, 5:17, 1:33])], {"rtol": 1e-2, "atol": 1e-2})

    p = f32(rng.uniform(-2, 2, (7, 40)))
    q = f32(rng.uniform(-2, 2, (6, 40)))
    hlo = """HloModule concat_rows_strided

ENTRY main {
  p = f32[7,40] parameter(0)
  q = f32[6,40] parameter(1)
  k = f32[13,40] concatenate(p, q), dimensions={0}
  s = f32[7,40] slice(k), slice={[0:13:2], [0:40]}
  ROOT e = f32[7,40] exponential(s)
}
"""
    k = np.concatenate([p, q]).astype(np.float64)
    case("concat_rows_strided", hlo, [p, q], [f32(np.exp(k[0:13:2]))], {"rtol": 1e-6, "atol": 1e-7})

    hlo = """HloModule concat_rows_two_ways

fused {
  p = f32[7,40] parameter(0)
  q = f32[6,40] parameter(1)
  k = f32[13,40] concatenate(p, q), dimensions={0}
  s1 = f32[6,40] slice(k), slice={[0:6], [0:40]}
  s2 = f32[6,40] slice(k), slice={[7:13], [0:40]}
  a = f32[6,40] add(s1, s2)
  m = f32[7,80] concatenate(p, p), dimensions={1}
  t = f32[6,40] slice(m), slice={[1:7], [20:60]}
  ROOT r = f32[6,40] multiply(t, a)
}

ENTRY main {
  p = f32[7,40] parameter(0)
  q = f32[6,40] parameter(1)
  ROOT f = f32[6,40] fusion(p, q), kind=kLoop, calls=fused
}
"""
    mm = np.concatenate([p, p], axis=1).astype(np.float64)
    case("concat_rows_two_ways", hlo, [p, q], [f32((k[0:6] + k[7:13]) * mm[1:7, 20:60])], {"rtol": 1e-6, "atol": 1e-6})


def bf16_bits(x):
    """f32 values rounded to bf16 (nearest even), as uint16 bits."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def row_stash():
    """Row fusions whose later passes read an expensive value again (fused.c's row stash: the
    first pass that computes exp(x - max) keeps its row, later passes load it): softmax in bf16
    and f64, on enough rows to run on several threads; an exponential read by two sums and the
    output; one read at a reversed index by the sum (computed, not loaded, there); a
    log-softmax (nothing to keep); and a row too long to keep (computed again)."""
    rng = np.random.default_rng(1207)
    red = lambda t: """
add_%s {
  a = %s[] parameter(0)
  b = %s[] parameter(1)
  ROOT s = %s[] add(a, b)
}
max_%s {
  a = %s[] parameter(0)
  b = %s[] parameter(1)
  ROOT m = %s[] maximum(a, b)
}
""" % ((t,) * 8)

    def softmax_hlo(t, r, n):
        return ("HloModule stash_softmax_%s\n" % t + red(t) + """
ENTRY main {
  x = T[@R,@N] parameter(0)
  ninf = T[] constant(-inf)
  mx = T[@R] reduce(x, ninf), dimensions={1}, to_apply=max_T
  mb = T[@R,@N] broadcast(mx), dimensions={0}
  d = T[@R,@N] subtract(x, mb)
  e = T[@R,@N] exponential(d)
  z = T[] constant(0)
  s = T[@R] reduce(e, z), dimensions={1}, to_apply=add_T
  sb = T[@R,@N] broadcast(s), dimensions={0}
  ROOT r = T[@R,@N] divide(e, sb)
}
""").replace("T[", t + "[").replace("_T", "_" + t).replace("@R", str(r)).replace("@N", str(n))

    def softmax_ref(x):
        e = np.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    x = from_bf16(bf16_bits(rng.standard_normal((64, 1030)) * 3))
    case("stash_softmax_bf16", softmax_hlo("bf16", 64, 1030), [bf16_bits(x)],
         [bf16_bits(softmax_ref(x.astype(np.float64)))], {"bf16": True, "rtol": 1e-2, "atol": 1e-4})
    x = rng.standard_normal((40, 1100)) * 5
    case("stash_softmax_f64", softmax_hlo("f64", 40, 1100), [x], [softmax_ref(x)], {"rtol": 1e-12, "atol": 1e-15})

    x = f32(rng.standard_normal((48, 700)) * 2)
    hlo = ("HloModule stash_two_sums\n" + ADD + MAX + """
ENTRY main {
  x = f32[48,700] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[48] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[48,700] broadcast(mx), dimensions={0}
  d = f32[48,700] subtract(x, mb)
  e = f32[48,700] exponential(d)
  z = f32[] constant(0)
  s1 = f32[48] reduce(e, z), dimensions={1}, to_apply=add
  ex = f32[48,700] multiply(e, x)
  s2 = f32[48] reduce(ex, z), dimensions={1}, to_apply=add
  q = f32[48] divide(s2, s1)
  s1b = f32[48,700] broadcast(s1), dimensions={0}
  qb = f32[48,700] broadcast(q), dimensions={0}
  p = f32[48,700] divide(e, s1b)
  ROOT r = f32[48,700] add(p, qb)
}
""")
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(1, keepdims=True))
    s1 = e.sum(1, keepdims=True)
    case("stash_two_sums", hlo, [x], [f32(e / s1 + (e * xd).sum(1, keepdims=True) / s1)],
         {"rtol": 1e-5, "atol": 1e-6})

    x = f32(np.abs(rng.standard_normal((33, 257))) * 2 + 0.1)  # positive: the sums do not cancel
    hlo = ("HloModule stash_reversed\n" + ADD + MAX + """
fused {
  x = f32[33,257] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[33] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[33,257] broadcast(mx), dimensions={0}
  d = f32[33,257] subtract(x, mb)
  e = f32[33,257] exponential(d)
  z = f32[] constant(0)
  s2 = f32[33] reduce(e, z), dimensions={1}, to_apply=add
  re = f32[33,257] reverse(e), dimensions={1}
  w = f32[33,257] multiply(re, x)
  s = f32[33] reduce(w, z), dimensions={1}, to_apply=add
  q = f32[33] multiply(s, s2)
  sb = f32[33,257] broadcast(q), dimensions={0}
  ROOT r = f32[33,257] divide(e, sb)
}

ENTRY main {
  x = f32[33,257] parameter(0)
  ROOT f = f32[33,257] fusion(x), kind=kInput, calls=fused
}
""")
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(1, keepdims=True))
    q = (e[:, ::-1] * xd).sum(1, keepdims=True) * e.sum(1, keepdims=True)
    case("stash_reversed", hlo, [x], [f32(e / q)],
         {"rtol": 1e-4, "atol": 1e-6})

    x = f32(rng.standard_normal((20, 513)) * 4)
    hlo = ("HloModule stash_log_softmax\n" + ADD + MAX + """
ENTRY main {
  x = f32[20,513] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[20] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[20,513] broadcast(mx), dimensions={0}
  d = f32[20,513] subtract(x, mb)
  e = f32[20,513] exponential(d)
  z = f32[] constant(0)
  s = f32[20] reduce(e, z), dimensions={1}, to_apply=add
  ls = f32[20] log(s)
  lb = f32[20,513] broadcast(ls), dimensions={0}
  ROOT r = f32[20,513] subtract(d, lb)
}
""")
    xd = x.astype(np.float64)
    d = xd - xd.max(1, keepdims=True)
    case("stash_log_softmax", hlo, [x], [f32(d - np.log(np.exp(d).sum(1, keepdims=True)))],
         {"rtol": 1e-5, "atol": 1e-5})

    x = f32(rng.standard_normal((3, 9000)) * 3)
    case("stash_row_too_long", softmax_hlo("f32", 3, 9000).replace("stash_softmax_f32", "stash_row_too_long"), [x],
         [f32(softmax_ref(x.astype(np.float64)))], {"rtol": 1e-5, "atol": 1e-8})

def main():
    softmax()
    layernorm()
    data_movement()
    transpose_tiles()
    reductions()
    column_blocks()
    prefused()
    in_place_updates()
    loop_passthrough()
    loop_scan_updates()
    output_fusions()
    mof_loop_siblings()
    mof_reduce_siblings()
    mof_reduce_with_loop()
    mof_siblings_dependent()
    mof_xla_prefused()
    mof_slices_apart()
    output_epilogue_batched()
    concat_rows()
    row_stash()


if __name__ == "__main__":
    main()
