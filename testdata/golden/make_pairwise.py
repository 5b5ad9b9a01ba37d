#!/usr/bin/python3
"""Generates golden cases of pairwise (N-body) programs and of f64 power, the shapes of XLA's
CPU benchmarks pairwise_gravity_* / pairwise_biot_savart_*, under testdata/golden/<case>/:

- pairwise_gravity_f64: d = x_j - x_i broadcast to [N, N, 3] and read by two reductions
  (|d|^2 over the 3 components, then sum_j m_j d (|d|^2 + eps)^-1.5).  The fusion pass computes
  the cheap d in both reductions' loops instead of materializing [N, N, 3] (tests/arena.cmake
  arena.pairwise_no_nbody_temporary checks the arena); f64 power is vmath.c's double-double
  pow.
- narrow_reduce_*: reductions that keep a minor dimension narrower than a vector (2 to 7
  wide) over many elements, which compiler/codegen/fused.c folds per output in lanes side by
  side (emit_narrow_reduce): sums and a product, f32 and f64, several kept and reduced
  dimensions, a transposed read, and a max (no lanes: the column walk).
- pairwise_rbf_gradient_f32: the gradient of sum_ij exp(-|x_i - x_j|^2 / 2) for both
  arguments: sums over j (a kept minor dimension of 3: emit_narrow_reduce) and over i (a
  column reduction split over blocks of rows, fused.c emit_split_rows, its 3 components side
  by side with their index known), the pairwise differences computed in three groups.
- pairwise_sum_distances_grad_f32: sum_ij |x_i - x_j| and its gradient; |d|^2 (a sum of 3)
  read by two groups is computed inline in both (fusion.c join_inline_copies;
  tests/arena.cmake arena.pairwise_inline_copies checks that it is not stored).
- inline_reduce_*: reduces of at most 8 elements per result computed inside the loop that
  reads them (fusion.c inline_reducible, fused.c inline_reduce_value): a max over two
  dimensions (6 elements) under exp, and a sum of 4 read through a row broadcast by a larger
  result.
- power_f64_exact: a module named "powf64", which the C library also defines (the entry
  point is then hlo_powf64: compiler/codegen/module.c cg_symbol_for_module), computing f64
  power where a correctly rounded pow is exact (2^10, 9^0.5, (-2)^3, 10^-2 ...) and on random
  pairs, against numpy's pow within 2 ulp.

Expected values are numpy formulas in float64, never hlorun's output.
Run:  /usr/bin/python3 testdata/golden/make_pairwise.py
"""
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(23)
GEN = "testdata/golden/make_pairwise.py"


def pairwise_module(name, t, n, params, d_expr, tail):
    """An N-body module: x (t[n,3]) and params, d = d_expr of the broadcasts ba (x_i) and bb
    (x_j), dd = d*d, zero and r2 = the sum of dd over the 3 components, then the tail lines."""
    head = """HloModule %(name)s

add {
  a = %(t)s[] parameter(0)
  b = %(t)s[] parameter(1)
  ROOT s = %(t)s[] add(a, b)
}

ENTRY main {
  x = %(t)s[%(n)d,3]{1,0} parameter(0)
%(params)s  ba = %(t)s[%(n)d,%(n)d,3]{2,1,0} broadcast(x), dimensions={0,2}
  bb = %(t)s[%(n)d,%(n)d,3]{2,1,0} broadcast(x), dimensions={1,2}
  d = %(t)s[%(n)d,%(n)d,3]{2,1,0} %(d)s
  dd = %(t)s[%(n)d,%(n)d,3]{2,1,0} multiply(d, d)
  zero = %(t)s[] constant(0)
  r2 = %(t)s[%(n)d,%(n)d]{1,0} reduce(dd, zero), dimensions={2}, to_apply=add
"""
    v = {"name": name, "t": t, "n": n, "params": params, "d": d_expr}
    return head % v + (tail % v) + "}\n"


