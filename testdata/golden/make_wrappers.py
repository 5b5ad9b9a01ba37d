#!/usr/bin/python3
"""Generates the golden cases of the ops that wrap a computation or a copy: scan, the async
wrappers (async-start/-update/-done, call-start/-update/-done, late-bound operands) and
copy-start/copy-done, under testdata/golden/<case>/ (model.hlo + in<i>.npy + expected<i>.npy
+ tol.json), as make.py does for the other cases.  It writes only its own case folders.

Expected values are numpy formulas written here (scan: np.cumsum and explicit recurrences;
async/copy: the value of the wrapped computation, which they must equal) -- never hlorun's
output.  Where the module text is XLA's own, the comment above it names its source; XLA's
scan semantics (inputs first, the last num_carries operands are the initial carries; the body
takes (input slices..., carries...) and returns (outputs..., carries...); the result is
(outputs stacked along the scanned dimension..., final carries...)) are read from the scan
modules of XLA's own tests (ScanRewriter, TilingSpace, BFloat16Propagation tests).

Run:  /usr/bin/python3 testdata/golden/make_wrappers.py
"""
import os

import numpy as np

from golden_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20261124)


def case(name, hlo, inputs, expected, tol=None):
    write_case(os.path.join(HERE, name), "testdata/golden/make_wrappers.py", hlo, inputs, expected, tol)


