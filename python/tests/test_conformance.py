"""Conformance cases of ../shared/conformance run through the Python API: the inputs as
numpy arrays, every result leaf compared with expected<i>.npy by the suite's own checker
(tools/casecheck.py, the case's meta.json tolerance).  The handful covers bf16 (raw uint16
bits, or ml_dtypes.bfloat16 when installed), a tuple result, a scalar s32 result, f64, s32,
pred and complex128."""
import json
import os
import sys

import numpy as np
import pytest

import hloc
from conftest import CASES

SELECTED = [
    "add_any_bfloat16_2_bfloat16_2",  # bf16 in and out, two parameters
    "abs_bfloat16_20_20",  # bf16
    "interp_optimization_barrier__optimization_barrier_op_test",  # tuple result of two leaves
    "argmax_float32_1",  # s32[] result through a variadic reduce
    "add_float64_20_20_float64_20_20",
    "concatenate_int32_2_3_int32_2_3",
    "argmin_bool_15",  # pred input
    "dot_general_float16_4_3_complex128_3_6",  # f16 x c128
]


def _casecheck():
    tools = os.path.join(os.path.dirname(CASES), "tools")
    if tools not in sys.path:
        sys.path.insert(0, tools)
    import casecheck
    return casecheck


@pytest.mark.parametrize("name", SELECTED)
def test_conformance_case(name):
    case = os.path.join(CASES, name)
    if not os.path.isdir(case):
        pytest.skip("%s is not in %s" % (name, CASES))
    with open(os.path.join(case, "meta.json")) as f:
        meta = json.load(f)
    m = hloc.compile(os.path.join(case, "model.hlo"))
    inputs = [np.load(os.path.join(case, i["file"])) for i in meta["inputs"]]
    assert len(m.signature.params) == len(inputs)
    got = m(*inputs)
    if not isinstance(got, tuple):
        got = (got,)
    assert len(got) == len(meta["outputs"]) == len(m.signature.results)
    check = _casecheck()
    for k, (g, o) in enumerate(zip(got, meta["outputs"])):
        leaf = m.signature.results[k]
        assert leaf.shape == tuple(o["shape"]) and leaf.hlo_type == o["dtype"]
        assert g.shape == tuple(o["shape"])
        if o["dtype"] == "bf16" and g.dtype != np.uint16:
            g = g.view(np.uint16)  # ml_dtypes.bfloat16 -> the suite's raw storage
        ok, reason, _ = check.compare(g, np.load(os.path.join(case, o["file"])), o["dtype"], o["compare"])
        assert ok, "%s result %d: %s" % (name, k, reason)


def test_bf16_takes_ml_dtypes_when_installed():
    ml = pytest.importorskip("ml_dtypes")
    case = os.path.join(CASES, "add_any_bfloat16_2_bfloat16_2")
    if not os.path.isdir(case):
        pytest.skip("no conformance cases")
    m = hloc.compile(os.path.join(case, "model.hlo"))
    assert m.signature.params[0].dtype == np.dtype(ml.bfloat16)
    a = np.array([1.5, -2.0], ml.bfloat16)
    y = m(a, a)
    assert y.dtype == np.dtype(ml.bfloat16) and y.astype(np.float32).tolist() == [3.0, -4.0]
    # Raw bits are accepted too.
    assert m(a.view(np.uint16), a.view(np.uint16)).astype(np.float32).tolist() == [3.0, -4.0]


def test_bf16_raw_bits_without_ml_dtypes():
    case = os.path.join(CASES, "add_any_bfloat16_2_bfloat16_2")
    if not os.path.isdir(case):
        pytest.skip("no conformance cases")
    m = hloc.compile(os.path.join(case, "model.hlo"))
    bits = (np.array([1.5, -2.0], np.float32).view(np.uint32) >> 16).astype(np.uint16)
    y = m(bits, bits)
    y = y.view(np.uint16) if y.dtype != np.uint16 else y
    assert ((y.astype(np.uint32) << 16).view(np.float32)).tolist() == [3.0, -4.0]