def gravity():
    n = 192
    x = RNG.uniform(-1.0, 1.0, (n, 3))
    m = RNG.uniform(0.5, 2.0, (n,))
    hlo = pairwise_module("pairwise_gravity", "f64", n, "  m = f64[%d]{0} parameter(1)\n" % n, "subtract(bb, ba)", """\
  eps = f64[] constant(0.001)
  beps = f64[%(n)d,%(n)d]{1,0} broadcast(eps), dimensions={}
  r2e = f64[%(n)d,%(n)d]{1,0} add(r2, beps)
  e = f64[] constant(-1.5)
  be = f64[%(n)d,%(n)d]{1,0} broadcast(e), dimensions={}
  inv = f64[%(n)d,%(n)d]{1,0} power(r2e, be)
  bm = f64[%(n)d,%(n)d]{1,0} broadcast(m), dimensions={1}
  w = f64[%(n)d,%(n)d]{1,0} multiply(inv, bm)
  bw = f64[%(n)d,%(n)d,3]{2,1,0} broadcast(w), dimensions={0,1}
  f = f64[%(n)d,%(n)d,3]{2,1,0} multiply(d, bw)
  ROOT out = f64[%(n)d,3]{1,0} reduce(f, zero), dimensions={1}, to_apply=add
""")
    d = x[None, :, :] - x[:, None, :]
    inv = (np.sum(d * d, axis=2) + 1e-3) ** -1.5
    out = np.sum(d * (inv * m[None, :])[:, :, None], axis=1)
    write_case(os.path.join(HERE, "pairwise_gravity_f64"), GEN, hlo, [x, m], [out], {"rtol": 1e-12, "atol": 1e-12})


def rbf_gradient():
    n = 320
    x = RNG.uniform(-1.0, 1.0, (n, 3)).astype(np.float32)
    hlo = pairwise_module("pairwise_rbf_gradient", "f32", n, "", "subtract(ba, bb)", """\
  g = f32[] constant(-0.5)
  bg = f32[%(n)d,%(n)d]{1,0} broadcast(g), dimensions={}
  t = f32[%(n)d,%(n)d]{1,0} multiply(r2, bg)
  k = f32[%(n)d,%(n)d]{1,0} exponential(t)
  bk = f32[%(n)d,%(n)d,3]{2,1,0} broadcast(k), dimensions={0,1}
  f = f32[%(n)d,%(n)d,3]{2,1,0} multiply(d, bk)
  gi = f32[%(n)d,3]{1,0} reduce(f, zero), dimensions={1}, to_apply=add
  gj = f32[%(n)d,3]{1,0} reduce(f, zero), dimensions={0}, to_apply=add
  ROOT out = (f32[%(n)d,3]{1,0}, f32[%(n)d,3]{1,0}) tuple(gi, gj)
""")
    x64 = x.astype(np.float64)
    d = x64[:, None, :] - x64[None, :, :]
    f = d * np.exp(-0.5 * np.sum(d * d, axis=2))[:, :, None]
    out = [np.sum(f, axis=1).astype(np.float32), np.sum(f, axis=0).astype(np.float32)]
    write_case(os.path.join(HERE, "pairwise_rbf_gradient_f32"), GEN, hlo, [x], out, {"rtol": 1e-4, "atol": 1e-4})


