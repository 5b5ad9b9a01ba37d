"""Golden cases for inputs that look unsafe, with results the semantics document specifies
(imported by make.py; each case cites its section of ../shared/spec/xla-operation-semantics):

- Gather: each start index is a dynamic slice's start, clamped like DynamicSlice
  (start = clamp(start, 0, operand_dim - slice_size)), so out-of-range indices read the
  nearest in-range slice.
- Scatter: an update is applied only "if O is a valid index of output"; updates whose window
  falls outside the operand are skipped (XLA skips the whole window).
- Reduce: NaN and infinities flow through every reducer as IEEE arithmetic says (NaN + x = NaN,
  inf + -inf = NaN, inf * 0 = NaN); maximum and minimum propagate NaN (XLA's semantics, as
  in binary_maximum_nan_f32).
- Reduce-window max over NaN and -inf with -inf padding.
Expected values are numpy formulas written here, never hlorun's output.
"""
import numpy as np


def gather_cases(case, module):
    op = np.arange(15, dtype=np.float32).reshape(5, 3)
    idx = np.array([-2, 1, 4, 7, 2147483647, -2147483648], dtype=np.int32)
    clamped = np.clip(idx.astype(np.int64), 0, 5 - 1)
    body = ["%r = f32[6,3]{1,0} gather(%p0, %p1), offset_dims={1}, collapsed_slice_dims={0}, "
            "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}"]
    hlo = module("edge_gather_oob_clamp_f32", [(np.float32, (5, 3)), (np.int32, (6,))], body, "f32[6,3]{1,0}")
    case("edge_gather_oob_clamp_f32", hlo, [op, idx], [op[clamped].copy()])
    # a 2-row window: starts clamp to [0, 5 - 2]
    body = ["%r = f32[4,2,3]{2,1,0} gather(%p0, %p1), offset_dims={1,2}, collapsed_slice_dims={}, "
            "start_index_map={0}, index_vector_dim=1, slice_sizes={2,3}"]
    idx2 = np.array([-1, 3, 4, 100], dtype=np.int64)
    starts = np.clip(idx2, 0, 5 - 2)
    hlo = module("edge_gather_window_clamp_f32", [(np.float32, (5, 3)), (np.int64, (4,))], body, "f32[4,2,3]{2,1,0}")
    case("edge_gather_window_clamp_f32", hlo, [op, idx2], [np.stack([op[s:s + 2] for s in starts])])


ADD_S32 = """%add (a: s32[], b: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %s = s32[] add(%a, %b)
}"""


def scatter_cases(case, module_with):
    op = np.array([1, 2, 3, 4, 5], dtype=np.int32)
    idx = np.array([-1, 2, 5, 4, 2147483647], dtype=np.int32)
    upd = np.array([10, 20, 30, 40, 50], dtype=np.int32)
    exp = op.copy()
    for i, u in zip(idx.tolist(), upd.tolist()):
        if 0 <= i < 5:
            exp[i] += u
    body = ["%r = s32[5]{0} scatter(%p0, %p1, %p2), update_window_dims={}, inserted_window_dims={0}, "
            "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add"]
    hlo = module_with("edge_scatter_oob_skip_s32", ADD_S32, [(np.int32, (5,)), (np.int32, (5,)), (np.int32, (5,))],
                      body, "s32[5]{0}")
    case("edge_scatter_oob_skip_s32", hlo, [op, idx, upd], [exp])
    # 2-wide windows: a window that starts at 4 would cover index 5 and is skipped whole
    op2 = np.zeros(6, dtype=np.int32)
    idx2 = np.array([0, 4, 5, -1, 3], dtype=np.int32)
    upd2 = np.array([[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]], dtype=np.int32)
    exp2 = op2.copy()
    for i, u in zip(idx2.tolist(), upd2):
        if 0 <= i and i + 2 <= 6:
            exp2[i:i + 2] += u
    body = ["%r = s32[6]{0} scatter(%p0, %p1, %p2), update_window_dims={1}, inserted_window_dims={}, "
            "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add"]
    hlo = module_with("edge_scatter_window_oob_skip_s32", ADD_S32,
                      [(np.int32, (6,)), (np.int32, (5,)), (np.int32, (5, 2))], body, "s32[6]{0}")
    case("edge_scatter_window_oob_skip_s32", hlo, [op2, idx2, upd2], [exp2])


def reducer(name, op, t="f32"):
    return """%%%s (a: %s[], b: %s[]) -> %s[] {
  %%a = %s[] parameter(0)
  %%b = %s[] parameter(1)
  ROOT %%r = %s[] %s(%%a, %%b)
}""" % (name, t, t, t, t, t, t, op)


def nan_max(a, axis):
    return np.where(np.isnan(a).any(axis=axis), np.nan, np.max(a, axis=axis))


def nan_min(a, axis):
    return np.where(np.isnan(a).any(axis=axis), np.nan, np.min(a, axis=axis))


def reduce_nan_inf_cases(case, module_with):
    inf, nan = np.inf, np.nan
    x = np.array([[1, nan, 2, 3, 4],
                  [inf, 1, 2, -inf, 0],
                  [inf, inf, 1, 2, 3],
                  [-inf, -1, -2, -3, 0],
                  [0, -0.0, 0, 5, 0],
                  [-inf, -inf, -inf, -inf, -inf]], dtype=np.float32)
    for dt, t in ((np.float32, "f32"), (np.float64, "f64")):
        xs = x.astype(dt)
        with np.errstate(invalid="ignore", over="ignore"):
            table = [("add", "0", np.sum(xs, axis=1)), ("multiply", "1", np.prod(xs, axis=1)),
                     ("maximum", "-inf", nan_max(xs, 1)), ("minimum", "inf", nan_min(xs, 1))]
        for op, init, e in table:
            n = "edge_reduce_%s_nan_inf_%s" % (op, t)
            body = ["%%init = %s[] constant(%s)" % (t, init),
                    "%%r = %s[6]{0} reduce(%%p0, %%init), dimensions={1}, to_apply=%%red" % t]
            hlo = module_with(n, reducer("red", op, t), [(dt, (6, 5))], body, "%s[6]{0}" % t)
            case(n, hlo, [xs], [e.astype(dt)])
    # reduce-window maximum, window 2 stride 1, padded with -inf on both sides
    v = np.array([nan, 1, -inf, -inf, 3, inf, 2], dtype=np.float32)
    p = np.concatenate([[-inf], v, [-inf]]).astype(np.float32)
    e = np.array([nan_max(p[i:i + 2], 0) for i in range(len(p) - 1)], dtype=np.float32)
    body = ["%init = f32[] constant(-inf)",
            "%r = f32[8]{0} reduce-window(%p0, %init), window={size=2 pad=1_1}, to_apply=%red"]
    hlo = module_with("edge_reduce_window_max_nan_inf_f32", reducer("red", "maximum"), [(np.float32, (7,))], body,
                      "f32[8]{0}")
    case("edge_reduce_window_max_nan_inf_f32", hlo, [v], [e])


def edge_cases(case, module, module_with):
    gather_cases(case, module)
    scatter_cases(case, module_with)
    reduce_nan_inf_cases(case, module_with)