# ---- scan -------------------------------------------------------------------------------------
def scan_cases():
    add_body = """
%add_float (x: f32[], c: f32[]) -> (f32[], f32[]) {
  %x = f32[] parameter(0)
  %c = f32[] parameter(1)
  %add = f32[] add(%x, %c)
  ROOT %tuple = (f32[], f32[]) tuple(%add, %add)
}
"""
    x = RNG.integers(-8, 9, size=9).astype(np.float32)
    init = np.float32(3)
    for rev in (False, True):
        name = "scan_cumsum_reverse_f32" if rev else "scan_cumsum_f32"
        hlo = """HloModule %s
%s
ENTRY %%main (p0: f32[9], p1: f32[]) -> (f32[9], f32[]) {
  %%p0 = f32[9]{0} parameter(0)
  %%p1 = f32[] parameter(1)
  ROOT %%scan = (f32[9]{0}, f32[]) scan(%%p0, %%p1), dimensions={0}, num_carries=1, is_reverse=%s, to_apply=%%add_float
}
""" % (name, add_body, "true" if rev else "false")
        ys = (np.cumsum(x[::-1])[::-1] if rev else np.cumsum(x)) + init
        carry = ys[0] if rev else ys[-1]
        case(name, hlo, [x, np.array(init)], [ys.astype(np.float32), np.array(carry, np.float32)])

    # Rows of a matrix accumulated into a vector carry (the shape of XLA's BFloat16Propagation
    # test PropagateThroughAssociativeScanIntoDot: f32[3,4,4] scanned into f32[4,4]).
    hlo = """HloModule scan_matrix_carry_f32

%combine (slice: f32[4,4], carry: f32[4,4]) -> (f32[4,4], f32[4,4]) {
  %slice = f32[4,4]{1,0} parameter(0)
  %carry = f32[4,4]{1,0} parameter(1)
  %add = f32[4,4]{1,0} add(%slice, %carry)
  ROOT %tup = (f32[4,4]{1,0}, f32[4,4]{1,0}) tuple(%add, %add)
}

ENTRY %main (p0: f32[3,4,4]) -> (f32[3,4,4], f32[4,4]) {
  %p0 = f32[3,4,4]{2,1,0} parameter(0)
  %zero = f32[] constant(0)
  %init = f32[4,4]{1,0} broadcast(%zero), dimensions={}
  ROOT %scan = (f32[3,4,4]{2,1,0}, f32[4,4]{1,0}) scan(%p0, %init), dimensions={0}, num_carries=1, is_associative=true, to_apply=%combine
}
"""
    a = RNG.standard_normal((3, 4, 4)).astype(np.float32)
    cs = np.cumsum(a, axis=0, dtype=np.float32)
    case("scan_matrix_carry_f32", hlo, [a], [cs, cs[-1]], {"rtol": 1e-6, "atol": 1e-6})

    # Two inputs scanned along dimension 1, two carries of different types, two outputs:
    # s' = s + x, m' = max(m, y), outputs (s' * y, m' - x).
    hlo = """HloModule scan_dim1_two_carries_s32

%step (x: s32[2], y: s32[2], s: s32[2], m: s32[2]) -> (s32[2], s32[2], s32[2], s32[2]) {
  %x = s32[2]{0} parameter(0)
  %y = s32[2]{0} parameter(1)
  %s = s32[2]{0} parameter(2)
  %m = s32[2]{0} parameter(3)
  %s1 = s32[2]{0} add(%s, %x)
  %m1 = s32[2]{0} maximum(%m, %y)
  %o1 = s32[2]{0} multiply(%s1, %y)
  %o2 = s32[2]{0} subtract(%m1, %x)
  ROOT %t = (s32[2]{0}, s32[2]{0}, s32[2]{0}, s32[2]{0}) tuple(%o1, %o2, %s1, %m1)
}

ENTRY %main (p0: s32[2,5], p1: s32[2,5], p2: s32[2], p3: s32[2]) -> (s32[2,5], s32[2,5], s32[2], s32[2]) {
  %p0 = s32[2,5]{1,0} parameter(0)
  %p1 = s32[2,5]{1,0} parameter(1)
  %p2 = s32[2]{0} parameter(2)
  %p3 = s32[2]{0} parameter(3)
  ROOT %scan = (s32[2,5]{1,0}, s32[2,5]{1,0}, s32[2]{0}, s32[2]{0}) scan(%p0, %p1, %p2, %p3), dimensions={1}, num_carries=2, to_apply=%step
}
"""
    xs = RNG.integers(-9, 10, size=(2, 5)).astype(np.int32)
    ysin = RNG.integers(-9, 10, size=(2, 5)).astype(np.int32)
    s = np.array([1, -2], np.int32)
    m = np.array([-100, 4], np.int32)
    o1 = np.zeros((2, 5), np.int32)
    o2 = np.zeros((2, 5), np.int32)
    s0, m0 = s.copy(), m.copy()
    for t in range(5):
        s0 = s0 + xs[:, t]
        m0 = np.maximum(m0, ysin[:, t])
        o1[:, t] = s0 * ysin[:, t]
        o2[:, t] = m0 - xs[:, t]
    case("scan_dim1_two_carries_s32", hlo, [xs, ysin, s, m], [o1, o2, s0, m0])

    # No carries: a scan is then a map over slices (x * x along dimension 0, f64).
    hlo = """HloModule scan_no_carry_f64

%sq (x: f64[3]) -> (f64[3]) {
  %x = f64[3]{0} parameter(0)
  %m = f64[3]{0} multiply(%x, %x)
  ROOT %t = (f64[3]{0}) tuple(%m)
}

ENTRY %main (p0: f64[4,3]) -> (f64[4,3]) {
  %p0 = f64[4,3]{1,0} parameter(0)
  ROOT %scan = (f64[4,3]{1,0}) scan(%p0), dimensions={0}, num_carries=0, to_apply=%sq
}
"""
    v = RNG.standard_normal((4, 3))
    case("scan_no_carry_f64", hlo, [v], [v * v], {"rtol": 1e-15})

    # A reverse scan whose output differs from its carry: a running product from the end and
    # the input shifted by the carry (c' = c * x, y = x + c).
    hlo = """HloModule scan_reverse_prefix_product_f64

%step (x: f64[], c: f64[]) -> (f64[], f64[]) {
  %x = f64[] parameter(0)
  %c = f64[] parameter(1)
  %y = f64[] add(%x, %c)
  %c1 = f64[] multiply(%c, %x)
  ROOT %t = (f64[], f64[]) tuple(%y, %c1)
}

ENTRY %main (p0: f64[6]) -> (f64[6], f64[]) {
  %p0 = f64[6]{0} parameter(0)
  %one = f64[] constant(1)
  ROOT %scan = (f64[6]{0}, f64[]) scan(%p0, %one), dimensions={0}, num_carries=1, is_reverse=true, to_apply=%step
}
"""
    w = np.array([1.5, -2.0, 0.5, 3.0, -1.0, 2.0])
    y = np.zeros(6)
    c = 1.0
    for t in reversed(range(6)):
        y[t] = w[t] + c
        c = c * w[t]
    case("scan_reverse_prefix_product_f64", hlo, [w], [y, np.array(c)])


