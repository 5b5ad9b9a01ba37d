#!/usr/bin/python3
"""Generates the golden cases of fft (FFT, IFFT, RFFT, IRFFT) under testdata/golden/fft_*/
(model.hlo + in<i>.npy + expected<i>.npy + tol.json, marked by a GENERATOR file so that
make.py leaves them alone).  It writes only its own case folders.

Expected values come from numpy.fft (pocketfft: an implementation independent of ours),
computed in double precision from the very inputs written (f32/c64 inputs are rounded first)
and rounded to the result type -- never from hlorun.  Where numpy has no answer (a zero
fft_length) the expected result is written by hand: XLA's evaluator gives zeros of the result
shape.  FFT/IFFT operands whose trailing dims differ from fft_length are zero-padded or cut to
it and the result is cut or zero-padded to the operand's shape, as in XLA's HloEvaluator
(CopyDataFromInput / CopyDataToOutput).

Tolerances are absolute, relative to the largest magnitude of the expected array: 2e-6 of it
for c64/f32 (our runtime transforms in double and rounds once, so the error is about one f32
rounding of the largest value) and 1e-12 for c128/f64.

Run:  /usr/bin/python3 testdata/golden/make_fft.py
"""
import json
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make import module, shape_str  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20261125)
NAMES = []

REAL_OF = {np.complex64: np.float32, np.complex128: np.float64}
COMPLEX_OF = {np.float32: np.complex64, np.float64: np.complex128}


