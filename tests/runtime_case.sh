#!/usr/bin/env bash
# runtime_case.sh HLORUN CASE LIB — one golden case of testdata/runtime/: runs
#   HLORUN CASE.hlo <the lines of CASE.args, with @LIB@ replaced by LIB and @DIR@ by a scratch dir>
# and passes when (a) CASE.expected exists, hlorun exits 0 and its standard output equals it,
# or (b) CASE.err exists, hlorun exits 1 (or the status in CASE.rc) and its standard error equals it (then, if
# CASE.outfeed.expected exists, the files hlorun wrote to @DIR@ are checked by its lines
# "FILE VALUES..." with numpy).  Expected files are written by hand from the semantics.
# CASE.npycmp lines "FILE EXPECTED.npy" compare a file hlorun wrote to @DIR@ with an expected
# .npy of testdata/runtime (numpy-computed by make_sendrecv.py): same dtype and shape, values
# within rtol 1e-6.
run=$1 case=$2 lib=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
args=()
if [ -f "$case.args" ]; then
  while IFS= read -r line || [ -n "$line" ]; do
    [ -z "$line" ] && continue
    line=${line//@LIB@/$lib}
    line=${line//@DIR@/$dir}
    line=${line//@CASEDIR@/$(dirname "$case")}
    args+=("$line")
  done <"$case.args"
fi
"$run" "$case.hlo" "${args[@]}" >"$dir/stdout" 2>"$dir/stderr"
rc=$?
if [ -f "$case.expected" ]; then
  [ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc"; cat "$dir/stderr"; exit 1; }
  diff -u "$case.expected" "$dir/stdout" || exit 1
else
  want_rc=1
  [ -f "$case.rc" ] && want_rc=$(cat "$case.rc")
  [ "$rc" -eq "$want_rc" ] || { echo "FAIL: exit status $rc, expected $want_rc"; cat "$dir/stdout" "$dir/stderr"; exit 1; }
  diff -u "$case.err" "$dir/stderr" || exit 1
fi
if [ -f "$case.files" ]; then
  while read -r file want; do
    got=$(/usr/bin/python3 -c "import numpy,sys; a=numpy.load(sys.argv[1]); print(' '.join(str(x) for x in a.ravel().tolist()))" "$dir/$file") || exit 1
    [ "$got" = "$want" ] || { echo "FAIL: $file holds '$got', expected '$want'"; exit 1; }
  done <"$case.files"
fi
if [ -f "$case.npycmp" ]; then
  while read -r file want; do
    /usr/bin/python3 - "$dir/$file" "$(dirname "$case")/$want" <<'PY' || exit 1
import sys
import numpy
got, want = numpy.load(sys.argv[1]), numpy.load(sys.argv[2])
if got.dtype != want.dtype or got.shape != want.shape or not numpy.allclose(got, want, rtol=1e-6, atol=0):
    sys.exit("FAIL: %s holds %s %s %s, expected %s %s %s" % (sys.argv[1], got.dtype, got.shape, got.tolist(),
                                                            want.dtype, want.shape, want.tolist()))
PY
  done <"$case.npycmp"
fi
echo ok
