#!/usr/bin/python3
"""Generates the golden cases of buffer reuse (issue 7): an elementwise result written over the
buffer of an operand that dies there (compiler/codegen/reuse.c decides which operands a kernel
reads only at the element it writes; module.c's buffer assignment hands the buffer over),
under testdata/golden/reuse_<case>/ (model.hlo + in<i>.npy + expected<i>.npy + tol.json), as
make.py does for the other cases.  It writes only its own case folders.

Expected values are numpy formulas in float64 (rounded to the result type) -- never hlorun's
output.  The arrays are large enough (64 Ki elements, twice the size at which fused.c splits a
loop over the thread pool) that the loops run on it.  Cases where reuse happens: a chain of
kLoop fusions (one buffer for all the temporaries), lone elementwise instructions and a
same-size convert between sorts, a softmax row fusion over a temporary, fusions inside a while
body.  Cases where it must not: a dying operand read transposed, through a broadcast of its
first row or reversed inside a fusion, one buffer behind two parameters, a convert to a
narrower type, an operand still read later, an entry parameter, the epilogue operand of a
kOutput fusion (its dot writes the result first).  And results of a variadic sort and a batch
norm returned by the root tuple, written by their kernels straight into the caller's buffers.
Constants read in place (reuse_constant_writers): no writer may take a constant's storage.
tests/arena/reuse.sh checks which of them the assignment report shows.

Run:  /usr/bin/python3 testdata/golden/make_reuse.py
"""
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(17)


def case(name, hlo, inputs, expected, tol=None):
    write_case(os.path.join(HERE, "reuse_" + name), "testdata/golden/make_reuse.py", hlo, inputs, expected, tol)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def uniform(shape):
    return f32(RNG.uniform(-1.0, 1.0, shape))


def unary(name, op, shape):
    return """
%s {
  p = %s parameter(0)
  ROOT r = %s %s(p)
}
""" % (name, shape, shape, op)


def fusion_chain():
    """a = exp(x), b = sin(a), c = exp(b), d = c + x, r = sin(d): the temporaries a..d share one
    f32[64,1024] buffer (256 KiB, the whole arena), each fusion reading it at its own element."""
    s = "f32[64,1024]"
    x = uniform((64, 1024))
    hlo = ("HloModule reuse_fusion_chain\n" + unary("f_exp", "exponential", s) + unary("f_sin", "sine", s) + """
f_add {
  p = %s parameter(0)
  q = %s parameter(1)
  ROOT r = %s add(p, q)
}

ENTRY main {
  x = %s parameter(0)
  a = %s fusion(x), kind=kLoop, calls=f_exp
  b = %s fusion(a), kind=kLoop, calls=f_sin
  c = %s fusion(b), kind=kLoop, calls=f_exp
  d = %s fusion(c, x), kind=kLoop, calls=f_add
  ROOT r = %s fusion(d), kind=kLoop, calls=f_sin
}
""" % ((s,) * 9))
    xd = x.astype(np.float64)
    r = np.sin(np.exp(np.sin(np.exp(xd))) + xd)
    case("fusion_chain", hlo, [x], [f32(r)], {"rtol": 1e-5, "atol": 1e-6})


def elementwise_sorts():
    """Sorts (never fused) around lone elementwise instructions: n = negate(s1) takes s1's
    buffer (a single elementwise kernel), k = convert(multiply(s2, 100)) to s32 (same element
    size) takes s2's (a kLoop fusion the pass builds)."""
    x = f32(RNG.standard_normal((16, 4096)))
    hlo = """
HloModule reuse_elementwise_sorts

lt_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT
}

lt_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT
}

ENTRY main {
  x = f32[16,4096] parameter(0)
  s1 = f32[16,4096] sort(x), dimensions={1}, to_apply=lt_f32
  n = f32[16,4096] negate(s1)
  s2 = f32[16,4096] sort(n), dimensions={1}, to_apply=lt_f32
  h = f32[] constant(100)
  hb = f32[16,4096] broadcast(h), dimensions={}
  m = f32[16,4096] multiply(s2, hb)
  k = s32[16,4096] convert(m)
  ROOT s3 = s32[16,4096] sort(k), dimensions={1}, to_apply=lt_s32
}
"""
    s2 = np.sort(-np.sort(x, axis=1), axis=1)
    k = (s2 * np.float32(100)).astype(np.int32)  # f32 product (correctly rounded), truncated
    case("elementwise_sorts", hlo, [x], [np.sort(k, axis=1)])


