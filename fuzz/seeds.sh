#!/usr/bin/env bash
# fuzz/seeds.sh OUT — fills OUT/{parse,npy,literal,codegen,mlir} with the fuzz targets' seed corpora,
# taken from testdata (docs/testing.md "Fuzzing").  Literal seeds are the first literal of every
# golden model's constants, behind the two bytes literal_fuzz reads as element type and shape.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1
mkdir -p "$out"/{parse,npy,literal,codegen,mlir}
cp testdata/mlir/ok/*.mlir testdata/mlir/err/*.mlir "$out/mlir/"
if [ -d ../shared/stablehlo/testdata ]; then  # the small StableHLO test files
  find ../shared/stablehlo/testdata -name '*.mlir' -size -8k | sort | sed -n 1,200p | while read -r f; do cp "$f" "$out/mlir/"; done
fi
cp testdata/parse/ok/*.hlo testdata/parse/err/*.hlo testdata/verify/err/*.hlo testdata/broadcast/*.hlo "$out/parse/"
find testdata -name '*.npy' -size -64k | while read -r f; do cp "$f" "$out/npy/$(echo "$f" | tr / _)"; done
for f in testdata/golden/*/model.hlo testdata/parse/ok/*.hlo; do
  [ "$(stat -c %s "$f")" -le 16384 ] && cp "$f" "$out/codegen/$(basename "$(dirname "$f")")_$(basename "$f")"
done
# element-type byte (index into literal_fuzz.c's table) + shape byte + text
seed() { printf "\\x$(printf %02x "$1")\\x$(printf %02x "$2")%s" "$3" > "$out/literal/$4"; }
seed 8 0 'f32[] 1.5' f32_scalar
seed 8 66 'f32[2,3] {{1,2,3},{4,5,6}}' f32_2x3
seed 2 64 's32[1] {-2147483648}' s32_min
seed 9 67 'f64[4] {nan, inf, -inf, -0}' f64_special
seed 0 65 'pred[2] {true, false}' pred
seed 10 65 'c64[2] {(1, 2), (3, -4)}' c64
seed 7 64 'bf16[1] {0.1}' bf16
seed 12 67 's4[4] {-8, 7, 0, 1}' s4
seed 14 65 'f8e4m3fn[2] {448, -0.5}' f8
seed 3 130 's64[3,1] {{9223372036854775807},{0},{-1}}' s64
