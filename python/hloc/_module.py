"""_module.py — Module: a compiled model .so loaded with ctypes and called with numpy arrays.

Everything comes from the model's descriptor (hlo_module_describe, docs/abi.md): one Leaf per
parameter and result leaf (tuples flattened depth first, as hlorun does).  A call fills two
ctypes pointer arrays made once per Module and calls the generic entry SYM_run; inputs go by
pointer when dtype, shape, C-contiguity and alignment allow, results are fresh numpy arrays
(or the caller's, out=...).  One hlo_context per Module when the model exports the context
API (it does when it uses a runtime service: threads, the arena, feeds), else ctx = NULL,
which is then equivalent.  Calls on one Module are serialized by a lock (a context serves one
call at a time); ctypes releases the GIL during the call.  Tests: python/tests/.
"""
import collections
import ctypes
import os
import statistics
import threading
import time

import numpy as np

from . import _abi
from ._errors import ArgumentError, Error


class Leaf(collections.namedtuple("Leaf", "index name shape dtype hlo_type byte_size")):
    """One parameter or result leaf: .shape (tuple), .dtype (numpy dtype; None for a token),
    .name (the HLO name, "p{1}" for a tuple leaf), .hlo_type ("f32"), .byte_size."""
    __slots__ = ()

    def __str__(self):
        return "%s: %s" % (self.name, self.type_string)

    @property
    def type_string(self):
        return "%s[%s]" % (self.hlo_type, ",".join(str(d) for d in self.shape))


class Signature(collections.namedtuple("Signature", "params results")):
    """The leaves of the entry computation: .params and .results, tuples of Leaf."""
    __slots__ = ()

    def __str__(self):
        def side(leaves):
            return ", ".join(str(l) for l in leaves)
        return "(%s) -> (%s)" % (side(self.params), side(self.results))


Timing = collections.namedtuple("Timing", "iterations min_ms median_ms mean_ms max_ms")
Timing.__doc__ = "Module.benchmark's result: times of the C call alone, in milliseconds."


def tree_flatten(tree):
    """The leaves of a JAX-style pytree in JAX's order: dicts by sorted key, lists and tuples in
    order, None as an empty subtree; anything else is a leaf."""
    out = []

    def walk(t):
        if isinstance(t, dict):
            for k in sorted(t):
                walk(t[k])
        elif isinstance(t, (list, tuple)):
            for x in t:
                walk(x)
        elif t is not None:
            out.append(t)
    walk(tree)
    return out


_NUMPY_TO_HLO = {np.dtype(k): v for k, v in [
    ("?", "pred"), ("i1", "s8"), ("i2", "s16"), ("i4", "s32"), ("i8", "s64"), ("u1", "u8"), ("u2", "u16"),
    ("u4", "u32"), ("u8", "u64"), ("f2", "f16"), ("f4", "f32"), ("f8", "f64"), ("c8", "c64"), ("c16", "c128")]}


def _hlo_name_of(dtype):
    """An HLO spelling for a numpy dtype, for messages ('f64'), else numpy's name."""
    name = _NUMPY_TO_HLO.get(dtype)
    if name is None and _abi._ml is not None:
        name = {"bfloat16": "bf16"}.get(dtype.name, dtype.name)
    return name or str(dtype)


def _leaves(descs, n):
    out = []
    for i in range(n):
        d = descs[i]
        res, _ = _abi.numpy_dtypes(d.dtype)
        shape = tuple(d.dims[k] for k in range(d.rank))
        out.append(Leaf(i, (d.name or b"").decode("utf-8", "replace"), shape, res, _abi.dtype_name(d.dtype),
                        d.byte_size))
    return tuple(out)


class _StatusReader:
    """Turns an hlo_status returned by the model into an Error and frees it: through the
    model's exported hlo_status_* functions when it has them, else by the record's layout."""

    def __init__(self, lib):
        try:
            self.code_of, self.message, self.free = lib.hlo_status_code_of, lib.hlo_status_message, lib.hlo_status_free
            self.code_of.restype, self.code_of.argtypes = ctypes.c_int, [ctypes.c_void_p]
            self.message.restype, self.message.argtypes = ctypes.c_char_p, [ctypes.c_void_p]
            self.free.restype, self.free.argtypes = None, [ctypes.c_void_p]
            self.exported = True
        except AttributeError:
            self.exported = False
            self.libc_free = ctypes.CDLL(None).free
            self.libc_free.argtypes, self.libc_free.restype = [ctypes.c_void_p], None

    def error(self, status, what):
        if self.exported:
            code, msg = self.code_of(status), self.message(status)
            self.free(status)
        else:
            rec = _abi.StatusRec.from_address(status)
            code, msg = rec.code, rec.message
            if not rec.is_static:
                msg_ptr = ctypes.c_void_p.from_address(status + _abi.StatusRec.message.offset).value
                self.libc_free(msg_ptr)
                self.libc_free(status)
        return Error(code, "%s: %s" % (what, (msg or b"").decode("utf-8", "replace")))


