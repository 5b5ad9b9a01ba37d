#!/usr/bin/env bash
# feeds.sh HLORUN FEED_MODEL.so SCALE_LIB.so NPY_DIR — hlorun's runtime flags end to end on the
# hand-written model of feed_model.c: --infeed, --outfeed-dir (checked with numpy),
# (a missing folder is created), --custom-call-lib, --replicas, --threads, --benchmark with an infeed, and run-time errors
# inside the model (exit status 1, the model's message).  Expected values by hand:
# x = {1,2,3}, infeed = {1.5,-2,3} (f32_3_bf16_exact.npy) -> r0 = 2*(x+infeed) = {5, 0, 12}.
hlorun=$1 feed=$2 scale=$3 npy=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$dir/out"; echo "--- stderr"; cat "$dir/err"; exit 1; }
run() { "$hlorun" "$feed" "$@" >"$dir/out" 2>"$dir/err"; }
X='--input=f32[3] {1, 2, 3}'
INFEED=$npy/f32_3_bf16_exact.npy

run "$X" --infeed "$INFEED" --custom-call-lib "$scale" --outfeed-dir "$dir/feeds" || fail "full run"
printf 'f32[3] {5, 0, 12}\ns32[] 0\n' | cmp -s - "$dir/out" || fail "full run printed something else"
/usr/bin/python3 - "$dir/feeds" <<'PY' || fail "outfeed file"
import os, sys, numpy as np
d = sys.argv[1]
assert sorted(os.listdir(d)) == ["outfeed0.npy"], os.listdir(d)
a = np.load(os.path.join(d, "outfeed0.npy"))
assert a.dtype == np.float32 and a.shape == (3,) and a.tolist() == [5.0, 0.0, 12.0], a
PY

run "$X" --custom-call-lib "$scale"
[ $? -eq 1 ] && grep -q "infeed: the queue is empty" "$dir/err" || fail "missing infeed"
run "$X" --infeed "$npy/f32_2x3.npy" --custom-call-lib "$scale"
[ $? -eq 1 ] && grep -q "the next buffer has 24 bytes but the model wants 12" "$dir/err" || fail "wrong infeed size"
run "$X" --infeed "$INFEED"
[ $? -eq 1 ] && grep -q "custom-call target 'hlorun_test_scale' not found" "$dir/err" || fail "missing custom-call target"
run '--input=f32[3] {-1, 2, 3}' --infeed "$INFEED" --custom-call-lib "$scale"
[ $? -eq 1 ] && grep -q "hlorun: feed_model: x\[0\] is negative" "$dir/err" || fail "run-time error of the model"

rm -rf "$dir/feeds"/*
run "$X" --infeed "$INFEED" --custom-call-lib "$scale" --replicas 3 --outfeed-dir "$dir/feeds" || fail "3 replicas"
for r in 0 1 2; do
  grep -A2 "^replica $r:$" "$dir/out" | grep -q "^s32\[\] $r$" || fail "replica $r does not print its id"
done
[ "$(ls "$dir/feeds" | sort | tr '\n' ' ')" = "outfeed0.npy replica1_outfeed0.npy replica2_outfeed0.npy " ] ||
  fail "outfeed files of 3 replicas: $(ls "$dir/feeds")"

for t in 1 4; do
  run "$X" --infeed "$INFEED" --custom-call-lib "$scale" --threads $t || fail "--threads $t"
  printf 'f32[3] {5, 0, 12}\ns32[] 0\noutfeed 0:\nf32[3] {5, 0, 12}\n' | cmp -s - "$dir/out" || fail "--threads $t printed something else"
done
run "$X" --infeed "$INFEED" --custom-call-lib "$scale" --benchmark 3 || fail "benchmark with an infeed"
grep -Eq "^benchmark: iterations=3 min_ms=[0-9.]+ median_ms=[0-9.]+ max_ms=[0-9.]+$" "$dir/out" || fail "benchmark line"
echo ok
