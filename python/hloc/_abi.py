"""_abi.py — the C ABI of a compiled model (docs/abi.md) as ctypes declarations.

Mirrors runtime/include/hlo/abi.h (hlo_array_desc, hlo_module_desc), hlo/runtime.h
(hlo_context_options) and hlo/status.h (the status codes), and maps each hlo_dtype (a row of
runtime/include/hlo/elemtypes.def) to a numpy dtype.  python/tests/test_abi.py checks the
dtype table against elemtypes.def and the struct layouts against the headers.
"""
import ctypes

import numpy as np

try:  # bf16 and the f8 types as real numpy dtypes, when the package is installed
    import ml_dtypes as _ml
except ImportError:  # pragma: no cover - depends on the environment
    _ml = None

HLO_ABI_VERSION = 2

STATUS_CODES = {
    0: "OK",
    1: "INVALID_ARGUMENT",
    2: "NOT_FOUND",
    3: "UNIMPLEMENTED",
    4: "RESOURCE_EXHAUSTED",
    5: "FAILED_PRECONDITION",
    6: "OUT_OF_RANGE",
    7: "INTERNAL",
    8: "IO",
    9: "CANCELLED",
}
INVALID_ARGUMENT, NOT_FOUND, UNIMPLEMENTED, FAILED_PRECONDITION, INTERNAL = 1, 2, 3, 5, 7

FEATURES = {1: "infeed", 2: "outfeed", 4: "channels", 8: "custom_call", 16: "collectives",
            32: "elided_constants"}


class ArrayDesc(ctypes.Structure):
    """hlo_array_desc: one parameter or result leaf."""
    _fields_ = [
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("dims", ctypes.POINTER(ctypes.c_int64)),
        ("byte_size", ctypes.c_int64),
        ("name", ctypes.c_char_p),
    ]


GENERIC_ENTRY = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


class ModuleDesc(ctypes.Structure):
    """hlo_module_desc (ABI version 2): the model's self-description."""
    _fields_ = [
        ("abi_version", ctypes.c_uint32),
        ("struct_size", ctypes.c_uint32),
        ("module_name", ctypes.c_char_p),
        ("symbol", ctypes.c_char_p),
        ("compiler_version", ctypes.c_char_p),
        ("num_params", ctypes.c_int32),
        ("params", ctypes.POINTER(ArrayDesc)),
        ("num_results", ctypes.c_int32),
        ("results", ctypes.POINTER(ArrayDesc)),
        ("run", ctypes.c_void_p),
        ("typed_entry", ctypes.c_void_p),
        ("features", ctypes.c_uint32),
        ("replica_count", ctypes.c_int32),
        ("num_partitions", ctypes.c_int32),
        ("arena_bytes", ctypes.c_int64),
        ("num_custom_call_targets", ctypes.c_int32),
        ("custom_call_targets", ctypes.POINTER(ctypes.c_char_p)),
        ("result_donors", ctypes.POINTER(ctypes.c_int32)),  # input_output_alias; may be NULL
    ]


class ContextOptions(ctypes.Structure):
    """hlo_context_options."""
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("num_threads", ctypes.c_int32),
        ("replica_id", ctypes.c_int32),
        ("num_replicas", ctypes.c_int32),
        ("partition_id", ctypes.c_int32),
        ("infeed_timeout_ms", ctypes.c_int32),
        ("group", ctypes.c_void_p),
    ]


class StatusRec(ctypes.Structure):
    """struct hlo_status_rec (runtime/src/base/status.c): read only when the model does not export
    hlo_status_code_of / hlo_status_message / hlo_status_free (today's models do not)."""
    _fields_ = [("code", ctypes.c_int), ("is_static", ctypes.c_int), ("message", ctypes.c_char_p)]


def _ml_dtype(name):
    return np.dtype(getattr(_ml, name)) if _ml is not None and hasattr(_ml, name) else None


# One row per hlo_dtype, in the order of elemtypes.def: (spelling, storage dtype, ml_dtypes
# name or None).  The storage dtype is the one of the .npy files hlorun reads and writes (raw
# unsigned bits for the types numpy lacks); with ml_dtypes those take its dtype instead.
_ROWS = [
    ("pred", "?", None), ("s1", "i1", None), ("s2", "i1", None), ("s4", "i1", None),
    ("s8", "i1", None), ("s16", "<i2", None), ("s32", "<i4", None), ("s64", "<i8", None),
    ("u1", "u1", None), ("u2", "u1", None), ("u4", "u1", None), ("u8", "u1", None),
    ("u16", "<u2", None), ("u32", "<u4", None), ("u64", "<u8", None),
    ("f16", "<f2", None), ("bf16", "<u2", "bfloat16"), ("f32", "<f4", None), ("f64", "<f8", None),
    ("c64", "<c8", None), ("c128", "<c16", None),
    ("f8e4m3fn", "u1", "float8_e4m3fn"), ("f8e5m2", "u1", "float8_e5m2"),
    ("f8e4m3", "u1", "float8_e4m3"), ("f8e3m4", "u1", "float8_e3m4"),
    ("f8e4m3fnuz", "u1", "float8_e4m3fnuz"), ("f8e5m2fnuz", "u1", "float8_e5m2fnuz"),
    ("f8e4m3b11fnuz", "u1", "float8_e4m3b11fnuz"), ("f4e2m1fn", "u1", "float4_e2m1fn"),
    ("f8e8m0fnu", "u1", "float8_e8m0fnu"),
    ("token", None, None), ("opaque", None, None), ("tuple", None, None),
]
DTYPE_NAMES = [r[0] for r in _ROWS]
TOKEN = DTYPE_NAMES.index("token")


def numpy_dtypes(code):
    """(dtype of results, dtypes accepted for a parameter) of hlo_dtype `code`.

    Results use the ml_dtypes type when there is one and ml_dtypes is importable, else the
    storage dtype; parameters accept both.  Tokens and unknown codes give (None, ())."""
    if code < 0 or code >= len(_ROWS) or _ROWS[code][1] is None:
        return None, ()
    _, storage, ml = _ROWS[code]
    storage = np.dtype(storage).newbyteorder("=")
    if ml:
        mld = _ml_dtype(ml)
        if mld is not None:
            return mld, (mld, storage)
    return storage, (storage,)


def dtype_name(code):
    return DTYPE_NAMES[code] if 0 <= code < len(DTYPE_NAMES) else "dtype%d" % code
