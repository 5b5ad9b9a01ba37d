#!/usr/bin/python3
"""Checks abi_example's output: recomputes relu(x @ w1 + b1) @ w2 + b2 with numpy from the
weights written in mlp.hlo and the input the C program builds (x[i][j] = (8i+j)/32 - 0.5)."""
import re
import sys

import numpy as np


def const(text, name, shape):
    m = re.search(r"%%%s = f32\[[0-9,]+\]\{[0-9,]+\} constant\((.*?)\)\n" % name, text)
    vals = [float(v) for v in re.findall(r"-?[0-9.]+(?:e-?[0-9]+)?", m.group(1))]
    return np.array(vals, dtype=np.float64).reshape(shape)


def main():
    text = open(sys.argv[1]).read()
    w1, b1 = const(text, "w1", (8, 16)), const(text, "b1", (16,))
    w2, b2 = const(text, "w2", (16, 3)), const(text, "b2", (3,))
    x = np.array([[(i * 8 + j) / 32.0 - 0.5 for j in range(8)] for i in range(4)], dtype=np.float32)
    y = np.maximum(x.astype(np.float64) @ w1 + b1, 0) @ w2 + b2
    rows = [ln.split() for ln in open(sys.argv[2]).read().splitlines()[1:]]
    got = np.array([[float(v) for v in r] for r in rows])
    if got.shape != y.shape or not np.allclose(got, y, rtol=1e-5, atol=1e-5):
        print("FAIL: abi_example printed\n%s\nexpected\n%s" % (got, y))
        return 1
    print("abi_example matches numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
