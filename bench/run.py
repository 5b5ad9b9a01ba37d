#!/usr/bin/python3
"""bench/run.py -- hloc's performance suite (issue 7): each workload of bench/workloads/ timed in
one run by `hlorun --benchmark`, numpy, a hand-written fused C loop (bench/c/, built here with
cc -O3 -march=native -fopenmp), OpenBLAS for the GEMM-shaped ones and oneDNN (bench/c/conv_dnnl.c,
when libdnnl-dev is installed) for the convolutions; every output checked
against a float64 numpy reference; STREAM triad as the bandwidth roofline; the models of
../shared/models timed once after a warm-up. Prints a table and writes JSON and markdown.
Not part of CI's pass/fail (tests/bench.cmake only runs it on one small workload).

usage: python3 bench/run.py [--quick] [--only NAME[,NAME]] [--threads N] [--reps N]
                            [--no-models] [--out-dir DIR] [--hlorun PATH] [--isa avx2|avx512]

--isa runs every side as a smaller CPU would on this one: hloc's code for that CPU
(--target-cpu), its runtime kernels capped (HLO_RT_ISA), the C loops built for it, OpenBLAS
(OPENBLAS_CORETYPE) and oneDNN (ONEDNN_MAX_CPU_ISA) held to it.  avx2: an AVX2 + FMA host
(x86-64-v3; OpenBLAS Haswell); avx512: AVX-512 without AMX (as AMD's Zen 4 and 5).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CFLAGS = ["-O3", "-march=native", "-fopenmp"]
# --isa NAME: (hlorun's extra arguments, the C compiler's -march, environment for every side).
ISA_CAPS = {
    "avx2": (["--target-cpu=x86-64-v3"], "-march=x86-64-v3",
             dict(HLO_RT_ISA="avx2", OPENBLAS_CORETYPE="Haswell", ONEDNN_MAX_CPU_ISA="AVX2")),
    "avx512": ([], "-march=native",
               dict(HLO_RT_ISA="avx512", ONEDNN_MAX_CPU_ISA="AVX512_CORE_BF16")),
}
FAST_CORES = ("skylakex", "cooperlake", "sapphirerapids")


# ---------------------------------------------------------------- environment

def bf16_hardware():
    """Whether hloc's bf16 kernels may use bf16 instructions here: AVX512_BF16 or AMX-BF16 in
    the CPU, and HLO_RT_ISA (--isa) not holding the runtime below AVX-512."""
    flags = cpu_flags()
    capped = os.environ.get("HLO_RT_ISA") in ("baseline", "avx2")
    return not capped and ("avx512_bf16" in flags or "amx_bf16" in flags)


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def have_openblas():
    return any(os.path.exists(p) for p in ("/usr/lib/x86_64-linux-gnu/libopenblas.so",
                                           "/usr/lib/libopenblas.so",
                                           "/usr/lib/aarch64-linux-gnu/libopenblas.so"))


def ensure_openblas(notes):
    """Installs libopenblas-dev through apt-get when it is missing (says so)."""
    if have_openblas():
        return True
    cmd = ["apt-get", "install", "-y", "-qq", "libopenblas-dev"]
    if os.geteuid() != 0:
        cmd = ["sudo", "-n"] + cmd
    print("bench: libopenblas-dev is missing; installing it: " + " ".join(cmd), flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0 or not have_openblas():
        notes.append("libopenblas-dev could not be installed; OpenBLAS columns are empty")
        return False
    notes.append("installed libopenblas-dev (apt-get) for the OpenBLAS baselines")
    return True


def have_dnnl():
    """oneDNN's header (Debian: libdnnl-dev); the oneDNN baseline is left out without it."""
    return os.path.exists("/usr/include/dnnl.h") or os.path.exists("/usr/include/oneapi/dnnl/dnnl.h")


def openblas_core(builder):
    exe = builder.build("corename.c", blas=True)
    if not exe:
        return None
    r = subprocess.run([exe], capture_output=True, text=True)
    return r.stdout.strip() or None


def fix_coretype(builder, notes):
    """DESIGN.md: Debian's OpenBLAS 0.3.21 misdetects newer AVX-512 CPUs and falls back to
    slower kernels. When the CPU has AVX-512 and OpenBLAS did not pick an AVX-512 core, set
    OPENBLAS_CORETYPE=SkylakeX for numpy (imported after this) and the C drivers."""
    core = openblas_core(builder)
    if "OPENBLAS_CORETYPE" in os.environ:
        want = os.environ["OPENBLAS_CORETYPE"]
        notes.append("OPENBLAS_CORETYPE=%s (from the environment)" % want)
        if "avx512f" in cpu_flags() and want.lower() not in FAST_CORES and not os.environ.get("HLO_RT_ISA"):
            # Seen on a machine image that exported OPENBLAS_CORETYPE=Haswell: OpenBLAS at half
            # its speed on an AVX-512 CPU while hloc used AVX-512 (docs/performance.md).
            print("bench: warning: OPENBLAS_CORETYPE=%s holds OpenBLAS (and numpy) to a core without "
                  "AVX-512 on this AVX-512 CPU; unset it for a fair baseline" % want, file=sys.stderr)
        return core
    if core and "avx512f" in cpu_flags() and core.lower() not in FAST_CORES:
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
        notes.append("OpenBLAS detected core %s on an AVX-512 CPU; set OPENBLAS_CORETYPE=SkylakeX" % core)
        return openblas_core(builder) or core
    if core:
        notes.append("OpenBLAS core: %s" % core)
    return core


