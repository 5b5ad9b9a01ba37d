"""Zero-copy rules: an input goes to the model by its own pointer when it is an ndarray (or a
DLPack / __array__ object numpy views without a copy) of the parameter's dtype and shape,
C-contiguous and aligned; anything else is copied into a fresh aligned C-contiguous array.
Pointer identity is read from the Module's parameter pointer array after the call, and the
model reading the caller's buffer is checked through its results."""
import numpy as np

import hloc


def passed_pointer(m, i):
    return m._params[i]


def test_contiguous_aligned_input_is_not_copied(add4):
    a = np.arange(4, dtype=np.float32)
    b = np.ones(4, np.float32)
    add4(a, b)
    assert passed_pointer(add4, 0) == a.ctypes.data and passed_pointer(add4, 1) == b.ctypes.data
    # The model reads the caller's buffer: a change to it shows in the next result.
    a[2] = 100
    assert add4(a, b).tolist() == [1, 2, 101, 4]


def test_read_only_and_view_inputs_are_not_copied(add4):
    base = np.arange(8, dtype=np.float32)
    a = base[4:]  # a contiguous view into someone else's buffer
    a.flags.writeable = False
    add4(a, a)
    assert passed_pointer(add4, 0) == a.ctypes.data == base.ctypes.data + 16


def test_strided_input_is_copied(add4):
    a = np.arange(8, dtype=np.float32)[::2]
    assert add4(a, a).tolist() == [0, 4, 8, 12]
    assert passed_pointer(add4, 0) != a.ctypes.data


def test_unaligned_input_is_copied(add4):
    raw = np.zeros(4 * 4 + 1, np.uint8)
    a = raw[1:].view(np.float32)
    a[:] = [1, 2, 3, 4]
    assert not a.flags.aligned
    assert add4(a, a).tolist() == [2, 4, 6, 8]
    assert passed_pointer(add4, 0) % 4 == 0 and passed_pointer(add4, 0) != a.ctypes.data


def test_big_endian_input_is_converted(add4):
    a = np.array([1, 2, 3, 4], ">f4")
    assert add4(a, a).tolist() == [2, 4, 6, 8]


class DLPackOnly:
    """A tensor from another framework: it speaks DLPack and nothing else."""

    def __init__(self, arr):
        self._arr = arr

    def __dlpack__(self, stream=None):
        return self._arr.__dlpack__()

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


class ArrayOnly:
    def __init__(self, arr):
        self._arr = arr

    def __array__(self, dtype=None):
        return self._arr


def test_dlpack_input_is_not_copied(add4):
    a = np.arange(4, dtype=np.float32)
    assert add4(DLPackOnly(a), a).tolist() == [0, 2, 4, 6]
    assert passed_pointer(add4, 0) == a.ctypes.data


def test_array_protocol_input_is_not_copied(add4):
    a = np.arange(4, dtype=np.float32)
    assert add4(ArrayOnly(a), a).tolist() == [0, 2, 4, 6]
    assert passed_pointer(add4, 0) == a.ctypes.data


def test_results_are_fresh_arrays(add4):
    a = np.ones(4, np.float32)
    y1, y2 = add4(a, a), add4(a, a)
    assert y1.ctypes.data != y2.ctypes.data and y1.flags.owndata and y1.flags.writeable


def test_call_overhead_is_small(add4):
    """The Python call costs far less than 20 us over the C call for f32[4] + f32[4] (a loose
    bound here, against a loaded test machine; docs/python.md records the measured figure)."""
    import timeit
    a = np.ones(4, np.float32)
    n = 2000
    call_us = min(timeit.repeat(lambda: add4(a, a), number=n, repeat=5)) / n * 1e6
    c_us = add4.benchmark(n).median_ms * 1e3
    print("python call %.2f us, C call %.2f us, overhead %.2f us" % (call_us, c_us, call_us - c_us))
    assert call_us - c_us < 100
