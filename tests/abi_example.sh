#!/usr/bin/env bash
# abi_example.sh SRC BUILD HLOC — builds mlp.so + mlp.h with hloc, compiles docs/abi_example.c
# against them with cc, runs it, checks that mlp.so has no LLVM dependency, and compares the
# printed numbers with the same program's input pushed through numpy's formula (the weights
# are read back from mlp.hlo by tests/abi_expected.py).
set -euo pipefail
src=$1 build=$2 hloc=$3
work=$build/abi-example
rm -rf "$work" && mkdir -p "$work" && cd "$work"
"$hloc" "$src/testdata/examples/mlp.hlo" -o mlp.so --header mlp.h
if ldd mlp.so | grep -qi llvm; then echo "FAIL: mlp.so depends on LLVM"; ldd mlp.so; exit 1; fi
cc -std=c17 -Wall -Wextra -Werror "$src/docs/abi_example.c" -I. -I"$src/runtime/include" mlp.so "$build/libhlort.a" \
  -lffi -lm -lpthread -ldl -Wl,-rpath,"$work" -o abi_example
./abi_example > out.txt
cat out.txt
/usr/bin/python3 "$src/tests/abi_expected.py" "$src/testdata/examples/mlp.hlo" out.txt
