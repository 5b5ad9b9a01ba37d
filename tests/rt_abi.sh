#!/usr/bin/env bash
# rt_abi.sh SRC CC LLVM_INCLUDE — a runtime ABI that disagrees with hlo/rt_abi.def does not
# compile (docs/architecture.md, "The runtime and the ABI").  Each check compiles a correct
# variant first (so the failure below is the mismatch, not the command line):
#  1. a runtime definition of hlo_rt_poll with another parameter list than its row;
#  2. a row whose C type and LLVM kind disagree (int32_t declared as I64), caught by the
#     vocabulary check of compiler/codegen/rt_abi.c.
set -uo pipefail
src=$1 cc=$2 llvm_inc=$3
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
fail=0

def() { # def FILE BODY: a runtime file defining hlo_rt_poll
  printf '#include "hlo/rt.h"\n%s\n' "$2" > "$work/$1"
}
def good.c 'hlo_status hlo_rt_poll(hlo_context *ctx) { (void)ctx; return NULL; }'
def bad.c 'hlo_status hlo_rt_poll(hlo_context *ctx, int32_t extra) { (void)ctx; (void)extra; return NULL; }'
if ! "$cc" -std=gnu17 -fsyntax-only -I "$src/runtime/include" "$work/good.c"; then
  echo "FAIL: a definition that matches its row does not compile"; fail=1
fi
if "$cc" -std=gnu17 -fsyntax-only -I "$src/runtime/include" "$work/bad.c" 2> "$work/bad.err"; then
  echo "FAIL: a definition of hlo_rt_poll with another parameter list compiles"; fail=1
else
  grep -q "hlo_rt_poll" "$work/bad.err" || { echo "FAIL: the error does not name hlo_rt_poll:"; cat "$work/bad.err"; fail=1; }
fi

# A copy of the row list with one extra row, ahead of the include path.
mkdir -p "$work/inc/hlo"
row() { sed "/^#undef VOID$/i $1" "$src/runtime/include/hlo/rt_abi.def" > "$work/inc/hlo/rt_abi.def"; }
vocab() { # vocab NAME: compiles codegen/rt_abi.c against the copied rows
  "$cc" -std=gnu17 -fsyntax-only -D_GNU_SOURCE -I "$work/inc" -I "$src/compiler" -I "$src/runtime/include" \
    -isystem "$llvm_inc" "$src/compiler/codegen/rt_abi.c" 2> "$work/$1.err"
}
row 'HLO_RT_FN(VOID(), hlo_rt_test_good, (HLO_RT_ARG(int32_t, I32, x)))'
if ! vocab good; then echo "FAIL: a consistent row does not compile:"; cat "$work/good.err"; fail=1; fi
row 'HLO_RT_FN(VOID(), hlo_rt_test_bad, (HLO_RT_ARG(int32_t, I64, x)))'
if vocab bad; then
  echo "FAIL: a row declaring an int32_t as I64 compiles"; fail=1
else
  grep -q "rt_abi.def" "$work/bad.err" || { echo "FAIL: the error is not the row's:"; cat "$work/bad.err"; fail=1; }
fi

[ $fail = 0 ] && echo "rt_abi: mismatched definitions and rows do not compile"
exit $fail
