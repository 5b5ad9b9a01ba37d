#!/usr/bin/env bash
# determinism.sh HLOC HLORUN ROOT — compiling a module twice (same command, same output path)
# gives byte-identical .so files at -O0 and -O2; one model, input and thread count give
# bit-identical results run after run; and 1, 2 and 4 threads give bit-identical results for
# tests/reliability/dot_reduce.hlo (a threaded GEMM and a reduce) and row_reduce.hlo (a scalar
# sum and a per-channel sum of NCHW, each split into pieces summed on several threads).
# docs/testing.md says which float results may depend on the thread count.
hloc=$1 hlorun=$2 root=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export XDG_CACHE_HOME=$dir/cache
fail() { echo "FAIL: $*"; exit 1; }
models="$root/testdata/examples/mlp.hlo $root/tests/reliability/counter.hlo $root/tests/reliability/dot_reduce.hlo
$root/testdata/golden/conv_gemm_nchw_f32/model.hlo"
for m in $models; do
  [ -f "$m" ] || continue
  for o in -O0 -O2; do
    "$hloc" "$m" $o -o "$dir/m.so" && cp "$dir/m.so" "$dir/first.so" && "$hloc" "$m" $o -o "$dir/m.so" \
      || fail "$m $o does not compile"
    cmp -s "$dir/m.so" "$dir/first.so" || fail "$m $o: two compiles give different .so files"
  done
done
for m in $root/tests/reliability/dot_reduce.hlo $root/tests/reliability/row_reduce.hlo; do
  rm -rf "$dir"/t*.*
  for t in 1 2 4; do
    for k in 1 2 3; do
      "$hlorun" "$m" --random-inputs=11 --threads $t --output-dir "$dir/t$t.$k" || fail "$m: run with $t threads"
    done
  done
  for f in out0.npy out1.npy; do
    for t in 1 2 4; do
      for k in 2 3; do
        cmp -s "$dir/t$t.1/$f" "$dir/t$t.$k/$f" || fail "$m $f: two runs with $t threads differ"
      done
      cmp -s "$dir/t1.1/$f" "$dir/t$t.1/$f" || fail "$m $f: 1 and $t threads differ"
    done
  done
done
echo "determinism: ok"
