#!/usr/bin/python3
"""Writes the .npy inputs and numpy-computed expected values of the host Send/Recv cases of
testdata/runtime/ (host_send*, host_recv*).  The .hlo, .args and .npycmp files are written
by hand; the expected values come from the numpy formulas below, never from hlorun.

Run:  /usr/bin/python3 testdata/runtime/make_sendrecv.py      (commit the result)
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20261125)


def save(name, a):
    np.save(os.path.join(HERE, name), a)


def main():
    # host_send.hlo: y = x*x on channel 1, the column sums of x on channel 2, then x + 1 on
    # channel 1 again (the second send of channel 1).
    x = RNG.uniform(-2, 2, size=(2, 3)).astype(np.float32)
    save("host_send_x.npy", x)
    save("host_send_1_0.npy", (x * x).astype(np.float32))
    save("host_send_2_0.npy", x.sum(axis=0, dtype=np.float32))
    save("host_send_1_1.npy", (x + np.float32(1)).astype(np.float32))
    # host_recv.hlo: two f32[4] recvs on channel 3 (a, then b), result a * x + b; and an s32[2]
    # recv on channel 4, result its reverse.
    xr = RNG.uniform(-1, 1, size=4).astype(np.float32)
    a = RNG.uniform(-1, 1, size=4).astype(np.float32)
    b = RNG.uniform(-1, 1, size=4).astype(np.float32)
    c = np.array([7, -3], dtype=np.int32)
    save("host_recv_x.npy", xr)
    save("host_recv_a.npy", a)
    save("host_recv_b.npy", b)
    save("host_recv_c.npy", c)
    save("host_recv_expected0.npy", (a * xr + b).astype(np.float32))
    save("host_recv_expected1.npy", c[::-1].copy())
    # host_recv_wrong_shape: an f32[3] pushed where the recv wants f32[4].
    save("host_recv_wrong.npy", np.array([1, 2, 3], dtype=np.float32))


if __name__ == "__main__":
    main()
