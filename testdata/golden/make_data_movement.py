#!/usr/bin/python3
"""Generates the golden cases of data movement lowered as block copies and index carry-over
(issue 18), under testdata/golden/move_<case>/ (model.hlo + in<i>.npy + expected<i>.npy +
tol.json + GENERATOR), as make.py does for the other cases; it writes only its own folders.

What they pin down:
- concatenate (compiler/codegen/data.c): every operand is copied as whole blocks, along the
  outer, a middle and the minor dimension, with more operands than a fusion takes (so the
  concatenate is lowered on its own), with an operand empty along the dimension, for f32, s8,
  pred and bf16;
- values that are only moved keep their bits: bf16 signalling NaNs with payloads go through a
  concatenate, a reshape and a dynamic-slice unchanged (compared as uint16 bits, exactly);
- reshape inside a fusion (compiler/codegen/fused.c same_linear_value): shapes that share
  their minor dimensions, shapes that share none, unit dimensions added and removed, and the
  real-dump pattern of dynamic slices reshaped and stacked.

Expected values are numpy formulas (np.concatenate, reshape, slicing) -- never hlorun's output.

Run:  /usr/bin/python3 testdata/golden/make_data_movement.py
"""
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(23)
NAN_BITS = np.array([0x7F81, 0xFF82, 0x7FC0, 0x7FA5, 0xFFFF, 0x7F80, 0x0001, 0x8000], dtype=np.uint16)


def case(name, hlo, inputs, expected):
    write_case(os.path.join(HERE, "move_" + name), "testdata/golden/make_data_movement.py",
               hlo, inputs, expected, {})


TYPE = {np.float32: "f32", np.int8: "s8", np.bool_: "pred", np.uint16: "bf16", np.int32: "s32"}


def shape(dt, dims):
    layout = "{%s}" % ",".join(str(i) for i in reversed(range(len(dims)))) if dims else ""
    return "%s[%s]%s" % (TYPE[dt], ",".join(str(d) for d in dims), layout)


def values(dt, dims):
    if dt == np.float32:
        return RNG.uniform(-4, 4, dims).astype(np.float32)
    if dt == np.bool_:
        return RNG.integers(0, 2, dims).astype(np.bool_)
    if dt == np.uint16:  # bf16 bits: ordinary values with NaN payloads and odd bits mixed in
        bits = RNG.integers(0, 1 << 16, dims).astype(np.uint16)
        flat = bits.reshape(-1)
        flat[::3] = NAN_BITS[np.arange(flat[::3].size) % NAN_BITS.size]
        return bits
    return RNG.integers(-128, 128, dims).astype(dt)


def concat_case(name, dt, dims_list, dim):
    ins = [values(dt, d) for d in dims_list]
    out = np.concatenate(ins, axis=dim)
    params = ["  p%d = %s parameter(%d)" % (i, shape(dt, list(d)), i) for i, d in enumerate(dims_list)]
    hlo = "HloModule move_%s\n\nENTRY main {\n%s\n  ROOT r = %s concatenate(%s), dimensions={%d}\n}\n" % (
        name, "\n".join(params), shape(dt, list(out.shape)),
        ", ".join("p%d" % i for i in range(len(ins))), dim)
    case(name, hlo, ins, [out])


def concat_cases():
    concat_case("concat_outer_f32", np.float32, [(2, 3, 5), (4, 3, 5), (1, 3, 5)], 0)
    concat_case("concat_middle_f32", np.float32, [(3, 2, 5), (3, 4, 5), (3, 1, 5)], 1)
    concat_case("concat_minor_s8", np.int8, [(3, 2, 2), (3, 2, 7), (3, 2, 1)], 2)
    concat_case("concat_empty_operand_pred", np.bool_, [(4, 3), (4, 0), (4, 5)], 1)
    concat_case("concat_nan_bits_bf16", np.uint16, [(3, 2, 4), (3, 5, 4), (3, 1, 4)], 1)
    # More operands than a fusion takes (passes.h FUSION_KERNEL_MAX_CONCAT_OPERANDS).
    dims = [(2, 1 + (k % 3), 6) for k in range(40)]
    concat_case("concat_40_operands_f32", np.float32, dims, 1)


def fused_reshape_cases():
    # Shares the minor dimension (k = 1), shares none (k = 0), unit dimensions in and out; the
    # add keeps each reshape inside a kLoop fusion.
    for name, src, dst in (("minor_shared", (2, 3, 4), (6, 4)), ("none_shared", (2, 3, 4), (4, 6)),
                           ("unit_dims", (1, 5, 8), (5, 1, 1, 8)), ("split_minor", (3, 8), (3, 2, 4))):
        x = values(np.float32, src)
        y = values(np.float32, dst)
        hlo = ("HloModule move_reshape_%s\n\nENTRY main {\n  x = %s parameter(0)\n  y = %s parameter(1)\n"
               "  n = %s negate(x)\n  r = %s reshape(n)\n  ROOT s = %s add(r, y)\n}\n") % (
            name, shape(np.float32, list(src)), shape(np.float32, list(dst)), shape(np.float32, list(src)),
            shape(np.float32, list(dst)), shape(np.float32, list(dst)))
        case("reshape_" + name + "_f32", hlo, [x, y], [(-x).reshape(dst) + y])


def stacked_slices_case():
    """The real-dump pattern (../shared/models/dynamic_slice_loop_*): dynamic slices of rows,
    each reshaped to a leading unit dimension, stacked by a concatenate; bf16 with NaN bits."""
    rows, width, take, n = 16, 8, 4, 5
    x = values(np.uint16, (1, rows, width))
    offs = np.array([0, 3, -2, 14, 7], dtype=np.int32)  # -2: wraps as the dump does; 14: clamped
    lines = ["  x = %s parameter(0)" % shape(np.uint16, [1, rows, width]),
             "  o = s32[%d]{0} parameter(1)" % n, "  zero = s32[] constant(0)",
             "  len = s32[] constant(%d)" % rows]
    parts, want = [], []
    for k in range(n):
        lines += ["  s%d = s32[1]{0} slice(o), slice={[%d:%d]}" % (k, k, k + 1),
                  "  q%d = s32[] reshape(s%d)" % (k, k),
                  "  neg%d = pred[] compare(q%d, zero), direction=LT" % (k, k),
                  "  w%d = s32[] add(q%d, len)" % (k, k),
                  "  i%d = s32[] select(neg%d, w%d, q%d)" % (k, k, k, k),
                  "  d%d = %s dynamic-slice(x, zero, i%d, zero), dynamic_slice_sizes={1,%d,%d}" % (
                      k, shape(np.uint16, [1, take, width]), k, take, width),
                  "  t%d = %s reshape(d%d)" % (k, shape(np.uint16, [1, 1, take, width]), k)]
        parts.append("t%d" % k)
        start = offs[k] + rows if offs[k] < 0 else offs[k]
        start = min(max(start, 0), rows - take)
        want.append(x[:, start:start + take, :].reshape(1, 1, take, width))
    lines.append("  ROOT r = %s concatenate(%s), dimensions={0}" % (
        shape(np.uint16, [n, 1, take, width]), ", ".join(parts)))
    hlo = "HloModule move_stacked_slices\n\nENTRY main {\n%s\n}\n" % "\n".join(lines)
    case("stacked_dynamic_slices_bf16", hlo, [x, offs], [np.concatenate(want, axis=0)])


def main():
    concat_cases()
    fused_reshape_cases()
    stacked_slices_case()
    print("wrote the move_* cases")


if __name__ == "__main__":
    main()
