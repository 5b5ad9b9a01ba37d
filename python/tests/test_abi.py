"""The ctypes mirror of the ABI (hloc/_abi.py) against the C headers: the dtype table row by
row against runtime/include/hlo/elemtypes.def, and sizeof(hlo_module_desc) against the
struct_size a compiled model reports."""
import ctypes
import os
import re

import numpy as np
import pytest

import hloc
from hloc import _abi
from conftest import REPO


def test_dtype_table_matches_elemtypes_def():
    path = os.path.join(REPO, "runtime", "include", "hlo", "elemtypes.def")
    if not os.path.exists(path):
        pytest.skip("not in the repository")
    rows = re.findall(r'^ET\(\w+, "(\w+)", \d+, (\d+), \w+, "([^"]*)"\)', open(path).read(), re.M)
    assert [r[0] for r in rows] == _abi.DTYPE_NAMES
    for code, (name, nbytes, descr) in enumerate(rows):
        res, accept = _abi.numpy_dtypes(code)
        if not descr:
            assert res is None, name
            continue
        storage = np.dtype(descr)
        assert storage in accept and res.itemsize == int(nbytes), name


def test_abi_version_header():
    text = open(os.path.join(REPO, "runtime", "include", "hlo", "abi.h")).read()
    assert "#define HLO_ABI_VERSION %d" % _abi.HLO_ABI_VERSION in text


def test_descriptor_size_matches_the_model(add4):
    assert add4._desc.struct_size == ctypes.sizeof(_abi.ModuleDesc)
    assert add4._desc.abi_version == _abi.HLO_ABI_VERSION


def test_status_codes_match_status_h():
    text = open(os.path.join(REPO, "runtime", "include", "hlo", "status.h")).read()
    for code, name in _abi.STATUS_CODES.items():
        assert re.search(r"HLO_%s = %d," % (name, code), text), name
