#!/usr/bin/env bash
# verify_all.sh HLOC DIR — parses and verifies every DIR/*/model.hlo; prints each failure
# and a final "N passed, M failed"; exits 1 when any failed.
hloc=$1 dir=$2 pass=0 fail=0
for f in "$dir"/*/model.hlo; do
  if out=$("$hloc" "$f" --emit=none 2>&1); then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL $f"
    echo "$out" | head -3
  fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
