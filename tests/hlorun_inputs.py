#!/usr/bin/python3
"""hlorun_inputs.py HLORUN TESTDATA WORKDIR CASE — hlorun's collection inputs (docs/cli.md
"Inputs"): .npz (stored, deflated, zip64), .safetensors (written here by hand: 8-byte header
length, JSON, data), @DIR; by position and by name; zero-copy mapping; the error cases (exit
2, one line naming the parameter and the member); corrupt files never crash; --random-inputs
the same with any thread count.  The fixtures are made here with numpy, at test time.  Every
successful case compares its outputs bit for bit with the same arrays given one --input each.
Registered by tests/hlorun_inputs.cmake; the big case runs only with HLOC_BIG_TESTS=1.
"""
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import zipfile

import numpy as np

HLORUN, DATA, WORK, CASE = sys.argv[1:5]
SIX = os.path.join(DATA, "six.hlo")  # a f32[2,3], b bf16[4], c s32[3], d pred[2], e f32[], f f16[3]
SKIP = 77

A = (np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5 - 1)
B = np.array([0x3F80, 0x4000, 0xBF00, 0x3E80], dtype=np.uint16)  # bf16 bits: 1, 2, -0.5, 0.25
C = np.array([1, -2, 3], dtype=np.int32)
D = np.array([True, False])
E = np.array(2.5, dtype=np.float32)  # 0-d
F = np.array([1, -0.5, 0.125], dtype=np.float16)
SIX_ARRAYS = dict(a=A, b=B, c=C, d=D, e=E, f=F)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(*args, expect=0):
    p = subprocess.run([HLORUN, *args], capture_output=True, text=True, env=dict(os.environ, XDG_CACHE_HOME=os.path.join(WORK, "cache")))
    if p.returncode != expect:
        fail(f"exit {p.returncode}, expected {expect}: {' '.join(args)}\n{p.stderr}{p.stdout[:2000]}")
    return p


def path(name):
    return os.path.join(WORK, name)


def save_npys(arrays, folder=None):
    paths = []
    for name, x in arrays.items():
        p = os.path.join(folder or WORK, name + ".npy")
        np.save(p, x)
        paths.append(p)
    return paths


def outputs(folder):
    return [open(os.path.join(folder, f"out{i}.npy"), "rb").read() for i in range(6)]


def reference():
    ref = path("ref")
    run(SIX, *[f"--input={p}" for p in save_npys(SIX_ARRAYS)], "--output-dir", ref)
    return outputs(ref)


def same_as_reference(*inputs, verbose=False):
    """Runs six.hlo with inputs; its results must be the reference's bit for bit."""
    ref = reference()
    out = path("out")
    shutil.rmtree(out, ignore_errors=True)
    p = run(SIX, *inputs, "--output-dir", out, *(["-v"] if verbose else []))
    got = outputs(out)
    for i, (r, g) in enumerate(zip(ref, got)):
        if r != g:
            fail(f"result {i} differs from the reference with {inputs}")
    return p


def mapped_bytes(stderr):
    m = re.search(r"inputs: (\d+) bytes mapped without a copy, (\d+) bytes copied", stderr)
    if not m:
        fail("no inputs line under -v:\n" + stderr)
    return int(m.group(1)), int(m.group(2))


def bf16_as_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def safetensors(p, tensors, key_order=None, metadata=None):
    """tensors: [(name, dtype, shape, bytes)] in data order; the JSON keys in key_order."""
    header, off = {}, 0
    for name, dt, shape, data in tensors:
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + len(data)]}
        off += len(data)
    keys = key_order or list(header)
    obj = {k: header[k] for k in keys}
    if metadata is not None:
        obj = {"__metadata__": metadata, **obj}
    h = json.dumps(obj).encode()
    h += b" " * (-len(h) % 8)
    with open(p, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(t[3] for t in tensors))


SIX_ST = [("a", "F32", (2, 3), A.tobytes()), ("b", "BF16", (4,), B.tobytes()), ("c", "I32", (3,), C.tobytes()),
          ("d", "BOOL", (2,), D.tobytes()), ("e", "F32", (), E.tobytes()), ("f", "F16", (3,), F.tobytes())]


def expect_error(regex, *args):
    p = run(*args, expect=2)
    if not re.search(regex, p.stderr):
        fail(f"stderr does not match /{regex}/:\n{p.stderr}")


# ---- the cases -----------------------------------------------------------------------------------