def write(name, hlo, inputs, expected, tol):
    NAMES.append(name)
    d = os.path.join(HERE, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    with open(os.path.join(d, "model.hlo"), "w") as f:
        f.write(hlo)
    for i, a in enumerate(inputs):
        np.save(os.path.join(d, "in%d.npy" % i), a)
    for i, a in enumerate(expected):
        np.save(os.path.join(d, "expected%d.npy" % i), a)
    with open(os.path.join(d, "tol.json"), "w") as f:
        json.dump(tol, f, sort_keys=True)
        f.write("\n")
    with open(os.path.join(d, "GENERATOR"), "w") as f:  # make.py leaves this case alone
        f.write("testdata/golden/make_fft.py\n")


def tolerance(expected):
    """atol relative to the largest magnitude (0 for an empty or all-zero result)."""
    single = expected.dtype in (np.float32, np.complex64)
    peak = float(np.max(np.abs(expected))) if expected.size else 0.0
    return {"atol": (2e-6 if single else 1e-12) * peak, "rtol": 0.0}


def random_of(dt, shape):
    if dt in (np.complex64, np.complex128):
        return (RNG.uniform(-1, 1, shape) + 1j * RNG.uniform(-1, 1, shape)).astype(dt)
    return RNG.uniform(-1, 1, shape).astype(dt)


def fit(a, shape):
    """a cut or zero-padded to shape (leading part kept)."""
    out = np.zeros(shape, dtype=a.dtype)
    idx = tuple(slice(0, min(s, t)) for s, t in zip(a.shape, shape))
    out[idx] = a[idx]
    return out


def expected_of(kind, x, lengths, result_shape, result_dt):
    """numpy.fft's answer for XLA's fft of x (computed in double), as result_dt."""
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    if 0 in lengths or 0 in x.shape:
        return np.zeros(result_shape, dtype=result_dt)  # by hand: an empty transform gives zeros
    xd = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    if kind == "FFT":
        r = fit(np.fft.fftn(xd, s=lengths, axes=axes), result_shape)
    elif kind == "IFFT":
        r = fit(np.fft.ifftn(xd, s=lengths, axes=axes), result_shape)
    elif kind == "RFFT":
        r = np.fft.rfftn(xd, s=lengths, axes=axes)
    else:
        r = np.fft.irfftn(xd, s=lengths, axes=axes)
    assert r.shape == tuple(result_shape), (r.shape, result_shape)
    return r.astype(result_dt)


def result_of(kind, dt, shape, lengths):
    shape = list(shape)
    if kind == "RFFT":
        if lengths[-1] != 0:
            shape[-1] = lengths[-1] // 2 + 1
        return COMPLEX_OF[dt], shape
    if kind == "IRFFT":
        shape[-1] = lengths[-1]
        return REAL_OF[dt], shape
    return dt, shape


def fft_case(name, kind, dt, shape, lengths, x=None):
    """One fft instruction of type kind over operand dt[shape] with fft_length lengths."""
    rdt, rshape = result_of(kind, dt, shape, lengths)
    if x is None:
        x = random_of(dt, shape)
    exp = expected_of(kind, x, lengths, rshape, rdt)
    rs = shape_str(rdt, rshape)
    hlo = module(name, [(dt, shape)],
                 ["%%r = %s fft(%%p0), fft_type=%s, fft_length={%s}" % (rs, kind, ",".join(map(str, lengths)))], rs)
    write(name, hlo, [x], [exp], tolerance(exp))


def hermitian_of(dt, shape, lengths):
    """An IRFFT operand that is the RFFT of a real array (consistent DC and Nyquist terms)."""
    real = RNG.uniform(-1, 1, list(shape[:len(shape) - len(lengths)]) + list(lengths))
    axes = tuple(range(len(shape) - len(lengths), len(shape)))
    return np.fft.rfftn(real, s=lengths, axes=axes).astype(dt)


def fft_cases():
    c64, c128 = np.complex64, np.complex128
    # 1-D: lengths 1, 5, 9, a power of two, a large prime (Bluestein), batched
    fft_case("fft_1d_len1_c64", "FFT", c64, (3, 1), [1])
    fft_case("fft_1d_len5_c64", "FFT", c64, (4, 5), [5])
    fft_case("fft_1d_len9_c128", "FFT", c128, (2, 9), [9])
    fft_case("fft_1d_len256_c64", "FFT", c64, (3, 256), [256])
    fft_case("fft_1d_len97_c64", "FFT", c64, (2, 97), [97])
    fft_case("fft_1d_len97_c128", "FFT", c128, (2, 97), [97])
    fft_case("fft_1d_batched_c128", "FFT", c128, (2, 3, 16), [16])
    # 2-D and 3-D
    fft_case("fft_2d_c128", "FFT", c128, (3, 6, 10), [6, 10])
    fft_case("fft_3d_c64", "FFT", c64, (2, 4, 5, 9), [4, 5, 9])
    # operand longer or shorter than fft_length (XLA's evaluator pads and cuts)
    fft_case("fft_1d_padded_c64", "FFT", c64, (3, 6), [8])
    fft_case("fft_1d_cut_c128", "FFT", c128, (2, 10), [7])
    # zero-sized: an empty batch, and a zero fft_length over a non-empty operand
    fft_case("fft_zero_batch_c64", "FFT", c64, (0, 8), [8])
    fft_case("fft_zero_length_c64", "FFT", c64, (3, 4), [0])

    fft_case("fft_ifft_1d_len5_c64", "IFFT", c64, (3, 5), [5])
    fft_case("fft_ifft_1d_len97_c128", "IFFT", c128, (2, 97), [97])
    fft_case("fft_ifft_1d_len64_c128", "IFFT", c128, (4, 64), [64])
    fft_case("fft_ifft_2d_c64", "IFFT", c64, (2, 8, 6), [8, 6])
    fft_case("fft_ifft_3d_c128", "IFFT", c128, (3, 5, 4), [3, 5, 4])

    f32, f64 = np.float32, np.float64
    fft_case("fft_rfft_1d_len1_f32", "RFFT", f32, (4, 1), [1])
    fft_case("fft_rfft_1d_even16_f32", "RFFT", f32, (3, 16), [16])
    fft_case("fft_rfft_1d_odd9_f64", "RFFT", f64, (2, 9), [9])
    fft_case("fft_rfft_1d_odd5_f32", "RFFT", f32, (2, 3, 5), [5])
    fft_case("fft_rfft_1d_len97_f32", "RFFT", f32, (2, 97), [97])
    fft_case("fft_rfft_2d_f32", "RFFT", f32, (2, 6, 10), [6, 10])
    fft_case("fft_rfft_3d_f64", "RFFT", f64, (3, 4, 5), [3, 4, 5])
    fft_case("fft_rfft_zero_f32", "RFFT", f32, (3, 0), [0])
    fft_case("fft_rfft_2d_zero_f64", "RFFT", f64, (2, 0, 5), [0, 5])

    for name, dt, shape, lengths in [
            ("fft_irfft_1d_len1_c64", c64, (2, 1), [1]),
            ("fft_irfft_1d_even16_c64", c64, (3, 9), [16]),
            ("fft_irfft_1d_odd9_c128", c128, (2, 5), [9]),
            ("fft_irfft_1d_len97_c128", c128, (2, 49), [97]),
            ("fft_irfft_2d_c64", c64, (2, 6, 6), [6, 10]),
            ("fft_irfft_3d_even_c128", c128, (4, 5, 4), [4, 5, 6]),
            ("fft_irfft_3d_odd_c64", c64, (3, 4, 3), [3, 4, 5])]:
        fft_case(name, "IRFFT", dt, shape, lengths, hermitian_of(dt, shape, lengths))
    # an arbitrary complex operand: the imaginary parts of the DC and Nyquist terms are ignored
    fft_case("fft_irfft_1d_any_c64", "IRFFT", c64, (2, 5), [8])
    fft_case("fft_irfft_zero_c64", "IRFFT", c64, (3, 0), [0])
    fft_case("fft_irfft_2d_zero_c128", "IRFFT", c128, (0, 4, 3), [4, 5])


if __name__ == "__main__":
    fft_cases()
    print("wrote %d fft cases" % len(NAMES))