class Builder:
    """Compiles bench/c/*.c once per run into a scratch directory."""

    def __init__(self, outdir, notes, cflags=CFLAGS):
        self.outdir, self.notes, self.cache, self.cflags = os.path.join(outdir, "bin"), notes, {}, cflags
        os.makedirs(self.outdir, exist_ok=True)

    def build(self, src, blas=False):
        if src in self.cache:
            return self.cache[src]
        exe = os.path.join(self.outdir, src[:-2])
        cmd = [os.environ.get("CC", "cc")] + self.cflags + ["-o", exe, os.path.join(HERE, "c", src)]
        cmd += (["-lopenblas"] if blas else []) + (["-ldnnl"] if src.endswith("_dnnl.c") else []) + ["-lm"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            self.notes.append("cc %s failed: %s" % (src, r.stderr.strip()[-300:]))
            exe = None
        self.cache[src] = exe
        return exe


# ---------------------------------------------------------------- workloads
# Each workload: its HLO file, input maker, numpy version (in the inputs' precision), float64
# reference, C and OpenBLAS baselines with their dimension arguments, memory traffic or flops,
# tolerance, and the shape substitutions --quick makes in the HLO text.

def softmax_np(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def gelu_np(x):
    t = x.dtype.type
    return t(0.5) * x * (t(1) + np.tanh(t(0.7978845608) * (x + t(0.044715) * x * x * x)))


def layernorm_np(x, g, b):
    m = x.mean(axis=1, keepdims=True)
    d = x - m
    v = (d * d).mean(axis=1, keepdims=True)
    return d / np.sqrt(v + x.dtype.type(1e-5)) * g + b


def intchain_np(x):
    u = x.view(np.uint32)
    t = u * np.uint32(1664525) + np.uint32(1013904223)
    return (((t ^ (t >> np.uint32(13))) & np.uint32(65535)) + u).view(np.int32)


def mlp_np(x, w1, b1, w2, b2, w3, b3):
    h = np.maximum(x @ w1 + b1, 0)
    h = np.maximum(h @ w2 + b2, 0)
    return h @ w3 + b3


def conv_np(x, w):
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(1, 2))
    return np.einsum("bhwcij,ijck->bhwk", win, w, optimize=True)


def conv_dw_np(x, w):
    """Depthwise 3x3, padding 1, NCHW x, [C,1,3,3] w."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))
    return np.einsum("bchwij,cij->bchw", win, w[:, 0], optimize=True)


def conv_1x1_np(x, w):
    """1x1 convolution, NCHW x, [K,C,1,1] w."""
    return np.einsum("bchw,kc->bkhw", x, w[:, :, 0, 0], optimize=True)


def attention_np(q, k, v):
    s = (q @ np.swapaxes(k, -1, -2)) * q.dtype.type(0.125)
    return softmax_np(s) @ v


def loop_np(s, x, y, n, until_fixed=False):
    t = s.dtype.type(0.9)
    for _ in range(n):
        s1 = np.maximum(s * t + x, y)
        if until_fixed and np.array_equal(s1, s):
            break
        s = s1
    return s


def f32(rng, *shape):
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


def to_bf16(x):
    """float32 -> bf16 bits (uint16, as hlorun reads and writes bf16), round to nearest even."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(b):
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def workloads(quick):
    W = []

    def add(name, hlo, kind, make, np_fn, tol, quick_map=None, c=None, blas=None, nbytes=None,
            flops=None, ref=None, np_reps=None, f32_twin=None, dnnl=None):
        W.append(dict(name=name, hlo=hlo, kind=kind, make=make, np_fn=np_fn, tol=tol,
                      quick_map=quick_map or {}, c=c, blas=blas, nbytes=nbytes, flops=flops,
                      ref=ref, np_reps=np_reps, f32_twin=f32_twin, dnnl=dnnl))

    n = 1 << 20 if quick else 1 << 24
    add("gelu", "gelu.hlo", "mem", lambda r: [f32(r, n)], lambda x: [gelu_np(x)], (1e-5, 1e-6),
        {"16777216": str(n)}, c=("gelu.c", [n]), nbytes=8 * n)
    m = 1024 if quick else 4096
    add("axpy", "axpy.hlo", "mem",
        lambda r: [np.float32(0.5), np.float32(-1.25), np.float32(0.75), f32(r, m, m)],
        lambda a, b, c, x: [a * x + b * x * x - c], (1e-5, 1e-6), {"4096": str(m)},
        c=("axpy.c", [m * m]), nbytes=8 * m * m)
    rs = 1024 if quick else 4096
    add("softmax", "softmax.hlo", "mem", lambda r: [f32(r, rs, 1024) * 4],
        lambda x: [softmax_np(x)], (1e-5, 1e-8), {"4096": str(rs)},
        c=("softmax.c", [rs, 1024]), nbytes=8 * rs * 1024)
    rl = 1024 if quick else 8192
    add("layernorm", "layernorm.hlo", "mem",
        lambda r: [f32(r, rl, 1024) * 3 + 0.5, f32(r, 1024), f32(r, 1024)],
        lambda x, g, b: [layernorm_np(x, g, b)], (1e-4, 1e-5), {"8192": str(rl)},
        c=("layernorm.c", [rl, 1024]), nbytes=8 * rl * 1024)
    q = 2048 if quick else 8192
    add("rowsum", "rowsum.hlo", "mem", lambda r: [f32(r, q, q)], lambda x: [x.sum(axis=1)],
        (1e-4, 1e-3), {"8192": str(q)}, c=("rowsum.c", [q, q]), nbytes=4 * q * q + 4 * q)
    add("colsum", "colsum.hlo", "mem", lambda r: [f32(r, q, q)], lambda x: [x.sum(axis=0)],
        (1e-4, 1e-3), {"8192": str(q)}, c=("colsum.c", [q, q]), nbytes=4 * q * q + 4 * q)
    add("transpose", "transpose.hlo", "mem", lambda r: [f32(r, q, q)],
        lambda x: [np.ascontiguousarray(x.T)], (0, 0), {"8192": str(q)},
        c=("transpose.c", [q, q]), nbytes=8 * q * q)
    add("intchain", "intchain.hlo", "mem",
        lambda r: [r.integers(0, 1 << 31, size=n, dtype=np.int64).astype(np.int32)],
        lambda x: [intchain_np(x)], (0, 0), {"16777216": str(n)}, c=("intchain.c", [n]),
        nbytes=8 * n, ref=lambda x: [intchain_np(x)])
    for s in (512, 1024, 2048):
        add("matmul%d" % s, "matmul%d.hlo" % s, "gemm", lambda r, s=s: [f32(r, s, s), f32(r, s, s)],
            lambda a, b: [a @ b], (1e-4, 1e-4), blas=("matmul_blas.c", [s]), flops=2.0 * s ** 3)
    # PyTorch's Linear (x . W^T): 64 rows, and a decoding step's 4 rows (B read in place)
    for name, rows, cols, depth in (("linear_t", 64, 4096, 1024), ("decode_t", 4, 4096, 4096)):
        add(name, name + ".hlo", "gemm",
            lambda r, rows=rows, cols=cols, depth=depth: [f32(r, rows, depth), f32(r, cols, depth) * 0.05],
            lambda x, w: [x @ w.T], (1e-4, 1e-4), blas=("linear_t_blas.c", [rows, cols, depth]),
            flops=2.0 * rows * cols * depth)
    add("mlp", "mlp.hlo", "mlp",
        lambda r: [f32(r, 256, 784), f32(r, 784, 2048) * 0.05, f32(r, 2048) * 0.1,
                   f32(r, 2048, 2048) * 0.03, f32(r, 2048) * 0.1, f32(r, 2048, 10) * 0.03,
                   f32(r, 10)],
        lambda *a: [mlp_np(*a)], (1e-4, 1e-4), blas=("mlp_blas.c", [256, 784, 2048, 10]),
        flops=2.0 * 256 * (784 * 2048 + 2048 * 2048 + 2048 * 10))
    # bf16 twins of matmul2048 and the MLP (bf16 bits in and out; numpy widens to f32 first).
    # Each also times hloc's f32 workload on the same values and hloc with HLO_GEMM_BF16=f32
    # (the operands widened to f32 first, as before the bf16 kernel).
    mat = lambda r: [to_bf16(f32(r, 2048, 2048)), to_bf16(f32(r, 2048, 2048))]
    add("matmul2048_bf16", "matmul2048_bf16.hlo", "bf16", mat,
        lambda a, b: [from_bf16(a) @ from_bf16(b)], (8e-3, 2e-2), flops=2.0 * 2048 ** 3,
        ref=lambda a, b: [from_bf16(a).astype(np.float64) @ from_bf16(b)], f32_twin="matmul2048.hlo")
    mlp_in = lambda r: [to_bf16(x) for x in (f32(r, 256, 784), f32(r, 784, 2048) * 0.05, f32(r, 2048) * 0.1,
                                              f32(r, 2048, 2048) * 0.03, f32(r, 2048) * 0.1,
                                              f32(r, 2048, 10) * 0.03, f32(r, 10))]
    add("mlp_bf16", "mlp_bf16.hlo", "bf16", mlp_in, lambda *a: [mlp_np(*[from_bf16(x) for x in a])],
        (3e-2, 3e-2), flops=2.0 * 256 * (784 * 2048 + 2048 * 2048 + 2048 * 10),
        ref=lambda *a: [mlp_np(*[from_bf16(x).astype(np.float64) for x in a])], f32_twin="mlp.hlo")
    add("conv", "conv.hlo", "conv",
        lambda r: [f32(r, 8, 56, 56, 64), f32(r, 3, 3, 64, 64) * 0.05],
        lambda x, w: [conv_np(x, w)], (1e-4, 1e-4), blas=("conv_blas.c", [8, 56, 56, 64, 64]),
        flops=2.0 * 8 * 56 * 56 * 64 * 9 * 64, dnnl=("conv_dnnl.c", ["nhwc", 8, 56, 56, 64, 64]))
    # mobilenet_v2's shapes (batch 96, NCHW): a depthwise 3x3 and a 1x1 expansion
    bd = 8 if quick else 96
    add("conv_dw", "conv_dw.hlo", "conv",
        lambda r: [f32(r, bd, 192, 28, 28), f32(r, 192, 1, 3, 3)],
        lambda x, w: [conv_dw_np(x, w)], (1e-4, 1e-5), {"96": str(bd)},
        flops=2.0 * bd * 192 * 28 * 28 * 9, dnnl=("conv_dnnl.c", ["dw", bd, 192, 28, 28, 1]))
    add("conv_1x1", "conv_1x1.hlo", "conv",
        lambda r: [f32(r, bd, 32, 28, 28), f32(r, 192, 32, 1, 1) * 0.2],
        lambda x, w: [conv_1x1_np(x, w)], (1e-4, 1e-4), {"96": str(bd)},
        flops=2.0 * bd * 192 * 28 * 28 * 32, dnnl=("conv_dnnl.c", ["1x1", bd, 32, 28, 28, 192]))
    bt = 1 if quick else 4
    add("attention", "attention.hlo", "attn",
        lambda r: [f32(r, bt, 8, 512, 64) for _ in range(3)],
        lambda q_, k_, v_: [attention_np(q_, k_, v_)], (1e-4, 1e-5), {"4": str(bt)},
        blas=("attention_blas.c", [bt, 8, 512, 64]), flops=4.0 * bt * 8 * 512 * 512 * 64)
    it = 100000 if quick else 1000000
    add("loop", "loop.hlo", "loop",
        lambda r: [f32(r, 16), f32(r, 16) * 0.1, f32(r, 16)],
        lambda s, x, y: [np.int32(it), loop_np(s, x, y, it)], (1e-4, 1e-5),
        {"1000000": str(it)}, c=("loop.c", [it]),
        ref=lambda s, x, y: [np.int32(it), loop_np(s.astype(np.float64), x.astype(np.float64),
                                                   y.astype(np.float64), it, True)],
        np_reps=1)
    return W


def quick_hlo(text, mapping):
    """Applies --quick's size substitutions inside shapes [..] and integer constants."""
    if not mapping:
        return text

    def dims(mo):
        return "[" + ",".join(mapping.get(d, d) for d in mo.group(1).split(",")) + "]"

    text = re.sub(r"\[([0-9,]+)\]", dims, text)
    return re.sub(r"constant\((\d+)\)", lambda mo: "constant(%s)" % mapping.get(mo.group(1), mo.group(1)), text)


# ---------------------------------------------------------------- timing and checking

def median(xs):
    xs = sorted(xs)
    k = len(xs)
    return xs[k // 2] if k % 2 else 0.5 * (xs[k // 2 - 1] + xs[k // 2])


WARMUP_S = 0.1  # untimed calls first, as hlorun --benchmark and bench/c/common.h make


def time_py(fn, reps, budget_s=20.0):
    warm_until = time.perf_counter() + WARMUP_S  # the first call included, as hlorun counts it
    out = fn()
    while time.perf_counter() < warm_until:
        fn()
    ts = []
    start = time.perf_counter()
    for _ in range(max(1, reps)):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1e3)
        if time.perf_counter() - start > budget_s and len(ts) >= 1:
            break
    return median(ts), out


def check(got, ref, tol):
    """Max abs and rel error of got against the float64 reference; ok when every element is
    within atol + rtol*|ref|."""
    rtol, atol = tol
    g = np.asarray(got, dtype=np.float64).reshape(-1)
    r = np.asarray(ref, dtype=np.float64).reshape(-1)
    if g.shape != r.shape:
        return dict(ok=False, err="shape %s vs %s" % (np.shape(got), np.shape(ref)))
    if g.size == 0:
        return dict(ok=True, max_abs=0.0, max_rel=0.0)
    d = np.abs(g - r)
    finite = np.isfinite(g).all()
    ok = bool(finite and (d <= atol + rtol * np.abs(r)).all())
    rel = d / np.maximum(np.abs(r), 1e-30)
    return dict(ok=ok, max_abs=float(d.max()), max_rel=float(rel[np.abs(r) > atol].max())
                if (np.abs(r) > atol).any() else 0.0)


def check_all(outs, refs, tol):
    res = [check(o, r, tol) for o, r in zip(outs, refs)]
    if len(outs) != len(refs):
        return dict(ok=False, err="%d results, expected %d" % (len(outs), len(refs)))
    return dict(ok=all(x["ok"] for x in res),
                max_abs=max(x.get("max_abs", float("inf")) for x in res),
                max_rel=max(x.get("max_rel", float("inf")) for x in res),
                err="; ".join(x["err"] for x in res if "err" in x) or None)


def run_hlorun(args, hlo, inputs, wdir, refs, tol, res, key="hloc", env=None, prefix="in"):
    """One call writes the results (and fills the compile cache), then --benchmark times.
    Results go to res[key + "_ms"], res[key + "_check"] or res[key + "_error"]; env: extra
    environment; prefix: the input files' names (prefix<i>.npy).  bf16 outputs (uint16 bits)
    are compared as float32."""
    base = [args.hlorun, hlo, "--threads", str(args.threads)] + args.hlorun_extra
    for i in range(len(inputs)):
        base += ["--input", os.path.join(wdir, "%s%d.npy" % (prefix, i))]
    odir = os.path.join(wdir, "hout")
    run_env = dict(os.environ, **env) if env else None
    t0 = time.perf_counter()
    try:
        r = subprocess.run(base + ["--output-dir", odir], capture_output=True, text=True,
                           timeout=args.timeout, env=run_env)
    except subprocess.TimeoutExpired:
        res[key + "_error"] = "first call timed out after %d s" % args.timeout
        return
    first_s = time.perf_counter() - t0
    if r.returncode != 0:
        res[key + "_error"] = "exit %d: %s" % (r.returncode, (r.stderr or r.stdout).strip()[-300:])
        return
    outs = [np.load(os.path.join(odir, "out%d.npy" % i)) for i in range(len(refs))
            if os.path.exists(os.path.join(odir, "out%d.npy" % i))]
    outs = [from_bf16(o) if o.dtype == np.uint16 else o for o in outs]
    res[key + "_check"] = check_all(outs, refs, tol)
    reps = max(3, min(args.reps, int(args.budget / max(first_s, 1e-3))))
    try:
        r = subprocess.run(base + ["--benchmark", str(reps)], capture_output=True, text=True,
                           timeout=args.timeout, env=run_env)
    except subprocess.TimeoutExpired:
        res[key + "_error"] = "--benchmark timed out after %d s" % args.timeout
        return
    mo = re.search(r"benchmark:.*median_ms=([0-9.eE+-]+)", r.stdout + r.stderr)
    if r.returncode != 0 or not mo:
        res[key + "_error"] = "benchmark exit %d: %s" % (r.returncode, (r.stderr or r.stdout).strip()[-300:])
        return
    res[key + "_ms"] = float(mo.group(1))


def run_bf16_twins(args, w, inputs, wdir, refs, res):
    """For a bf16 workload: hloc on its f32 twin (the same values widened) and hloc with the
    bf16 kernel off (HLO_GEMM_BF16=f32: operands widened to f32 first)."""
    for i, x in enumerate(inputs):
        np.save(os.path.join(wdir, "f32in%d.npy" % i), from_bf16(x))
    with open(os.path.join(HERE, "workloads", w["f32_twin"])) as f:
        text = f.read()
    twin = os.path.join(wdir, w["f32_twin"])
    with open(twin, "w") as f:
        f.write(text)
    run_hlorun(args, twin, inputs, wdir, refs, w["tol"], res, key="f32", prefix="f32in")
    hlo = os.path.join(wdir, w["hlo"])
    run_hlorun(args, hlo, inputs, wdir, refs, w["tol"], res, key="viaf32", env={"HLO_GEMM_BF16": "f32"})


def run_c(args, builder, spec, blas, wdir, refs, tol, res, key):
    src, dims = spec
    exe = builder.build(src, blas=blas)
    if not exe:
        res[key + "_error"] = "did not compile"
        return
    for f in os.listdir(wdir):
        if f.startswith("c_out"):
            os.unlink(os.path.join(wdir, f))
    cmd = [exe, wdir, str(args.reps), str(args.threads)] + [str(d) for d in dims]
    # The OpenBLAS + C drivers alternate OpenBLAS calls with OpenMP loops: each pool's idle
    # threads spin for a while and take the cores from the other (2 cores of an AMD EPYC
    # family 25: the MLP 44-48 ms against 23.7 ms with the spins cut, numpy 25-27).  Cut them
    # unless the environment says otherwise, so that the baseline is the libraries' speed.
    env = dict(os.environ)
    if blas:
        env.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
        env.setdefault("OMP_WAIT_POLICY", "passive")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env)
    except subprocess.TimeoutExpired:
        res[key + "_error"] = "timed out"
        return
    mo = re.search(r"median_ms=([0-9.eE+-]+)", r.stdout)
    if r.returncode != 0 or not mo:
        res[key + "_error"] = "exit %d: %s" % (r.returncode, r.stderr.strip()[-300:])
        return
    res[key + "_ms"] = float(mo.group(1))
    outs = []
    for i, ref in enumerate(refs):
        p = os.path.join(wdir, "c_out%d.bin" % i)
        dt = np.int32 if np.asarray(ref).dtype.kind in "iu" else np.float32
        outs.append(np.fromfile(p, dtype=dt) if os.path.exists(p) else np.zeros(0))
    res[key + "_check"] = check_all(outs, refs, tol)


