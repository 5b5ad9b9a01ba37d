#!/usr/bin/env python3
"""Prints XLA CPU's results for the edge cases our golden expectations encode, so they can be
compared with testdata/golden/make.py's formulas (run on a machine with JAX; not in CI)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

jax.config.update("jax_enable_x64", True)
cpu = jax.devices("cpu")[0]


def run(name, f, *args):
    args = [jax.device_put(a, cpu) for a in args]
    out = jax.jit(f)(*args)
    print(name, np.asarray(out).tolist())


f = np.array([-1e10, -129.7, -1.5, -0.5, 0.5, 1.5, 300.2, 1e10, np.nan, np.inf], dtype=np.float32)
for dt in (np.int8, np.int32, np.int64, np.uint8, np.uint32):
    run("convert_f32_to_%s" % np.dtype(dt).name, lambda x, dt=dt: lax.convert_element_type(x, dt), f)
a = np.array([2, -3, 1, -1, 5, 0, 2, 7, -1, -1], dtype=np.int32)
b = np.array([10, 3, -5, 3, 0, 0, -1, 2, -3, -2], dtype=np.int32)
# lax.pow rejects integer operands in JAX, so HLO integer power is checked against XLA's source instead.
y = np.array([6.0e-5, 6.2e-5, 1e-8, 65519.0, 65520.0, 1.0004883, np.nan, -3.0], dtype=np.float32)
run("reduce_precision_e5m10", lambda x: lax.reduce_precision(x, 5, 10), y)
run("reduce_precision_e8m7", lambda x: lax.reduce_precision(x, 8, 7),
    np.array([1e-40, 3.4e38, 1.00390625, 1.005859375], np.float32))
s8 = np.array([-128, -128, -7, 7, 0, 100, 127, -1], dtype=np.int8)
sh = np.array([1, 0, 3, 100, 127, -1, 7, 64], dtype=np.int64).astype(np.int8)
run("shl_s8", lax.shift_left, s8, sh)
run("shrl_s8", lax.shift_right_logical, s8, sh)
run("shra_s8", lax.shift_right_arithmetic, s8, sh)
u8 = np.array([255, 0, 7, 100, 5, 1, 255, 3], dtype=np.uint8)
shu = np.array([1, 0, 3, 100, 8, 255, 7, 2], dtype=np.uint8)
run("shra_u8", lax.shift_right_arithmetic, u8, shu)
i32 = np.array([-2**31, -2**31, -7, 7, 0, 100, 2**31 - 1, -1], dtype=np.int32)
d32 = np.array([-1, 0, 2, -2, 0, 7, 3, 1], dtype=np.int32)
run("div_s32", lax.div, i32, d32)
run("rem_s32", lax.rem, i32, d32)
u32 = np.array([2**32 - 1, 0, 7, 100], dtype=np.uint32)
z32 = np.array([0, 0, 2, 7], dtype=np.uint32)
run("div_u32", lax.div, u32, z32)
run("rem_u32", lax.rem, u32, z32)
na = np.array([np.nan, 1.0, -np.inf, 2.0], dtype=np.float32)
nb = np.array([1.0, np.nan, 3.0, np.inf], dtype=np.float32)
run("max_nan", lax.max, na, nb)
run("min_nan", lax.min, na, nb)
run("sign_f32", lax.sign, np.array([-0.0, 0.0, np.nan, -3.0, 2.0], np.float32))
run("clamp_nan", lambda lo, x, hi: lax.clamp(lo, x, hi), np.float64(0), np.array([np.nan, 5.0]), np.float64(1))
run("s32_to_f16", lambda x: lax.convert_element_type(x, jnp.float16),
    np.array([-2**31, 2**24 + 1, 65504, 65520], np.int32))
run("round_afz", lax.round, np.array([-2.5, -0.5, 0.5, 2.5], np.float32))
run("cbrt_neg", lax.cbrt, np.array([-8.0, -2.5], np.float32))
run("remainder_f32", lax.rem, np.array([-3.5, 7.25, -0.0], np.float32), np.array([2.0, 1.5, 5.0], np.float32))
run("popcnt_s8", lax.population_count, np.array([-128, -1, 7], np.int8))
run("clz_s8", lax.clz, np.array([-128, 0, 1, 7], np.int8))
run("abs_s8", lax.abs, np.array([-128, -5], np.int8))
run("convert_f32_bf16_nan", lambda x: lax.bitcast_convert_type(lax.convert_element_type(x, jnp.bfloat16), jnp.uint16),
    np.array([np.nan, -np.nan, 1e30, 3.4e38], np.float32))
