#!/usr/bin/python3
"""Data-driven checks of the front end, run by CTest (tests/frontend.cmake).

  check.py roundtrip HLOC FILE.hlo       print(parse(x)) parses and prints identically
  check.py diag HLOC FILE.hlo            FILE.err's first line is hloc's first diagnostic
                                          (hloc run in FILE's folder; NAME.flags adds flags)
  check.py broadcast HLOC FILE.hlo       `// EXPECT: shape` is the ENTRY root's inferred shape
                                          (then the canonicalized module verifies with --strict),
                                          or `// EXPECT-ERROR: line` is the first diagnostic;
                                          `// FLAGS: ...` adds flags
Exit status 0 on success, 1 with an explanation otherwise.
"""
import os
import re
import subprocess
import sys
import tempfile


def run(cmd, cwd=None):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def fail(msg):
    print("FAIL: " + msg)
    return 1


def roundtrip(hloc, path):
    with tempfile.TemporaryDirectory() as tmp:
        p1, p2 = os.path.join(tmp, "p1.hlo"), os.path.join(tmp, "p2.hlo")
        rc, _, err = run([hloc, path, "--emit=hlo", "-o", p1])
        if rc != 0:
            return fail("first parse failed:\n" + err)
        rc, _, err = run([hloc, p1, "--emit=hlo", "-o", p2])
        if rc != 0:
            return fail("the printed module does not parse:\n" + err)
        a, b = open(p1).read().splitlines(), open(p2).read().splitlines()
        if a != b:
            for i, (x, y) in enumerate(zip(a + [""] * len(b), b + [""] * len(a))):
                if x != y:
                    return fail("prints differ at line %d:\n- %s\n+ %s" % (i + 1, x[:300], y[:300]))
    print("ok")
    return 0


def first_diag_line(stderr):
    for ln in stderr.splitlines():
        if ": error: " in ln:
            return ln
    return stderr.splitlines()[0] if stderr else ""


def diag(hloc, path):
    folder, name = os.path.split(os.path.abspath(path))
    base = name[:-4]
    with open(os.path.join(folder, base + ".err")) as f:
        want = f.readline().rstrip("\n")
    flags = []
    if os.path.exists(os.path.join(folder, base + ".flags")):
        flags = open(os.path.join(folder, base + ".flags")).read().split()
    rc, _, err = run([hloc, name, "--emit=none"] + flags, cwd=folder)
    got = first_diag_line(err)
    if rc != 2:
        return fail("expected exit status 2, got %d (stderr: %s)" % (rc, err.strip()[:300]))
    if got != want:
        return fail("first diagnostic differs:\n  want: %s\n  got:  %s" % (want, got))
    print("ok")
    return 0


def header_value(text, key):
    m = re.search(r"^//\s*%s:\s*(.*)$" % re.escape(key), text, re.M)
    return m.group(1).strip() if m else None


def entry_root_shape(printed):
    m = re.search(r"^ENTRY %\S+ \(.*\) -> (.*) \{$", printed, re.M)
    if not m:
        return None
    return re.sub(r"\{[0-9,]*\}", "", m.group(1))


def broadcast(hloc, path):
    folder, name = os.path.split(os.path.abspath(path))
    text = open(path).read()
    flags = (header_value(text, "FLAGS") or "").split()
    want_err = header_value(text, "EXPECT-ERROR")
    want = header_value(text, "EXPECT")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.hlo")
        rc, _, err = run([hloc, name, "--emit=hlo", "-o", out] + flags, cwd=folder)
        if want_err is not None:
            got = first_diag_line(err)
            if rc != 2 or got != want_err:
                return fail("expected the error\n  %s\ngot (exit %d)\n  %s" % (want_err, rc, got))
            print("ok")
            return 0
        if rc != 0:
            return fail("expected shape %s, but hloc failed:\n%s" % (want, err))
        got = entry_root_shape(open(out).read())
        if got != want:
            return fail("inferred shape %s, expected %s" % (got, want))
        canon = os.path.join(tmp, "canon.hlo")
        rc, _, err = run([hloc, name, "--emit=hlo", "--after-passes", "-o", canon] + flags, cwd=folder)
        if rc != 0:
            return fail("canonicalization failed:\n" + err)
        rc, _, err = run([hloc, canon, "--emit=none", "--strict"])
        if rc != 0:
            return fail("the canonicalized module does not verify with --strict:\n" + err)
    print("ok")
    return 0


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    mode, hloc, path = sys.argv[1:]
    hloc = os.path.abspath(hloc) if os.sep in hloc else hloc
    return {"roundtrip": roundtrip, "diag": diag, "broadcast": broadcast}[mode](hloc, path)


if __name__ == "__main__":
    sys.exit(main())