def run_workload(args, builder, w, scratch):
    res = dict(name=w["name"], kind=w["kind"], tol=w["tol"])
    wdir = os.path.join(scratch, w["name"])
    os.makedirs(wdir, exist_ok=True)
    with open(os.path.join(HERE, "workloads", w["hlo"])) as f:
        text = f.read()
    if args.quick:
        text = quick_hlo(text, w["quick_map"])
    hlo = os.path.join(wdir, w["hlo"])
    with open(hlo, "w") as f:
        f.write(text)
    rng = np.random.default_rng(sum(map(ord, w["name"])) * 7919)  # seeded per workload
    inputs = [np.asarray(x) for x in w["make"](rng)]
    for i, x in enumerate(inputs):
        np.save(os.path.join(wdir, "in%d.npy" % i), x)
        x.tofile(os.path.join(wdir, "in%d.bin" % i))
    ref_fn = w["ref"] or (lambda *a: w["np_fn"](*[x.astype(np.float64) for x in a]))
    refs = [np.asarray(r) for r in ref_fn(*inputs)]
    res["shapes"] = [list(x.shape) for x in inputs]
    run_hlorun(args, hlo, inputs, wdir, refs, w["tol"], res)
    if w["f32_twin"]:
        run_bf16_twins(args, w, inputs, wdir, refs, res)
    np_reps = w["np_reps"] or args.reps
    ms, outs = time_py(lambda: w["np_fn"](*inputs), np_reps, args.budget)
    res["numpy_ms"] = ms
    res["numpy_check"] = check_all([np.asarray(o) for o in outs], refs, w["tol"])
    if w["c"]:
        run_c(args, builder, w["c"], False, wdir, refs, w["tol"], res, "c")
    if w["blas"] and args.openblas:
        run_c(args, builder, w["blas"], True, wdir, refs, w["tol"], res, "blas")
    if w["dnnl"] and args.dnnl:
        run_c(args, builder, w["dnnl"], False, wdir, refs, w["tol"], res, "dnnl")
    if w["nbytes"]:
        res["bytes"] = w["nbytes"]
    if w["flops"]:
        res["flops"] = w["flops"]
    shutil.rmtree(wdir, ignore_errors=True)
    return res


