#!/usr/bin/python3
"""Generates golden cases of f32 batch norm in the layouts the runtime's kernels
(runtime/src/kernels/rt_batchnorm.c) split over the thread pool by feature: the feature
dimension first (nothing before it), last (nothing after it) and in the middle of a
mobilenet-like NCHW activation large enough to run on several threads, for training,
inference and grad, under testdata/golden/bn_<case>/.  It writes only its own folders.

Expected values are the operation semantics' formulas in float64 numpy (make.py's
batch_norm_grad_reference for the gradients) -- never hlorun's output.

Run:  /usr/bin/python3 testdata/golden/make_batchnorm.py
"""
import os

import numpy as np

from golden_case import write_case
from make import batch_norm_grad_reference

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(41)
EPS = 0.001
TOL = {"rtol": 2e-5, "atol": 2e-5}


def shape_text(dims):
    return "f32[%s]{%s}" % (",".join(map(str, dims)), ",".join(str(i) for i in reversed(range(len(dims)))))


def case(name, hlo, inputs, expected):
    write_case(os.path.join(HERE, "bn_" + name), "testdata/golden/make_batchnorm.py", hlo, inputs, expected, TOL)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def layout_cases(name, dims, fi):
    nf = dims[fi]
    axes = tuple(a for a in range(len(dims)) if a != fi)
    b = [1] * len(dims)
    b[fi] = -1
    x = f32(RNG.uniform(-3, 3, dims) + RNG.uniform(-1, 1, nf).reshape(b))
    scale, offset = f32(RNG.uniform(0.5, 2, nf)), f32(RNG.uniform(-1, 1, nf))
    xs, fs = shape_text(dims), shape_text([nf])

    mean = x.astype(np.float64).mean(axis=axes)
    var = ((x.astype(np.float64) - mean.reshape(b)) ** 2).mean(axis=axes)
    m32, v32 = f32(mean), f32(var)
    norm = (x.astype(np.float64) - m32.reshape(b)) / np.sqrt(v32.astype(np.float64).reshape(b) + EPS)
    norm = norm * scale.reshape(b) + offset.reshape(b)
    hlo = ("HloModule bn_training_%s\n\nENTRY main {\n  x = %s parameter(0)\n  s = %s parameter(1)\n"
           "  o = %s parameter(2)\n  ROOT r = (%s, %s, %s) batch-norm-training(x, s, o), epsilon=%g, "
           "feature_index=%d\n}\n") % (name, xs, fs, fs, xs, fs, fs, EPS, fi)
    case("training_" + name, hlo, [x, scale, offset], [f32(norm), m32, v32])

    m, v = f32(RNG.uniform(-1, 1, nf)), f32(RNG.uniform(0.2, 3, nf))
    inf = (x.astype(np.float64) - m.reshape(b)) / np.sqrt(v.astype(np.float64).reshape(b) + EPS)
    inf = inf * scale.reshape(b) + offset.reshape(b)
    hlo = ("HloModule bn_inference_%s\n\nENTRY main {\n  x = %s parameter(0)\n  s = %s parameter(1)\n"
           "  o = %s parameter(2)\n  m = %s parameter(3)\n  v = %s parameter(4)\n"
           "  ROOT r = %s batch-norm-inference(x, s, o, m, v), epsilon=%g, feature_index=%d\n}\n") % (
        name, xs, fs, fs, fs, fs, xs, EPS, fi)
    case("inference_" + name, hlo, [x, scale, offset, m, v], [f32(inf)])

    dy = f32(RNG.uniform(-1, 1, dims))
    gx, gs, go = batch_norm_grad_reference(x, scale, m32, v32, dy, EPS, fi)
    hlo = ("HloModule bn_grad_%s\n\nENTRY main {\n  x = %s parameter(0)\n  s = %s parameter(1)\n"
           "  m = %s parameter(2)\n  v = %s parameter(3)\n  dy = %s parameter(4)\n"
           "  ROOT r = (%s, %s, %s) batch-norm-grad(x, s, m, v, dy), epsilon=%g, feature_index=%d\n}\n") % (
        name, xs, fs, fs, fs, xs, xs, fs, fs, EPS, fi)
    case("grad_" + name, hlo, [x, scale, m32, v32, dy], [f32(gx), f32(gs), f32(go)])


def main():
    layout_cases("feature_first", (5, 6, 7), 0)
    layout_cases("feature_last", (4, 9, 6), 2)
    layout_cases("nchw_pool", (8, 24, 14, 14), 1)
    print("wrote the bn_* cases")


if __name__ == "__main__":
    main()
