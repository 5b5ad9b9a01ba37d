#!/usr/bin/python3
"""Generates the golden cases of gather as a loop kernel (compiler/codegen/fused.c
`gather_value`).  Cases under testdata/golden/gather_<case>/ (model.hlo + in<i>.npy +
expected<i>.npy + tol.json), as make.py writes its cases.

Expected values come from a direct Python loop over the semantics document's gather: for each
result index, the batch dimensions pick an index vector, its components (by start_index_map)
give the slice start, clamped so that the slice fits the operand, the offset dimensions add
the position inside the slice, collapsed dimensions add nothing, operand batching dimensions
take the matching indices batching dimension -- never hlorun's output.  They cover: an
embedding lookup with indices past both ends (clamped), 2-component index vectors into a
3-D operand with the index vector dimension in the middle of the indices, an implicit
trailing index vector dimension, an offset dimension before the batch dimension, operand
batching dimensions, u8 and s64 indices, and a bf16 operand.

Run:  /usr/bin/python3 testdata/golden/make_gather.py
"""
import itertools
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(41)
HLO_TYPE = {np.float32: "f32", np.int32: "s32", np.int64: "s64", np.uint8: "u8", np.uint16: "bf16"}


def gather_ref(op, ind, offset_dims, collapsed, start_map, ivd, sizes, op_batch=(), ind_batch=()):
    ind_shape = list(ind.shape)
    if ivd == ind.ndim:
        ind = ind[..., None]
        ind_shape.append(1)
    batch_shape = [ind_shape[d] for d in range(len(ind_shape)) if d != ivd]
    offset_sizes = [sizes[d] for d in range(op.ndim) if d not in collapsed and d not in op_batch]
    rank = len(batch_shape) + len(offset_sizes)
    out_shape, bi, oi = [], 0, 0
    for d in range(rank):
        if d in offset_dims:
            out_shape.append(offset_sizes[oi])
            oi += 1
        else:
            out_shape.append(batch_shape[bi])
            bi += 1
    out = np.zeros(out_shape, dtype=op.dtype)
    for o in itertools.product(*[range(n) for n in out_shape]):
        batch = [o[d] for d in range(rank) if d not in offset_dims]
        offs = [o[d] for d in range(rank) if d in offset_dims]
        full = list(batch)
        full.insert(ivd, 0)
        src, ko = [], 0
        for d in range(op.ndim):
            start = 0
            if d in start_map:
                full[ivd] = start_map.index(d)
                start = int(ind[tuple(full)])
                start = min(max(start, 0), max(op.shape[d] - sizes[d], 0))
            if d in op_batch:
                idim = ind_batch[op_batch.index(d)]
                src.append(batch[idim - (1 if idim > ivd else 0)])
            elif d in collapsed:
                src.append(start)
            else:
                src.append(start + offs[ko])
                ko += 1
        out[o] = op[tuple(src)]
    return out


def lst(v):
    return "{%s}" % ",".join(map(str, v))


def gather_case(name, op, ind, offset_dims, collapsed, start_map, ivd, sizes, op_batch=(), ind_batch=(), tol=None):
    e = gather_ref(op, ind, list(offset_dims), list(collapsed), list(start_map), ivd, list(sizes), list(op_batch),
                   list(ind_batch))
    t = lambda a: "%s[%s]" % (HLO_TYPE[a.dtype.type], ",".join(map(str, a.shape)))
    attrs = "offset_dims=%s, collapsed_slice_dims=%s, start_index_map=%s, index_vector_dim=%d, slice_sizes=%s" % (
        lst(offset_dims), lst(collapsed), lst(start_map), ivd, lst(sizes))
    if op_batch:
        attrs += ", operand_batching_dims=%s, start_indices_batching_dims=%s" % (lst(op_batch), lst(ind_batch))
    body = "  o = %s parameter(0)\n  i = %s parameter(1)\n  ROOT g = %s gather(o, i), %s\n" % (t(op), t(ind), t(e), attrs)
    hlo = "HloModule gather_%s\n\nENTRY main {\n%s}\n" % (name, body)
    write_case(os.path.join(HERE, "gather_" + name), "testdata/golden/make_gather.py", hlo, [op, ind], [e],
               tol or {"exact": True})


if __name__ == "__main__":
    table = RNG.standard_normal((50, 33)).astype(np.float32)
    ids = RNG.integers(-3, 53, size=(7, 5, 1)).astype(np.int32)
    gather_case("embedding_clamped", table, ids, [2], [0], [0], 2, [1, 33])
    op = RNG.standard_normal((6, 5, 9)).astype(np.float32)
    ind = RNG.integers(-1, 9, size=(4, 2, 3)).astype(np.int32)
    gather_case("two_components_middle_ivd", op, ind, [2, 3], [1], [0, 2], 1, [2, 1, 3])
    ind = RNG.integers(0, 50, size=(12,)).astype(np.int64)
    gather_case("implicit_ivd_s64", table, ind, [1], [0], [0], 1, [1, 20])
    ind = RNG.integers(0, 40, size=(6, 1)).astype(np.uint8)
    gather_case("offset_first_u8", table, ind, [0], [0], [0], 1, [1, 33])
    op = RNG.standard_normal((3, 10, 4)).astype(np.float32)
    ind = RNG.integers(0, 10, size=(3, 5, 1)).astype(np.int32)
    gather_case("batching_dims", op, ind, [2], [1], [1], 2, [1, 1, 4], op_batch=[0], ind_batch=[0])
    bits = RNG.integers(0, 1 << 16, size=(20, 16)).astype(np.uint16)
    ind = RNG.integers(0, 20, size=(9, 1)).astype(np.int32)
    gather_case("rows_bf16", bits, ind, [1], [0], [0], 1, [1, 16])