# ---------------------------------------------------------------- targets and report

def targets(r):
    """The issue's targets for this workload: list of (text, met or None when unmeasured)."""
    h, c, n, b = r.get("hloc_ms"), r.get("c_ms"), r.get("numpy_ms"), r.get("blas_ms")
    d = r.get("dnnl_ms")
    ok_h = h is not None and r.get("hloc_check", {}).get("ok")
    t = []
    k = r["kind"]
    if k == "mem":
        t.append(("<=1.25x C", ok_h and c is not None and h <= 1.25 * c if h and c else None))
        t.append((">=2x numpy", ok_h and h * 2 <= n if h else None))
    elif k == "gemm" and r["name"] in ("matmul512", "matmul1024", "matmul2048"):
        # Issue 18's bar (issue 7's was 0.85x at 1024 and 2048): 0.9x, and 0.8x at 512.
        least = 0.8 if r["name"] == "matmul512" else 0.9
        t.append((">=%gx OpenBLAS" % least, ok_h and h <= b / least if h and b else None))
    elif k in ("mlp", "attn"):
        best = min(x for x in (n, b) if x is not None)
        t.append(("< min(numpy, OpenBLAS+C)", ok_h and h < best if h else None))
    elif k == "conv":
        if r["name"] == "conv":
            t.append((">=0.8x im2col+OpenBLAS", ok_h and h <= b / 0.8 if h and b else None))
        t.append((">=0.9x oneDNN", ok_h and h <= d / 0.9 if h and d else None))
    elif k == "bf16":
        f, v = r.get("f32_ms"), r.get("viaf32_ms")
        if r["name"].startswith("matmul"):
            # Issue 18 asks it of CPUs with bf16 instructions; elsewhere bf16 runs at f32's speed.
            t.append((">=2x hloc f32 GF/s", ok_h and h * 2 <= f if h and f and bf16_hardware() else None))
        else:
            t.append(("< hloc f32", ok_h and h < f if h and f else None))
        t.append(("<= via f32", ok_h and h <= v if h and v else None))
    elif k == "loop":
        t.append(("<=2x C", ok_h and h <= 2 * c if h and c else None))
    return [(s, None if m is None else bool(m)) for s, m in t]