def sum_distances():
    n = 256
    x = RNG.uniform(-1.0, 1.0, (n, 3)).astype(np.float32)
    hlo = pairwise_module("pairwise_sum_distances_grad", "f32", n, "", "subtract(ba, bb)", """\
  eps = f32[] constant(1e-06)
  be = f32[%(n)d,%(n)d]{1,0} broadcast(eps), dimensions={}
  r2e = f32[%(n)d,%(n)d]{1,0} add(r2, be)
  r = f32[%(n)d,%(n)d]{1,0} sqrt(r2e)
  total = f32[] reduce(r, zero), dimensions={0,1}, to_apply=add
  ir = f32[%(n)d,%(n)d]{1,0} rsqrt(r2e)
  bir = f32[%(n)d,%(n)d,3]{2,1,0} broadcast(ir), dimensions={0,1}
  g = f32[%(n)d,%(n)d,3]{2,1,0} multiply(d, bir)
  gi = f32[%(n)d,3]{1,0} reduce(g, zero), dimensions={1}, to_apply=add
  ROOT out = (f32[], f32[%(n)d,3]{1,0}) tuple(total, gi)
""")
    x64 = x.astype(np.float64)
    d = x64[:, None, :] - x64[None, :, :]
    r2e = np.sum(d * d, axis=2) + 1e-6
    out = [np.array(np.sum(np.sqrt(r2e)), dtype=np.float32), np.sum(d / np.sqrt(r2e)[:, :, None], axis=1).astype(np.float32)]
    write_case(os.path.join(HERE, "pairwise_sum_distances_grad_f32"), GEN, hlo, [x], out, {"rtol": 1e-4, "atol": 1e-4})


def inline_cases():
    x = RNG.uniform(-2.0, 2.0, (40, 50, 2, 3)).astype(np.float32)
    hlo = """HloModule inline_reduce_max

mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}

ENTRY main {
  x = f32[40,50,2,3]{3,2,1,0} parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[40,50]{1,0} reduce(x, ninf), dimensions={2,3}, to_apply=mx
  ROOT e = f32[40,50]{1,0} exponential(m)
}
"""
    out = np.exp(np.max(x.astype(np.float64), axis=(2, 3))).astype(np.float32)
    write_case(os.path.join(HERE, "inline_reduce_max_f32"), GEN, hlo, [x], [out], {"rtol": 1e-6, "atol": 0})
    a = RNG.uniform(-1.0, 1.0, (30, 70, 4)).astype(np.float32)
    b = RNG.uniform(-1.0, 1.0, (30, 70, 5)).astype(np.float32)
    hlo = """HloModule inline_reduce_broadcast

add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT r = f32[] add(p, q)
}

ENTRY main {
  a = f32[30,70,4]{2,1,0} parameter(0)
  b = f32[30,70,5]{2,1,0} parameter(1)
  zero = f32[] constant(0)
  aa = f32[30,70,4]{2,1,0} multiply(a, a)
  s = f32[30,70]{1,0} reduce(aa, zero), dimensions={2}, to_apply=add
  bs = f32[30,70,5]{2,1,0} broadcast(s), dimensions={0,1}
  ROOT y = f32[30,70,5]{2,1,0} multiply(bs, b)
}
"""
    a64 = a.astype(np.float64)
    out = (np.sum(a64 * a64, axis=2)[:, :, None] * b).astype(np.float32)
    write_case(os.path.join(HERE, "inline_reduce_broadcast_f32"), GEN, hlo, [a, b], [out], {"rtol": 1e-6, "atol": 1e-7})


def power_exact():
    exact = [(2.0, 10.0), (9.0, 0.5), (-2.0, 3.0), (10.0, -2.0), (0.25, -0.5), (3.0, 4.0), (-1.5, 2.0),
             (1e-3, 1.0), (7.0, 0.0), (0.0, 2.5), (0.0, -1.0), (-8.0, 1.0 / 3.0), (16.0, 0.25), (1.0, 1e300),
             (2.0, -1074.0), (10.0, 308.0), (10.0, 309.0), (0.5, 1100.0), (-0.0, -3.0), (np.inf, -2.0)]
    n = 1024
    rng = np.random.default_rng(29)  # its own stream: the cases above may change
    x = rng.uniform(0.0, 4.0, n) * np.exp(rng.uniform(-20.0, 20.0, n))
    y = rng.uniform(-12.0, 12.0, n)
    x[: len(exact)] = [a for a, _ in exact]
    y[: len(exact)] = [b for _, b in exact]
    with np.errstate(all="ignore"):
        ref = np.power(x, y)
    hlo = """HloModule powf64

ENTRY main {
  x = f64[%(n)d]{0} parameter(0)
  y = f64[%(n)d]{0} parameter(1)
  ROOT p = f64[%(n)d]{0} power(x, y)
}
""" % {"n": n}
    write_case(os.path.join(HERE, "power_f64_exact"), GEN, hlo, [x, y], [ref], {"rtol": 5e-16, "atol": 0})