def softmax_rows():
    """softmax over a sorted temporary: the row fusion reads each row whole (its reductions)
    before writing it, and otherwise each element at its own index, so it takes the sort's
    buffer; the final sort keeps the result ascending."""
    x = f32(RNG.standard_normal((64, 1024)) * 3)
    hlo = """
HloModule reuse_softmax_rows

lt_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

ENTRY main {
  x = f32[64,1024] parameter(0)
  s = f32[64,1024] sort(x), dimensions={1}, to_apply=lt_f32
  ninf = f32[] constant(-inf)
  mx = f32[64] reduce(s, ninf), dimensions={1}, to_apply=max
  mb = f32[64,1024] broadcast(mx), dimensions={0}
  d = f32[64,1024] subtract(s, mb)
  e = f32[64,1024] exponential(d)
  z = f32[] constant(0)
  sm = f32[64] reduce(e, z), dimensions={1}, to_apply=add
  sb = f32[64,1024] broadcast(sm), dimensions={0}
  y = f32[64,1024] divide(e, sb)
  ROOT r = f32[64,1024] sort(y), dimensions={1}, to_apply=lt_f32
}
"""
    s = np.sort(x.astype(np.float64), axis=1)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    y = e / e.sum(axis=1, keepdims=True)
    case("softmax_rows", hlo, [x], [f32(np.sort(y, axis=1))], {"rtol": 1e-5, "atol": 1e-9})


def not_other_index():
    """Dying operands that must keep their buffer: read transposed (a), through a broadcast of
    its first row (c: d takes b's buffer instead, read at its own index), reversed (d), one buffer
    behind two parameters (e), converted to a narrower type (g); a is an entry parameter's
    consumer, so it gets a new buffer."""
    s = "f32[256,256]"
    x, y = uniform((256, 256)), uniform((256, 256))
    hlo = ("HloModule reuse_not_other_index\n" + unary("f_exp", "exponential", s) + """
f_tadd {
  p = %(s)s parameter(0)
  t = %(s)s transpose(p), dimensions={1,0}
  ROOT a = %(s)s add(t, p)
}

f_bcast {
  p = %(s)s parameter(0)
  q = %(s)s parameter(1)
  row = f32[1,256] slice(p), slice={[0:1], [0:256]}
  v = f32[256] reshape(row)
  b = %(s)s broadcast(v), dimensions={1}
  ROOT d = %(s)s subtract(b, q)
}

f_rev {
  p = %(s)s parameter(0)
  r = %(s)s reverse(p), dimensions={1}
  ROOT m = %(s)s multiply(r, p)
}

f_twice {
  p = %(s)s parameter(0)
  q = %(s)s parameter(1)
  t = %(s)s tanh(q)
  ROOT m = %(s)s multiply(p, t)
}

f_half {
  p = %(s)s parameter(0)
  ROOT h = f16[256,256] convert(p)
}

f_wide {
  p = f16[256,256] parameter(0)
  c = %(s)s convert(p)
  ROOT n = %(s)s negate(c)
}

ENTRY main {
  x = %(s)s parameter(0)
  y = %(s)s parameter(1)
  a = %(s)s fusion(x), kind=kLoop, calls=f_exp
  b = %(s)s fusion(a), kind=kLoop, calls=f_tadd
  c = %(s)s fusion(y), kind=kLoop, calls=f_exp
  d = %(s)s fusion(c, b), kind=kLoop, calls=f_bcast
  e = %(s)s fusion(d), kind=kLoop, calls=f_rev
  g = %(s)s fusion(e, e), kind=kLoop, calls=f_twice
  h = f16[256,256] fusion(g), kind=kLoop, calls=f_half
  ROOT r = %(s)s fusion(h), kind=kLoop, calls=f_wide
}
""" % {"s": s})
    a = np.exp(x.astype(np.float64))
    b = a.T + a
    c = np.exp(y.astype(np.float64))
    d = c[0:1, :] - b
    e = d[:, ::-1] * d
    g = e * np.tanh(e)
    h = g.astype(np.float16)
    case("not_other_index", hlo, [x, y], [-h.astype(np.float32)], {"rtol": 2e-3, "atol": 1e-3})


def still_live():
    """e is read again after f: f gets a buffer of its own; g = f + e takes one of theirs."""
    s = "f32[64,1024]"
    x = uniform((64, 1024))
    hlo = ("HloModule reuse_still_live\n" + unary("f_exp", "exponential", s) + unary("f_sin", "sine", s) +
           unary("f_neg", "negate", s) + """
f_add {
  p = %(s)s parameter(0)
  q = %(s)s parameter(1)
  ROOT r = %(s)s add(p, q)
}

ENTRY main {
  x = %(s)s parameter(0)
  e = %(s)s fusion(x), kind=kLoop, calls=f_exp
  f = %(s)s fusion(e), kind=kLoop, calls=f_sin
  g = %(s)s fusion(f, e), kind=kLoop, calls=f_add
  ROOT r = %(s)s fusion(g), kind=kLoop, calls=f_neg
}
""" % {"s": s})
    e = np.exp(x.astype(np.float64))
    case("still_live", hlo, [x], [f32(-(np.sin(e) + e))], {"rtol": 1e-5, "atol": 1e-6})