def fmt(x, spec="%.3f"):
    return "-" if x is None else spec % x


def gfs(r, key):
    ms = r.get(key)
    return r["flops"] / (ms * 1e6) if ms and r.get("flops") else None


def report_rows(results, triad):
    head = ["workload", "hloc ms", "C ms", "numpy ms", "OpenBLAS ms", "oneDNN ms", "hloc/C", "numpy/hloc",
            "hloc GB/s", "% triad", "hloc GF/s", "BLAS GF/s", "hloc/BLAS", "oneDNN/hloc", "max rel err",
            "tol (rtol, atol)", "checks", "targets", "hloc f32 ms", "via f32 ms"]
    rows = []
    for r in results:
        h, c, n = r.get("hloc_ms"), r.get("c_ms"), r.get("numpy_ms")
        gbs = r["bytes"] / (h * 1e6) if h and r.get("bytes") else None
        hg, bg = gfs(r, "hloc_ms"), gfs(r, "blas_ms")
        chk = []
        for key, lab in (("hloc_check", "hloc"), ("c_check", "C"), ("numpy_check", "np"),
                         ("blas_check", "BLAS"), ("dnnl_check", "oneDNN")):
            if key in r:
                chk.append("%s:%s" % (lab, "ok" if r[key]["ok"] else "FAIL"))
        for key, lab in (("f32_check", "f32"), ("viaf32_check", "via-f32")):
            if key in r:
                chk.append("%s:%s" % (lab, "ok" if r[key]["ok"] else "FAIL"))
        for key in ("hloc_error", "c_error", "blas_error", "f32_error", "viaf32_error", "dnnl_error"):
            if key in r:
                chk.append("%s ERROR" % key.split("_")[0])
        tg = ", ".join("%s %s" % (s, {True: "met", False: "NOT met", None: "n/a"}[m])
                       for s, m in r["targets"])
        d = r.get("dnnl_ms")
        rows.append([r["name"], fmt(h), fmt(c), fmt(n), fmt(r.get("blas_ms")), fmt(d),
                     fmt(h / c if h and c else None, "%.2f"),
                     fmt(n / h if h and n else None, "%.2f"), fmt(gbs, "%.1f"),
                     fmt(100 * gbs / triad if gbs and triad else None, "%.0f%%"),
                     fmt(hg, "%.1f"), fmt(bg, "%.1f"), fmt(hg / bg if hg and bg else None, "%.2f"),
                     fmt(d / h if h and d else None, "%.2f"),
                     fmt(r.get("hloc_check", {}).get("max_rel"), "%.1e"),
                     "%g, %g" % tuple(r["tol"]), " ".join(chk), tg, fmt(r.get("f32_ms")),
                     fmt(r.get("viaf32_ms"))])
    return head, rows


