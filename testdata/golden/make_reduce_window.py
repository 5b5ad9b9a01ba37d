#!/usr/bin/python3
"""Generates the golden cases of reduce-window as a loop kernel (compiler/codegen/fused.c
`reduce_window_value`: one input, a window of at most 64 positions; window.c keeps the
variadic ones and larger windows).  Cases under testdata/golden/reduce_window_<case>/
(model.hlo + in<i>.npy + expected<i>.npy + tol.json), as make.py writes its cases.

Expected values come from a direct numpy reference of the semantics document's reduce-window:
each result element starts at the initial value and folds in, in window order, every window
position that lands on an element of the base-dilated operand (positions in the padding or
between dilated elements are skipped, as XLA's CPU backend does) -- never hlorun's output.
They cover: NHWC max pooling 3x3 stride 2 with padding (a window that leaves the minor
dimension alone), NCHW average-pool sums 2x2 stride 2, a sum with an initial value that is
not the identity and padding (added once per element, not per padded position), base and
window dilation, an s32 max, a bf16 max, a bf16 cumulative sum rounded at every step, a 7x7 global pool of 49 positions, a 1-D window of
64 positions (the largest the loop takes) and one of 65 (window.c), a reducer that is a
computation of two instructions (called per position), and running folds over a whole
dimension (JAX's cumsum: fused.c emit_scan): a sum along the minor dimension with an initial
value 1.5, along a middle dimension, an s32 max, an f64 product and a bf16 sum rounded at
every step; a reverse cumulative sum of 100 (padded behind: window.c).

Run:  /usr/bin/python3 testdata/golden/make_reduce_window.py
"""
import itertools
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(31)


def case(name, hlo, inputs, expected, tol=None):
    write_case(os.path.join(HERE, "reduce_window_" + name), "testdata/golden/make_reduce_window.py", hlo, inputs,
               expected, tol)


