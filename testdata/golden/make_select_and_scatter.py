#!/usr/bin/python3
"""Generates the golden cases of select-and-scatter as a loop kernel (compiler/codegen/fused.c
`sas_value`: a window of at most 64 positions, the work split by the leading dimensions the
window leaves alone).  Cases under testdata/golden/select_and_scatter_<case>/ (model.hlo +
in<i>.npy + expected<i>.npy + tol.json), as make.py writes its cases.

Expected values come from a direct Python loop over the semantics document's
select-and-scatter: the result starts at the initial value; each source element, in row-major
order, selects the first element of its window (window order, padding skipped) unless a later
one makes select(current, later) false, which replaces it, and is folded into the result
there by the scatter computation -- never hlorun's output.  They cover: NHWC max pooling's
gradient 3x3 stride 2 with padding and ties (integer-valued inputs: GE keeps the first), NCHW
2x2 stride 2, a window over every dimension (no leading dimension to split), an initial value
1 and a max scatter, s32, and windows that overlap so that one element receives several
sources (their order matters for the float sum).  NHWC rows whose windows lie inside the
operand take a branch-free loop along the channels (`sas_row_inside`), the others the element
loop: cases with 13 channels and padded edges, ties under GT in overlapping windows (integer
values: exact sums), window dilation, a plain middle dimension, and a max scatter under LE.
A window of 81 positions takes the selection loop of window.c instead of the unrolled one.
Rows along a windowed minor dimension (NCHW's width), whose neighbouring windows overlap, first
keep each source's choice, 64 sources at a time, then fold the sources in order
(`sas_row_windowed`): 3x3 stride 2 rows of 75 sources with ties (two chunks), padding in
front of the row, window dilation along the width, and a stride wider than the window with a
max scatter.

Run:  /usr/bin/python3 testdata/golden/make_select_and_scatter.py
"""
import itertools
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(61)
CMP = {"GE": lambda a, b: a >= b, "LE": lambda a, b: a <= b, "GT": lambda a, b: a > b}
SCAT = {"add": lambda a, b: a + b, "maximum": max}


def reference(x, src, init, size, stride, pad, sel, scat, dtype, dil):
    out = np.full(x.shape, init, dtype=np.float64 if dtype != np.int32 else np.int64)
    for o in itertools.product(*[range(n) for n in src.shape]):
        cur = at = None
        for w in itertools.product(*[range(n) for n in size]):
            idx = [o[d] * stride[d] + w[d] * dil[d] - pad[d][0] for d in range(x.ndim)]
            if any(i < 0 or i >= x.shape[d] for d, i in enumerate(idx)):
                continue
            cand = x[tuple(idx)]
            if cur is None or not CMP[sel](cur, cand):
                cur, at = cand, tuple(idx)
        if at is not None:
            out[at] = SCAT[scat](out[at], src[o])
    return out.astype(dtype)


def case(name, x, src_shape, size, stride, pad, init=0, sel="GE", scat="add", dtype=np.float32, tol=None, dil=None,
         src=None):
    if src is None:
        src = (RNG.standard_normal(src_shape) if dtype != np.int32 else RNG.integers(-50, 50, src_shape)).astype(dtype)
    dil = dil or [1] * x.ndim
    t = "f32" if dtype == np.float32 else "s32"
    e = reference(x, src, init, size, stride, pad, sel, scat, dtype, dil)
    sh = lambda a: "%s[%s]" % (t, ",".join(map(str, a.shape)))
    win = "size=%s stride=%s pad=%s" % ("x".join(map(str, size)), "x".join(map(str, stride)),
                                        "x".join("%d_%d" % p for p in pad))
    if any(d != 1 for d in dil):
        win += " rhs_dilate=%s" % "x".join(map(str, dil))
    hlo = """HloModule sas_%s

sel {
  a = %s[] parameter(0)
  b = %s[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=%s
}

scat {
  a = %s[] parameter(0)
  b = %s[] parameter(1)
  ROOT c = %s[] %s(a, b)
}

ENTRY main {
  x = %s parameter(0)
  s = %s parameter(1)
  i = %s[] constant(%s)
  ROOT r = %s select-and-scatter(x, s, i), window={%s}, select=sel, scatter=scat
}
""" % (name, t, t, sel, t, t, t, scat, sh(x), sh(src), t, init, sh(x), win)
    write_case(os.path.join(HERE, "select_and_scatter_" + name), "testdata/golden/make_select_and_scatter.py", hlo,
               [x, src], [e], tol or ({"exact": True} if dtype == np.int32 else {"rtol": 1e-6, "atol": 1e-6}))


