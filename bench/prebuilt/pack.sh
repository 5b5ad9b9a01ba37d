#!/bin/bash
# bench/prebuilt/pack.sh — everything bench/run.py, bench/mobilenet_torch.py and
# bench/xla_compare.py need on a borrowed x86-64 machine without LLVM 19, a C compiler or
# Debian's libraries, built here into pack/ beside this script (ignored by git), about 18 MB.
#
#   bench/prebuilt/pack.sh [EXTRA.hlo...]     # on the build machine, after the build
#   bash bench/prebuilt/run_packed.sh OUTDIR  # there, from the repository root
#
# For each CPU family the other machine may have, a set (sets/<name>.tar.xz): hloc's objects
# for bench/workloads/*.hlo and mobilenet_v2 keyed as hlorun-wrap expects, objects named
# after each EXTRA file for xla_compare (xla/NAME.so), and bench/c's baselines as cc-wrap
# expects.  native: this machine's CPU (with its flags in sets/native.flags); znver4: AMD
# Zen 4 and 5 (AVX-512; the C loops at x86-64-v4, which Debian 12's GCC knows); znver3: AMD
# with AVX2; x86-64-v4 and x86-64-v3: other Intel hosts (code for AMD may use SSE4A, which
# Intel lacks).  run_packed.sh picks the set from the other machine's /proc/cpuinfo.  Beside them:
# hlorun (it runs .so files without LLVM) and the shared libraries the objects and baselines
# load (oneDNN, OpenBLAS and theirs), xz-compressed.
set -e
cd "$(dirname "$0")/../.."
P=bench/prebuilt/pack
MODEL=testdata/parse/ok/model_mobilenet_v2.hlo
[ -x build/hloc ] && [ -x build/hlorun ] || { echo "pack.sh: build hloc and hlorun first" >&2; exit 2; }
rm -rf $P && mkdir -p $P/sets $P/lib $P/hlo
for f in "$@"; do cp "$f" $P/hlo/; done
# The instruction-set flags that code for this CPU may use (not the hypervisor's or the OS's).
grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
  grep -E '^(avx[a-z0-9_]*|amx[a-z0-9_]*|fma|f16c|bmi[12]|sse4a|gfni|vaes|vpclmulqdq|sha_ni|adx|movbe|abm)$' \
  > $P/sets/native.flags
for S in native znver4 znver3 x86-64-v4 x86-64-v3; do
  O=$P/sets/$S
  mkdir -p $O/bench-so $O/bench-bin $O/xla
  case $S in
    native) T=(); M=(-march=native) ;;
    znver4) T=(--target-cpu=znver4); M=(-march=x86-64-v4 -mtune=znver3) ;;
    znver3) T=(--target-cpu=znver3); M=(-march=znver3) ;;
    x86-64-v*) T=(--target-cpu=$S); M=(-march=$S) ;;
  esac
  for f in bench/workloads/*.hlo $MODEL; do
    ./build/hloc "$f" "${T[@]}" -o $O/bench-so/$(sha256sum "$f" | cut -c1-32).so
  done
  for f in $P/hlo/*.hlo; do
    [ -e "$f" ] && ./build/hloc "$f" "${T[@]}" -o $O/xla/$(basename "$f" .hlo).so
  done
  for c in bench/c/*.c; do
    n=$(basename "$c" .c) libs=()
    grep -q 'blas.h\|cblas' "$c" && libs+=(-lopenblas)
    [[ $n == *_dnnl ]] && libs+=(-ldnnl)
    cc -O3 "${M[@]}" -fopenmp -o $O/bench-bin/$n "$c" "${libs[@]}" -lm
  done
  cp bench/prebuilt/hlorun-wrap bench/prebuilt/cc-wrap $O/
  (cd $P/sets && tar cJf $S.tar.xz $S && rm -rf $S)
done
cp build/hlorun $P/
# The libraries the baselines and objects load that a bare machine lacks.
tmp=$(mktemp -d)
./build/hloc bench/workloads/conv.hlo -o $tmp/conv.so
cc -O2 -o $tmp/probe bench/c/conv_dnnl.c -ldnnl -lm && cc -O2 -o $tmp/probe2 bench/c/matmul_blas.c -lopenblas -lm
ldd $tmp/conv.so $tmp/probe $tmp/probe2 | awk '/=>/ {print $3}' | sort -u | while read -r lib; do
  case $(basename "$lib") in
    libc.so*|libm.so*|libstdc++*|libgcc_s*|ld-linux*) ;;
    *) xz -9c "$lib" > $P/lib/$(basename "$lib").xz ;;
  esac
done
rm -rf "$tmp"
du -sh $P