def reference(x, init, op, size, stride, pad, base=None, wdil=None):
    """reduce-window of x by the semantics document: padding and dilated holes skipped."""
    r = x.ndim
    base = base or [1] * r
    wdil = wdil or [1] * r
    dil_shape = [(x.shape[d] - 1) * base[d] + 1 if x.shape[d] else 0 for d in range(r)]
    padded = [dil_shape[d] + pad[d][0] + pad[d][1] for d in range(r)]
    eff = [(size[d] - 1) * wdil[d] + 1 for d in range(r)]
    out_shape = [max(0, (padded[d] - eff[d]) // stride[d] + 1) for d in range(r)]
    out = np.empty(out_shape, dtype=np.float64 if x.dtype.kind == "f" else x.dtype)
    for o in itertools.product(*[range(n) for n in out_shape]):
        acc = init
        for w in itertools.product(*[range(n) for n in size]):
            idx = []
            for d in range(r):
                pos = o[d] * stride[d] + w[d] * wdil[d] - pad[d][0]
                if pos < 0 or pos % base[d] or pos // base[d] >= x.shape[d]:
                    break
                idx.append(pos // base[d])
            else:
                acc = op(acc, x[tuple(idx)].astype(np.float64) if x.dtype.kind == "f" else x[tuple(idx)])
        out[o] = acc
    return out


def window_attr(size, stride, pad, base=None, wdil=None):
    t = "size=%s stride=%s pad=%s" % ("x".join(map(str, size)), "x".join(map(str, stride)),
                                        "x".join("%d_%d" % p for p in pad))
    if base:
        t += " lhs_dilate=" + "x".join(map(str, base))
    if wdil:
        t += " rhs_dilate=" + "x".join(map(str, wdil))
    return t


def rw_case(name, x, hlo_type, init, init_text, red, op, size, stride, pad, base=None, wdil=None, tol=None,
            reducer_text=None, expect_type=None):
    e = reference(x, init, op, size, stride, pad, base, wdil)
    shape = lambda s: "%s[%s]" % (hlo_type, ",".join(map(str, s)))
    body = "  x = %s parameter(0)\n  i = %s[] constant(%s)\n" % (shape(x.shape), hlo_type, init_text)
    body += "  ROOT r = %s reduce-window(x, i), window={%s}, to_apply=red\n" % (shape(e.shape),
                                                                               window_attr(size, stride, pad, base, wdil))
    comp = reducer_text or "\nred {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT c = %s[] %s(a, b)\n}\n" % (
        hlo_type, hlo_type, hlo_type, red)
    hlo = "HloModule rw_%s\n%s\nENTRY main {\n%s}\n" % (name, comp, body)
    case(name, hlo, [x], [e.astype(expect_type or x.dtype)], tol)


F32 = {"rtol": 1e-5, "atol": 1e-5}


def bf16(a):
    """float32 values rounded to bf16 (nearest even), as uint16 bits."""
    b = np.asarray(a, dtype=np.float32).view(np.uint32)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


if __name__ == "__main__":
    mx, add = (lambda a, b: max(a, b)), (lambda a, b: a + b)
    x = RNG.standard_normal((2, 9, 11, 16)).astype(np.float32)
    rw_case("maxpool_nhwc_3x3_s2", x, "f32", -np.inf, "-inf", "maximum", mx, [1, 3, 3, 1], [1, 2, 2, 1],
            [(0, 0), (1, 1), (0, 1), (0, 0)], tol=F32)
    x = RNG.standard_normal((2, 3, 10, 12)).astype(np.float32)
    rw_case("sumpool_nchw_2x2_s2", x, "f32", 0.0, "0", "add", add, [1, 1, 2, 2], [1, 1, 2, 2],
            [(0, 0)] * 4, tol=F32)
    x = RNG.standard_normal((3, 13, 5)).astype(np.float32)
    rw_case("sum_init_padded", x, "f32", 1.5, "1.5", "add", add, [1, 3, 2], [1, 1, 2], [(0, 0), (2, 1), (1, 1)],
            tol=F32)
    x = RNG.standard_normal((2, 7, 6)).astype(np.float32)
    rw_case("dilated", x, "f32", 0.0, "0", "add", add, [1, 3, 2], [1, 2, 1], [(0, 0), (1, 2), (0, 1)],
            base=[1, 2, 1], wdil=[1, 2, 2], tol=F32)
    xi = RNG.integers(-1000, 1000, size=(4, 10, 10, 3), dtype=np.int32)
    rw_case("max_s32", xi, "s32", np.int32(-2**31), "-2147483648", "maximum", mx, [1, 2, 2, 1], [1, 2, 2, 1],
            [(0, 0)] * 4)
    xf = RNG.standard_normal((2, 8, 8, 5)).astype(np.float32)
    xb = bf16(xf)
    xbv = (xb.astype(np.uint32) << 16).view(np.float32)
    e = reference(xbv, -np.inf, mx, [1, 3, 3, 1], [1, 1, 1, 1], [(0, 0), (1, 1), (1, 1), (0, 0)])
    body = ("  x = bf16[2,8,8,5] parameter(0)\n  i = bf16[] constant(-inf)\n"
            "  ROOT r = bf16[2,8,8,5] reduce-window(x, i), window={size=1x3x3x1 pad=0_0x1_1x1_1x0_0}, to_apply=red\n")
    comp = "\nred {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n  ROOT c = bf16[] maximum(a, b)\n}\n"
    case("max_bf16", "HloModule rw_max_bf16\n%s\nENTRY main {\n%s}\n" % (comp, body), [xb], [bf16(e)], {"exact": True})
    # a bf16 cumulative sum (JAX's cumsum on CPU): every step rounded to bf16, as the reducer's add
    xb = bf16(RNG.standard_normal((8, 9)).astype(np.float32) * np.float32(10.0) ** RNG.integers(-3, 3, (8, 9)))
    xbv = (xb.astype(np.uint32) << 16).view(np.float32)
    step = lambda a, b: float((bf16(np.array([a + b], np.float32)).astype(np.uint32) << 16).view(np.float32)[0])
    e = reference(xbv, 0.0, step, [8, 1], [1, 1], [(7, 0), (0, 0)])
    body = ("  x = bf16[8,9] parameter(0)\n  i = bf16[] constant(0)\n"
            "  ROOT r = bf16[8,9] reduce-window(x, i), window={size=8x1 pad=7_0x0_0}, to_apply=red\n")
    comp = "\nred {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n  ROOT c = bf16[] add(a, b)\n}\n"
    case("cumsum_bf16", "HloModule rw_cumsum_bf16\n%s\nENTRY main {\n%s}\n" % (comp, body), [xb], [bf16(e)],
         {"exact": True})
    x = RNG.standard_normal((3, 7, 7, 20)).astype(np.float32)
    rw_case("global_7x7", x, "f32", 0.0, "0", "add", add, [1, 7, 7, 1], [1, 1, 1, 1], [(0, 0)] * 4, tol=F32)
    x = RNG.standard_normal((4, 100)).astype(np.float32)
    rw_case("window_64", x, "f32", 0.0, "0", "add", add, [1, 64], [1, 1], [(0, 0), (63, 0)], tol=F32)
    rw_case("window_65", x, "f32", 0.0, "0", "add", add, [1, 65], [1, 1], [(0, 0), (64, 0)], tol=F32)
    # running folds (fused.c emit_scan): windows that span a whole dimension, padded in front
    x = RNG.standard_normal((3, 100)).astype(np.float32)
    rw_case("scan_minor_init", x, "f32", 1.5, "1.5", "add", add, [1, 100], [1, 1], [(0, 0), (99, 0)], tol=F32)
    x = RNG.standard_normal((5, 70, 3)).astype(np.float32)
    rw_case("scan_middle", x, "f32", 0.0, "0", "add", add, [1, 70, 1], [1, 1, 1], [(0, 0), (69, 0), (0, 0)], tol=F32)
    xi = RNG.integers(-10**6, 10**6, size=(4, 1500), dtype=np.int32)
    rw_case("scan_max_s32", xi, "s32", np.int32(-2**31), "-2147483648", "maximum", mx, [1, 1500], [1, 1],
            [(0, 0), (1499, 0)])
    x = 1 + (RNG.random((2, 90)) - 0.5) * 0.1
    rw_case("scan_multiply_f64", x, "f64", 1.0, "1", "multiply", lambda a, b: a * b, [1, 90], [1, 1],
            [(0, 0), (89, 0)], tol={"rtol": 1e-13, "atol": 0})
    xb = bf16(RNG.standard_normal((80, 3)).astype(np.float32) * np.float32(10.0) ** RNG.integers(-3, 3, (80, 3)))
    xbv = (xb.astype(np.uint32) << 16).view(np.float32)
    e = reference(xbv, 0.0, step, [80, 1], [1, 1], [(79, 0), (0, 0)])
    body = ("  x = bf16[80,3] parameter(0)\n  i = bf16[] constant(0)\n"
            "  ROOT r = bf16[80,3] reduce-window(x, i), window={size=80x1 pad=79_0x0_0}, to_apply=red\n")
    case("scan_bf16", "HloModule rw_scan_bf16\n%s\nENTRY main {\n%s}\n" % (comp, body), [xb], [bf16(e)],
         {"exact": True})
    x = RNG.standard_normal((3, 100)).astype(np.float32)
    rw_case("reverse_cumsum_100", x, "f32", 0.0, "0", "add", add, [1, 100], [1, 1], [(0, 0), (0, 99)], tol=F32)
    x = RNG.standard_normal((2, 9, 4)).astype(np.float32)
    two = ("\nred {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ab = f32[] abs(b)\n"
           "  ROOT c = f32[] add(a, ab)\n}\n")
    rw_case("reducer_computation", x, "f32", 0.0, "0", None, lambda a, b: a + abs(b), [1, 3, 2], [1, 2, 1],
            [(0, 0), (1, 1), (0, 1)], tol=F32, reducer_text=two)
