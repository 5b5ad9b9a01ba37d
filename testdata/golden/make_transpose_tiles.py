#!/usr/bin/python3
"""Generates the golden cases of transposes that move the minor dimension, walked in tiles
whose operand block is first transposed in registers into a stack array (compiler/codegen/
fused.c `stage_transpose`).  Cases under testdata/golden/transpose_tiles_<case>/ (model.hlo +
in<i>.npy + expected<i>.npy + tol.json), as make.py writes its cases.

Expected values come from numpy (np.transpose with the same permutation: result dimension k
is operand dimension perm[k], the semantics document's definition; the elementwise ops on top
are single exact operations: an add, a negation, a doubling, a logical not) -- never hlorun's
output.  They cover: whole tiles, edge tiles in both dimensions, a transpose under an add and
two transposes in one loop, NCHW -> NHWC, element sizes 1 (s8, pred), 2 (bf16, f16), 4 and 8
(f64, c64), and a transpose whose operand's minor dimension lands elsewhere than the result's
second-minor (staged in the view that merges the dimensions it keeps together: [A, B, C] ->
[C, A, B] is [A*B, C] -> [C, A*B]).  Merged views (fused.c `tile_view`): NHWC -> NCHW with
whole and edge tiles and 3 channels, size-1 dimensions dropped, s8, a channel bias broadcast
(a member that needs the root's multi-index: the tiles keep the root's dimensions) and two
transposes that suit no common merged view.

Run:  /usr/bin/python3 testdata/golden/make_transpose_tiles.py
"""
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(83)
TYPE = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.int32): "s32",
        np.dtype(np.int8): "s8", np.dtype(np.bool_): "pred", np.dtype(np.float16): "f16",
        np.dtype(np.complex64): "c64"}


def t(a, bf16=False):
    return "%s[%s]" % ("bf16" if bf16 else TYPE[a.dtype], ",".join(str(n) for n in a.shape))


def case(name, body, inputs, expected, bf16=False):
    hlo = "HloModule transpose_tiles_%s\n\nENTRY main {\n%s}\n" % (name, body)
    tol = {"exact": True, "bf16": True} if bf16 else {"exact": True}
    write_case(os.path.join(HERE, "transpose_tiles_" + name), "testdata/golden/make_transpose_tiles.py", hlo,
               inputs, expected, tol)


def perm_text(perm):
    return "{%s}" % ",".join(str(p) for p in perm)


def pure(name, x, perm, bf16=False):
    e = np.ascontiguousarray(np.transpose(x, perm))
    body = "  x = %s parameter(0)\n  ROOT t = %s transpose(x), dimensions=%s\n" % (t(x, bf16), t(e, bf16), perm_text(perm))
    case(name, body, [x], [e], bf16)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


if __name__ == "__main__":
    pure("batched_021_f32", f32(3, 64, 96), (0, 2, 1))
    pure("edges_f32", f32(70, 77), (1, 0))
    pure("nchw_to_nhwc_f32", f32(2, 48, 7, 64), (0, 2, 3, 1))
    pure("bf16", (f32(64, 96).view(np.uint32) >> 16).astype(np.uint16), (1, 0), bf16=True)
    pure("s8", RNG.integers(-128, 128, size=(96, 70)).astype(np.int8), (1, 0))
    c = (f32(64, 96) + 1j * f32(64, 96)).astype(np.complex64)
    pure("c64", c, (1, 0))
    pure("not_staged_201_f32", f32(32, 40, 48), (2, 0, 1))  # named before merged views staged it

    x, y = f32(64, 128), f32(128, 64)
    case("under_add_f32", "  x = f32[64,128] parameter(0)\n  y = f32[128,64] parameter(1)\n"
         "  t = f32[128,64] transpose(x), dimensions={1,0}\n  ROOT a = f32[128,64] add(t, y)\n",
         [x, y], [x.T + y])
    a = RNG.integers(-1000, 1000, size=(96, 64)).astype(np.int32)
    b = RNG.integers(-1000, 1000, size=(96, 64)).astype(np.int32)
    case("two_s32", "  a = s32[96,64] parameter(0)\n  b = s32[96,64] parameter(1)\n"
         "  ta = s32[64,96] transpose(a), dimensions={1,0}\n  tb = s32[64,96] transpose(b), dimensions={1,0}\n"
         "  ROOT s = s32[64,96] subtract(ta, tb)\n", [a, b], [np.ascontiguousarray(a.T - b.T)])
    d = RNG.standard_normal((40, 128))
    case("negate_f64", "  x = f64[40,128] parameter(0)\n  t = f64[128,40] transpose(x), dimensions={1,0}\n"
         "  ROOT n = f64[128,40] negate(t)\n", [d], [np.ascontiguousarray(-d.T)])
    h = RNG.standard_normal((64, 72)).astype(np.float16)
    case("doubled_f16", "  x = f16[64,72] parameter(0)\n  t = f16[72,64] transpose(x), dimensions={1,0}\n"
         "  two = f16[] constant(2)\n  b = f16[72,64] broadcast(two), dimensions={}\n"
         "  ROOT m = f16[72,64] multiply(t, b)\n", [h], [np.ascontiguousarray(h.T * np.float16(2))])
    p = RNG.integers(0, 2, size=(64, 80)).astype(np.bool_)
    case("not_pred", "  x = pred[64,80] parameter(0)\n  t = pred[80,64] transpose(x), dimensions={1,0}\n"
         "  ROOT n = pred[80,64] not(t)\n", [p], [np.ascontiguousarray(~p.T)])

    pure("nhwc_to_nchw_f32", f32(2, 8, 8, 64), (0, 3, 1, 2))
    pure("nhwc_to_nchw_edges_f32", f32(3, 5, 13, 40), (0, 3, 1, 2))
    pure("nhwc_to_nchw_rgb_f32", f32(2, 16, 20, 3), (0, 3, 1, 2))
    pure("unit_dims_f32", f32(1, 48, 1, 72), (3, 2, 0, 1))
    pure("nhwc_to_nchw_s8", RNG.integers(-128, 128, size=(2, 8, 8, 96)).astype(np.int8), (0, 3, 1, 2))
    x, bias = f32(2, 8, 12, 64), f32(64)
    case("nhwc_to_nchw_bias_f32", "  x = f32[2,8,12,64] parameter(0)\n  c = f32[64] parameter(1)\n"
         "  t = f32[2,64,8,12] transpose(x), dimensions={0,3,1,2}\n"
         "  b = f32[2,64,8,12] broadcast(c), dimensions={1}\n  ROOT a = f32[2,64,8,12] add(t, b)\n",
         [x, bias], [np.ascontiguousarray(np.transpose(x, (0, 3, 1, 2)) + bias[None, :, None, None])])
    x, y = f32(4, 12, 10, 40), f32(4, 40, 10, 12)
    case("two_views_f32", "  x = f32[4,12,10,40] parameter(0)\n  y = f32[4,40,10,12] parameter(1)\n"
         "  tx = f32[4,40,12,10] transpose(x), dimensions={0,3,1,2}\n"
         "  ty = f32[4,40,12,10] transpose(y), dimensions={0,1,3,2}\n  ROOT a = f32[4,40,12,10] add(tx, ty)\n",
         [x, y], [np.ascontiguousarray(np.transpose(x, (0, 3, 1, 2)) + np.transpose(y, (0, 1, 3, 2)))])
