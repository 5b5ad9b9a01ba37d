#!/usr/bin/python3
"""bench/patterns.py -- patterns of real dumps outside bench/run.py's workloads, one small HLO
module each (reductions of NCHW, scalar sums, pooling, cumulative sums, gathers, argmax,
select-and-scatter, batched transposes, concatenate, pad, converts, ...), each compiled by
hloc -O2 and timed by `hlorun --benchmark` (median of --reps calls, random inputs), reported
as the bytes it must move over its time: a pattern far below the STREAM triad of
bench/run.py is a slow path to look at.  docs/performance.md ("What the fourth session of
2026-11-28 changed") has a run.  Not part of CI.

usage: python3 bench/patterns.py [--only NAME[,NAME]] [--threads N] [--reps N] [--hloc PATH] [--hlorun PATH]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

cases = {}  # name -> (HLO text, bytes it must move)
ADD = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
"""
def m(name, body, nbytes):
    cases[name] = ("HloModule %s\n%s\nENTRY main {\n%s}\n" % (name, ADD, body), nbytes)
M = 1 << 20
m("reduce_middle", """  x = f32[64,1024,256] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[64,256] reduce(x, z), dimensions={1}, to_apply=add
""", 64*1024*256*4)
m("reduce_nhwc_channels", """  x = f32[32,56,56,64] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[64] reduce(x, z), dimensions={0,1,2}, to_apply=add
""", 32*56*56*64*4)
m("transpose_021", """  x = f32[64,512,512] parameter(0)
  ROOT t = f32[64,512,512] transpose(x), dimensions={0,2,1}
""", 2*64*512*512*4)
m("transpose_102", """  x = f32[512,64,512] parameter(0)
  ROOT t = f32[64,512,512] transpose(x), dimensions={1,0,2}
""", 2*64*512*512*4)
m("transpose_0213_heads", """  x = f32[8,512,16,64] parameter(0)
  ROOT t = f32[8,16,512,64] transpose(x), dimensions={0,2,1,3}
""", 2*8*512*16*64*4)
m("transpose_nhwc_to_nchw", """  x = f32[32,56,56,128] parameter(0)
  ROOT t = f32[32,128,56,56] transpose(x), dimensions={0,3,1,2}
""", 2*32*56*56*128*4)
m("transpose_nchw_to_nhwc", """  x = f32[32,128,56,56] parameter(0)
  ROOT t = f32[32,56,56,128] transpose(x), dimensions={0,2,3,1}
""", 2*32*56*56*128*4)
m("gather_rows", """  t = f32[50000,512] parameter(0)
  i = s32[16384,1] parameter(1)
  ROOT g = f32[16384,512] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,512}
""", 2*16384*512*4)
m("scatter_add_rows", """  t = f32[50000,512] parameter(0)
  i = s32[16384,1] parameter(1)
  u = f32[16384,512] parameter(2)
  ROOT s = f32[50000,512] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
""", (2*50000*512 + 16384*512)*4)
m("maxpool_nhwc", """  x = f32[32,112,112,64] parameter(0)
  i = f32[] constant(-inf)
  ROOT r = f32[32,56,56,64] reduce-window(x, i), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, to_apply=mx
""", (32*112*112*64 + 32*56*56*64)*4)
m("maxpool_nchw", """  x = f32[32,64,112,112] parameter(0)
  i = f32[] constant(-inf)
  ROOT r = f32[32,64,56,56] reduce-window(x, i), window={size=1x1x3x3 stride=1x1x2x2 pad=0_0x0_0x0_1x0_1}, to_apply=mx
""", (32*112*112*64 + 32*56*56*64)*4)
m("avgpool_global_nhwc", """  x = f32[64,7,7,1280] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[64,1280] reduce(x, z), dimensions={1,2}, to_apply=add
""", 64*49*1280*4)
m("cumsum_rw", """  x = f32[64,4096] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[64,4096] reduce-window(x, z), window={size=1x4096 pad=0_0x4095_0}, to_apply=add
""", 2*64*4096*4)
m("dus_cache", """  c = f32[32,2048,8,128] parameter(0)
  u = f32[32,1,8,128] parameter(1)
  p = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT d = f32[32,2048,8,128] dynamic-update-slice(c, u, z, p, z, z)
""", 2 * 32 * 2048 * 8 * 128 * 4)  # the copy of the operand (no donation)
m("convert_bf16", """  x = f32[4096,4096] parameter(0)
  ROOT c = bf16[4096,4096] convert(x)
""", 4096*4096*6)
m("layout_add", """  x = f32[4096,4096]{1,0} parameter(0)
  y = f32[4096,4096]{0,1} parameter(1)
  ROOT a = f32[4096,4096]{1,0} add(x, y)
""", 3*4096*4096*4)
m("argmax_rows", """  x = f32[4096,4096] parameter(0)
  io = s32[4096,4096] iota(), iota_dimension=1
  ni = f32[] constant(-inf)
  z = s32[] constant(0)
  ROOT r = (f32[4096], s32[4096]) reduce(x, io, ni, z), dimensions={1}, to_apply=am
""", 4096*4096*4)
m("select_mask", """  x = f32[4096,4096] parameter(0)
  z = f32[] constant(0)
  zb = f32[4096,4096] broadcast(z), dimensions={}
  p = pred[4096,4096] compare(x, zb), direction=GT
  ROOT s = f32[4096,4096] select(p, x, zb)
""", 2*4096*4096*4)
m("concat_minor", """  x = f32[4096,2048] parameter(0)
  y = f32[4096,2048] parameter(1)
  ROOT c = f32[4096,4096] concatenate(x, y), dimensions={1}
""", 4*4096*2048*4)
m("pad_spatial", """  x = f32[32,112,112,64] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[32,114,114,64] pad(x, z), padding=0_0x1_1x1_1x0_0
""", 2*32*112*112*64*4)
m("iota_onehot", """  i = s32[16384] parameter(0)
  b = s32[16384,1000] broadcast(i), dimensions={0}
  io = s32[16384,1000] iota(), iota_dimension=1
  p = pred[16384,1000] compare(b, io), direction=EQ
  ROOT c = f32[16384,1000] convert(p)
""", 16384*1000*4)
AM = """
am {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  li = pred[] compare(ai, bi), direction=LT
  ei = pred[] and(eq, li)
  t = pred[] or(gt, ei)
  v = f32[] select(t, a, b)
  vi = s32[] select(t, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, vi)
}
"""
h, n = cases["argmax_rows"]
cases["argmax_rows"] = (h.replace("ENTRY main", AM + "\nENTRY main"), n)
SAS = """
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
"""
m("select_and_scatter", """  x = f32[32,112,112,64] parameter(0)
  s = f32[32,56,56,64] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[32,112,112,64] select-and-scatter(x, s, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, select=ge, scatter=add
""", (2 * 32 * 112 * 112 * 64 + 32 * 56 * 56 * 64) * 4)
m("select_and_scatter_nchw", """  x = f32[32,64,112,112] parameter(0)
  s = f32[32,64,56,56] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[32,64,112,112] select-and-scatter(x, s, z), window={size=1x1x3x3 stride=1x1x2x2 pad=0_0x0_0x0_1x0_1}, select=ge, scatter=add
""", (2 * 32 * 112 * 112 * 64 + 32 * 56 * 56 * 64) * 4)
for name in ("select_and_scatter", "select_and_scatter_nchw"):
    h, n = cases[name]
    cases[name] = (h.replace("ENTRY main", SAS + "\nENTRY main"), n)
