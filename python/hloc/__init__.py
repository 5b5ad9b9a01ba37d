"""hloc — compile XLA HLO text to native code and call it with numpy arrays.

    import hloc, numpy as np
    m = hloc.compile(open("model.hlo").read())      # or hloc.compile("model.hlo"), hloc.load("model.so")
    y = m(np.ones((4, 8), np.float32))
    print(m.signature, m.benchmark(100))

Pure Python over the C ABI of a compiled model (docs/abi.md) with ctypes; it runs the hloc
compiler found through $HLOC_PREFIX, the repository's build/ folder, the folder recorded at
install time, or PATH.  docs/python.md is the manual.
"""
import os

from ._abi import STATUS_CODES
from ._compile import VERSION as __version__
from ._compile import cache_dir, compile_to_cache, find_hloc
from ._errors import ArgumentError, CompileWarning, Error
from ._module import Leaf, Module, Signature, Timing, tree_flatten

__all__ = ["compile", "load", "Module", "Signature", "Leaf", "Timing", "Error", "ArgumentError",
           "CompileWarning", "tree_flatten", "find_hloc", "cache_dir", "STATUS_CODES"]


def _is_path(x):
    if isinstance(x, os.PathLike):
        return True
    return isinstance(x, str) and "\n" not in x and len(x) < 4096 and os.path.isfile(x)


def compile(text_or_path, opt=2, target_cpu=None, strict=False, threads=0):
    """Compiles HLO text (str or bytes) or an .hlo file (a path) and loads it.

    opt: 0-3 (hloc -O); target_cpu: None or "native" (this machine), "generic", or an LLVM CPU
    name; strict: reject hloc's broadcasting extensions; threads: the context's worker threads
    (0: one per CPU).  The .so is cached (hloc.cache_dir()) by the text's hash and the options.
    Raises hloc.Error: INVALID_ARGUMENT with hloc's file:line:col diagnostics for bad text."""
    if _is_path(text_or_path):
        path = os.fspath(text_or_path)
        try:
            with open(path, "rb") as f:
                text = f.read()
        except OSError as e:
            raise Error(2, "%s: cannot read: %s" % (path, e.strerror)) from None
    elif isinstance(text_or_path, (str, bytes)):
        path = None
        text = text_or_path.encode() if isinstance(text_or_path, str) else bytes(text_or_path)
    else:
        raise TypeError("hloc.compile takes HLO text or a path, not %s" % type(text_or_path).__name__)
    so = compile_to_cache(text, path, opt, target_cpu or "native", strict)
    return Module(so, threads=threads)


def load(path, threads=0):
    """Loads a model .so built by hloc (hloc model.hlo -o model.so)."""
    return Module(path, threads=threads)
