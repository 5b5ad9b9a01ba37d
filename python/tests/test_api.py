"""The package's API: compile from text, bytes or a path, load a .so, the signature, results
as numpy arrays (one or a tuple), tuple parameters as flattened leaves, a JAX-style pytree of
weights, out=, the compile cache, benchmark, and the README's one-liner."""
import os
import subprocess
import sys

import numpy as np
import pytest

import hloc
from conftest import ADD4, REPO

MLP = os.path.join(REPO, "testdata", "examples", "mlp.hlo")


def test_readme_one_liner():
    """The command of the README, in a fresh interpreter, from the repository root."""
    code = ("import hloc, numpy as np; m = hloc.compile(open('testdata/examples/mlp.hlo').read()); "
            "print(m(*[np.ones(p.shape, p.dtype) for p in m.signature.params]))")
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, check=True).stdout.decode()
    assert out.count("\n") == 4 and "0.1646" in out, out


def test_mlp_matches_numpy():
    m = hloc.compile(open(MLP).read())
    assert [(p.name, p.shape, p.dtype) for p in m.signature.params] == [("x", (4, 8), np.float32)]
    assert [(r.shape, r.dtype) for r in m.signature.results] == [((4, 3), np.float32)]
    x = np.load(os.path.join(REPO, "testdata", "examples", "mlp_x.npy"))
    y = m(x)
    assert isinstance(y, np.ndarray) and y.shape == (4, 3) and y.dtype == np.float32
    np.testing.assert_allclose(y, np.load(os.path.join(REPO, "testdata", "examples", "mlp_expected.npy")),
                               rtol=1e-5, atol=1e-6)


def test_compile_path_bytes_and_load(tmp_path):
    a = hloc.compile(MLP)  # a path
    b = hloc.compile(open(MLP, "rb").read())  # bytes
    assert a.signature == b.signature
    # Same text and options: the same cache entry, not compiled again.
    assert hloc.compile(open(MLP).read()).path == b.path
    assert hloc.compile(MLP, opt=0).path != b.path
    # A .so built by the hloc command itself.
    so = tmp_path / "mlp.so"
    subprocess.run([hloc.find_hloc(), MLP, "-o", str(so)], check=True)
    c = hloc.load(so)
    x = np.ones((4, 8), np.float32)
    np.testing.assert_array_equal(c(x), a(x))
    assert c.name == "mlp" and c.symbol == "mlp"


def test_cache_folder(private_cache):
    m = hloc.compile(ADD4 + "\n// cache test\n")
    assert os.path.dirname(m.path) == os.path.join(private_cache, "hloc-python") == hloc.cache_dir()
    assert os.path.basename(m.path).endswith(".so") and len(os.path.basename(m.path)) == 35
    assert oct(os.stat(os.path.dirname(m.path)).st_mode & 0o777) == "0o700"


def test_cache_folder_others_may_write_is_not_used(tmp_path, monkeypatch):
    """As hlorun's cache: a folder writable by others is not trusted; the model is compiled
    into a temporary folder instead, with a warning."""
    shared = tmp_path / "xdg"
    (shared / "hloc-python").mkdir(parents=True)
    os.chmod(shared / "hloc-python", 0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared))
    with pytest.warns(hloc.CompileWarning, match="others may write to it"):
        m = hloc.compile(ADD4)
    assert not m.path.startswith(str(shared))
    assert m(np.ones(4, np.float32), np.ones(4, np.float32)).tolist() == [2, 2, 2, 2]


PYTREE_EXPLICIT = """HloModule mlp_params
ENTRY main {
  b1 = f32[16] parameter(0)
  b2 = f32[3] parameter(1)
  w1 = f32[8,16] parameter(2)
  w2 = f32[16,3] parameter(3)
  x = f32[4,8] parameter(4)
  h0 = f32[4,16] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b1b = f32[4,16] broadcast(b1), dimensions={1}
  h1 = f32[4,16] add(h0, b1b)
  zero = f32[] constant(0)
  zb = f32[4,16] broadcast(zero), dimensions={}
  h = f32[4,16] maximum(h1, zb)
  y0 = f32[4,3] dot(h, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b2b = f32[4,3] broadcast(b2), dimensions={1}
  ROOT y = f32[4,3] add(y0, b2b)
}
"""


