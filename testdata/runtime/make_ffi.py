#!/usr/bin/python3
"""make_ffi.py — writes the typed-FFI (API_VERSION_TYPED_FFI) cases of testdata/runtime/.

Each ffi_<case> gets .hlo, .args and either .expected (empty: hlorun checks every result
against the .npy files given with --expected, numpy's values) or .err (the exact message).
ffi_bad/<case>.hlo + .err are malformed backend_config texts: hloc must stop at the offending
character (file:line:col), run by tests/runtime.cmake from inside ffi_bad/.

The handlers are testdata/runtime/ffi_lib.c.  Expected values are computed here from numpy
formulas and, for the attribute cases, from a hand-written model of what each attribute
should decode to (XLA_FFI_DataType numbers, names sorted by bytes), traced the way
ffi_attrs_trace writes them.  Run: /usr/bin/python3 testdata/runtime/make_ffi.py
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# XLA_FFI_DataType and XLA_FFI_AttrType numbers (XLA's public C API).
PRED, S8, S16, S32, S64, U8, U16, U32, U64, F32, F64 = 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12
ARRAY, DICT, SCALAR, STRING = 1, 2, 3, 4


def write(name, text, binary=False):
    with open(os.path.join(HERE, name), "wb" if binary else "w") as f:
        f.write(text)


def hlo_quote(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def module(name, params, body, root_shape, call_operands, target, config):
    # The module's name is not the target's: a model exports its entry point under its module
    # name, and the process-wide lookup would find that first when the library lacks the target.
    lines = ["HloModule %s_case" % name, "", "ENTRY main {"]
    lines += ["  %s = %s parameter(%d)" % (p, shape, i) for i, (p, shape) in enumerate(params)]
    lines += body
    cfg = ", backend_config=%s" % config if config is not None else ""
    lines.append("  ROOT r = %s custom-call(%s), custom_call_target=\"%s\", api_version=API_VERSION_TYPED_FFI%s"
                 % (root_shape, ", ".join(call_operands), target, cfg))
    return "\n".join(lines + ["}"]) + "\n"


def case(name, hlo, inputs, expected=None, err=None, rc=None):
    write(name + ".hlo", hlo)
    args = ["--custom-call-lib", "@LIB@"]
    for i, a in enumerate(inputs):
        np.save(os.path.join(HERE, "%s.in%d.npy" % (name, i)), a)
        args += ["--input", "@CASEDIR@/%s.in%d.npy" % (name, i)]
    for i, e in enumerate(expected or []):
        np.save(os.path.join(HERE, "%s.expected%d.npy" % (name, i)), e)
        args += ["--expected", "@CASEDIR@/%s.expected%d.npy" % (name, i)]
    write(name + ".args", "\n".join(args) + "\n")
    if err is None:
        write(name + ".expected", "")
    else:
        write(name + ".err", err + "\n")
    if rc is not None:  # an exit status other than 1 (runtime_case.sh reads CASE.rc)
        write(name + ".rc", "%d\n" % rc)


# ---- the attribute model and its trace (what ffi_attrs_trace writes) ----

def trace(entries):
    out = [len(entries)]
    for name, kind, value in sorted(entries, key=lambda e: e[0].encode()):
        nb = name.encode()
        out += [len(nb)] + list(nb) + [kind]
        if kind == SCALAR:
            out += [value[0], value[1]]
        elif kind == ARRAY:
            out += [value[0], len(value[1])] + list(value[1])
        elif kind == STRING:
            out += [len(value)] + list(value)
        else:
            out += trace(value)
    return out


def attrs_case(name, config_text, model, quoted=False, n=400):
    want = np.zeros(n, np.float64)
    t = trace(model)
    assert len(t) <= n
    want[:len(t)] = np.array(t, np.float64)
    cfg = hlo_quote(config_text) if quoted else config_text
    hlo = module(name, [], [], "f64[%d]" % n, [], "ffi_attrs_trace", cfg)
    case(name, hlo, [], [want])


def main():
    # A handler as JAX's CPU backend would call it: y = alpha * x + b.
    x = (np.arange(6, dtype=np.float32).reshape(2, 3) - 2) * np.float32(0.75)
    b = np.array([[0.5, -0.25, 1], [2, 0, -4]], np.float32)
    alpha = np.float32(2.5)
    hlo = module("ffi_axpy", [("x", "f32[2,3]"), ("b", "f32[2,3]")], [], "f32[2,3]", ["x", "b"], "ffi_axpy",
                 "{alpha = 2.5 : f32}")
    case("ffi_axpy", hlo, [x, b], [alpha * x + b])

    # An XLA_FFI_Error from the handler becomes the run's error, its code and message kept.
    hlo = module("ffi_failure", [("x", "f32[4]")], [], "f32[4]", ["x"], "ffi_check_positive", None)
    case("ffi_failure", hlo, [np.array([1, 2, -3, 4], np.float32)],
         err="hlorun: r: custom call 'ffi_check_positive' failed: INVALID_ARGUMENT: negative input at index 2")
    hlo = module("ffi_future_error", [], [], "f32[1]", [], "ffi_future_fails", None)
    case("ffi_future_error", hlo, [],
         err="hlorun: r: custom call 'ffi_future_fails' failed: UNAVAILABLE: the asynchronous part failed")
    hlo = module("ffi_missing", [], [], "f32[1]", [], "ffi_no_such_handler", "{}")
    case("ffi_missing", hlo, [], rc=2,  # resolved when the model is loaded, before anything runs
         err="hlorun: loading ffi_missing_case: custom-call target 'ffi_no_such_handler' not found (looked in 0 "
             "registered targets, 1 custom-call library and the process)")

    # Every attribute kind XLA's FFI decodes, written as XLA prints it (backend_config={...}).
    text = ("{n = 3 : i64, flag = true, off = false, alpha = 2.5 : f32, beta = -0.125 : f64, gamma = 1.5, "
            "k8 = -128 : i8, k16 = 32767 : i16, k32 = -7 : i32, kd = 42, u8v = 255 : ui8, u16v = 65535 : ui16, "
            "u32v = 4000000000 : ui32, u64v = 9007199254740992 : ui64, s8v = 5 : si8, hexv = 0x10 : i32, "
            "b1 = 1 : i1, name = \"x\", arr = array<i64: 1, -2, 3>, a8 = array<i8: -1, 2>, a16 = array<i16: 300>, "
            "a32 = array<i32: 7, 8>, af = array<f32: 0.5, -1.5>, ad = array<f64: 2.25, 1>, empty = array<i64>, "
            "d = {z = 1 : ui8, a = -1.5, inner = {s = \"deep\"}}, e = dense<[1, 2, 3]> : tensor<3xi32>, "
            "sp = dense<2.5> : tensor<2x2xf32>, du = dense<[[1], [255]]> : tensor<2x1xui8>, nd = {}}")
    model = [
        ("n", SCALAR, (S64, 3)), ("flag", SCALAR, (PRED, 1)), ("off", SCALAR, (PRED, 0)),
        ("alpha", SCALAR, (F32, 2.5)), ("beta", SCALAR, (F64, -0.125)), ("gamma", SCALAR, (F64, 1.5)),
        ("k8", SCALAR, (S8, -128)), ("k16", SCALAR, (S16, 32767)), ("k32", SCALAR, (S32, -7)),
        ("kd", SCALAR, (S64, 42)), ("u8v", SCALAR, (U8, 255)), ("u16v", SCALAR, (U16, 65535)),
        ("u32v", SCALAR, (U32, 4000000000)), ("u64v", SCALAR, (U64, 2**53)), ("s8v", SCALAR, (S8, 5)),
        ("hexv", SCALAR, (S32, 16)), ("b1", SCALAR, (PRED, 1)), ("name", STRING, b"x"),
        ("arr", ARRAY, (S64, [1, -2, 3])), ("a8", ARRAY, (S8, [-1, 2])), ("a16", ARRAY, (S16, [300])),
        ("a32", ARRAY, (S32, [7, 8])), ("af", ARRAY, (F32, [0.5, -1.5])), ("ad", ARRAY, (F64, [2.25, 1])),
        ("empty", ARRAY, (S64, [])),
        ("d", DICT, [("z", SCALAR, (U8, 1)), ("a", SCALAR, (F64, -1.5)), ("inner", DICT, [("s", STRING, b"deep")])]),
        ("e", ARRAY, (S32, [1, 2, 3])), ("sp", ARRAY, (F32, [2.5] * 4)), ("du", ARRAY, (U8, [1, 255])), ("nd", DICT, []),
    ]
    attrs_case("ffi_attrs", text, model)

    # The quoted form, with escapes at both levels (HLO string, then MLIR string) and a quoted name.
    text = '{"quoted name" = 1 : i32, str = "tab\\there \\"q\\" \\41", multi = "a,b}", Upper = -0.5 : f32}'
    model = [("quoted name", SCALAR, (S32, 1)), ("str", STRING, b'tab\there "q" A'),
             ("multi", STRING, b"a,b}"), ("Upper", SCALAR, (F32, -0.5))]
    attrs_case("ffi_attrs_quoted", text, model, quoted=True, n=64)
    attrs_case("ffi_attrs_empty", "", [], quoted=True, n=4)

    # Tuples: operands and results are flattened to their leaves, in order.
    a = np.array([3, -1, 7], np.int32)
    bb = np.array([[1, 2, 3], [-4, 0.5, 6]], np.float32)
    c = np.float64(0.5)
    meta = [S32, 1, 3, F32, 2, 2, 3, F64, 0,   # arguments
            F32, 2, 2, 3, S32, 0, S64, 1, 24]  # results
    hlo = module("ffi_tuple", [("a", "s32[3]"), ("b", "f32[2,3]"), ("c", "f64[]")],
                 ["  t = (s32[3], f32[2,3]) tuple(a, b)"], "(f32[2,3], s32[], s64[24])", ["t", "c"],
                 "ffi_tuple_leaves", "{}")
    case("ffi_tuple", hlo, [a, bb, np.array(c)],
         [(bb * np.float32(c)).astype(np.float32), np.array(a.sum(), np.int32),
          np.array(meta + [0] * (24 - len(meta)), np.int64)])

    # A token operand and result: TOKEN buffers without data.
    x4 = np.array([1, -2, 0.5, 8], np.float32)
    hlo = module("ffi_token", [("x", "f32[4]")], ["  tok = token[] after-all()"], "(f32[4], token[])",
                 ["x", "tok"], "ffi_token_probe", None)
    hlo = hlo.replace("API_VERSION_TYPED_FFI", "API_VERSION_TYPED_FFI, custom_call_has_side_effect=true")
    hlo = hlo.replace("  ROOT r = (f32[4], token[])", "  c = (f32[4], token[])").replace(
        "\n}", "\n  ROOT v = f32[4] get-tuple-element(c), index=0\n}")
    case("ffi_token", hlo, [x4], [x4 + 1])

    # output_to_operand_aliasing: the handler updates the operand's buffer, which is the result's.
    hlo = module("ffi_alias", [("x", "f32[4]")], [], "f32[4]", ["x"], "ffi_triple_in_place", None)
    hlo = hlo.replace("API_VERSION_TYPED_FFI", "API_VERSION_TYPED_FFI, output_to_operand_aliasing={{}: (0, {})}")
    case("ffi_alias", hlo, [x4], [x4 * 3])

    # The API table: host memory, a task run at once, one thread, stable type ids, no stream,
    # a future, no state.
    hlo = module("ffi_api", [], [], "s64[8]", [], "ffi_api_probe", None)
    case("ffi_api", hlo, [], [np.array([1, 1, 1, 1, 1, 1, 1, 1], np.int64)])

    bad()


def bad():
    """Malformed attribute dictionaries: (case, backend_config as written, (line, col) of the
    offending character within the file, message)."""
    d = os.path.join(HERE, "ffi_bad")
    os.makedirs(d, exist_ok=True)
    prefix = ('  ROOT r = f64[8] custom-call(), custom_call_target="ffi_attrs_trace", '
              'api_version=API_VERSION_TYPED_FFI, backend_config=')
    col0 = len(prefix) + 1  # column of the value's first character
    rows = [
        ("bad_word", "{n = 3 : i64, flag = tru}", "tru", "unsupported attribute value 'tru' (XLA's FFI takes "
         "numbers, true/false, strings, array<...>, dense<...> and dictionaries)"),
        ("bad_range", "{n = 300 : i8}", "300", "integer 300 does not fit in the attribute's 8-bit type"),
        ("bad_unsigned", "{n = -1 : ui32}", "-1", "integer -1 does not fit in the attribute's 32-bit type"),
        ("bad_type", "{x = 1.0 : f16}", "f16", "unsupported attribute type 'f16' (XLA's FFI takes i1, "
         "i8/i16/i32/i64, si8..si64, ui8..ui64, f32 and f64)"),
        ("bad_int_float", "{x = 2 : f32}", "2 :", "an integer literal cannot be a floating-point value "
         "(write it with a '.')"),
        ("bad_float_int", "{x = 2.5 : i32}", "2.5", "a floating-point literal cannot be an integer value"),
        ("bad_f32_range", "{x = 1.0e300 : f32}", "1.0e300", "1e+300 does not fit in f32"),
        ("bad_duplicate", "{a = 1, b = 2, a = 3}", "a = 3", "duplicate attribute name 'a'"),
        ("bad_unit", "{a = 1, flag}", "}", "expected '=' after attribute name 'flag' (XLA's FFI has no unit "
         "attributes)"),
        ("bad_close", "{a = 1 b = 2}", "b =", "expected '}' or ',' in the attribute dictionary"),
        ("bad_array", "{a = array<i64: 1, 2}", "}", "expected '>' to close the array"),
        ("bad_bool_array", "{a = array<i1: true>}", "i1", "arrays of i1 are not supported by XLA's FFI "
         "(i8..i64, f32 and f64 are)"),
        ("bad_trailing", '"{a = 1} x"', "x", "unexpected text after the attribute dictionary"),
        ("bad_dense", "{a = dense<[1, 2]> : tensor<3xi32>}", "i32>", "dense value has 2 elements but its "
         "tensor type has 3"),
    ]
    for name, cfg, at, msg in rows:
        line = prefix + cfg
        col = line.index(at, len(prefix)) + 1
        text = "HloModule %s\n\nENTRY main {\n%s\n}\n" % (name, line)
        write(os.path.join("ffi_bad", name + ".hlo"), text)
        write(os.path.join("ffi_bad", name + ".err"),
              "hlorun: %s.hlo:4:%d: error: %%r: backend_config of the typed-FFI custom call 'ffi_attrs_trace': %s\n"
              % (name, col, msg))
        assert col >= col0
    # Quoted (the column counts the raw text, escapes included) and over two lines.
    name = "bad_quoted"
    cfg = '"{s = \\"a\\", n = 1 : i7}"'
    line = prefix + cfg
    col = line.index("i7") + 1
    write(os.path.join("ffi_bad", name + ".hlo"), "HloModule %s\n\nENTRY main {\n%s\n}\n" % (name, line))
    write(os.path.join("ffi_bad", name + ".err"),
          "hlorun: %s.hlo:4:%d: error: %%r: backend_config of the typed-FFI custom call 'ffi_attrs_trace': "
          "unsupported attribute type 'i7' (XLA's FFI takes i1, i8/i16/i32/i64, si8..si64, ui8..ui64, f32 and "
          "f64)\n" % (name, col))
    name = "bad_two_lines"
    second = "      b = 2 : i3}"
    write(os.path.join("ffi_bad", name + ".hlo"),
          "HloModule %s\n\nENTRY main {\n%s{a = 1,\n%s\n}\n" % (name, prefix, second))
    write(os.path.join("ffi_bad", name + ".err"),
          "hlorun: %s.hlo:5:%d: error: %%r: backend_config of the typed-FFI custom call 'ffi_attrs_trace': "
          "unsupported attribute type 'i3' (XLA's FFI takes i1, i8/i16/i32/i64, si8..si64, ui8..ui64, f32 and "
          "f64)\n" % (name, second.index("i3") + 1))


if __name__ == "__main__":
    main()
