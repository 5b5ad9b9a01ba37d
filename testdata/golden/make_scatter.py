#!/usr/bin/python3
"""Generates the golden cases of scatter (compiler/codegen/window.c `cg_lower_scatter_into`:
one scatter position at a time, its window by nested loops; a one-operand scatter whose
operand dies there updates that buffer in place, compiler/passes/buffer_plan.c).  Cases under
testdata/golden/scatter_<case>/ (model.hlo + in<i>.npy + expected<i>.npy + tol.json), as
make.py writes its cases.

Expected values come from a direct numpy loop over the semantics document's scatter: the
result starts as the operand; for each scatter position in row-major order its start indices
(index vector components by scatter_dims_to_operand_dims) place the update window; a window
not wholly inside the operand is skipped; each element of the window is combined with the
update through the combiner (float32 arithmetic, one operation per update, positions in
order, so duplicates apply in order) -- never hlorun's output.  They cover: rows scattered into
an intermediate that dies at the scatter (updated in place) with duplicate and out-of-range
indices, the update's window dimension before its scatter dimension, overlapping windows
along a windowed dimension, two index components with a maximum combiner on s32, and a
scatter of two operands (a tuple).

Run:  /usr/bin/python3 testdata/golden/make_scatter.py
"""
import itertools
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(97)
TYPE = {np.dtype(np.float32): "f32", np.dtype(np.int32): "s32"}


def t(a):
    return "%s[%s]" % (TYPE[a.dtype], ",".join(str(n) for n in a.shape))


def lst(v):
    return "{%s}" % ",".join(str(x) for x in v)


def scatter_ref(ops, ind, upds, window_dims, inserted, to_operand, ivd, combine):
    outs = [o.copy() for o in ops]
    ind = ind if ivd < ind.ndim else ind[..., None]
    u = upds[0]
    sdims = [d for d in range(u.ndim) if d not in window_dims]
    wshape = [u.shape[d] for d in window_dims]
    wsize, kw = [], 0
    for d in range(ops[0].ndim):
        if d in inserted:
            wsize.append(1)
        else:
            wsize.append(wshape[kw])
            kw += 1
    for sp in itertools.product(*[range(u.shape[d]) for d in sdims]):
        iv = list(sp)
        iv.insert(ivd, slice(None))
        vec = ind[tuple(iv)]
        start = [0] * ops[0].ndim
        for k, d in enumerate(to_operand):
            start[d] = int(vec[k])
        if any(start[d] < 0 or start[d] + wsize[d] > ops[0].shape[d] for d in range(ops[0].ndim)):
            continue
        for w in itertools.product(*[range(n) for n in wshape]):
            at, kw = [], 0
            for d in range(ops[0].ndim):
                if d in inserted:
                    at.append(start[d])
                else:
                    at.append(start[d] + w[kw])
                    kw += 1
            ui, ks, kw = [], 0, 0
            for d in range(u.ndim):
                if d in window_dims:
                    ui.append(w[kw])
                    kw += 1
                else:
                    ui.append(sp[ks])
                    ks += 1
            new = combine([o[tuple(at)] for o in outs], [x[tuple(ui)] for x in upds])
            for o, v in zip(outs, new):
                o[tuple(at)] = v
    return outs


def attrs(window_dims, inserted, to_operand, ivd):
    return "update_window_dims=%s, inserted_window_dims=%s, scatter_dims_to_operand_dims=%s, index_vector_dim=%d" % (
        lst(window_dims), lst(inserted), lst(to_operand), ivd)


COMB = """
comb {
  a = %(t)s[] parameter(0)
  b = %(t)s[] parameter(1)
  ROOT c = %(t)s[] %(op)s(a, b)
}
"""