def test_jax_pytree_of_weights():
    """jax.jit(f)(params, x) with params = {"w1", "b1", "w2", "b2"} lowers to parameters in the
    order jax.tree_util flattens (dict keys sorted: b1, b2, w1, w2), then x."""
    m = hloc.compile(PYTREE_EXPLICIT)
    rng = np.random.default_rng(1)
    params = {"w1": rng.standard_normal((8, 16), np.float32), "b1": rng.standard_normal(16, np.float32),
              "w2": rng.standard_normal((16, 3), np.float32), "b2": rng.standard_normal(3, np.float32)}
    x = rng.standard_normal((4, 8), np.float32)
    assert [p.name for p in m.signature.params] == ["b1", "b2", "w1", "w2", "x"]
    want = np.maximum(x @ params["w1"] + params["b1"], 0) @ params["w2"] + params["b2"]
    flat = hloc.tree_flatten((params, x))
    assert [a.shape for a in flat] == [p.shape for p in m.signature.params]
    np.testing.assert_allclose(m(*flat), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(m(params, x), want, rtol=1e-5, atol=1e-5)  # the pytree itself


TUPLES = """HloModule tuples
ENTRY main {
  p = (f32[2], (s32[], f32[3])) parameter(0)
  a = f32[2] get-tuple-element(p), index=0
  q = (s32[], f32[3]) get-tuple-element(p), index=1
  i = s32[] get-tuple-element(q), index=0
  v = f32[3] get-tuple-element(q), index=1
  two = f32[2] constant({2, 2})
  ROOT r = (f32[2], s32[], f32[3]) tuple(f32[2] multiply(a, two), s32[] add(i, i), v)
}
"""


def test_tuple_parameter_and_result_are_flattened_leaves():
    m = hloc.compile(TUPLES)
    ps = m.signature.params
    assert [(p.name, p.hlo_type, p.shape) for p in ps] == [
        ("p{0}", "f32", (2,)), ("p{1}{0}", "s32", ()), ("p{1}{1}", "f32", (3,))]
    assert len(m.signature.results) == 3
    a, i, v = m(np.array([1, 2], np.float32), np.int32(5), np.array([7, 8, 9], np.float32))
    assert a.tolist() == [2, 4] and i.dtype == np.int32 and i.shape == () and int(i) == 10
    assert v.tolist() == [7, 8, 9]
    # Python numbers and lists take the parameter's dtype.
    a, i, v = m([1, 2], 5, [7.0, 8.0, 9.0])
    assert a.tolist() == [2, 4] and int(i) == 10
    # A nested tuple argument is flattened as a pytree (lists are nodes there, as in JAX).
    a, i, v = m((np.array([1, 2], np.float32), (5, np.array([7, 8, 9], np.float32))))
    assert int(i) == 10


def test_out_arguments(add4):
    x = np.arange(4, dtype=np.float32)
    y = np.empty(4, np.float32)
    r = add4(x, x, out=y)
    assert r is y and y.tolist() == [0, 2, 4, 6]
    with pytest.raises(hloc.ArgumentError, match="overlaps parameter 0"):
        add4(x, x, out=x)
    with pytest.raises(hloc.ArgumentError, match="out\\[0\\]"):
        add4(x, x, out=np.empty(4, np.float64))


def test_signature_and_repr(add4):
    s = add4.signature
    assert [p.name for p in s.params] == ["a", "b"] and s.results[0].byte_size == 16
    assert str(s) == "(a: f32[4], b: f32[4]) -> (c: f32[4])"
    assert "add4" in repr(add4)


def test_benchmark(add4):
    t = add4.benchmark(50)
    assert t.iterations == 50 and 0 < t.min_ms <= t.median_ms <= t.max_ms
    t = add4.benchmark(5, np.ones(4, np.float32), np.ones(4, np.float32))
    assert t.iterations == 5


# A temporary of 4 KiB between two dots: the module has an arena.
TWO_DOTS = """HloModule two_dots

ENTRY main {
  x = f32[32,32] parameter(0)
  a = f32[32,32] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT b = f32[32,32] dot(a, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


def test_threads_and_context():
    """A module with an arena exports the context API: one context per Module."""
    m = hloc.compile(TWO_DOTS, threads=1)
    assert m._ctx is not None
    x = np.ones((32, 32), np.float32)
    y = m(x)
    with m:
        np.testing.assert_array_equal(m(x), y)
    with pytest.raises(hloc.Error, match="closed"):
        m(x)


def test_concurrent_calls_on_one_module(add4):
    import threading
    errors = []

    def work(k):
        x = np.full(4, k, np.float32)
        for _ in range(200):
            if add4(x, x).tolist() != [2 * k] * 4:
                errors.append(k)
    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