# ---- async wrappers and copies -------------------------------------------------------------
def async_cases():
    wrapped = """
%wrapped (a: f32[2,3], b: f32[2,3]) -> f32[2,3] {
  %a = f32[2,3]{1,0} parameter(0)
  %b = f32[2,3]{1,0} parameter(1)
  %m = f32[2,3]{1,0} multiply(%a, %b)
  ROOT %s = f32[2,3]{1,0} subtract(%m, %a)
}
"""
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    b = RNG.standard_normal((2, 3)).astype(np.float32)
    want = (a * b - a).astype(np.float32)
    tol = {"rtol": 1e-6, "atol": 1e-6}
    sig = "ENTRY %%main (p0: f32[2,3], p1: f32[2,3]) -> %s {\n  %%p0 = f32[2,3]{1,0} parameter(0)\n  %%p1 = f32[2,3]{1,0} parameter(1)\n"
    st = "((f32[2,3]{1,0}, f32[2,3]{1,0}), f32[2,3]{1,0}, s32[])"

    hlo = "HloModule async_start_update_done_f32\n" + wrapped + "\n" + sig % "f32[2,3]" + (
        "  %%s = %s async-start(%%p0, %%p1), async_execution_thread=\"parallel\", calls=%%wrapped\n"
        "  %%u = %s async-update(%%s)\n"
        "  ROOT %%d = f32[2,3]{1,0} async-done(%%u)\n}\n") % (st, st)
    case("async_start_update_done_f32", hlo, [a, b], [want], tol)

    # The sugared form XLA prints with xla_syntax_sugar_async_ops (call-start ... to_apply=).
    hlo = "HloModule call_start_done_f32\n" + wrapped + "\n" + sig % "(f32[2,3], f32[2,3])" + (
        "  %%cs = %s call-start(%%p0, %%p1), to_apply=%%wrapped\n"
        "  %%cu = %s call-update(%%cs)\n"
        "  %%cd = f32[2,3]{1,0} call-done(%%cu)\n"
        "  %%plain = f32[2,3]{1,0} call(%%p0, %%p1), to_apply=%%wrapped\n"
        "  ROOT %%t = (f32[2,3]{1,0}, f32[2,3]{1,0}) tuple(%%cd, %%plain)\n}\n") % (st, st)
    case("call_start_done_f32", hlo, [a, b], [want, want], tol)

    # Late binding (XLA's async HLO documentation): nothing bound at call-start, both operands
    # bound at call-update, the output bound at call-done.
    hlo = "HloModule call_start_late_binding_f32\n" + wrapped + "\n" + sig % "f32[2,3]" + (
        "  %cs = ((), (), s32[]) call-start(), to_apply=%wrapped\n"
        "  %%cu = ((f32[2,3]{1,0}, f32[2,3]{1,0}), (), s32[]) call-update(%%cs, %%p0, %%p1)\n"
        "  ROOT %%cd = f32[2,3]{1,0} call-done(%%cu)\n}\n").replace("%%", "%")
    case("call_start_late_binding_f32", hlo, [a, b], [want], tol)

    # The first operand bound at async-start, the second at async-update, which also binds
    # the output (the result slot of the start is still ()).
    hlo = "HloModule async_update_binds_operand_f32\n" + wrapped + "\n" + sig % "f32[2,3]" + (
        "  %s = ((f32[2,3]{1,0}), (), s32[]) async-start(%p0), calls=%wrapped\n"
        "  %u = ((f32[2,3]{1,0}, f32[2,3]{1,0}), f32[2,3]{1,0}, s32[]) async-update(%s, %p1)\n"
        "  ROOT %d = f32[2,3]{1,0} async-done(%u)\n}\n")
    case("async_update_binds_operand_f32", hlo, [a, b], [want], tol)

    # Compact dot-start/-update/-done (XLA's parser builds the wrapped computation from the
    # start's attributes): a batched product with a transposed right-hand side.
    hlo = """HloModule dot_start_done_f32

ENTRY %main (p0: f32[2,3,4], p1: f32[2,5,4]) -> f32[2,3,5] {
  %p0 = f32[2,3,4]{2,1,0} parameter(0)
  %p1 = f32[2,5,4]{2,1,0} parameter(1)
  %ds = ((f32[2,3,4]{2,1,0}, f32[2,5,4]{2,1,0}), f32[2,3,5]{2,1,0}, s32[]) dot-start(%p0, %p1), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  %du = ((f32[2,3,4]{2,1,0}, f32[2,5,4]{2,1,0}), f32[2,3,5]{2,1,0}, s32[]) dot-update(%ds)
  ROOT %dd = f32[2,3,5]{2,1,0} dot-done(%du)
}
"""
    l = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    r = RNG.standard_normal((2, 5, 4)).astype(np.float32)
    case("dot_start_done_f32", hlo, [l, r], [np.einsum("bik,bjk->bij", l, r).astype(np.float32)],
         {"rtol": 1e-5, "atol": 1e-5})

    # copy-start/copy-done: the destination equals the source (s8 and a tuple of results).
    hlo = """HloModule copy_start_done_s8

ENTRY %main (p0: s8[5]) -> (s8[5], s8[5]) {
  %p0 = s8[5]{0} parameter(0)
  %cs = (s8[5]{0}, s8[5]{0}, u32[]) copy-start(%p0), cross_program_prefetch_index=0
  %cd = s8[5]{0} copy-done(%cs)
  %n = s8[5]{0} negate(%cd)
  ROOT %t = (s8[5]{0}, s8[5]{0}) tuple(%cd, %n)
}
"""
    v = np.array([1, -2, 127, -128, 0], np.int8)
    case("copy_start_done_s8", hlo, [v], [v, (-v.astype(np.int16)).astype(np.int8)])


def main():
    scan_cases()
    async_cases()
    print("wrote the scan/async/copy cases")


if __name__ == "__main__":
    main()
