"""Error paths: every failure is an hloc.Error with the C status code and a message naming
what is wrong — bad HLO text (hloc's file:line:col diagnostics), wrong argument count, shape
or dtype, a run-time failure inside the model (an hlo_status), a missing compiler or model."""
import os
import re

import numpy as np
import pytest

import hloc
from conftest import REPO

BAD = """HloModule bad
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[4,5] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


def test_bad_text_gives_file_line_col():
    with pytest.raises(hloc.Error) as e:
        hloc.compile(BAD)
    assert e.value.code == 1 and e.value.code_name == "INVALID_ARGUMENT"
    assert re.search(r"^input\.hlo:5:\d+: error: .*contracting dimension", str(e.value), re.M), str(e.value)
    assert "^" in str(e.value)  # the caret under the column


def test_bad_file_names_the_file(tmp_path):
    p = tmp_path / "bad.hlo"
    p.write_text("HloModule x\nENTRY main {\n  ROOT a = f32[2] parameter(0\n}\n")
    with pytest.raises(hloc.Error) as e:
        hloc.compile(p)
    assert re.search(re.escape(str(p)) + r":\d+:\d+: error:", str(e.value)), str(e.value)


def test_wrong_number_of_arguments(add4):
    with pytest.raises(hloc.Error, match=r"add4 expects 2 arguments \(a: f32\[4\], b: f32\[4\]\), got 1") as e:
        add4(np.ones(4, np.float32))
    assert e.value.code == 1 and isinstance(e.value, ValueError)
    with pytest.raises(hloc.ArgumentError, match="got 3"):
        add4(*[np.ones(4, np.float32)] * 3)


def test_wrong_shape(add4):
    with pytest.raises(hloc.ArgumentError, match=r"parameter 1 \(b\) expects f32\[4\], got f32\[5\]"):
        add4(np.ones(4, np.float32), np.ones(5, np.float32))
    with pytest.raises(hloc.ArgumentError, match=r"expects f32\[4\], got f32\[2,2\]"):
        add4(np.ones((2, 2), np.float32), np.ones(4, np.float32))


def test_wrong_dtype(add4):
    with pytest.raises(hloc.ArgumentError, match=r"parameter 0 \(a\) expects f32\[4\], got f64\[4\]"):
        add4(np.ones(4), np.ones(4, np.float32))
    with pytest.raises(hloc.ArgumentError, match=r"expects f32\[4\], got s32\[4\]"):
        add4(np.ones(4, np.int32), np.ones(4, np.float32))
    with pytest.raises(hloc.ArgumentError, match=r"expects f32\[4\]"):
        add4(["x", "y", "z", "w"], np.ones(4, np.float32))


INFEED = """HloModule infeed_empty
ENTRY main {
  tok = token[] after-all()
  in = (f32[3], token[]) infeed(tok)
  ROOT x = f32[3] get-tuple-element(in), index=0
}
"""


def test_runtime_failure_is_an_error_with_the_status_code():
    """The model returns an hlo_status (the infeed queue is empty): code and message reach
    Python and the record is freed."""
    m = hloc.compile(INFEED)
    for _ in range(3):
        with pytest.raises(hloc.Error) as e:
            m()
        assert e.value.code_name == "FAILED_PRECONDITION", repr(e.value)
        assert "infeed_empty: " in str(e.value) and "infeed" in str(e.value) and "empty" in str(e.value)


def test_no_compiler(monkeypatch):
    monkeypatch.setenv("HLOC_PREFIX", "/nonexistent-prefix")
    with pytest.raises(hloc.Error, match="cannot find the hloc compiler.*HLOC_PREFIX") as e:
        hloc.compile(BAD + "// no compiler\n")
    assert e.value.code_name == "NOT_FOUND"


def test_load_errors(tmp_path):
    with pytest.raises(hloc.Error, match="cannot load the model") as e:
        hloc.load(tmp_path / "missing.so")
    assert e.value.code_name == "NOT_FOUND"
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    if os.path.exists(libc):
        with pytest.raises(hloc.Error, match="not a model built by hloc"):
            hloc.load(libc)


def test_compile_option_errors():
    with pytest.raises(hloc.Error, match="opt must be"):
        hloc.compile(os.path.join(REPO, "testdata", "examples", "mlp.hlo"), opt=7)
    with pytest.raises(hloc.Error, match="target"):
        hloc.compile(os.path.join(REPO, "testdata", "examples", "mlp.hlo"), target_cpu="no-such-cpu")
    with pytest.raises(TypeError):
        hloc.compile(42)
