#!/usr/bin/python3
"""The loop-invariant weights of a generate loop stay where they are (issue 17).

    generate_loop.py HLOC HLORUN WORK_DIR

testdata/models/generate_loop.hlo carries 256 MiB of f32 weights through a while loop of 8
steps that only reads them.  Checks that hloc's arena (hloc -v) is under 10% of the weight
bytes (before: the weights were copied into the loop state, 268 MB), and that hlorun's result
equals numpy's float64 computation of the same loop on the same seeded weights.
"""
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "testdata", "models", "generate_loop.hlo")


def main():
    hloc, hlorun, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    so = os.path.join(work, "generate_loop.so")
    p = subprocess.run([hloc, MODEL, "-v", "-o", so], stderr=subprocess.PIPE, text=True)
    if p.returncode:
        print(p.stderr)
        return 1
    m = re.search(r"arena of (\d+) bytes", p.stderr)
    arena = int(m.group(1)) if m else -1
    weights = 2 * 4096 * 8192 * 4
    print("arena %d bytes, weights %d bytes (%.3f%%)" % (arena, weights, 100.0 * arena / weights))
    if not 0 <= arena < weights // 10:
        print("FAIL: the arena is not under 10% of the weights")
        return 1
    rng = np.random.default_rng(17)
    w1 = (rng.standard_normal((4096, 8192), dtype=np.float32) / 64).astype(np.float32)
    w2 = (rng.standard_normal((8192, 4096), dtype=np.float32) / 90).astype(np.float32)
    x = rng.standard_normal((1, 4096), dtype=np.float32)
    files = []
    for name, a in (("w1", w1), ("w2", w2), ("x", x)):
        files.append(os.path.join(work, name + ".npy"))
        np.save(files[-1], a)
    out = os.path.join(work, "out.npy")
    cmd = [hlorun, so] + sum((["--input", f] for f in files), []) + ["--output", out]
    if subprocess.run(cmd).returncode:
        return 1
    got = np.load(out)
    xd, toks = x.astype(np.float64), np.zeros((8, 4096))
    for i in range(8):
        xd = np.tanh(xd @ w1) @ w2 / 64
        toks[i] = xd[0]
    err = np.abs(got - toks).max() / np.abs(toks).max()
    print("max error %.3g of the largest value" % err)
    for f in files + [out]:
        os.remove(f)
    if not err < 1e-4:
        print("FAIL: result differs from numpy's")
        return 1
    print("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
