#!/usr/bin/python3
"""Generates the golden cases of convolutions with constant weights (conv_constant_*), under
testdata/golden/conv_constant_<case>/ (model.hlo + in<i>.npy + expected<i>.npy + tol.json),
as make.py does for the other cases.  It writes only its own case folders.

With oneDNN, the runtime reorders a constant's weights into oneDNN's layout on the first call
and keeps them in the context (runtime/src/kernels/rt_dnnl.c; the descriptor carries a hash of
the weights, compiler/codegen/conv_dnnl.c), so tests/golden.cmake runs these cases with three
calls as well (golden.py --calls 3: the last call's results are compared).  Cases: a dense
NHWC 3x3 convolution, a depthwise one, a transposed one (base dilation: oneDNN's backward data,
the kernel read flipped), one fused with its bias and ReLU (the weights reach the convolution
through the fusion's parameter), and two convolutions of one shape with different weights (the
same descriptor: the kept weights must not be mixed up).

Expected values are numpy formulas in float64 (rounded to f32) -- never hlorun's output.

Run:  /usr/bin/python3 testdata/golden/make_conv_constant.py
"""
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(23)
TOL = {"rtol": 1e-5, "atol": 1e-5}


def case(name, hlo, inputs, expected):
    write_case(os.path.join(HERE, "conv_constant_" + name), "testdata/golden/make_conv_constant.py", hlo, inputs,
               expected, TOL)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def literal(a):
    """HLO text of an n-D f32 literal."""
    if a.ndim == 0:
        return "%.9g" % a
    return "{" + ", ".join(literal(x) for x in a) + "}"


def conv_nhwc(x, w, pad, groups=1, lhs_dilate=1):
    """x [N,H,W,C], w [KH,KW,C/groups,O] (HWIO), stride 1, padding ((lo,hi),(lo,hi)), the input
    dilated by lhs_dilate (zeros between its elements), float64."""
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    if lhs_dilate > 1:
        n, h, wd, c = x.shape
        d = np.zeros((n, (h - 1) * lhs_dilate + 1, (wd - 1) * lhs_dilate + 1, c))
        d[:, ::lhs_dilate, ::lhs_dilate, :] = x
        x = d
    x = np.pad(x, ((0, 0), pad[0], pad[1], (0, 0)))
    kh, kw, ci, o = w.shape
    n, h, wd, c = x.shape
    oh, ow = h - kh + 1, wd - kw + 1
    og = o // groups
    y = np.zeros((n, oh, ow, o))
    for g in range(groups):
        xs = x[..., g * ci:(g + 1) * ci]
        for i in range(kh):
            for j in range(kw):
                y[..., g * og:(g + 1) * og] += np.einsum("nhwc,co->nhwo", xs[:, i:i + oh, j:j + ow, :],
                                                         w[i, j, :, g * og:(g + 1) * og])
    return y


def dense():
    x = f32(RNG.uniform(-1, 1, (2, 9, 9, 8)))
    w = f32(RNG.uniform(-1, 1, (3, 3, 8, 16)))
    hlo = """HloModule conv_constant_nhwc_3x3

ENTRY main {
  x = f32[2,9,9,8] parameter(0)
  w = f32[3,3,8,16] constant(%s)
  ROOT y = f32[2,9,9,16] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
""" % literal(w)
    case("nhwc_3x3", hlo, [x], [f32(conv_nhwc(x, w, ((1, 1), (1, 1))))])


def depthwise():
    x = f32(RNG.uniform(-1, 1, (1, 12, 12, 16)))
    w = f32(RNG.uniform(-1, 1, (3, 3, 1, 16)))
    hlo = """HloModule conv_constant_depthwise

ENTRY main {
  x = f32[1,12,12,16] parameter(0)
  w0 = f32[3,3,16] constant(%s)
  w = f32[3,3,1,16] reshape(w0)
  ROOT y = f32[1,12,12,16] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=16
}
""" % literal(w.reshape(3, 3, 16))
    case("depthwise", hlo, [x], [f32(conv_nhwc(x, w, ((1, 1), (1, 1)), groups=16))])


def transposed():
    x = f32(RNG.uniform(-1, 1, (2, 5, 5, 6)))
    w = f32(RNG.uniform(-1, 1, (3, 3, 6, 4)))
    hlo = """HloModule conv_constant_transposed

ENTRY main {
  x = f32[2,5,5,6] parameter(0)
  w = f32[3,3,6,4] constant(%s)
  ROOT y = f32[2,10,10,4] convolution(x, w), window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f
}
""" % literal(w)
    case("transposed", hlo, [x], [f32(conv_nhwc(x, w, ((1, 2), (1, 2)), lhs_dilate=2))])


def fused_bias_relu():
    x = f32(RNG.uniform(-1, 1, (2, 8, 8, 8)))
    w = f32(RNG.uniform(-1, 1, (3, 3, 8, 24)))
    b = f32(RNG.uniform(-1, 1, (24,)))
    hlo = """HloModule conv_constant_bias_relu

ENTRY main {
  x = f32[2,8,8,8] parameter(0)
  w = f32[3,3,8,24] constant(%s)
  b = f32[24] constant(%s)
  c = f32[2,8,8,24] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[2,8,8,24] broadcast(b), dimensions={3}
  a = f32[2,8,8,24] add(c, bb)
  z = f32[] constant(0)
  zb = f32[2,8,8,24] broadcast(z), dimensions={}
  ROOT r = f32[2,8,8,24] maximum(a, zb)
}
""" % (literal(w), literal(b))
    case("bias_relu", hlo, [x], [f32(np.maximum(conv_nhwc(x, w, ((1, 1), (1, 1))) + b, 0))])


def two_sites():
    x = f32(RNG.uniform(-1, 1, (1, 7, 7, 8)))
    w1 = f32(RNG.uniform(-1, 1, (3, 3, 8, 16)))
    w2 = f32(RNG.uniform(-1, 1, (3, 3, 8, 16)))
    hlo = """HloModule conv_constant_two_sites

ENTRY main {
  x = f32[1,7,7,8] parameter(0)
  w1 = f32[3,3,8,16] constant(%s)
  w2 = f32[3,3,8,16] constant(%s)
  y1 = f32[1,7,7,16] convolution(x, w1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  y2 = f32[1,7,7,16] convolution(x, w2), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[1,7,7,16], f32[1,7,7,16]) tuple(y1, y2)
}
""" % (literal(w1), literal(w2))
    pad = ((1, 1), (1, 1))
    case("two_sites", hlo, [x], [f32(conv_nhwc(x, w1, pad)), f32(conv_nhwc(x, w2, pad))])


def main():
    dense()
    depthwise()
    transposed()
    fused_bias_relu()
    two_sites()


if __name__ == "__main__":
    main()