m("nchw_channel_sum", """  x = f32[96,32,112,112] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[32] reduce(x, z), dimensions={0,2,3}, to_apply=add
""", 96 * 32 * 112 * 112 * 4)
m("scalar_sum", """  x = f32[4096,8192] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0,1}, to_apply=add
""", 4096 * 8192 * 4)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--hloc", default=os.path.join(ROOT, "build", "hloc"))
    ap.add_argument("--hlorun", default=os.path.join(ROOT, "build", "hlorun"))
    a = ap.parse_args()
    names = a.only.split(",") if a.only else sorted(cases)
    with tempfile.TemporaryDirectory() as tmp:
        print("%-24s %10s %8s" % ("pattern", "median ms", "GB/s"))
        for name in names:
            hlo, nbytes = cases[name]
            src, so = os.path.join(tmp, name + ".hlo"), os.path.join(tmp, name + ".so")
            with open(src, "w") as f:
                f.write(hlo)
            c = subprocess.run([a.hloc, src, "-O2", "-o", so], capture_output=True, text=True)
            if c.returncode:
                print("%-24s compile failed: %s" % (name, c.stderr.strip().splitlines()[-1:]))
                continue
            r = subprocess.run([a.hlorun, so, "--random-inputs", "--threads", str(a.threads), "--benchmark",
                                str(a.reps)], capture_output=True, text=True)
            got = re.search(r"median_ms=([0-9.]+)", r.stdout)
            if r.returncode or not got:
                print("%-24s run failed" % name)
                continue
            ms = float(got.group(1))
            print("%-24s %10.3f %8.1f" % (name, ms, nbytes / (ms * 1e6)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
