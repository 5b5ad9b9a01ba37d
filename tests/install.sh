#!/usr/bin/env bash
# install.sh SRC BUILD — installs into a temporary prefix, then compiles a model with the
# installed hloc and builds docs/abi_example.c against the installed runtime with pkg-config.
set -euo pipefail
src=$1 build=$2
prefix=$build/install-test
rm -rf "$prefix" && cmake --install "$build" --prefix "$prefix" > /dev/null
work=$prefix/work && mkdir -p "$work" && cd "$work"
"$prefix/bin/hloc" "$src/testdata/examples/mlp.hlo" -o mlp.so --header mlp.h
export PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name hlort.pc)")
cc -std=c17 "$src/docs/abi_example.c" -I. mlp.so $(pkg-config --cflags --libs hlort) -Wl,-rpath,"$work" -o abi_example
./abi_example | tail -4
test -f "$(dirname "$PKG_CONFIG_PATH")/cmake/hloc/hlocConfig.cmake"
echo "install ok"
