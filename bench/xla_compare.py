#!/usr/bin/python3
"""bench/xla_compare.py -- hloc against XLA's own CPU backend (through an installed jax), on the
same HLO text, the same inputs and the same machine: both results compared element by element,
both timed (median of --reps calls after a warm-up).  Not part of CI (CI has no jax); run it
where jax is installed.

usage: python3 bench/xla_compare.py [--hlorun PATH] [--so-dir DIR] [--threads N] [--reps N]
                                    [--json OUT] [--seed S] FILE.hlo...

Inputs: one array per ENTRY parameter (floats uniform in [-1, 1), integers in [0, 8), pred 0/1),
written as .npy and given to hlorun with --input (bf16 as raw <u2 bits, as hlorun reads them)
and to XLA as device buffers.  --so-dir DIR: where DIR/NAME.so exists (built beforehand by
`hloc NAME.hlo -o DIR/NAME.so`), hlorun runs that instead of compiling, for machines without
the compiler's LLVM.  Tuple-shaped parameters are skipped with a note.

Pass rule: |hloc - xla| <= atol + rtol * |xla| elementwise, with (rtol, atol) per element type
(f32 1e-3/1e-4, f16 and bf16 2e-2/2e-2, integers and pred exact), atol raised by 1e-6 times the
largest |result| (a long sum's rounding error grows with its terms, not with its value).  Timings: ratio = xla_ms /
hloc_ms, so > 1 means hloc is faster.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

TOL = {"f32": (1e-3, 1e-4), "f64": (1e-9, 1e-12), "f16": (2e-2, 2e-2), "bf16": (2e-2, 2e-2)}
NP_TYPE = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "s8": np.int8,
           "s16": np.int16, "s32": np.int32, "s64": np.int64, "u8": np.uint8, "u16": np.uint16,
           "u32": np.uint32, "u64": np.uint64, "pred": np.bool_}
PARAM = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(\(?[a-z0-9]+\[[^=]*?)\s+parameter\((\d+)\)",
                   re.M)


def entry_block(text):
    """The ENTRY computation's text (to its closing brace at column 0)."""
    m = re.search(r"^ENTRY\b.*$", text, re.M)
    if not m:
        return ""
    end = text.find("\n}", m.end())
    return text[m.end(): end if end >= 0 else len(text)]


def entry_params(text):
    """[(index, type, dims)] of the ENTRY parameters, in parameter order; None when one is a tuple."""
    out = []
    for shape, index in PARAM.findall(entry_block(text)):
        if shape.startswith("("):
            return None
        m = re.match(r"([a-z0-9]+)\[([^\]]*)\]", shape)
        dims = [int(d.strip().lstrip("<=")) for d in m.group(2).split(",") if d.strip()]
        out.append((int(index), m.group(1), dims))
    return [p[1:] for p in sorted(out)]


def make_input(rng, ty, dims):
    """(array for XLA, array for hlorun's .npy)."""
    if ty in ("f32", "f64", "f16", "bf16"):
        v = rng.uniform(-1.0, 1.0, size=dims).astype(np.float32)
        if ty == "bf16":
            import ml_dtypes
            b = v.astype(ml_dtypes.bfloat16)
            return b, b.view(np.uint16)
        v = v.astype(NP_TYPE[ty])
        return v, v
    if ty == "pred":
        v = rng.integers(0, 2, size=dims).astype(np.bool_)
        return v, v
    v = rng.integers(0, 8, size=dims).astype(NP_TYPE[ty])
    return v, v


# ---------------------------------------------------------------- XLA through jax

class Xla:
    """Compiles HLO text on XLA's CPU client; tries the entry points of several jaxlib versions."""

    def __init__(self):
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        jax.config.update("jax_enable_x64", True)  # s64/f64 parameters stay 64-bit
        from jax._src.lib import xla_client as xc
        try:
            from jax._src.lib import _jax as ext
        except ImportError:
            ext = getattr(xc, "_xla", None)
        self.jax, self.xc, self.ext = jax, xc, ext
        self.dev = jax.devices("cpu")[0]
        self.client = self.dev.client
        self.version = jax.__version__

    def compile(self, text):
        ext, xc = self.ext, self.xc
        parse = getattr(ext, "hlo_module_from_text", None) or getattr(getattr(xc, "hlo", None),
                                                                     "hlo_module_from_text")
        proto = parse(text).as_serialized_hlo_module_proto()
        errors = []
        try:
            mlir = ext.mlir.hlo_to_stablehlo(proto)
        except Exception as e:  # noqa: BLE001 -- report and try the next route
            mlir = None
            errors.append("hlo_to_stablehlo: %s" % e)
        opts = xc.CompileOptions()
        routes = []
        if mlir is not None:
            if hasattr(ext, "DeviceList"):
                routes.append(lambda: self.client.compile_and_load(
                    mlir, ext.DeviceList((self.dev,)), opts))
            routes.append(lambda: self.client.compile_and_load(mlir, [self.dev], opts))
            routes.append(lambda: self.client.compile(mlir, opts))
        routes.append(lambda: self.client.compile(xc.XlaComputation(proto), opts))
        for route in routes:
            try:
                return route()
            except Exception as e:  # noqa: BLE001
                errors.append(str(e).splitlines()[0][:200])
        raise RuntimeError("XLA could not compile: " + " | ".join(errors))

    def run(self, exe, inputs, reps):
        bufs = [self.jax.device_put(a, self.dev) for a in inputs]

        def call():
            outs = exe.execute(bufs)
            for o in outs:
                o.block_until_ready()
            return outs

        outs = call()
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            call()
            times.append((time.perf_counter() - t) * 1e3)
        return [np.asarray(o) for o in outs], float(np.median(times))


