#!/usr/bin/python3
"""Generates the golden cases of variadic reduces as loop kernels (compiler/codegen/fused.c
`variadic_reduce_value`: several inputs, the minor dimension reduced).  Cases under
testdata/golden/variadic_reduce_<case>/ (model.hlo + in<i>.npy + expected<i>.npy +
tol.json), as make.py writes its cases.

The reducers are JAX's argmax and argmin ones (value and index: the larger value, a NaN
first, the smaller index on a tie).  Expected values are numpy's argmax/argmin (NaN counts as
the extreme and the first occurrence wins, as in JAX) -- never hlorun's output.  They cover:
rows of 300 with ties and several NaNs in one row (the first NaN's index), a reduction over
the two minor dimensions of a 3-D array, over the outer and minor dimensions (runs), an s32
argmin, a bf16 argmax, and a row of 100003 elements (one output, uneven length); outputs fold
FZ_VARIADIC_CHAINS (4) side by side, so 11 rows with NaNs and ties in several rows of one
block, and 9 outputs of runs (two blocks and a short one) check the blocks and their tail.
An iota input is fused into the reduce and computed by its kernel (fusion.c
`variadic_fusible`, fused.c `variadic_iota`): iotas along a kept dimension, along a dimension
inside the run of two reduced minor dimensions, along an outer reduced dimension, and one that
another output reads too (values without ties: the index output is the maximum's coordinate
along the iota's dimension).

Run:  /usr/bin/python3 testdata/golden/make_variadic_reduce.py
"""
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(53)


def reducer(t, direction):
    nan = "  an = pred[] compare(a, a), direction=NE\n  pv = pred[] or(c, an)\n" if t != "s32" else "  pv = pred[] and(c, c)\n"
    return """
red {
  a = %s[] parameter(0)
  ai = s32[] parameter(1)
  b = %s[] parameter(2)
  bi = s32[] parameter(3)
  c = pred[] compare(a, b), direction=%s
%s  e = pred[] compare(a, b), direction=EQ
  l = pred[] compare(ai, bi), direction=LT
  el = pred[] and(e, l)
  pi = pred[] or(pv, el)
  v = %s[] select(pv, a, b)
  vi = s32[] select(pi, ai, bi)
  ROOT r = (%s[], s32[]) tuple(v, vi)
}
""" % (t, t, direction, nan, t, t)


def iota_case(name, x, dims, iota_dim, extra=False):
    """argmax of f32 x over dims with an s32 iota along iota_dim as the index input."""
    r = x.ndim
    kept = [d for d in range(r) if d not in dims]
    moved = np.moveaxis(x, dims, list(range(r - len(dims), r)))
    flat = moved.reshape([x.shape[d] for d in kept] + [-1])
    at = np.argmax(flat, axis=-1)
    vals = np.take_along_axis(flat, at[..., None], axis=-1)[..., 0]
    coord = np.indices(x.shape)[iota_dim]
    cflat = np.moveaxis(coord, dims, list(range(r - len(dims), r))).reshape(flat.shape)
    idx = np.take_along_axis(cflat, at[..., None], axis=-1)[..., 0].astype(np.int32)
    shape = lambda s: ",".join(map(str, s))
    xs, ks = shape(x.shape), shape([x.shape[d] for d in kept])
    root = "(f32[%s], s32[%s])" % (ks, ks)
    body = """  x = f32[%s] parameter(0)
  io = s32[%s] iota(), iota_dimension=%d
  i = f32[] constant(-inf)
  z = s32[] constant(0)
  r = %s reduce(x, io, i, z), dimensions={%s}, to_apply=red
  v = f32[%s] get-tuple-element(r), index=0
  k = s32[%s] get-tuple-element(r), index=1
""" % (xs, xs, iota_dim, root, ",".join(map(str, dims)), ks, ks)
    outs = [vals.astype(np.float32), idx]
    if extra:
        body += "  sq = s32[%s] multiply(io, io)\n  ROOT t = (f32[%s], s32[%s], s32[%s]) tuple(v, k, sq)\n" % (xs, ks, ks, xs)
        outs.append((coord * coord).astype(np.int32))
    else:
        body += "  ROOT t = %s tuple(v, k)\n" % root
    hlo = "HloModule vr_%s\n%s\nENTRY main {\n%s}\n" % (name, reducer("f32", "GT"), body)
    write_case(os.path.join(HERE, "variadic_reduce_" + name), "testdata/golden/make_variadic_reduce.py", hlo, [x],
               outs, {"exact": True})


