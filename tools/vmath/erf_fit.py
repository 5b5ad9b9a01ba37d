#!/usr/bin/python3
"""Fits the f32 erf polynomials of compiler/codegen/vmath.c (ERF_SMALL, ERF_MID, ERF_HIGH):
least squares at 4000 Chebyshev nodes per interval against Python's math.erf (double), then
checked by evaluating the monomial form with float32 Horner steps. Prints the coefficients
(lowest degree first) and the maximum absolute error of the float32 evaluation."""
import math
import numpy as np
from numpy.polynomial import chebyshev as C

erf = np.vectorize(math.erf)


def fit(lo, hi, deg, fn, var):
    k = np.arange(4000)
    xs = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / 4000)
    p = C.cheb2poly(C.chebfit(var(xs), fn(xs), deg))
    xt = np.linspace(lo, hi, 200001)
    vt = var(xt).astype(np.float32)
    acc = np.float32(p[-1])
    for a in p[-2::-1]:
        acc = np.float32(acc * vt + np.float32(a))
    return p, np.abs(acc.astype(np.float64) - fn(xt)).max()


def erf_over_x(x):
    safe = np.where(x == 0, 1.0, x)
    return np.where(x == 0, 2 / math.sqrt(math.pi), erf(x) / safe)


def show(name, p, err):
    print("%s (max error %.3g): {%s}" % (name, err, ", ".join(repr(float(a)) for a in p)))


show("ERF_SMALL, erf(x)/x in x^2 on [0, 1)", *fit(0, 1.0, 6, erf_over_x, lambda x: x * x))
show("ERF_MID, erf(x) in x - 1.625 on [1, 2.25)", *fit(1, 2.25, 10, erf, lambda x: x - 1.625))
show("ERF_HIGH, erf(x) in x - 3.085 on [2.25, 3.92)", *fit(2.25, 3.92, 10, erf, lambda x: x - 3.085))
