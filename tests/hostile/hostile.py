#!/usr/bin/python3
"""hostile.py — the hostile-input table: every row makes one hostile input (a truncated file,
binary garbage, absurd or overflowing shapes, 10 000-deep nesting, a 100 000-instruction
module, call cycles, self-use, an endless while loop), runs hloc or hlorun on it under a
memory limit (ulimit -v, RLIMIT_AS) and a 5 s wall-clock budget, and checks the exit status
and one line of the message.  Usage: hostile.py HLOC HLORUN CASE (or --list).  Registered per
row as hostile.CASE by tests/hostile.cmake; docs/testing.md.
"""
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time

TIME_LIMIT_S = 5.0
MEMORY_LIMIT = 2 << 30  # bytes of address space; not applied under ASan (HOSTILE_NO_ULIMIT=1)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

MLP = open(os.path.join(ROOT, "testdata/examples/mlp.hlo")).read()
MLIR = open(os.path.join(ROOT, "testdata/mlir/ok/regions.mlir")).read()


def module(body, name="hostile", extra=""):
    return "HloModule %s\n\n%sENTRY main {\n%s}\n" % (name, extra, body)


def nested_tuple_shape(depth):
    return "(" * depth + "f32[]" + ")" * depth


def nested_literal(depth):
    return "{" * depth + "1" + "}" * depth


def chain(n):
    lines = ["  p = f32[4] parameter(0)", "  v0 = f32[4] negate(p)"]
    lines += ["  v%d = f32[4] add(v%d, p)" % (i, i - 1) for i in range(1, n)]
    lines.append("  ROOT r = f32[4] negate(v%d)" % (n - 1))
    return module("\n".join(lines) + "\n", "chain")


def garbage(n, seed):
    rnd = random.Random(seed)
    return bytes(rnd.getrandbits(8) for _ in range(n))


CYCLE = """HloModule cycle

a {
  x = f32[] parameter(0)
  ROOT y = f32[] call(x), to_apply=b
}

b {
  x = f32[] parameter(0)
  ROOT y = f32[] call(x), to_apply=a
}

ENTRY main {
  p = f32[] parameter(0)
  ROOT r = f32[] call(p), to_apply=a
}
"""

FOREVER = """HloModule forever

cond {
  p = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}

body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT n = s32[] add(p, one)
}

ENTRY main {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}
"""

