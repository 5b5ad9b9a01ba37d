#!/usr/bin/python3
"""big_copy.py HLORUN -- copies of 8 MiB and more go through the runtime's parallel copy
(compiler/codegen/emit.c cg_copy_leaf -> hlo_rt_copy, pieces of 1 MiB on the pool): a
dynamic-update-slice of a 16 MiB + 12 bytes operand that is not donated (its result is a
copy with one row replaced, the last piece short) and a copy instruction, on 1, 2 and 3
threads, against numpy's result, bit for bit."""
import os
import subprocess
import sys
import tempfile

import numpy as np

HLO = """HloModule big_copy

ENTRY main {
  x = f32[4097,1024] parameter(0)
  u = f32[1,1024] parameter(1)
  r = s32[] constant(4095)
  z = s32[] constant(0)
  d = f32[4097,1024] dynamic-update-slice(x, u, r, z)
  c = f32[4097,1024] copy(x)
  ROOT t = (f32[4097,1024], f32[4097,1024]) tuple(d, c)
}
"""


def main():
    hlorun = sys.argv[1]
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4097, 1024)).astype(np.float32)
    u = rng.standard_normal((1, 1024)).astype(np.float32)
    want = x.copy()
    want[4095] = u[0]
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
        model = os.path.join(tmp, "m.hlo")
        with open(model, "w") as f:
            f.write(HLO)
        np.save(os.path.join(tmp, "x.npy"), x)
        np.save(os.path.join(tmp, "u.npy"), u)
        for threads, stream in [(t, s) for t in (1, 2, 3) for s in (False, True)]:
            out = os.path.join(tmp, "out%d%s" % (threads, "s" if stream else ""))
            run_env = dict(env, HLO_RT_NONTEMPORAL_MIN_BYTES="1") if stream else env
            subprocess.run([hlorun, model, "--input", os.path.join(tmp, "x.npy"), "--input", os.path.join(tmp, "u.npy"),
                            "--threads", str(threads), "--output-dir", out], check=True, env=run_env)
            d, c = np.load(os.path.join(out, "out0.npy")), np.load(os.path.join(out, "out1.npy"))
            how = "%d threads%s" % (threads, ", streamed" if stream else "")
            if not np.array_equal(d.view(np.uint32), want.view(np.uint32)):
                print("FAIL: dynamic-update-slice on %s" % how)
                return 1
            if not np.array_equal(c.view(np.uint32), x.view(np.uint32)):
                print("FAIL: copy on %s" % how)
                return 1
    print("big_copy: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