def case(name, x, t, dims, direction, xin=None):
    """x: the values as numpy floats/ints (the reference's view); xin: what the case stores."""
    r = x.ndim
    kept = [d for d in range(r) if d not in dims]
    moved = np.moveaxis(x, dims, list(range(r - len(dims), r)))
    flat = moved.reshape([x.shape[d] for d in kept] + [-1])
    if direction == "GT":
        idx = np.argmax(flat, axis=-1)
    else:
        idx = np.argmin(flat, axis=-1)
    vals = np.take_along_axis(flat, idx[..., None], axis=-1)[..., 0]
    shape = lambda s: ",".join(map(str, s))
    oshape = shape([x.shape[d] for d in kept])
    init = {"GT": "-inf", "LT": "inf"}[direction] if t != "s32" else {"GT": "-2147483648", "LT": "2147483647"}[direction]
    body = """  x = %s[%s] parameter(0)
  io = s32[%s] iota(), iota_dimension=%d
  i = %s[] constant(%s)
  z = s32[] constant(0)
  ROOT r = (%s[%s], s32[%s]) reduce(x, io, i, z), dimensions={%s}, to_apply=red
""" % (t, shape(x.shape), shape(x.shape), dims[-1] if len(dims) == 1 else 0, t, init, t, oshape, oshape,
       ",".join(map(str, dims)))
    if len(dims) > 1:  # the index of the flattened reduced dimensions: iota over them, row-major
        body = body.replace("  io = s32[%s] iota(), iota_dimension=0\n" % shape(x.shape), "")
        rsh = [x.shape[d] for d in dims]
        body = body.replace("reduce(x, io,", "reduce(x, ix,")
        body = ("  fl = s32[%s] iota(), iota_dimension=0\n" % int(np.prod(rsh))) + body
        body += ""
        body = body.replace("  x = ", "  rs = s32[%s] reshape(fl)\n  ix = s32[%s] broadcast(rs), dimensions={%s}\n  x = " % (
            shape(rsh), shape(x.shape), ",".join(map(str, dims))), 1)
    hlo = "HloModule vr_%s\n%s\nENTRY main {\n%s}\n" % (name, reducer(t, direction), body)
    if t == "bf16":
        vals_out = (vals.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    else:
        vals_out = vals.astype(x.dtype)
    write_case(os.path.join(HERE, "variadic_reduce_" + name), "testdata/golden/make_variadic_reduce.py", hlo,
               [xin if xin is not None else x], [vals_out, idx.astype(np.int32)], {"exact": True})


if __name__ == "__main__":
    x = RNG.integers(-50, 50, size=(6, 300)).astype(np.float32)  # many ties
    x[2, [17, 40, 250]] = np.nan
    x[4, [299, 5]] = np.nan
    case("argmax_ties_nans", x, "f32", [1], "GT")
    x = RNG.standard_normal((4, 5, 30)).astype(np.float32)
    case("argmax_two_minor", x, "f32", [1, 2], "GT")
    x = RNG.standard_normal((7, 3, 40)).astype(np.float32)
    case("argmin_outer_and_minor", x, "f32", [0, 2], "LT")
    x = RNG.integers(-1000, 1000, size=(5, 129)).astype(np.int32)
    case("argmin_s32", x, "s32", [1], "LT")
    bits = (RNG.standard_normal((3, 200)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    case("argmax_bf16", (bits.astype(np.uint32) << 16).view(np.float32), "bf16", [1], "GT", xin=bits)
    x = RNG.standard_normal((1, 100003)).astype(np.float32)
    case("argmax_long_row", x, "f32", [1], "GT")
    x = RNG.integers(-20, 20, size=(11, 64)).astype(np.float32)  # ties in every row
    x[1, [3, 60]] = np.nan
    x[2, 0] = np.nan
    x[5, 63] = np.nan
    x[9, [10, 11]] = np.nan
    case("argmax_blocks_nans", x, "f32", [1], "GT")
    x = RNG.standard_normal((7, 9, 40)).astype(np.float32)
    case("argmin_blocks_of_runs", x, "f32", [0, 2], "LT")
    iota_case("iota_kept_dim", RNG.standard_normal((6, 50)).astype(np.float32), [1], 0)
    iota_case("iota_in_run", RNG.standard_normal((3, 4, 5, 30)).astype(np.float32), [2, 3], 2)
    iota_case("iota_outer_reduced", RNG.standard_normal((7, 5, 40)).astype(np.float32), [0, 2], 0)
    iota_case("iota_shared", RNG.standard_normal((9, 33)).astype(np.float32), [1], 1, extra=True)