def not_output_fusion():
    """r = dot(a, b) + t becomes a kOutput fusion whose dot writes the result buffer before
    the epilogue reads t: t (a sorted temporary dying there) must keep its buffer."""
    x, a, b = uniform((256, 256)), uniform((256, 256)), uniform((256, 256))
    hlo = """
HloModule reuse_not_output_fusion

lt_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT
}

ENTRY main {
  x = f32[256,256] parameter(0)
  a = f32[256,256] parameter(1)
  b = f32[256,256] parameter(2)
  t = f32[256,256] sort(x), dimensions={1}, to_apply=lt_f32
  d = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[256,256] add(d, t)
  ROOT s = f32[256,256] sort(r), dimensions={1}, to_apply=lt_f32
}
"""
    r = a.astype(np.float64) @ b.astype(np.float64) + np.sort(x, axis=1)
    case("not_output_fusion", hlo, [x, a, b], [f32(np.sort(r, axis=1))], {"rtol": 1e-5, "atol": 1e-4})


def while_body():
    """Three iterations of v <- 0.5 * sin(v) + v, the body written as fusions: t2 takes t1's
    buffer inside the body (the state v is the body's parameter and keeps its own)."""
    s = "f32[64,1024]"
    x = uniform((64, 1024))
    hlo = ("HloModule reuse_while_body\n" + unary("f_sin", "sine", s) + """
f_half {
  p = %(s)s parameter(0)
  h = f32[] constant(0.5)
  hb = %(s)s broadcast(h), dimensions={}
  ROOT m = %(s)s multiply(p, hb)
}

f_add {
  p = %(s)s parameter(0)
  q = %(s)s parameter(1)
  ROOT r = %(s)s add(p, q)
}

cond {
  p = (s32[], %(s)s) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], %(s)s) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = %(s)s get-tuple-element(p), index=1
  t1 = %(s)s fusion(v), kind=kLoop, calls=f_sin
  t2 = %(s)s fusion(t1), kind=kLoop, calls=f_half
  t3 = %(s)s fusion(t2, v), kind=kLoop, calls=f_add
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], %(s)s) tuple(i2, t3)
}

ENTRY main {
  x = %(s)s parameter(0)
  z = s32[] constant(0)
  init = (s32[], %(s)s) tuple(z, x)
  loop = (s32[], %(s)s) while(init), condition=cond, body=body
  ROOT out = %(s)s get-tuple-element(loop), index=1
}
""" % {"s": s})
    v = x.astype(np.float64)
    for _ in range(3):
        v = 0.5 * np.sin(v) + v
    case("while_body", hlo, [x], [f32(v)], {"rtol": 1e-5, "atol": 1e-6})


def literal(a):
    """HLO text of a 2-D f32 literal: {{a, b}, {c, d}}."""
    return "{" + ", ".join("{" + ", ".join("%.9g" % v for v in row) + "}" for row in a) + "}"