# ---------------------------------------------------------------- hloc through hlorun

def run_hlorun(args, path, npys, outdir):
    name = os.path.splitext(os.path.basename(path))[0]
    model = path
    if args.so_dir and os.path.exists(os.path.join(args.so_dir, name + ".so")):
        model = os.path.join(args.so_dir, name + ".so")
    cmd = [args.hlorun, model, "--threads", str(args.threads), "--output-dir", outdir,
           "--benchmark", str(args.reps), "-v"]
    for f in npys:
        cmd += ["--input", f]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("hlorun exit %d: %s" % (r.returncode, (r.stderr or r.stdout)[-400:]))
    m = re.search(r"median_ms=([0-9.]+)", r.stdout + r.stderr)
    rss = re.search(r"peak RSS[^0-9]*([0-9][0-9,.]*\s*\w+)", r.stderr)
    outs = []
    i = 0
    while os.path.exists(os.path.join(outdir, "out%d.npy" % i)):
        outs.append(np.load(os.path.join(outdir, "out%d.npy" % i)))
        i += 1
    return outs, float(m.group(1)) if m else None, rss.group(1) if rss else None


def compare(got, want, ty_hint):
    """(ok, worst |diff|, worst relative)."""
    if got.shape != want.shape:
        return False, float("inf"), float("inf")
    if want.dtype.kind == "V" or str(want.dtype) == "bfloat16":
        import ml_dtypes  # noqa: F401 -- registers bfloat16
        want = want.astype(np.float32)
        got = got.view(np.uint16).astype(np.uint32) << 16
        got = got.view(np.float32)
        rtol, atol = TOL["bf16"]
    elif want.dtype.kind == "f":
        rtol, atol = TOL.get({2: "f16", 4: "f32", 8: "f64"}[want.dtype.itemsize])
    else:
        eq = np.array_equal(got.astype(want.dtype), want)
        return eq, 0.0 if eq else 1.0, 0.0
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    d = np.where(both_nan, 0.0, np.abs(g - w))
    atol += 1e-6 * float(np.nanmax(np.abs(w))) if w.size else 0.0  # sums: error grows with scale
    ok = bool(np.all((d <= atol + rtol * np.abs(w)) | both_nan | (g == w)))
    worst = float(np.nanmax(d)) if d.size else 0.0
    rel = float(np.nanmax(d / (np.abs(w) + atol))) if d.size else 0.0
    return ok, worst, rel


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--hlorun", default=os.path.join(os.path.dirname(__file__), "..", "build", "hlorun"))
    ap.add_argument("--so-dir")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args()

    xla = Xla()
    print("xla_compare: jax %s, %d CPUs, hloc threads %d, %d reps" %
          (xla.version, os.cpu_count(), args.threads, args.reps), flush=True)
    rows = []
    failed = 0
    for path in args.files:
        name = os.path.splitext(os.path.basename(path))[0]
        row = {"name": name}
        rows.append(row)
        text = open(path).read()
        params = entry_params(text)
        if params is None:
            row["note"] = "tuple-shaped parameter: skipped"
            print("%-40s skipped (tuple parameter)" % name, flush=True)
            continue
        rng = np.random.default_rng(args.seed)
        with tempfile.TemporaryDirectory() as tmp:
            xin, npys = [], []
            for i, (ty, dims) in enumerate(params):
                a, b = make_input(rng, ty, dims)
                xin.append(a)
                f = os.path.join(tmp, "in%d.npy" % i)
                np.save(f, b)
                npys.append(f)
            try:
                t = time.perf_counter()
                exe = xla.compile(text)
                row["xla_compile_s"] = time.perf_counter() - t
                want, row["xla_ms"] = xla.run(exe, xin, args.reps)
            except Exception as e:  # noqa: BLE001
                row["note"] = "xla: %s" % str(e)[:300]
                print("%-40s XLA failed: %s" % (name, row["note"]), flush=True)
                continue
            try:
                got, row["hloc_ms"], row["hloc_peak_rss"] = run_hlorun(args, path, npys, tmp)
            except Exception as e:  # noqa: BLE001
                row["note"] = "hloc: %s" % str(e)[:300]
                failed += 1
                print("%-40s hloc failed: %s" % (name, row["note"]), flush=True)
                continue
        oks = []
        worst = 0.0
        if len(got) != len(want):
            oks.append(False)
            row["note"] = "%d results from hloc, %d from XLA" % (len(got), len(want))
        else:
            for g, w in zip(got, want):
                ok, d, _ = compare(g, w, None)
                oks.append(ok)
                worst = max(worst, d)
        row["match"] = all(oks)
        row["worst_abs_diff"] = worst
        failed += 0 if row["match"] else 1
        ratio = row["xla_ms"] / row["hloc_ms"] if row.get("hloc_ms") else None
        row["xla_over_hloc"] = ratio
        print("%-40s hloc %10.3f ms  xla %10.3f ms  xla/hloc %6.2f  %s (worst |diff| %.3g)%s" %
              (name, row["hloc_ms"] or -1, row["xla_ms"], ratio or -1,
               "match" if row["match"] else "MISMATCH", worst,
               "  " + row["note"] if "note" in row else ""), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"jax": xla.version, "cpus": os.cpu_count(), "threads": args.threads,
                       "rows": rows}, f, indent=1)
    print("%d passed, %d failed" % (sum(1 for r in rows if r.get("match")), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