if __name__ == "__main__":
    x = RNG.integers(-3, 3, size=(2, 9, 11, 8)).astype(np.float32)
    case("maxpool_nhwc_ties", x, (2, 5, 6, 8), [1, 3, 3, 1], [1, 2, 2, 1], [(0, 0), (1, 1), (1, 1), (0, 0)])
    x = RNG.standard_normal((2, 3, 10, 12)).astype(np.float32)
    case("maxpool_nchw_2x2", x, (2, 3, 5, 6), [1, 1, 2, 2], [1, 1, 2, 2], [(0, 0)] * 4)
    x = RNG.standard_normal((7, 9)).astype(np.float32)
    case("every_dim_windowed", x, (3, 5), [3, 3], [2, 2], [(0, 1), (1, 1)], sel="LE")
    x = RNG.standard_normal((3, 12, 5)).astype(np.float32)
    case("init_one_max_scatter", x, (3, 5, 5), [1, 4, 1], [1, 2, 1], [(0, 0), (0, 0), (0, 0)], init=1,
         scat="maximum")
    x = RNG.integers(-100, 100, size=(2, 8, 8, 3)).astype(np.int32)
    case("s32", x, (2, 3, 3, 3), [1, 3, 3, 1], [1, 2, 2, 1], [(0, 0)] * 4, dtype=np.int32)
    x = RNG.standard_normal((2, 20, 4)).astype(np.float32)
    case("overlap_stride1", x, (2, 16, 4), [1, 5, 1], [1, 1, 1], [(0, 0)] * 3, sel="GT")
    x = RNG.standard_normal((2, 10, 9, 13)).astype(np.float32)
    case("nhwc_c13_edges", x, (2, 5, 5, 13), [1, 3, 3, 1], [1, 2, 2, 1], [(0, 0), (1, 1), (1, 1), (0, 0)])
    x = RNG.integers(-2, 3, size=(2, 7, 6, 16)).astype(np.float32)
    src = RNG.integers(-9, 10, size=(2, 6, 5, 16)).astype(np.float32)
    case("nhwc_ties_gt_overlap", x, src.shape, [1, 2, 2, 1], [1, 1, 1, 1], [(0, 0)] * 4, sel="GT", src=src,
         tol={"exact": True})
    x = RNG.standard_normal((1, 9, 9, 8)).astype(np.float32)
    case("nhwc_dilated", x, (1, 7, 7, 8), [1, 2, 2, 1], [1, 1, 1, 1], [(0, 0)] * 4, dil=[1, 2, 2, 1])
    x = RNG.standard_normal((2, 6, 3, 8)).astype(np.float32)
    case("plain_middle_dim", x, (2, 6, 3, 8), [1, 3, 1, 1], [1, 1, 1, 1], [(0, 0), (1, 1), (0, 0), (0, 0)])
    x = RNG.standard_normal((2, 8, 8, 24)).astype(np.float32)
    case("nhwc_le_max_scatter", x, (2, 4, 4, 24), [1, 2, 2, 1], [1, 2, 2, 1], [(0, 0)] * 4, init=-1, sel="LE",
         scat="maximum")
    x = RNG.integers(-3, 4, size=(1, 11, 12, 3)).astype(np.float32)
    src = RNG.integers(-9, 10, size=(1, 3, 3, 3)).astype(np.float32)
    case("window_81_positions", x, src.shape, [1, 9, 9, 1], [1, 2, 2, 1], [(0, 0), (1, 1), (2, 0), (0, 0)], src=src,
         tol={"exact": True})
    x = RNG.integers(-3, 3, size=(1, 2, 9, 150)).astype(np.float32)
    src = RNG.integers(-9, 10, size=(1, 2, 4, 75)).astype(np.float32)
    case("nchw_ties_two_chunks", x, src.shape, [1, 1, 3, 3], [1, 1, 2, 2], [(0, 0), (0, 0), (0, 1), (0, 1)], src=src,
         tol={"exact": True})
    x = RNG.integers(-3, 3, size=(2, 3, 8, 70)).astype(np.float32)
    src = RNG.integers(-9, 10, size=(2, 3, 4, 35)).astype(np.float32)
    case("nchw_padded_front_gt", x, src.shape, [1, 1, 3, 3], [1, 1, 2, 2], [(0, 0), (0, 0), (1, 0), (1, 0)], sel="GT",
         src=src, tol={"exact": True})
    x = RNG.standard_normal((1, 2, 6, 20)).astype(np.float32)
    case("nchw_dilated_width", x, (1, 2, 5, 16), [1, 1, 2, 3], [1, 1, 1, 1], [(0, 0)] * 4, dil=[1, 1, 1, 2])
    x = RNG.standard_normal((2, 2, 7, 23)).astype(np.float32)
    case("nchw_gaps_max_scatter", x, (2, 2, 2, 8), [1, 1, 2, 2], [1, 1, 3, 3], [(0, 0), (0, 0), (0, 0), (0, 1)],
         init=-1, sel="LE", scat="maximum")
