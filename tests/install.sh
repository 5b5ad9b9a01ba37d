#!/usr/bin/env bash
# install.sh SRC BUILD — installs into a temporary prefix, compiles a model with the installed
# hloc, then builds docs/abi_example.c against the installed runtime twice — with pkg-config
# and as a CMake project using find_package(hloc) / hloc::hlort — and checks both programs'
# output against numpy (tests/abi_expected.py).
set -euo pipefail
src=$1 build=$2
prefix=$build/install-test
rm -rf "$prefix" && cmake --install "$build" --prefix "$prefix" > /dev/null
work=$prefix/work && mkdir -p "$work" && cd "$work"
"$prefix/bin/hloc" "$src/testdata/examples/mlp.hlo" -o mlp.so --header mlp.h
if ldd mlp.so | grep -qi llvm; then echo "FAIL: mlp.so depends on LLVM"; exit 1; fi

export PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name hlort.pc)")
cc -std=c17 "$src/docs/abi_example.c" -I. mlp.so $(pkg-config --cflags --libs hlort) -Wl,-rpath,"$work" -o abi_example
./abi_example > pkgconfig.txt
/usr/bin/python3 "$src/tests/abi_expected.py" "$src/testdata/examples/mlp.hlo" pkgconfig.txt

mkdir -p consumer
cat > consumer/CMakeLists.txt <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(consumer C)
find_package(hloc 0.1 REQUIRED)
add_executable(abi_example "$src/docs/abi_example.c")
target_include_directories(abi_example PRIVATE "$work")
target_link_libraries(abi_example PRIVATE "$work/mlp.so" hloc::hlort)
CMAKE
cmake -S consumer -B consumer/build -DCMAKE_PREFIX_PATH="$prefix" > /dev/null
cmake --build consumer/build > /dev/null
consumer/build/abi_example > cmake.txt
/usr/bin/python3 "$src/tests/abi_expected.py" "$src/testdata/examples/mlp.hlo" cmake.txt
echo "install ok"
