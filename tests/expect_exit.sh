#!/usr/bin/env bash
# expect_exit.sh STATUS REGEX CMD... — runs CMD, passes when it exits with STATUS and its
# standard error (or, when empty, its standard output) matches the extended REGEX.
want=$1 regex=$2
shift 2
out=$("$@" 2>&1 >/tmp/expect_exit.$$.out)
rc=$?
[ -z "$out" ] && out=$(cat /tmp/expect_exit.$$.out)
rm -f /tmp/expect_exit.$$.out
if [ "$rc" -ne "$want" ]; then
  echo "FAIL: exit status $rc, expected $want: $*"; echo "$out" | head -5; exit 1
fi
if ! grep -Eq -- "$regex" <<<"$out"; then
  echo "FAIL: output does not match /$regex/: $*"; echo "$out" | head -5; exit 1
fi
echo ok