def case_npz_positional():
    np.savez(path("w.npz"), A, B, C, D, E, F)
    p = same_as_reference("--input=@" + path("w.npz"), verbose=True)
    mapped, _ = mapped_bytes(p.stderr)
    if mapped == 0:
        fail("a stored .npz was not mapped:\n" + p.stderr)
    same_as_reference("--input", path("w.npz"))  # the @ is optional for a file


def case_npz_mixed():
    np.savez(path("bcd.npz"), B, C, D)
    np.save(path("a.npy"), A)
    np.save(path("f.npy"), F)
    same_as_reference("--input", path("a.npy"), "--input=@" + path("bcd.npz"), "--input=f32[] 2.5",
                      "--input=@" + path("f.npy"))


def case_npz_named():
    np.savez(path("named.npz"), f=F, d=D, b=B, a=A, e=E, c=C)  # stored in this order
    same_as_reference("--input=@" + path("named.npz"))
    np.savez(path("bd.npz"), d=D, b=B)  # b and d by name; a, c, e, f fill the others in order
    save_npys(SIX_ARRAYS)
    same_as_reference("--input", path("a.npy"), "--input=@" + path("bd.npz"), "--input", path("c.npy"),
                      "--input", path("e.npy"), "--input", path("f.npy"))


def case_npz_compressed():
    np.savez_compressed(path("z.npz"), A, B, C, D, E, F)
    same_as_reference("--input=@" + path("z.npz"))


def case_npz_converted():
    """Big-endian and Fortran-order members, and f32 for bf16: copied and converted."""
    np.savez(path("conv.npz"), np.asfortranarray(A.astype(">f4")), bf16_as_f32(B), C.astype(">i4"), D, E.astype(">f4"),
             F.astype(">f2"))
    p = same_as_reference("--input=@" + path("conv.npz"), verbose=True)
    if mapped_bytes(p.stderr)[1] == 0:
        fail("nothing was copied:\n" + p.stderr)


def case_safetensors():
    order = ["f", "e", "d", "c", "b", "a"]  # the JSON order is not the data order
    safetensors(path("w.safetensors"), SIX_ST, key_order=order, metadata={"format": "pt", "note": "caf\u00e9 \"q\""})
    p = same_as_reference("--input=@" + path("w.safetensors"), verbose=True)
    if mapped_bytes(p.stderr)[0] == 0:
        fail("safetensors data was not mapped:\n" + p.stderr)
    # Misaligned: d (2 bytes) first shifts c and e off their 4-byte alignment, so they are
    # copied; every name is a parameter's, so they go by name, and a.npy fills parameter 0.
    np.save(path("a.npy"), A)
    st = {t[0]: t for t in SIX_ST}
    safetensors(path("mis.safetensors"), [st["d"], st["b"], st["c"], st["e"], st["f"]])
    p = same_as_reference("--input", path("a.npy"), "--input=@" + path("mis.safetensors"), verbose=True)
    if mapped_bytes(p.stderr)[1] == 0:
        fail("misaligned tensors were not copied:\n" + p.stderr)


def case_safetensors_names_and_f32_for_bf16():
    st = [("e", "F32", (), E.tobytes()), ("b", "F32", (4,), bf16_as_f32(B).tobytes())] + \
         [t for t in SIX_ST if t[0] not in ("e", "b")]
    safetensors(path("n.safetensors"), st)  # every name is a parameter's: matched by name
    same_as_reference("--input=@" + path("n.safetensors"))


def case_dir():
    d = path("params")
    shutil.rmtree(d, ignore_errors=True)
    os.mkdir(d)
    for i, x in enumerate(SIX_ARRAYS.values()):
        np.save(os.path.join(d, f"p{i:02d}.npy"), x)
    open(os.path.join(d, "README.txt"), "w").write("not an array\n")  # ignored
    same_as_reference("--input=@" + d)
    named = path("named_dir")
    shutil.rmtree(named, ignore_errors=True)
    os.mkdir(named)
    save_npys(SIX_ARRAYS, named)
    same_as_reference("--input=@" + named)


