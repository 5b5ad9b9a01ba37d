#!/usr/bin/python3
"""Compares hlorun with what XLA's CPU backend computed (run_xla.py's OUT.npz) on the same cases.

    compare.py --hlorun PATH [--hlorun-arg=-O0] XLA.npz CASE_DIR...

For each case that XLA ran, hlorun runs model.hlo on the same in*.npy files and every result
is compared: integers and pred exactly; floats element by element (NaN matches NaN of any
payload, infinities must match) by their distance in units in the last place of the result's
own type, and by the largest absolute difference relative to the largest |XLA value|.  A float
result agrees when its worst distance is at most --ulp (default 2) or its scaled difference is
at most --scale-eps (default 8) machine epsilons of its type: sums and dot products whose
terms cancel differ by many ulps in a near-zero element when the summation order differs, and
scaling by the tensor's magnitude is what makes those comparable.  Prints one line per case
that is not bit-identical, then `N identical, M within tolerance, K failed` and exits 1 when
K > 0.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

FLOAT_BITS = {"f16": (np.uint16, 16), "bf16": (np.uint16, 16), "f32": (np.uint32, 32), "f64": (np.uint64, 64)}


def ordered(bits, width):
    """Maps float bit patterns to integers whose order is the floats' order (for ulp distance)."""
    b = bits.astype(np.int64) if width < 64 else bits.view(np.int64)
    sign = np.int64(1) << (width - 1)
    if width < 64:
        return np.where(b & sign, sign - b, b + 0)
    return np.where(b < 0, np.int64(-2**63) - b, b)


def as_bits(a, et):
    dt, width = FLOAT_BITS[et]
    if a.dtype.kind in "ui" and a.dtype.itemsize * 8 == width:
        return a.view(dt), width
    if et == "bf16":
        return (a.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16), 16
    return a.astype({"f16": np.float16, "f32": np.float32, "f64": np.float64}[et]).view(dt), width


def is_nan(bits, et):
    if et == "bf16":
        return np.isnan((bits.astype(np.uint32) << 16).view(np.float32))
    return np.isnan(bits.view({"f16": np.float16, "f32": np.float32, "f64": np.float64}[et]))


EPS = {"bf16": 2.0**-8, "f16": 2.0**-11, "f32": 2.0**-24, "f64": 2.0**-53}


def values(bits, et):
    if et == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return bits.view({"f16": np.float16, "f32": np.float32, "f64": np.float64}[et]).astype(np.float64)


def distance(ours, ref, et):
    """(worst ulps, largest |difference| / largest |ref| in epsilons, fraction differing), or
    None when NaN-ness, infinities or an integer value differ."""
    if et in ("c64", "c128"):
        part = "f32" if et == "c64" else "f64"
        d = [distance(np.ascontiguousarray(f(ours)), np.ascontiguousarray(f(ref)), part) for f in (np.real, np.imag)]
        return None if None in d else tuple(max(p[i] for p in d) for i in range(3))
    if et not in FLOAT_BITS:
        o = ours.astype(ref.dtype)
        return (0, 0.0, 0.0) if np.array_equal(o, ref) else None
    a, width = as_bits(ours, et)
    b, _ = as_bits(ref, et)
    na, nb = is_nan(a, et), is_nan(b, et)
    if not np.array_equal(na, nb):
        return None
    keep = ~na
    if not keep.any():
        return (0, 0.0, 0.0)
    va, vb = values(a[keep], et), values(b[keep], et)
    finite = np.isfinite(vb)
    if not np.array_equal(np.isfinite(va), finite) or not np.array_equal(va[~finite], vb[~finite]):
        return None
    oa, ob = ordered(a[keep], width), ordered(b[keep], width)
    ulps = int(np.max(np.abs(oa.astype(object) - ob.astype(object)))) if width == 64 else int(np.max(np.abs(oa - ob)))
    scale = np.max(np.abs(vb[finite])) if finite.any() else 0.0
    diff = np.max(np.abs(va[finite] - vb[finite])) if finite.any() else 0.0
    scaled = diff / scale / EPS[et] if scale > 0 else (0.0 if diff == 0 else float("inf"))
    return ulps, float(scaled), float(np.mean(a[keep] != b[keep]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hlorun", required=True)
    ap.add_argument("--ulp", type=int, default=2)
    ap.add_argument("--scale-eps", type=float, default=8.0)
    ap.add_argument("--hlorun-arg", action="append", default=[], help="passed on to hlorun (e.g. -O0)")
    ap.add_argument("xla")
    ap.add_argument("cases", nargs="+")
    args = ap.parse_args()
    ref = np.load(args.xla)
    meta = json.load(open(os.path.splitext(args.xla)[0] + ".json"))
    identical, close, failed = 0, 0, 0
    for d in args.cases:
        name = os.path.basename(os.path.normpath(d))
        if name not in meta["types"]:
            continue
        ins = sorted(glob.glob(os.path.join(d, "in*.npy")), key=lambda p: int(re.sub(r"\D", "", os.path.basename(p))))
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [args.hlorun, os.path.join(d, "model.hlo"), "--output-dir", tmp] + args.hlorun_arg + [x for p in ins for x in ("--input", p)]
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            if proc.returncode != 0:
                print("FAIL %s: hlorun exit %d: %s" % (name, proc.returncode, proc.stderr.decode().strip()[:300]))
                failed += 1
                continue
            worst, ok = (0, 0.0, 0.0), True
            for i, et in enumerate(meta["types"][name]):
                ours = np.load(os.path.join(tmp, "out%d.npy" % i))
                r = ref["%s/out%d" % (name, i)]
                di = distance(ours, r, et) if ours.shape == r.shape else None
                if di is None:
                    ok, worst = False, None
                    break
                ok = ok and (di[0] <= args.ulp or di[1] <= args.scale_eps)
                worst = tuple(max(p, q) for p, q in zip(worst, di))
        if worst == (0, 0.0, 0.0):
            identical += 1
            continue
        if worst is None:
            print("FAIL %s: values differ (integer, NaN, infinity or shape)" % name)
        else:
            print("%s %s: worst %d ulp, largest difference %.3g eps of the largest value, %.2f%% of elements differ"
                  % ("close" if ok else "FAIL", name, worst[0], worst[1], 100 * worst[2]))
        close += ok
        failed += not ok
    print("%d identical, %d within tolerance, %d failed" % (identical, close, failed))
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())