def simple(name, op, ind, upd, window_dims, inserted, to_operand, ivd, comb="add"):
    f = {"add": lambda a, b: [a[0] + b[0]], "maximum": lambda a, b: [max(a[0], b[0])]}[comb]
    e = scatter_ref([op], ind, [upd], window_dims, inserted, to_operand, ivd, f)[0]
    body = COMB % {"t": TYPE[op.dtype], "op": comb}
    hlo = "HloModule scatter_%s\n%s\nENTRY main {\n  o = %s parameter(0)\n  i = %s parameter(1)\n  u = %s parameter(2)\n" \
          "  ROOT s = %s scatter(o, i, u), %s, to_apply=comb\n}\n" % (
              name, body, t(op), t(ind), t(upd), t(op), attrs(window_dims, inserted, to_operand, ivd))
    write_case(os.path.join(HERE, "scatter_" + name), "testdata/golden/make_scatter.py", hlo, [op, ind, upd], [e],
               {"exact": True})


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


if __name__ == "__main__":
    # rows into an intermediate that dies at the scatter: updated in place
    tab, upd = f32(40, 24), f32(30, 24)
    ind = RNG.integers(-2, 43, size=(30, 1)).astype(np.int32)
    ind[5] = ind[3] = ind[17]  # duplicates apply in order
    d = (tab * tab).astype(np.float32)
    s = scatter_ref([d], ind, [upd], [1], [0], [0], 1, lambda a, b: [np.float32(a[0] + b[0])])[0]
    hlo = "HloModule scatter_in_place_rows\n%s\nENTRY main {\n  t = f32[40,24] parameter(0)\n  i = s32[30,1] parameter(1)\n" \
          "  u = f32[30,24] parameter(2)\n  d = f32[40,24] multiply(t, t)\n" \
          "  s = f32[40,24] scatter(d, i, u), %s, to_apply=comb\n  ROOT r = f32[40,24] add(s, t)\n}\n" % (
              COMB % {"t": "f32", "op": "add"}, attrs([1], [0], [0], 1))
    write_case(os.path.join(HERE, "scatter_in_place_rows"), "testdata/golden/make_scatter.py", hlo, [tab, ind, upd],
               [(s + tab).astype(np.float32)], {"exact": True})
    # the update's window dimension first: u[w, n] goes to operand row ind[n]
    simple("window_dim_first", f32(6, 10), np.array([4, 1, 4, 7, 0], dtype=np.int32), f32(10, 5), [0], [0], [0], 1)
    # overlapping windows along the windowed dimension, the last one out of range (skipped)
    simple("overlapping_windows", f32(12), np.array([[0], [2], [3], [9]], dtype=np.int32), f32(4, 4), [1], [], [0], 1)
    # two index components (index vector first), s32 maximum
    op = RNG.integers(-50, 50, size=(8, 9, 4)).astype(np.int32)
    ind = RNG.integers(0, 9, size=(2, 7)).astype(np.int32)
    simple("two_components_max_s32", op, ind, RNG.integers(-60, 60, size=(7, 4)).astype(np.int32), [1], [0, 1],
           [0, 1], 0, comb="maximum")
    # two operands: a tuple result
    a, b = f32(10, 6), RNG.integers(-9, 9, size=(10, 6)).astype(np.int32)
    ind = np.array([[3], [3], [8], [0], [11]], dtype=np.int32)
    ua, ub = f32(5, 6), RNG.integers(-9, 9, size=(5, 6)).astype(np.int32)
    ea, eb = scatter_ref([a, b], ind, [ua, ub], [1], [0], [0], 1,
                         lambda x, y: [np.float32(x[0] + y[0]), np.int32(x[1] * y[1])])
    hlo = """HloModule scatter_two_operands

comb {
  a0 = f32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  s = f32[] add(a0, b0)
  m = s32[] multiply(a1, b1)
  ROOT r = (f32[], s32[]) tuple(s, m)
}

ENTRY main {
  a = f32[10,6] parameter(0)
  b = s32[10,6] parameter(1)
  i = s32[5,1] parameter(2)
  ua = f32[5,6] parameter(3)
  ub = s32[5,6] parameter(4)
  ROOT s = (f32[10,6], s32[10,6]) scatter(a, b, i, ua, ub), %s, to_apply=comb
}
""" % attrs([1], [0], [0], 1)
    write_case(os.path.join(HERE, "scatter_two_operands"), "testdata/golden/make_scatter.py", hlo,
               [a, b, ind, ua, ub], [ea, eb], {"exact": True})