# name: (files {name: text or bytes}, argv with {hloc} {hlorun} {d}, exit status, regex on stderr)
CASES = {
    "truncated_module": ({"m.hlo": MLP[: len(MLP) // 2]}, ["{hloc}", "{d}/m.hlo", "-o", "{d}/m.so"], 2,
                         r"m\.hlo:\d+:\d+: error: "),
    "empty_file": ({"m.hlo": ""}, ["{hloc}", "{d}/m.hlo", "-o", "{d}/m.so"], 2, r"m\.hlo:1:1: error: "),
    "binary_garbage": ({"m.hlo": garbage(65536, 1)}, ["{hloc}", "{d}/m.hlo", "-o", "{d}/m.so"], 2,
                       r"m\.hlo:\d+:\d+: error: "),
    "garbage_after_header": ({"m.hlo": b"HloModule g\n\nENTRY main {\n" + garbage(4096, 2)},
                             ["{hloc}", "{d}/m.hlo", "-o", "{d}/m.so"], 2, r"m\.hlo:\d+:\d+: error: "),
    "nul_byte": ({"m.hlo": MLP.encode().replace(b"ENTRY", b"EN\0TRY")}, ["{hloc}", "{d}/m.hlo", "-o", "{d}/m.so"], 2,
                 r"m\.hlo:\d+:\d+: error: "),
    "huge_array_run": ({"m.hlo": module("  ROOT p = f32[99999999999] parameter(0)\n")},
                       ["{hlorun}", "{d}/m.hlo", "--random-inputs"], 1,
                       r"needs 799999999992 bytes \(800\.00 GB: parameters 400\.00 GB, results 400\.00 GB, arena "
                       r"0\.00 GB\), more than the [0-9.]+ GB this machine has available"),
    "huge_array_max_memory": ({"m.hlo": module("  ROOT p = f32[99999999999] parameter(0)\n")},
                              ["{hlorun}", "{d}/m.hlo", "--random-inputs", "--max-memory", "1G"], 1,
                              r"needs 799999999992 bytes .* more than --max-memory 1073741824"),
    "size_overflows_64_bits": ({"m.hlo": module("  ROOT p = f32[4294967296,4294967296] parameter(0)\n")},
                               ["{hloc}", "{d}/m.hlo", "-o", "{d}/m.so"], 2, r"its size overflows"),
    "byte_size_overflows": ({"m.hlo": module("  ROOT p = c128[2305843009213693952] parameter(0)\n")},
                            ["{hloc}", "{d}/m.hlo", "-o", "{d}/m.so"], 2, r"too large"),
    "rank_65": ({"m.hlo": module("  ROOT p = f32[%s] parameter(0)\n" % ",".join(["1"] * 65))},
                ["{hloc}", "{d}/m.hlo", "-o", "{d}/m.so"], 2, r"error: .*rank"),
    "tuple_nested_10000": ({"m.hlo": module("  ROOT p = %s parameter(0)\n" % nested_tuple_shape(10000))},
                           ["{hloc}", "{d}/m.hlo", "-o", "{d}/m.so"], 2, r"error: .*nest"),
    "literal_nested_10000": ({"m.hlo": module("  ROOT c = f32[1] constant(%s)\n" % nested_literal(10000))},
                             ["{hloc}", "{d}/m.hlo", "-o", "{d}/m.so"], 2, r"error: .*nest"),
    "inline_literal_nested_10000": ({"m.hlo": module("  ROOT p = f32[1] parameter(0)\n")},
                                    ["{hlorun}", "{d}/m.hlo", "--input", "f32[1] " + nested_literal(10000)], 2,
                                    r"--input .*nest"),
    "instructions_100000_verify": ({"m.hlo": chain(100000)}, ["{hloc}", "{d}/m.hlo", "--verify-only"], 0, r"^$"),
    "call_cycle": ({"m.hlo": CYCLE}, ["{hloc}", "{d}/m.hlo", "-o", "{d}/m.so"], 2,
                   r"m\.hlo:3:1: error: computation %a calls itself \(recursion is not allowed in HLO\)"),
    "self_use": ({"m.hlo": module("  p = f32[] parameter(0)\n  a = f32[] add(a, p)\n  ROOT r = f32[] negate(a)\n")},
                 ["{hloc}", "{d}/m.hlo", "-o", "{d}/m.so"], 2, r"instruction %a uses itself as an operand"),
    "mutual_use": ({"m.hlo": module("  p = f32[] parameter(0)\n  a = f32[] add(b, p)\n  b = f32[] add(a, p)\n"
                                    "  ROOT r = f32[] negate(b)\n")},
                   ["{hloc}", "{d}/m.hlo", "-o", "{d}/m.so"], 2, r"use of undefined instruction %b"),
    "endless_while_timeout": ({"m.hlo": FOREVER}, ["{hlorun}", "{d}/m.hlo", "--timeout", "2"], 1,
                              r"timed out after 2 s \(--timeout\)"),
    "truncated_npy": ({"m.hlo": module("  ROOT p = f32[4] parameter(0)\n"),
                       "x.npy": b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"},
                      ["{hlorun}", "{d}/m.hlo", "--input", "{d}/x.npy"], 2, r"x\.npy: "),
    "npy_huge_shape": ({"m.hlo": module("  ROOT p = f32[4] parameter(0)\n"),
                        "x.npy": b"\x93NUMPY\x01\x00\x46\x00{'descr': '<f4', 'fortran_order': False, "
                                 b"'shape': (99999999999999999999,), }   \n"},
                       ["{hlorun}", "{d}/m.hlo", "--input", "{d}/x.npy"], 2, r"x\.npy: "),
    "garbage_so": ({"m.so": garbage(4096, 3)}, ["{hlorun}", "{d}/m.so", "--random-inputs"], 2, r"m\.so"),
    # codegen_fuzz, 2026-11-25: a partitioner marker that changes the element type leaked its
    # value's leaf tables on the error path (LeakSanitizer in the sanitizer pass).
    "marker_changes_type": ({"m.hlo": module("  x = f32[4] parameter(0)\n"
                                             "  ROOT s = f64[4] custom-call(x), custom_call_target=\"Sharding\"\n")},
                            ["{hloc}", "{d}/m.hlo", "-o", "{d}/m.so"], 1,
                            r"custom call 'Sharding' changes the element type or rank of its operand"),
    # StableHLO MLIR input (grammar/mlir*.c): diagnostics at the .mlir, never a crash.
    "mlir_truncated": ({"m.mlir": MLIR[: len(MLIR) // 2]}, ["{hloc}", "{d}/m.mlir", "-o", "{d}/m.so"], 2,
                       r"m\.mlir:\d+:\d+: error: "),
    "mlir_empty": ({"m.mlir": ""}, ["{hloc}", "{d}/m.mlir", "-o", "{d}/m.so"], 2, r"m\.mlir:1:1: error: "),
    "mlir_garbage": ({"m.mlir": b"module {\n" + garbage(65536, 4)}, ["{hloc}", "{d}/m.mlir", "-o", "{d}/m.so"], 2,
                     r"m\.mlir:\d+:\d+: error: "),
    "mlir_nul_byte": ({"m.mlir": MLIR.encode().replace(b"stablehlo.while", b"stablehlo.wh\0ile")},
                      ["{hloc}", "{d}/m.mlir", "-o", "{d}/m.so"], 2, r"m\.mlir:\d+:\d+: error: "),
    "mlir_type_nested_10000": ({"m.mlir": "func.func @f(%a: " + "tuple<" * 10000 + "f32" + ">" * 10000 + ") {\n}\n"},
                               ["{hloc}", "{d}/m.mlir", "-o", "{d}/m.so"], 2, r"m\.mlir:1:\d+: error: "),
    "mlir_region_nested_10000": ({"m.mlir": "module {\n" + '"stablehlo.x"() ({\n' * 10000},
                                 ["{hloc}", "{d}/m.mlir", "-o", "{d}/m.so"], 2, r"error: nesting deeper than 64"),
    "mlir_huge_dimension": ({"m.mlir": "func.func @f(%a: tensor<99999999999999999999xf32>) -> tensor<1xf32> {\n}\n"},
                            ["{hloc}", "{d}/m.mlir", "-o", "{d}/m.so"], 2, r"m\.mlir:1:\d+: error: dimension too large"),
    "mlir_huge_constant": ({"m.mlir": "func.func @f() -> tensor<4294967296x4294967296xf32> {\n"
                                      "  %0 = stablehlo.constant dense<1.0> : tensor<4294967296x4294967296xf32>\n"
                                      "  return %0 : tensor<4294967296x4294967296xf32>\n}\n"},
                           ["{hloc}", "{d}/m.mlir", "-o", "{d}/m.so"], 2, r"m\.mlir:2:\d+: error: constant too large"),
}


def limit_memory():
    if os.environ.get("HOSTILE_NO_ULIMIT") != "1":
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_case(hloc, hlorun, name):
    files, argv, want_status, pattern = CASES[name]
    with tempfile.TemporaryDirectory(prefix="hostile-") as d:
        for fname, content in files.items():
            with open(os.path.join(d, fname), "wb") as f:
                f.write(content.encode() if isinstance(content, str) else content)
        args = [a.format(hloc=hloc, hlorun=hlorun, d=d) for a in argv]
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(d, "cache"))
        t0 = time.monotonic()
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            p = subprocess.run(args, capture_output=True, timeout=TIME_LIMIT_S * 4, preexec_fn=limit_memory, env=env)
        except subprocess.TimeoutExpired:
            print("%s: still running after %g s" % (name, TIME_LIMIT_S * 4))
            return 1
        wall = time.monotonic() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        # The budget is CPU time (the CI machine is shared, so wall time says little), except
        # for the timeout case, whose point is the wall clock; the hard stop above is 4x.
        took = wall if "--timeout" in argv else cpu
        err = p.stderr.decode("utf-8", "replace")
        print("%s: exit %d, %.2f s CPU, %.2f s wall, max RSS %d MB\n%s" %
              (name, p.returncode, cpu, wall, r1.ru_maxrss // 1024, err[:2000]))
        ok = True
        if p.returncode != want_status:
            print("FAIL: exit status %d, want %d" % (p.returncode, want_status))
            ok = False
        if took > TIME_LIMIT_S and os.environ.get("HOSTILE_NO_TIME_LIMIT") != "1":
            print("FAIL: took %.2f s, more than %g s" % (took, TIME_LIMIT_S))
            ok = False
        if not re.search(pattern, err, re.M):
            print("FAIL: standard error does not match /%s/" % pattern)
            ok = False
        if re.search(r"Sanitizer|runtime error:|Segmentation|Aborted", err):
            print("FAIL: a crash or sanitizer report")
            ok = False
        return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--list"]:
        print(";".join(sorted(CASES)))
        return 0
    hloc, hlorun, name = sys.argv[1:4]
    return run_case(hloc, hlorun, name)


if __name__ == "__main__":
    sys.exit(main())