def print_table(head, rows):
    w = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    for row in [head] + rows:
        print("  ".join(str(x).ljust(k) for x, k in zip(row, w)).rstrip())


def markdown_table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return "\n".join(out)


def peak_rss_run(cmd, timeout):
    """Runs cmd under os.wait4: (rc, stdout, stderr, wall s, ru_maxrss bytes; on Linux that keeps
    the forking process's high-water mark, so hlorun -v's VmHWM is what the table reports)."""
    import signal
    t0 = time.perf_counter()
    out_f, err_f = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    p = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, text=True)
    deadline = t0 + timeout
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            os.kill(p.pid, signal.SIGKILL)
            os.wait4(p.pid, 0)
            raise subprocess.TimeoutExpired(cmd, timeout)
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    out_f.seek(0)
    err_f.seek(0)
    return p.returncode, out_f.read(), err_f.read(), wall, ru.ru_maxrss * 1024


def header_bytes(hloc, path, name):
    """PARAMETER_BYTES and ARENA_BYTES of the generated header (what hlorun's memory check adds)."""
    r = subprocess.run([hloc, path, "--emit=header", "-o", "-"], capture_output=True, text=True)
    got = {}
    for key in ("PARAMETER_BYTES", "RESULT_BYTES", "ARENA_BYTES"):
        mo = re.search(r"_%s (\d+)LL" % key, r.stdout)
        got[key] = int(mo.group(1)) if mo else None
    return got


