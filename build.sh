#!/usr/bin/env bash
# build.sh — the README's two commands.
#   ./build.sh example   install what is missing, build, compile and run an example model
#   ./build.sh test      install what is missing, build, run every test (CTest)
# Environment: BUILD_DIR (default build), JOBS (default nproc), HLOC_WERROR=1 in CI,
#   SANITIZE=0 skips the sanitizer pass of `test` (ASAN_DIR, default build-asan).
set -euo pipefail
cd "$(dirname "$0")"
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

# Debian 12 packages the build and the tests need (DESIGN.md "Dependencies").
PACKAGES="cmake make gcc pkg-config re2c bison llvm-19-dev clang-19 llvm-19-tools libclang-rt-19-dev
libffi-dev python3-numpy python3-pytest python3-setuptools openmpi-bin libopenmpi-dev zlib1g-dev libdnnl-dev"

install_missing() {
  local missing=()
  for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "build.sh: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

build() {
  local werror=OFF
  [ "${HLOC_WERROR:-}" = 1 ] && werror=ON
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHLOC_WERROR=$werror >/dev/null
  cmake --build "$BUILD_DIR" -j "$JOBS"
}

# The sanitizer pass of `test`: a second build with AddressSanitizer + UndefinedBehavior-
# Sanitizer over everything (compiler, runtime, tools, and the runtime archive hloc links into
# every model.so, so models loaded by the ASan hlorun are checked too), running the subset
# docs/testing.md "Sanitizers" names; any report fails the test that printed it.  Warnings are
# errors in the main build only (GCC's -fsanitize changes its warnings, not our code).
SANITIZE_TESTS='^(unit\.|errors\.|parse\.err\.|verify\.err\.|hostile\.|reliability\.|cli\.|golden\.(edge_|binary_(divide|remainder|shift)|reduce|gather|scatter|dynamic|sort|while|conditional|conv_gemm|dot_|batch_norm|convert_f32_to_s))'
sanitize() {
  local dir=${ASAN_DIR:-build-asan}
  # Without oneDNN: its OpenMP worker threads crash LeakSanitizer's tracer at exit ("Tracer
  # caught signal 11"); the sanitizer pass checks hloc's own convolution kernels instead.
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHLOC_SANITIZE=ON -DHLOC_WERROR=OFF -DHLOC_DNNL=OFF >/dev/null
  cmake --build "$dir" -j "$JOBS" >/dev/null
  (cd "$dir" &&
    ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:allocator_may_return_null=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --output-on-failure -j "$JOBS" -R "$SANITIZE_TESTS")
}

case "${1:-}" in
  example)
    install_missing
    build
    # Compile the MLP example to a shared object (no LLVM dependency) and run it; then check
    # it against numpy's result and run a real TensorFlow model with random inputs.
    "$BUILD_DIR/hloc" testdata/examples/mlp.hlo -o "$BUILD_DIR/mlp.so" --header "$BUILD_DIR/mlp.h"
    "$BUILD_DIR/hlorun" "$BUILD_DIR/mlp.so" --input testdata/examples/mlp_x.npy
    "$BUILD_DIR/hlorun" "$BUILD_DIR/mlp.so" --input testdata/examples/mlp_x.npy \
      --expected testdata/examples/mlp_expected.npy && echo "mlp: matches numpy"
    "$BUILD_DIR/hlorun" testdata/parse/ok/model_fully_connected_reference_model.hlo --random-inputs --benchmark 10
    ;;
  test)
    install_missing
    build
    # Under the sanitizers first (a report stops here, ending with that CTest summary); then
    # the whole suite, whose summary ends the output.
    if [ "${SANITIZE:-1}" != 0 ]; then
      echo "build.sh: sanitizer pass (ASan + UBSan) in ${ASAN_DIR:-build-asan}"
      sanitize
    fi
    cd "$BUILD_DIR"
    # The conformance suite first and verbosely, so the log shows its per-family table and
    # pass count (it runs its cases two at a time itself); then every other test.
    if ctest -N -R '^conformance$' | grep -q 'Total Tests: 1'; then
      ctest -V -R '^conformance$'
    fi
    ctest --output-on-failure -j "$JOBS" -E '^conformance$'
    ;;
  *)
    echo "usage: ./build.sh example|test" >&2
    exit 2
    ;;
esac
