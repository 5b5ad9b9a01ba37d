#!/usr/bin/python3
"""Prints vmath.c's table for the f32 sin/cos reduction of large arguments: for E = 1..104,
(2^E * 2/pi) mod 4 in four 26-bit pieces (bits 2^1..2^-24, 2^-25..2^-50, 2^-51..2^-76,
2^-77..2^-102), each exact in a double and exact when multiplied by a 24-bit integer.
pi comes from Machin's formula in integer arithmetic (no floating point anywhere)."""

def arctan_inv(x, scale):
    s, term, n, sign, x2 = 0, scale // x, 1, 1, x * x
    while term:
        s += sign * (term // n)
        term //= x2
        n += 2
        sign = -sign
    return s

K = 600                                            # bits kept below the binary point
scale = 1 << (K + 20)
pi_scaled = 4 * (4 * arctan_inv(5, scale) - arctan_inv(239, scale))   # pi * 2^(K+20)
two_over_pi = (2 << (2 * (K + 20))) // pi_scaled // (1 << 20)          # 2/pi * 2^K

rows = []
for E in range(1, 105):
    parts = []
    for j in range(4):
        sh = 24 + 26 * j                           # keep bits down to 2^-sh
        v = (two_over_pi << E) >> (K - sh)          # floor(2^E 2/pi 2^sh)
        chunk = v % (1 << 26)
        parts.append(chunk / (1 << sh))
    rows.append(parts)
print("static const double SINCOS_2OPI[104][4] = {")
for E, p in enumerate(rows, 1):
    print("    {%s}," % ", ".join(x.hex() if x else "0.0" for x in p))
print("};")