class Module:
    """A compiled model.  Module(*arrays) runs it: one argument per parameter leaf (numpy arrays,
    objects with __array__ or DLPack, Python numbers and lists); returns one numpy array, or a
    tuple of them when the entry has several result leaves."""

    def __init__(self, path, threads=0):
        path = os.fspath(path)
        if "GOMP_SPINCOUNT" not in os.environ and "OMP_WAIT_POLICY" not in os.environ:
            # oneDNN's libgomp loads with the model: a shorter spin of its idle threads, as
            # hlorun (tools/run.c shorten_openmp_spin; docs/runtime.md "Threads").
            os.environ["GOMP_SPINCOUNT"] = "10000"
        try:
            self._lib = lib = ctypes.CDLL(os.path.abspath(path), mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as e:
            raise Error(_abi.NOT_FOUND, "%s: cannot load the model: %s" % (path, e)) from None
        try:
            describe = lib.hlo_module_describe
        except AttributeError:
            raise Error(_abi.INVALID_ARGUMENT, "%s: not a model built by hloc (no hlo_module_describe)" % path) from None
        describe.restype, describe.argtypes = ctypes.POINTER(_abi.ModuleDesc), []
        d = describe().contents
        if d.abi_version != _abi.HLO_ABI_VERSION or d.struct_size < _abi.ModuleDesc.num_custom_call_targets.offset:
            raise Error(_abi.INVALID_ARGUMENT, "%s: built for ABI version %d; this package reads version %d "
                        "(recompile it with this hloc)" % (path, d.abi_version, _abi.HLO_ABI_VERSION))
        self.path = path
        self.name = d.module_name.decode("utf-8", "replace")
        self.symbol = d.symbol.decode("utf-8", "replace")
        self.signature = Signature(_leaves(d.params, d.num_params), _leaves(d.results, d.num_results))
        self.features = tuple(n for bit, n in sorted(_abi.FEATURES.items()) if d.features & bit)
        self.replica_count = d.replica_count
        self.arena_bytes = d.arena_bytes
        self._desc = d
        self._status = _StatusReader(lib)
        self._run = _abi.GENERIC_ENTRY(d.run)
        self._lock = threading.Lock()
        self._ctx = None
        self._destroy = None
        self._unsupported = None
        if d.replica_count > 1 and d.features & 16:
            self._unsupported = ("%s runs as %d replicas; this package runs one (use hlorun --replicas)"
                                 % (self.name, d.replica_count))
        self._make_context(lib, threads)
        self._prepare()

    # ---- set-up ---------------------------------------------------------------------------

    def _make_context(self, lib, threads):
        """One context for this Module, if the model exports the context API."""
        try:
            create, destroy, init = lib.hlo_context_create, lib.hlo_context_destroy, lib.hlo_context_options_init
        except AttributeError:
            return  # the model uses no runtime service: NULL is the same
        init.argtypes, init.restype = [ctypes.c_void_p], None
        create.argtypes, create.restype = [ctypes.c_void_p, ctypes.c_void_p], ctypes.c_void_p
        destroy.argtypes, destroy.restype = [ctypes.c_void_p], None
        opts = _abi.ContextOptions()
        init(ctypes.byref(opts))
        opts.num_threads = int(threads)
        ctx = ctypes.c_void_p()
        st = create(ctypes.byref(opts), ctypes.byref(ctx))
        if st:
            raise self._status.error(st, "%s: cannot create a context" % self.name)
        self._ctx, self._destroy = ctx.value, destroy

    def _prepare(self):
        ps, rs = self.signature.params, self.signature.results
        self._params = (ctypes.c_void_p * max(len(ps), 1))()
        self._results = (ctypes.c_void_p * max(len(rs), 1))()
        # Per parameter: (leaf, dtypes accepted, shape); per result: (shape, dtype) or None.
        self._pspec = tuple((l, _abi.numpy_dtypes(self._desc.params[l.index].dtype)[1], l.shape) for l in ps)
        self._rspec = tuple((l.shape, l.dtype) if l.dtype is not None else None for l in rs)
        self._nparams = len(ps)

    def close(self):
        """Destroys the context; the Module cannot be called afterwards."""
        with self._lock:
            if self._ctx is not None:
                self._destroy(self._ctx)
                self._ctx = None
            self._run = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_ctx", None) is not None:
            self._destroy(self._ctx)
            self._ctx = None

    def __repr__(self):
        return "<hloc.Module %s %s from %s>" % (self.name, self.signature, self.path)

    # ---- arguments ------------------------------------------------------------------------

    def _describe_args(self):
        return ", ".join(str(l) for l in self.signature.params) or "none"

    def _convert(self, i, a):
        """Argument i as an array the model may read: the caller's own when possible, else a
        C-contiguous aligned copy; ArgumentError when its dtype or shape is wrong."""
        leaf, accept, shape = self._pspec[i]
        if leaf.dtype is None:  # token
            if a is not None:
                raise ArgumentError("parameter %d (%s) is a token: pass None" % (i, leaf.name))
            return None
        arr = None
        if isinstance(a, np.ndarray):
            arr = a
        elif hasattr(a, "__dlpack__") and not hasattr(a, "__array_interface__"):
            try:
                arr = np.from_dlpack(a)  # zero copy for CPU tensors (torch, jax)
            except (TypeError, ValueError, BufferError, RuntimeError, AttributeError):
                arr = None
        if arr is None:
            if hasattr(a, "__array__") or hasattr(a, "__array_interface__") or hasattr(a, "__array_struct__"):
                arr = np.asarray(a)
            else:  # Python numbers and lists take the parameter's dtype
                raw = np.asarray(a)
                if raw.dtype == object or not np.can_cast(raw.dtype, leaf.dtype, "same_kind"):
                    raise ArgumentError("parameter %d (%s) expects %s, got %r" % (i, leaf.name, leaf.type_string, a))
                arr = raw.astype(leaf.dtype)
        if arr.dtype not in accept:
            if arr.dtype.newbyteorder("=") in accept and not arr.dtype.isnative:
                arr = arr.astype(arr.dtype.newbyteorder("="))
            else:
                raise ArgumentError("parameter %d (%s) expects %s, got %s[%s]%s" % (
                    i, leaf.name, leaf.type_string, _hlo_name_of(arr.dtype), ",".join(map(str, arr.shape)),
                    " (bf16 takes ml_dtypes.bfloat16 or its raw bits as uint16)" if leaf.hlo_type == "bf16" else ""))
        if arr.shape != shape:
            raise ArgumentError("parameter %d (%s) expects %s, got %s[%s]" % (
                i, leaf.name, leaf.type_string, _hlo_name_of(arr.dtype), ",".join(map(str, arr.shape))))
        if not (arr.flags.c_contiguous and arr.flags.aligned):
            arr = arr.copy(order="C")  # a fresh allocation: contiguous and aligned
        return arr

    def _bind(self, args):
        """Fills self._params from args; returns the arrays to keep alive during the call."""
        if len(args) != self._nparams:
            flat = tree_flatten(args)
            if len(flat) != self._nparams:
                raise ArgumentError("%s expects %d argument%s (%s), got %d" % (
                    self.name, self._nparams, "" if self._nparams == 1 else "s", self._describe_args(), len(args)))
            args = flat
        params, pspec, keep = self._params, self._pspec, []
        for i, a in enumerate(args):
            # The fast path: an ndarray the model can read in place.
            if (type(a) is np.ndarray and a.dtype in pspec[i][1] and a.shape == pspec[i][2]
                    and a.flags.c_contiguous and a.flags.aligned):
                params[i] = a.ctypes.data
                continue
            a = self._convert(i, a)
            keep.append(a)
            params[i] = None if a is None else a.ctypes.data
        return keep

    def _outputs(self, out):
        results = self._results
        if out is None:
            outs = [None if s is None else np.empty(s[0], s[1]) for s in self._rspec]
        else:
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            if len(outs) != len(self._rspec):
                raise ArgumentError("out= needs %d array(s), got %d" % (len(self._rspec), len(outs)))
            for i, (o, l) in enumerate(zip(outs, self.signature.results)):
                if l.dtype is None:
                    continue
                if (type(o) is not np.ndarray or o.dtype != l.dtype or o.shape != l.shape
                        or not o.flags.c_contiguous or not o.flags.writeable):
                    raise ArgumentError("out[%d] must be a writeable C-contiguous %s array of shape %s (%s)" % (
                        i, l.dtype, l.shape, l.type_string))
        for i, o in enumerate(outs):
            results[i] = None if o is None else o.ctypes.data
        return outs

    # ---- calls ----------------------------------------------------------------------------

    def __call__(self, *args, out=None):
        """Runs the model.  out: arrays to write the results into (one per result leaf)
        instead of fresh ones; they must not overlap the inputs."""
        with self._lock:
            if self._run is None or self._unsupported:
                raise Error(_abi.FAILED_PRECONDITION if self._run is None else _abi.UNIMPLEMENTED,
                            self._unsupported or "%s: the Module was closed" % self.name)
            keep = self._bind(args)
            outs = self._outputs(out)
            if out is not None:
                self._check_overlap(outs)
            st = self._run(self._ctx, self._params, self._results)
            del keep
        if st:
            raise self._status.error(st, self.name)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _check_overlap(self, outs):
        for i, o in enumerate(outs):
            if o is None:
                continue
            lo, hi = o.ctypes.data, o.ctypes.data + o.nbytes
            for k in range(self._nparams):
                p, n = self._params[k], self.signature.params[k].byte_size
                if p and n and p < hi and lo < p + n:
                    raise ArgumentError("out[%d] overlaps parameter %d: results must not alias inputs" % (i, k))

    def random_inputs(self, seed=0):
        """Deterministic inputs as hlorun --random-inputs draws them: floats in [-1, 1),
        integers in [0, 8), pred 0/1 (not the same numbers as hlorun's)."""
        rng = np.random.default_rng(seed)
        out = []
        for l in self.signature.params:
            if l.dtype is None:
                out.append(None)
            elif l.hlo_type == "pred":
                out.append(rng.integers(0, 2, l.shape).astype(np.bool_))
            elif l.dtype.kind in "iu" and l.hlo_type[0] in "su":
                out.append(rng.integers(0, 8, l.shape).astype(l.dtype))
            elif l.dtype.kind == "c":
                re = rng.uniform(-1, 1, l.shape)
                out.append((re + 0.5j * re).astype(l.dtype))
            elif l.dtype.kind == "u":  # bf16 / f8 as raw bits: round f32 values to the format
                out.append(_raw_bits(rng.uniform(-1, 1, l.shape).astype(np.float32), l.hlo_type, l.dtype))
            else:
                out.append(rng.uniform(-1, 1, l.shape).astype(l.dtype))
        return out

    def benchmark(self, n=100, *args, warmup=1):
        """Runs the model warmup + n times on args (default: random_inputs()) and times the C
        call alone (perf_counter_ns around the ctypes call, arguments bound before).  Returns
        Timing(iterations, min_ms, median_ms, mean_ms, max_ms)."""
        if not args:
            args = self.random_inputs()
        times = []
        with self._lock:
            if self._run is None:
                raise Error(_abi.FAILED_PRECONDITION, "%s: the Module was closed" % self.name)
            keep = self._bind(args)
            outs = self._outputs(None)
            run, ctx, p, r = self._run, self._ctx, self._params, self._results
            clock = time.perf_counter_ns
            for k in range(warmup + n):
                t0 = clock()
                st = run(ctx, p, r)
                t1 = clock()
                if st:
                    raise self._status.error(st, self.name)
                if k >= warmup:
                    times.append((t1 - t0) / 1e6)
            del keep, outs
        if not times:
            return Timing(0, 0.0, 0.0, 0.0, 0.0)
        return Timing(n, min(times), statistics.median(times), statistics.fmean(times), max(times))


def _raw_bits(x, hlo_type, storage):
    """f32 values as raw bf16 bits (round to nearest even); other raw types get zeros' bits
    of their storage (only bf16 has a conversion without ml_dtypes)."""
    if hlo_type == "bf16":
        b = x.view(np.uint32).astype(np.uint64)
        b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
        return b.astype(np.uint16)
    return np.zeros(x.shape, storage)