def constants_in_place():
    """Array constants are read where their literal lies (buffer_plan_constant_by_reference), not
    copied into a buffer on every call, so nothing may write over one: a dynamic-update-slice of
    a constant whose result is a temporary (its operand dies there, but gets no buffer to take
    over), a while loop whose state starts from constants (one leaf updated in place, one passed
    through and read), a called computation updating its parameter, a sort and a scatter of a
    constant, an elementwise op whose constant operand dies, a dot with constant weights; and
    the root returning a constant twice and a constant reshaped (copied to the caller).  Every
    constant is then checked again by a second output that reads it after the writers."""
    c = f32(RNG.uniform(-1.0, 1.0, (4, 100)))
    w = f32(RNG.uniform(-1.0, 1.0, (100, 30)))
    u = uniform((1, 100))
    x = uniform((4, 100))
    idx = np.asarray(2, dtype=np.int32)
    hlo = """HloModule reuse_constant_writers

callee {
  p = f32[4,100] parameter(0)
  q = f32[1,100] parameter(1)
  z = s32[] constant(0)
  ROOT d = f32[4,100] dynamic-update-slice(p, q, z, z)
}

cond {
  p = (s32[], f32[4,100], f32[4,100]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[4,100], f32[4,100]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[4,100] get-tuple-element(p), index=1
  k = f32[4,100] get-tuple-element(p), index=2
  row = f32[1,100] slice(k), slice={[1:2], [0:100]}
  z = s32[] constant(0)
  v2 = f32[4,100] dynamic-update-slice(v, row, i, z)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[4,100], f32[4,100]) tuple(i2, v2, k)
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT l = pred[] compare(a, b), direction=LT
}

ENTRY main {
  u = f32[1,100] parameter(0)
  i = s32[] parameter(1)
  x = f32[4,100] parameter(2)
  c = f32[4,100] constant(%(c)s)
  c2 = f32[4,100] constant(%(c)s)
  w = f32[100,30] constant(%(w)s)
  z = s32[] constant(0)
  d = f32[4,100] dynamic-update-slice(c, u, i, z)
  dd = f32[4,100] multiply(d, d)
  zero = s32[] constant(0)
  init = (s32[], f32[4,100], f32[4,100]) tuple(zero, c2, c)
  loop = (s32[], f32[4,100], f32[4,100]) while(init), condition=cond, body=body
  lv = f32[4,100] get-tuple-element(loop), index=1
  cl = f32[4,100] call(c, u), to_apply=callee
  s = f32[4,100] sort(c), dimensions={1}, to_apply=lt
  si = s32[2,2] constant({{0, 0}, {3, 1}})
  sv = f32[2] constant({10, 20})
  sc = f32[4,100] scatter(c, si, sv), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add
  n = f32[4,100] negate(c)
  y = f32[4,30] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[400] reshape(c)
  again = f32[4,100] add(c, c2)
  ROOT t = (f32[4,100], f32[4,100], f32[4,100], f32[4,100], f32[4,100], f32[4,100], f32[4,30], f32[4,100], f32[4,100], f32[400], f32[4,100]) tuple(dd, lv, cl, s, sc, n, y, c, c, r, again)
}
""" % {"c": literal(c), "w": literal(w)}
    cd = c.astype(np.float64)
    d = cd.copy()
    d[2] = u[0]
    lv = cd.copy()
    for it in range(3):
        lv[it] = cd[1]
    cl = cd.copy()
    cl[0] = u[0]
    sc = cd.copy()
    sc[0, 0] += 10
    sc[3, 1] += 20
    case("constant_writers", hlo, [u, idx, x],
         [f32(d * d), f32(lv), f32(cl), f32(np.sort(c, axis=1)), f32(sc), f32(-cd), f32(x.astype(np.float64) @ w),
          c, c, c.reshape(400), f32(cd + cd)], {"rtol": 1e-5, "atol": 1e-5})


def tuple_root():
    """A variadic sort and a batch-norm training whose results the root returns through
    get-tuple-elements: each kernel writes the caller's result buffers itself (the arena holds
    nothing; before, both results were written to the arena and copied out)."""
    k = uniform((64, 256))
    v = uniform((64, 256))
    hlo = """HloModule reuse_tuple_root

lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}

ENTRY main {
  k = f32[64,256] parameter(0)
  v = f32[64,256] parameter(1)
  s = (f32[64,256], f32[64,256]) sort(k, v), dimensions={1}, to_apply=lt
  sk = f32[64,256] get-tuple-element(s), index=0
  sv = f32[64,256] get-tuple-element(s), index=1
  x = f32[64,256] parameter(2)
  sc = f32[256] parameter(3)
  of = f32[256] parameter(4)
  b = (f32[64,256], f32[256], f32[256]) batch-norm-training(x, sc, of), epsilon=0.001, feature_index=1
  y = f32[64,256] get-tuple-element(b), index=0
  m = f32[256] get-tuple-element(b), index=1
  ROOT t = (f32[64,256], f32[64,256], f32[64,256], f32[256]) tuple(sk, sv, y, m)
}
"""
    order = np.argsort(k, axis=1, kind="stable")
    x = uniform((64, 256))
    sc = f32(RNG.uniform(0.5, 2.0, 256))
    of = uniform((256,))
    x64 = x.astype(np.float64)
    mean, var = x64.mean(0), x64.var(0)
    y = (x64 - mean) / np.sqrt(var + 0.001) * sc + of
    case("tuple_root", hlo, [k, v, x, sc, of],
         [np.take_along_axis(k, order, 1), np.take_along_axis(v, order, 1), f32(y), f32(mean)],
         {"rtol": 1e-4, "atol": 1e-4})


if __name__ == "__main__":
    fusion_chain()
    elementwise_sorts()
    softmax_rows()
    not_other_index()
    still_live()
    while_body()
    not_output_fusion()
    tuple_root()
    constants_in_place()