def run_models(args, triad=None):
    """Every model of ../shared/models and testdata/models: compile s (hloc -O2), hlorun's wall
    time from the cached .so to the first result (load, random inputs, one call), the median
    of --benchmark calls, peak RSS (wait4), parameter and arena bytes; for the generate loop,
    the weight-bandwidth roofline (weights x 8 steps / STREAM triad)."""
    dirs = [os.path.join(ROOT, "..", "shared", "models"), os.path.join(ROOT, "testdata", "models")]
    if args.models_dir:
        dirs = [args.models_dir]
    hloc = os.path.join(os.path.dirname(args.hlorun), "hloc")
    out = []
    for mdir in dirs:
        if not os.path.isdir(mdir):
            continue
        for f in sorted(os.listdir(mdir)):
            if not f.endswith(".hlo"):
                continue
            path = os.path.join(mdir, f)
            res = dict(model=f)
            tmp = tempfile.mkdtemp(prefix="bench-model-")
            so = os.path.join(tmp, "model.so")
            try:
                t0 = time.perf_counter()
                r = subprocess.run([hloc, path, "-o", so, "-O2"] + args.hlorun_extra, capture_output=True, text=True,
                                   timeout=args.model_timeout)
                res["compile_s"] = time.perf_counter() - t0
                if r.returncode != 0:
                    first = (r.stderr.strip().splitlines() or [""])[0]
                    res["note"] = "does not compile (exit %d): %s" % (r.returncode, first[:200].replace("|", "/"))
                else:
                    res.update(header_bytes(hloc, path, f))
                    base = [args.hlorun, so, "--random-inputs", "--threads", str(args.threads), "-v"]
                    rc, so_out, so_err, wall, _ = peak_rss_run(base + ["--output-dir", tmp], args.model_timeout)
                    res["first_result_s"] = wall
                    mo = re.search(r"peak RSS (\d+) bytes \(VmHWM\); arena (\d+) bytes", so_err)
                    if mo:  # hlorun's own high-water mark (ru_maxrss keeps this forking process's)
                        res["peak_rss"], res["ARENA_BYTES"] = int(mo.group(1)), int(mo.group(2))
                    if rc != 0:
                        first = (so_err.strip().splitlines() or [""])[0]
                        res["note"] = "fails (exit %d): %s" % (rc, first[:200].replace("|", "/"))
                    else:
                        rc, so_out, so_err, wall, rss = peak_rss_run(base + ["--benchmark", "3"], args.model_timeout)
                        mo = re.search(r"median_ms=([0-9.eE+-]+)", so_out + so_err)
                        if mo:
                            res["ms"] = float(mo.group(1))
                        else:
                            res["note"] = "benchmark failed: exit %d" % rc
                if f == "generate_loop.hlo" and triad and res.get("PARAMETER_BYTES"):
                    res["roofline_ms"] = res["PARAMETER_BYTES"] * 8 / (triad * 1e9) * 1e3
            except subprocess.TimeoutExpired:
                res["note"] = "skipped: over %d s" % args.model_timeout
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            print("model %-55s %s" % (f, fmt(res.get("ms"), "%.3f ms") if "ms" in res
                                       else res.get("note")), flush=True)
            out.append(res)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (see docs/performance.md)")
    ap.add_argument("--only", help="comma-separated workload names")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--reps", type=int, default=None, help="timed repetitions (default 20, quick 5)")
    ap.add_argument("--budget", type=float, default=20.0,
                    help="seconds of timing per workload and timer before reps are cut")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per hlorun call")
    ap.add_argument("--no-models", action="store_true", help="skip ../shared/models")
    ap.add_argument("--models-dir")
    ap.add_argument("--model-timeout", type=int, default=300)
    ap.add_argument("--no-openblas", action="store_true", help="do not use or install OpenBLAS")
    ap.add_argument("--hlorun", default=os.path.join(ROOT, "build", "hlorun"))
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--isa", choices=sorted(ISA_CAPS),
                    help="run every side as a smaller CPU would (see the top of this file)")
    ap.add_argument("--fail-on-error", action="store_true",
                    help="exit 1 when a timer fails or an output is out of tolerance (smoke test)")
    args = ap.parse_args()
    args.reps = args.reps or (5 if args.quick else 20)
    if not os.access(args.hlorun, os.X_OK):
        sys.exit("bench: %s is not an executable; build first (./build.sh test or cmake)" % args.hlorun)
    os.makedirs(args.out_dir, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="hloc-bench-")
    notes = []
    args.hlorun_extra, cflags = [], CFLAGS
    if args.isa:
        args.hlorun_extra, march, env = ISA_CAPS[args.isa]
        cflags = [march if f == "-march=native" else f for f in CFLAGS]
        os.environ.update(env)
        notes.append("--isa %s: hloc %s, C %s, %s" % (args.isa, " ".join(args.hlorun_extra) or "native", march,
                                                      " ".join("%s=%s" % kv for kv in sorted(env.items()))))
    builder = Builder(scratch, notes, cflags)
    global np
    try:
        names = args.only.split(",") if args.only else None
        # Only the GEMM-shaped workloads need OpenBLAS; configure it before numpy loads a BLAS.
        wants_blas = not names or any(n.startswith(("matmul", "mlp", "conv", "attention", "linear", "decode"))
                                      for n in names)
        args.openblas = not args.no_openblas and wants_blas and ensure_openblas(notes)
        core = fix_coretype(builder, notes) if args.openblas else None
        args.dnnl = have_dnnl()
        if not args.dnnl and (not names or any(n.startswith("conv") for n in names)):
            notes.append("no oneDNN baseline (apt-get install libdnnl-dev)")
        import numpy  # noqa: E402 (after OPENBLAS_CORETYPE)
        np = numpy
        all_w = workloads(args.quick)
        if names:
            unknown = set(names) - {w["name"] for w in all_w}
            if unknown:
                sys.exit("bench: unknown workload(s) %s; known: %s" % (
                    ", ".join(sorted(unknown)), ", ".join(w["name"] for w in all_w)))
            all_w = [w for w in all_w if w["name"] in names]
        triad = None
        sexe = builder.build("stream.c")
        if sexe:
            n = 5000000 if args.quick else 20000000
            r = subprocess.run([sexe, str(n), "10", str(args.threads)], capture_output=True, text=True)
            mo = re.search(r"triad_gbs=([0-9.]+)", r.stdout)
            triad = float(mo.group(1)) if mo else None
        print("bench: %d threads, STREAM triad %s GB/s%s" % (
            args.threads, fmt(triad, "%.1f"), "; " + "; ".join(notes) if notes else ""), flush=True)
        results = []
        for w in all_w:
            print("bench: %s ..." % w["name"], flush=True)
            try:
                r = run_workload(args, builder, w, scratch)
            except Exception as e:  # report and go on with the next workload
                r = dict(name=w["name"], kind=w["kind"], tol=w["tol"], harness_error=repr(e))
                print("bench: %s: harness error %r" % (w["name"], e), flush=True)
            r["targets"] = targets(r) if "harness_error" not in r else []
            for key in ("hloc_error", "c_error", "blas_error", "f32_error", "viaf32_error", "dnnl_error"):
                if key in r:
                    print("bench: %s: %s: %s" % (w["name"], key, r[key]), flush=True)
            results.append(r)
        head, rows = report_rows(results, triad)
        print()
        print_table(head, rows)
        models = [] if args.no_models else run_models(args, triad)
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model_name = re.search(r"Model name:\s*(.*)", lscpu)
        summary = dict(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), quick=args.quick,
                       threads=args.threads, triad_gbs=triad, openblas_core=core,
                       openblas_coretype=os.environ.get("OPENBLAS_CORETYPE"),
                       cpu=model_name.group(1).strip() if model_name else None, notes=notes,
                       workloads=results, models=models)
        with open(os.path.join(args.out_dir, "results.json"), "w") as f:
            json.dump(summary, f, indent=1, default=str)
        md = ["# hloc benchmark, %s%s" % (summary["date"], " (--quick)" if args.quick else ""), "",
              "CPU: %s; %d threads; STREAM triad %s GB/s; %s" % (
                  summary["cpu"], args.threads, fmt(triad, "%.1f"), "; ".join(notes) or "-"),
              "", markdown_table(head, rows), ""]
        if models:
            md += ["| model | compile s | first result s | median ms per call | peak RSS GB | parameters GB | "
                   "arena GB | note |", "|---|---:|---:|---:|---:|---:|---:|---|"]
            gbs = lambda v: fmt(v / 1e9 if v is not None else None, "%.3f")  # noqa: E731
            md += ["| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                m["model"], fmt(m.get("compile_s"), "%.1f"), fmt(m.get("first_result_s"), "%.1f"),
                fmt(m.get("ms"), "%.3f"), gbs(m.get("peak_rss")), gbs(m.get("PARAMETER_BYTES")),
                gbs(m.get("ARENA_BYTES")),
                (m.get("note", "") + (" roofline %.1f ms (weights x 8 / triad)" % m["roofline_ms"]
                                      if "roofline_ms" in m else "")).strip())
                   for m in models]
        with open(os.path.join(args.out_dir, "results.md"), "w") as f:
            f.write("\n".join(md) + "\n")
        print("\nbench: wrote %s and results.md" % os.path.join(args.out_dir, "results.json"))
        if args.fail_on_error:
            bad = [r["name"] for r in results
                   if "harness_error" in r or any(k.endswith("_error") for k in r)
                   or any(not r[k]["ok"] for k in r if k.endswith("_check"))]
            if bad:
                print("bench: errors or mismatches in %s" % ", ".join(bad))
                return 1
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
