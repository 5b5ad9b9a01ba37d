#!/usr/bin/python3
"""A StableHLO test file whose expected value is corrupted must fail: copies
../shared/stablehlo/testdata/FILE with one hex digit of the @expected constant changed,
checks that hlorun exits 1 naming the check (file:line, check.expect_*), and that the
original passes (exit 0, "1 check passed").

    stablehlo_corrupt.py HLORUN SHARED_DIR FILE
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def main():
    work = tempfile.mkdtemp(prefix="stablehlo-corrupt-")
    try:
        return check(work, *sys.argv[1:4])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check(work, hlorun, shared, name):
    src = os.path.join(shared, "stablehlo", "testdata", name)
    text = open(src).read()
    env = dict(os.environ, XDG_CACHE_HOME=work)
    good = subprocess.run([hlorun, src], capture_output=True, text=True, env=env)
    if good.returncode != 0 or "check passed" not in good.stdout:
        print("the original does not pass:", good.returncode, good.stdout, good.stderr)
        return 1
    at = text.index("func.func private @expected")
    m = re.compile(r'dense<"0x([0-9A-F]+)"').search(text, at)
    if not m:
        print("no hex constant in @expected")
        return 1
    i = m.start(1) + 5  # a digit inside the first element's bytes
    digit = text[i]
    text = text[:i] + ("1" if digit != "1" else "2") + text[i + 1:]
    bad_path = os.path.join(work, "corrupted_" + name)
    open(bad_path, "w").write(text)
    bad = subprocess.run([hlorun, bad_path], capture_output=True, text=True, env=env)
    print(bad.stderr.strip())
    line = text[:text.index("@check.expect")].count("\n") + 1
    want = "%s:%d:" % (bad_path, line)
    if bad.returncode != 1 or want not in bad.stderr or "check.expect_" not in bad.stderr or "worst element" not in bad.stderr:
        print("expected exit 1 naming %s and the check; got exit %d" % (want, bad.returncode))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