def case_errors():
    np.savez(path("five.npz"), A, B, C, D, E)
    expect_error(r"takes 6 inputs but 5 were given: parameter 5 \(%f\) f16\[3\] has no --input; the last input by "
                 r"position is '.*five.npz:arr_4' \(member 5 of 5 of .*five.npz\)", SIX, "--input=@" + path("five.npz"))
    np.savez(path("seven.npz"), A, B, C, D, E, F, F)
    expect_error(r"takes 6 inputs but 7 were given: '.*seven.npz:arr_6' \(member 7 of 7 of .*seven.npz\) is extra",
                 SIX, "--input=@" + path("seven.npz"))
    np.savez(path("shape.npz"), A.reshape(3, 2), B, C, D, E, F)
    expect_error(r"shape.npz:arr_0: parameter 0 \(%a\) expects f32\[2,3\], got f32\[3,2\]", SIX,
                 "--input=@" + path("shape.npz"))
    np.savez(path("named5.npz"), a=A, b=B, c=C, d=D, f=F)
    expect_error(r"parameter 4 \(%e\) f32\[\] has no --input; 5 matched by name from .*named5.npz", SIX, "--input=@" + path("named5.npz"))
    np.savez(path("a1.npz"), a=A)
    expect_error(r"parameter 0 \(%a\) is named by both '.*a1.npz:a' and '.*a1.npz:a'", SIX, "--input=@" + path("a1.npz"),
                 "--input=@" + path("a1.npz"), *["--input=" + p for p in save_npys(SIX_ARRAYS)[1:]])
    st = [("a", "F64", (2, 3), A.astype(np.float64).tobytes())] + SIX_ST[1:]
    safetensors(path("f64.safetensors"), st)
    expect_error(r"f64.safetensors:a: parameter 0 \(%a\) expects f32\[2,3\], got f64\[2,3\]", SIX,
                 "--input=@" + path("f64.safetensors"))
    os.makedirs(path("empty_dir"), exist_ok=True)
    expect_error(r"empty_dir: the folder has no .npy files", SIX, "--input=@" + path("empty_dir"))
    expect_error(r"empty_dir: is a directory, not a .npy file \(--input=@", SIX, "--input", path("empty_dir"),
                 *["--input=" + p for p in save_npys(SIX_ARRAYS)[1:]])
    with zipfile.ZipFile(path("text.npz"), "w") as z:
        z.writestr("notes.txt", "hello")
    expect_error(r"text.npz: member 'notes.txt' is not a .npy file", SIX, "--input=@" + path("text.npz"))
    with zipfile.ZipFile(path("bz.npz"), "w", compression=zipfile.ZIP_BZIP2) as z:
        z.writestr("arr_0.npy", b"x" * 100)
    expect_error(r"member 'arr_0.npy' uses a zip compression method other than stored or deflate", SIX,
                 "--input=@" + path("bz.npz"))


