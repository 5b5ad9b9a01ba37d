#!/usr/bin/env bash
# vmath_asm.sh HLOC MODEL.hlo — the vectorized-math check of docs/ops.md: with
# --target-cpu=x86-64-v3 the listing must use 256-bit registers and, like the native one, call
# no libm function (exp, tanh, erf, log, sin, cos, pow in any spelling).
hloc=$1 model=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for cpu in x86-64-v3 native; do
  if ! "$hloc" "$model" --emit=asm --target-cpu=$cpu -o "$out"; then
    echo "FAIL: hloc $model --target-cpu=$cpu"; exit 1
  fi
  if grep -E 'call.*\b(exp|expf|expm1f?|tanhf?|erff?|logf?|log1pf?|sinf?|cosf?|powf?)(@PLT)?$' "$out"; then
    echo "FAIL: $model --target-cpu=$cpu calls libm"; exit 1
  fi
  if [ $cpu = x86-64-v3 ] && ! grep -q 'ymm' "$out"; then
    echo "FAIL: $model --target-cpu=x86-64-v3 has no 256-bit vector instruction"; exit 1
  fi
done
echo ok
