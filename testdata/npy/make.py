#!/usr/bin/python3
"""Makes the .npy fixtures hlorun's tests read (numpy writes them: an independent writer).

Each fixture's content is documented here; tests/hlorun_cli.cmake and tools/npy_test.c check
that hlorun reads exactly these values.
"""
import numpy as np

a = np.arange(6, dtype=np.float32).reshape(2, 3)          # [[0,1,2],[3,4,5]]
np.save("f32_2x3.npy", a)
np.save("f32_2x3_big_endian.npy", a.astype(">f4"))
np.save("f32_2x3_fortran.npy", np.asfortranarray(a))
np.save("f64_2x3.npy", a.astype(np.float64))             # wrong dtype for an f32 parameter
np.save("f32_3x2.npy", a.reshape(3, 2))                   # wrong shape for f32[2,3]
np.save("bool_4.npy", np.array([True, False, True, True]))
np.save("c64_2.npy", np.array([1 + 2j, -3.5 + 0.25j], dtype=np.complex64))
np.save("f16_3.npy", np.array([1.5, -2.0, 65504.0], dtype=np.float16))
np.save("i64_big_endian_3.npy", np.array([-1, 2, 2**40], dtype=">i8"))
# Format versions 2.0 and 3.0 (numpy picks the version from the header; force it).
with open("f32_2x3_v2.npy", "wb") as f:
    np.lib.format.write_array(f, a, version=(2, 0))
with open("f32_2x3_v3.npy", "wb") as f:
    np.lib.format.write_array(f, a, version=(3, 0))
with open("f32_2x3.npy", "rb") as f:
    whole = f.read()
open("truncated.npy", "wb").write(whole[:-5])             # data cut short
open("garbage.npy", "wb").write(b"this is not a numpy file at all\n")
# More flavours for tools/npy_test.c.
np.save("c128_big_endian_2.npy", np.array([0.5 - 1.25j, 3 + 4j], dtype=">c16"))
np.save("u8_fortran_2x2x2.npy", np.asfortranarray(np.arange(8, dtype=np.uint8).reshape(2, 2, 2)))  # row-major 0..7
np.save("f64_scalar.npy", np.float64(-0.125))                                                  # shape ()
# For tests/hlorun_cli.cmake: add_f32_2x3.hlo of f32_2x3 + f32_2x3 is 2*a = [[0,2,4],[6,8,10]].
np.save("f32_2x3_times2_1ulp.npy", np.nextafter(2 * a, np.float32(np.inf)))   # one ulp above 2*a
b = 2 * a
b[0, 0] = np.nan
np.save("f32_2x3_times2_nan.npy", b)                       # 2*a with NaN at [0,0]
np.save("f32_3_bf16_exact.npy", np.array([1.5, -2.0, 3.0], dtype=np.float32))  # exact in bf16
np.save("s32_3.npy", np.array([7, -8, 2**31 - 1], dtype=np.int32))
np.save("s32_3_off_by_one.npy", np.array([7, -7, 2**31 - 1], dtype=np.int32))   # [1] differs by 1
np.save("bf16_bits_3_-4_6.npy", np.array([0x4040, 0xC080, 0x40C0], dtype="<u2"))  # bf16 3, -4, 6 as raw bits
