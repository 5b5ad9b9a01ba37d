#!/usr/bin/env bash
# expect_stdout.sh EXPECTED_FILE CMD... — runs CMD, passes when it exits 0 and its standard
# output is exactly the contents of EXPECTED_FILE (shows the diff otherwise).
want=$1
shift
got=$(mktemp)
trap 'rm -f "$got"' EXIT
"$@" >"$got"
rc=$?
if [ "$rc" -ne 0 ]; then
  echo "FAIL: exit status $rc: $*"; exit 1
fi
if ! diff -u "$want" "$got"; then
  echo "FAIL: standard output differs from $want"; exit 1
fi
echo ok
