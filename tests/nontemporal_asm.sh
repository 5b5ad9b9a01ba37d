#!/usr/bin/env bash
# nontemporal_asm.sh HLOC SOURCE_DIR — non-temporal stores (compiler/codegen/nontemporal.c) in
# the listing: a cheap loop with a 64 MiB result (bench/workloads/axpy.hlo) streams by default,
# natively and at x86-64-v3, each such loop ending with an sfence; --nontemporal-min-bytes=off
# turns it off; a 256 MiB transpose (32 x 32 tiles) streams too; a loop whose element costs a tanh (gelu.hlo) and a small result
# (nontemporal_flat_f32) keep ordinary stores by default, and the small one streams with
# --nontemporal-min-bytes=1; so does a layer norm's output pass (a row fusion), whose row stash
# on the stack must stay ordinary: no listing may stream into the stack.
hloc=$1 src=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
check() { # WANT(yes|no) MODEL ARGS...
  local want=$1 model=$2
  shift 2
  if ! "$hloc" "$model" --emit=asm -o "$out" "$@"; then
    echo "FAIL: hloc $model $*"; exit 1
  fi
  local nt fences
  nt=$(grep -cE '^\s+vmovnt' "$out")
  fences=$(grep -cE '^\s+sfence' "$out")
  if [ "$want" = yes ] && { [ "$nt" -eq 0 ] || [ "$fences" -eq 0 ]; }; then
    echo "FAIL: $model $*: $nt non-temporal stores, $fences sfence (expected both)"; exit 1
  fi
  if grep -qE '^\s+vmovnt\S*\s+%[a-z0-9]+, [^(]*\(%rsp' "$out"; then
    echo "FAIL: $model $*: a non-temporal store into the stack (a row's stash is read again at once)"; exit 1
  fi
  if [ "$want" = no ] && [ "$nt" -ne 0 ]; then
    echo "FAIL: $model $*: $nt non-temporal stores (expected none)"; exit 1
  fi
}
check yes "$src/bench/workloads/axpy.hlo"
check yes "$src/bench/workloads/axpy.hlo" --target-cpu=x86-64-v3
check no "$src/bench/workloads/axpy.hlo" --nontemporal-min-bytes=off
check no "$src/bench/workloads/axpy.hlo" --nontemporal-min-bytes=65M
check no "$src/bench/workloads/gelu.hlo"
check yes "$src/bench/workloads/transpose.hlo"
check no "$src/testdata/golden/nontemporal_flat_f32/model.hlo"
check yes "$src/testdata/golden/nontemporal_flat_f32/model.hlo" --nontemporal-min-bytes=1
check no "$src/testdata/golden/nontemporal_rows_80_bytes/model.hlo" --nontemporal-min-bytes=1
check yes "$src/testdata/golden/nontemporal_rows_192_bytes/model.hlo" --nontemporal-min-bytes=1
check no "$src/bench/workloads/layernorm.hlo"
check yes "$src/bench/workloads/layernorm.hlo" --nontemporal-min-bytes=1
echo ok