def case_corrupt():
    np.savez(path("w.npz"), A, B, C, D, E, F)
    good = open(path("w.npz"), "rb").read()
    open(path("half.npz"), "wb").write(good[: len(good) // 2])
    expect_error(r"half.npz: not a valid .npz \(zip\) file", SIX, "--input=@" + path("half.npz"))
    open(path("garbage.npz"), "wb").write(bytes(range(256)) * 4)
    expect_error(r"garbage.npz: not a valid .npz \(zip\) file: no zip end record", SIX, "--input=@" + path("garbage.npz"))
    np.savez_compressed(path("z.npz"), A, B, C, D, E, F)
    z = bytearray(open(path("z.npz"), "rb").read())
    for k in range(60, 70):  # inside the first member's deflated data
        z[k] ^= 0x5A
    open(path("zbad.npz"), "wb").write(z)
    expect_error(r"zbad.npz: member 'arr_0': (the deflated data is corrupt|CRC-32 mismatch|is compressed)|zbad.npz:arr_0: not a valid",
                 SIX, "--input=@" + path("zbad.npz"))
    open(path("long.safetensors"), "wb").write(struct.pack("<Q", 1 << 40) + b"{}")
    expect_error(r"long.safetensors: not a valid .safetensors file: the header length runs past", SIX,
                 "--input=@" + path("long.safetensors"))
    h = b'{"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]'
    open(path("json.safetensors"), "wb").write(struct.pack("<Q", len(h)) + h + bytes(24))
    expect_error(r"json.safetensors: (not a valid .safetensors file|tensor 'a')", SIX, "--input=@" + path("json.safetensors"))
    safetensors(path("st.safetensors"), SIX_ST)
    st = open(path("st.safetensors"), "rb").read()
    open(path("cut.safetensors"), "wb").write(st[:-4])
    expect_error(r"cut.safetensors: tensor 'f': data_offsets \[\d+, \d+\] lie outside", SIX,
                 "--input=@" + path("cut.safetensors"))
    # Random damage: every outcome is a result (0) or an input error (2), never a crash.
    rng = random.Random(17)
    for name, data in (("w.npz", good), ("z.npz", bytes(open(path("z.npz"), "rb").read())), ("st.safetensors", st)):
        for trial in range(40):
            b = bytearray(data)
            if trial % 4 == 0:
                b = b[: rng.randrange(len(b))]
            else:
                for _ in range(rng.randrange(1, 8)):
                    b[rng.randrange(len(b))] = rng.randrange(256)
            p = path("damaged_" + name)
            open(p, "wb").write(b)
            r = subprocess.run([HLORUN, SIX, "--input=@" + p, "--output-dir", path("dmg")], capture_output=True,
                               env=dict(os.environ, XDG_CACHE_HOME=os.path.join(WORK, "cache")))
            if r.returncode not in (0, 2):
                fail(f"damaged {name} (trial {trial}): exit {r.returncode}\n{r.stderr.decode(errors='replace')}")


def case_random_threads():
    model = os.path.join(DATA, "random_types.hlo")
    run(model, "--random-inputs=5", "--threads", "1", "--output-dir", path("t1"))
    run(model, "--random-inputs=5", "--threads", "3", "--output-dir", path("t3"))
    names = sorted(os.listdir(path("t1")))
    if len(names) != 12:
        fail(f"expected 12 results, got {names}")
    for n in names:
        if open(os.path.join(path("t1"), n), "rb").read() != open(os.path.join(path("t3"), n), "rb").read():
            fail(f"{n} differs between --threads 1 and --threads 3")
    x = [np.load(os.path.join(path("t1"), f"out{i}.npy")) for i in range(12)]
    floats = [x[0], bf16_as_f32(x[1]), x[2], x[3], x[6].real, x[10].real]
    for i, v in enumerate(floats):
        if not (v.min() >= -1 and v.max() < 1 and v.min() < -0.99 and v.max() > 0.99 and abs(float(v.mean())) < 0.01):
            fail(f"float result {i} is not uniform in [-1, 1): min {v.min()} max {v.max()} mean {v.mean()}")
    for i in (4, 7, 11):
        if not (x[i].min() == 0 and x[i].max() == 7):
            fail(f"integer result {i} is not in [0, 8)")
    if x[8].max() != 3:
        fail("u2 values are not in [0, 3]")
    if not (0.49 < x[5].mean() < 0.51):
        fail("pred is not half true")
    if not (np.allclose(x[6].imag, x[6].real * 0.5) and np.allclose(x[10].imag, x[10].real * 0.5)):
        fail("complex imaginary parts are not half the real parts")


def npz_data_offset(p, member):
    """Where a stored member's array data starts in the file."""
    with zipfile.ZipFile(p) as z:
        info = z.getinfo(member)
    with open(p, "rb") as f:
        f.seek(info.header_offset)
        local = f.read(30)
        name_len, extra_len = struct.unpack("<HH", local[26:30])
        start = info.header_offset + 30 + name_len + extra_len
        f.seek(start)
        pre = f.read(12)
        header_len = struct.unpack("<H", pre[8:10])[0] + 10 if pre[6] == 1 else struct.unpack("<I", pre[8:12])[0] + 12
    return start + header_len


def case_big():
    """A member of more than 4 GB in an archive of more than 4 GB (zip64), mapped."""
    if os.environ.get("HLOC_BIG_TESTS") != "1":
        print("skipped: set HLOC_BIG_TESTS=1 to run it (writes a 4.4 GB file)")
        sys.exit(SKIP)
    n = 1_100_000_000
    x = np.arange(n, dtype=np.uint32).view(np.float32)  # element i has bits i: every offset checks itself
    # The member's name makes its data 4-byte aligned in the file (np.savez does not align:
    # 30 + len("params.npy") + 20 (zip64 extra) + 128 (.npy header) = 188), so it is mapped.
    np.savez(path("big.npz"), params=x)
    del x
    aligned = npz_data_offset(path("big.npz"), "params.npy") % 4 == 0
    print("big.npz:", os.path.getsize(path("big.npz")), "bytes; data 4-byte aligned:", aligned)
    p = run(os.path.join(DATA, "big_slice.hlo"), "--input=@" + path("big.npz"), "--output-dir", path("bigout"), "-v")
    print(p.stderr.strip())
    head, tail = np.load(path("bigout/out0.npy")), np.load(path("bigout/out1.npy"))
    want_head = np.arange(4, dtype=np.uint32).view(np.float32)
    want_tail = np.arange(n - 4, n, dtype=np.uint32).view(np.float32)
    if head.tobytes() != want_head.tobytes() or tail.tobytes() != want_tail.tobytes():
        fail(f"wrong values: {head.view(np.uint32)} {tail.view(np.uint32)}")
    if aligned and mapped_bytes(p.stderr)[0] < 4 * n:
        fail("the big member was not mapped")
    os.remove(path("big.npz"))


if __name__ == "__main__":
    os.makedirs(WORK, exist_ok=True)
    globals()["case_" + CASE]()
    print("ok")