ADD = """
%(name)s {
  a = %(t)s[] parameter(0)
  b = %(t)s[] parameter(1)
  ROOT r = %(t)s[] %(op)s(a, b)
}
"""


def narrow(name, t, shape, dims, op="add", pre="copy(X)", transpose=None):
    """reduce(pre(x), init) over dims with the reducer op; pre is an HLO expression of x."""
    dt = np.float32 if t == "f32" else np.float64
    x = RNG.uniform(0.5, 1.5, shape).astype(dt)
    kept = [d for d in range(len(shape)) if d not in dims]
    in_shape = list(shape)
    body = ""
    src = "x"
    if transpose is not None:
        in_shape = [shape[p] for p in transpose]
        body += "  tx = %s[%s]{%s} transpose(x), dimensions={%s}\n" % (
            t, ",".join(map(str, in_shape)), ",".join(map(str, reversed(range(len(shape))))),
            ",".join(map(str, transpose)))
        src = "tx"
    xs = np.transpose(x, transpose) if transpose is not None else x
    sh = "%s[%s]{%s}" % (t, ",".join(map(str, in_shape)), ",".join(map(str, reversed(range(len(shape))))))
    body += "  e = %s %s\n" % (sh, pre.replace("X", src))
    init = {"add": 0.0, "multiply": 1.0, "maximum": "-inf"}[op]
    out_dims = [in_shape[d] for d in range(len(in_shape)) if d not in dims]
    osh = "%s[%s]{%s}" % (t, ",".join(map(str, out_dims)), ",".join(map(str, reversed(range(len(out_dims))))))
    hlo = ("HloModule %s\n" % name + ADD % {"name": "red", "t": t, "op": op} + """
ENTRY main {
  x = %s[%s]{%s} parameter(0)
%s  z = %s[] constant(%s)
  ROOT r = %s reduce(e, z), dimensions={%s}, to_apply=red
}
""" % (t, ",".join(map(str, shape)), ",".join(map(str, reversed(range(len(shape))))), body, t, init, osh,
       ",".join(map(str, dims))))
    v = xs.astype(np.float64)
    if "exponential" in pre:
        v = np.exp(v)
    if "multiply" in pre:
        v = v * v
    red = {"add": np.sum, "multiply": np.prod, "maximum": np.max}[op]
    out = red(v, axis=tuple(dims)).astype(dt)
    tol = {"rtol": 1e-5, "atol": 1e-6} if t == "f32" else {"rtol": 1e-12, "atol": 1e-12}
    write_case(os.path.join(HERE, name), GEN, hlo, [x], [out], tol)


def narrow_cases():
    narrow("narrow_reduce_sum3_f64", "f64", (24, 500, 3), [1], pre="exponential(X)")
    narrow("narrow_reduce_sum2_f32", "f32", (7, 130, 2), [1], pre="multiply(X, X)")
    narrow("narrow_reduce_sum7_f32", "f32", (5, 90, 7), [1])
    narrow("narrow_reduce_two_dims_f32", "f32", (3, 40, 4, 5), [1, 2], pre="exponential(X)")
    narrow("narrow_reduce_outer_dims_f64", "f64", (9, 4, 33, 6), [0, 2])
    narrow("narrow_reduce_transposed_f32", "f32", (3, 200, 6), [0], transpose=[1, 0, 2])
    narrow("narrow_reduce_product_f64", "f64", (6, 70, 5), [1], op="multiply")
    narrow("narrow_reduce_max_f32", "f32", (6, 300, 3), [1], op="maximum", pre="exponential(X)")


if __name__ == "__main__":
    narrow_cases()
    gravity()
    rbf_gradient()
    inline_cases()
    sum_distances()
    power_exact()
