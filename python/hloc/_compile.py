"""_compile.py — finds the hloc compiler and compiles HLO text into a cached model .so.

The cache follows tools/cache.c (hlorun's): one file <key>.so per (text, options, compiler
build), key = 128 bits of SHA-256 over the text and a line of options that names the compiler
file's size and modification time, so a rebuilt hloc gets new keys.  It lives in
$XDG_CACHE_HOME/hloc-python (default ~/.cache/hloc-python), private to the user; a folder or
entry someone else could have written is not used.  Entries are written to a temporary name
and renamed, so concurrent compiles of one model are safe; on a miss, entries unused for 30
days and temporary files older than a day are removed.  Tests: python/tests/test_errors.py,
test_cache.py.
"""
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
import time
import warnings

from . import _abi
from ._errors import CompileWarning, Error

VERSION = "0.1.0"
_HERE = os.path.dirname(os.path.abspath(__file__))


def _install_prefix():
    """The build folder recorded when the package was installed with pip (setup.py), or None."""
    try:
        from . import _install  # written by setup.py's build_py
    except ImportError:
        return None
    return getattr(_install, "BUILD_DIR", None)


def _candidates():
    """(where, path) pairs to try for hloc, in order."""
    env = os.environ.get("HLOC_PREFIX")
    if env:
        yield "HLOC_PREFIX", os.path.join(env, "bin", "hloc")
        yield "HLOC_PREFIX", os.path.join(env, "hloc")
        return  # an explicit prefix is the only place looked at
    yield "the package", os.path.join(_HERE, "bin", "hloc")
    yield "the repository", os.path.normpath(os.path.join(_HERE, "..", "..", "build", "hloc"))
    recorded = _install_prefix()
    if recorded:
        yield "the install", os.path.join(recorded, "hloc")
        yield "the install", os.path.join(recorded, "bin", "hloc")
    on_path = shutil.which("hloc")
    if on_path:
        yield "PATH", on_path


def find_hloc():
    """The path of the hloc executable; Error(NOT_FOUND) saying where it looked."""
    tried = []
    for _, path in _candidates():
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
        tried.append(path)
    raise Error(_abi.NOT_FOUND,
                "cannot find the hloc compiler (looked at %s); build it with ./build.sh or set "
                "HLOC_PREFIX to a folder holding bin/hloc or hloc" % (", ".join(tried) or "PATH"))


def cache_dir():
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return os.path.join(xdg, "hloc-python")
    home = os.environ.get("HOME") or tempfile.gettempdir()
    return os.path.join(home, ".cache", "hloc-python")


def _identity(path):
    try:
        st = os.stat(path)
        return "%d.%d" % (st.st_size, st.st_mtime_ns)
    except OSError:
        return "unknown"


def cache_key(text, opt, target_cpu, strict, hloc_path):
    """32 hex digits naming the compiled form of `text` (bytes) under these options."""
    # The runtime archive hloc links into every model (next to a build's hloc, or in an
    # installed prefix's lib/) counts too: a rebuilt runtime need not change the hloc file.
    where = os.path.dirname(os.path.realpath(hloc_path))
    runtime = [os.path.join(where, "libhlort.a")]
    runtime += [os.path.join(where, "..", d, "libhlort.a") for d in ("lib", "lib64")]
    h = hashlib.sha256(text)
    h.update(("\nO%d|cpu=%s|strict=%d|abi %d|hloc %s %s|runtime %s|hloc-python %s\n" % (
        opt, target_cpu, int(bool(strict)), _abi.HLO_ABI_VERSION, os.path.realpath(hloc_path),
        _identity(hloc_path), " ".join(_identity(r) for r in runtime), VERSION)).encode())
    return h.hexdigest()[:32]


def _unsafe(st):
    """Why a cache folder or entry with this stat must not be trusted, or None."""
    if st.st_uid != os.getuid():
        return "it belongs to another user"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "others may write to it"
    return None


def _prune(folder):
    now = time.time()
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not name.endswith(".so"):
            continue
        tmp = name.endswith(".tmp.so")
        path = os.path.join(folder, name)
        try:
            if now - os.stat(path).st_mtime > (86400 if tmp else 30 * 86400):
                os.unlink(path)
        except OSError:
            pass


def _run_hloc(hloc, src, out, opt, target_cpu, strict, cwd=None):
    argv = [hloc, src, "-o", out, "--emit=so", "-O%d" % opt, "--target-cpu=%s" % target_cpu]
    if strict:
        argv.append("--strict")
    try:
        p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as e:
        raise Error(_abi.NOT_FOUND, "cannot run the compiler %s: %s" % (hloc, e)) from None
    text = p.stdout.decode("utf-8", "replace").rstrip("\n")
    if p.returncode == 0:
        if text:  # notes, e.g. constants printed as {...} filled with deterministic values
            warnings.warn(text, CompileWarning, stacklevel=4)
        return
    try:
        os.unlink(out)
    except OSError:
        pass
    if p.returncode < 0:
        raise Error(_abi.INTERNAL, "hloc was killed by signal %d\n%s" % (-p.returncode, text))
    # As hlorun maps it: exit 2 is a usage, parse or verification error; 1 is anything else.
    code = _abi.INVALID_ARGUMENT if p.returncode == 2 else _abi.UNIMPLEMENTED
    raise Error(code, text or "hloc exit status %d" % p.returncode)


def compile_to_cache(text, src_path, opt, target_cpu, strict):
    """Compiles HLO `text` (bytes; read from src_path when that is not None) and returns the
    path of the .so: a cache entry, or a temporary file when the cache cannot be used."""
    hloc = find_hloc()
    if opt not in (0, 1, 2, 3):
        raise Error(_abi.INVALID_ARGUMENT, "opt must be 0, 1, 2 or 3, not %r" % (opt,))
    key = cache_key(text, opt, target_cpu, strict, hloc)
    folder = cache_dir()
    entry = os.path.join(folder, key + ".so")
    problem = None
    try:
        problem = _unsafe(os.lstat(folder))
    except OSError:
        pass
    if problem is None and os.path.exists(entry):
        try:
            if _unsafe(os.lstat(entry)) is None:
                os.utime(entry)  # recently used: kept by _prune
                return entry
        except OSError:
            pass  # removed meanwhile: compile again
    if problem is None:
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError as e:
            problem = str(e)
    if problem is not None:
        warnings.warn("not using the compile cache %s: %s" % (folder, problem), CompileWarning, stacklevel=3)
        folder = tempfile.mkdtemp(prefix="hloc-python-")
        entry = os.path.join(folder, key + ".so")
    else:
        _prune(folder)
    with tempfile.TemporaryDirectory(prefix="hloc-python-src-") as work:
        cwd = None
        if src_path is None:  # diagnostics then name input.hlo:line:col
            with open(os.path.join(work, "input.hlo"), "wb") as f:
                f.write(text)
            src_path, cwd = "input.hlo", work
        tmp = os.path.join(folder, "%s.%d.tmp.so" % (key, os.getpid()))
        _run_hloc(hloc, src_path, tmp, opt, target_cpu, strict, cwd=cwd)
    os.chmod(tmp, 0o700)
    os.replace(tmp, entry)
    return entry
