#!/usr/bin/env bash
# hloc_cli_cases.sh CASE SRC BUILD — hloc command-line checks that take more than one
# command (tests/hloc_cli.cmake registers each CASE).  Passes (exit 0, "ok") or says why not.
set -uo pipefail
case_name=$1 src=$2 build=$3
hloc=$build/hloc hlorun=$build/hlorun
work=$build/hloc-cli/$case_name
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
mlp=$src/testdata/examples/mlp.hlo
fail() { echo "FAIL: $*"; exit 1; }

case $case_name in
  roundtrip)
    # -o x.hlo writes canonical text that hloc reads back to the same text.
    "$hloc" "$src/testdata/parse/ok/control_flow.hlo" -o one.hlo || fail "first print"
    "$hloc" one.hlo --emit=hlo -o - > two.hlo || fail "re-read"
    grep -q "^HloModule control_flow" one.hlo || fail "no HloModule line"
    diff -u one.hlo two.hlo || fail "the printed text does not read back to itself"
    ;;
  dump_files)
    # --dump-dir: the module after parsing and after each pass, in pass order, each one
    # parseable; the LLVM IR before and after optimization.
    "$hloc" "$src/testdata/parse/ok/elided_constants.hlo" -o m.o --dump-dir d 2>/dev/null || fail "compile"
    want="00-parsed.hlo 01-fill-elided-constants.hlo 02-canonicalize-broadcasts.hlo 03-fold-dot-transposes.hlo 04-dce.hlo 05-expand-dots.hlo 06-expand-shuffle.hlo 07-dynamic-padder.hlo 08-fusion.hlo buffer-assignment.txt llvm-after-opt.ll llvm-before-opt.ll"
    got=$(cd d && ls | tr '\n' ' ' | sed 's/ $//')
    [ "$got" = "$want" ] || fail "dump files: '$got', expected '$want'"
    for f in d/*.hlo; do "$hloc" "$f" --emit=none || fail "$f does not parse and verify"; done
    grep -q "constant({...})" d/00-parsed.hlo || fail "00-parsed.hlo should still have the elided constant"
    ! grep -q "constant({...})" d/01-fill-elided-constants.hlo || fail "01 still has an elided constant"
    grep -q "^define" d/llvm-after-opt.ll || fail "llvm-after-opt.ll has no function"
    ;;
  merged_kernels)
    # Two layers' identical kernels become one LLVM function at -O2 and at -O0 (mergefunc in
    # the pass pipeline), and the one body still computes each layer on its own operands;
    # two layers' equal constants become one global.
    model=$src/testdata/driver/repeated_layers.hlo
    for level in -O2 -O0; do
      n=$("$hloc" "$model" --emit=llvm $level -o - | grep -c '^define .*@hlo\.kernel\.') || fail "$level: compile"
      [ "$n" = 1 ] || fail "$level: $n kernel bodies, expected 1 (the two layers' kernels merged)"
    done
    "$hlorun" "$model" --input="f32[1024] {$(seq -s, 0 1023)}" --input="f32[1024] {$(yes 1 | head -1024 | paste -sd,)}" > out.txt || fail "run"
    head -1 out.txt | grep -q '^f32\[1024\] {0, 2.7182817, 14.778112, 60.25661, ' || fail "x * e^x of 0, 1, 2, 3: $(head -c 80 out.txt)"
    tail -1 out.txt | grep -Eq '^f32\[1024\] \{(2\.7182817, ){1023}2\.7182817\}$' || fail "y * e^y of ones: $(tail -1 out.txt | head -c 80)"
    # Equal constants of two layers become one global (constmerge; literals are unnamed_addr),
    # so the kernels that read them are the same before LLVM's pipeline; each layer still sums
    # its own rows: 8 * e^0 and 8 * e^1.
    model=$src/testdata/driver/repeated_constants.hlo
    n=$("$hloc" "$model" --emit=llvm -O0 -o - | grep -c '^@z[xy]\.f = ') || fail "repeated_constants: compile"
    [ "$n" = 1 ] || fail "repeated_constants: $n globals for the two equal constants, expected 1"
    zeros=$(yes '{0,0,0,0,0,0,0,0}' | head -16 | paste -sd,) ones=$(yes '{1,1,1,1,1,1,1,1}' | head -16 | paste -sd,)
    "$hlorun" "$model" --input="f32[16,8] {$zeros}" --input="f32[16,8] {$ones}" > sums.txt || fail "repeated_constants: run"
    head -1 sums.txt | grep -Eq '^f32\[16\] \{(8, ){15}8\}$' || fail "row sums of e^0: $(head -1 sums.txt)"
    tail -1 sums.txt | grep -Eq '^f32\[16\] \{(21\.74625[0-9]*, ){15}21\.74625[0-9]*\}$' || fail "row sums of e^1: $(tail -1 sums.txt)"
    ;;
  codegen_threads)
    # Optimization and object code on several threads (compiler/driver/emit_parallel.c): a
    # module with constant data and eleven results, and one whose entry calls many kernels (a
    # hub once split) with a while loop, a sort, reducers and small constant tables
    # (testdata/driver/chunk_groups.hlo), optimized and written as chunks on 3 threads, give
    # the results of the one-object build bit for bit and export the same symbols (the kernels
    # became hidden symbols, not exported ones); the split build's stages are the whole
    # module's function merging, then the chunks; HLOC_CODEGEN_THREADS asks the same; a small
    # module left to the default is one object; bad counts are usage errors.
    model=$src/testdata/golden/reuse_constant_writers
    inputs="--input=$model/in0.npy --input=$model/in1.npy --input=$model/in2.npy"
    "$hloc" "$model/model.hlo" -o one.so --codegen-threads=1 -v 2> one.txt || fail "compile on 1 thread"
    ! grep -q "written on" one.txt || fail "1 thread: $(grep 'written on' one.txt)"
    "$hloc" "$model/model.hlo" -o three.so --codegen-threads=3 -v --time-passes 2> three.txt || fail "compile on 3 threads"
    grep -q "object code optimized and written on 3 threads (10 objects)" three.txt || fail "3 threads: $(grep hloc: three.txt | tail -1)"
    grep -q "^  llvm-merge " three.txt && grep -q "^  optimize, emit object and link " three.txt ||
      fail "3 threads: stages $(grep '^  [a-z]' three.txt | tr -s ' ' | tr '\n' ';')"
    HLOC_CODEGEN_THREADS=3 "$hloc" "$model/model.hlo" -o env.so -v 2> env.txt || fail "compile with HLOC_CODEGEN_THREADS"
    grep -q "written on 3 threads" env.txt || fail "HLOC_CODEGEN_THREADS=3: $(tail -1 env.txt)"
    "$hloc" "$mlp" -o mlp.so -v 2> mlp.txt || fail "mlp"
    ! grep -q "written on" mlp.txt || fail "a small module was split by default"
    nm -D --defined-only one.so | awk '{print $3}' | sort > one.sym
    nm -D --defined-only three.so | awk '{print $3}' | sort > three.sym
    diff one.sym three.sym > /dev/null || fail "exported symbols differ: $(diff one.sym three.sym | head -3)"
    ! grep -q "hlo\.kernel" three.sym || fail "a kernel is exported"
    "$hlorun" one.so $inputs --output-dir out1 > /dev/null || fail "run the 1-thread build"
    "$hlorun" three.so $inputs --output-dir out3 > /dev/null || fail "run the 3-thread build"
    for i in $(seq 0 10); do
      cmp -s "out1/out$i.npy" "out3/out$i.npy" || fail "result $i differs between 1 and 3 threads"
    done
    groups=$src/testdata/driver/chunk_groups.hlo
    "$hloc" "$groups" -o g1.so --codegen-threads=1 || fail "chunk_groups on 1 thread"
    "$hloc" "$groups" -o g3.so --codegen-threads=3 || fail "chunk_groups on 3 threads"
    "$hlorun" g1.so --random-inputs=3 --output-dir g1 > /dev/null || fail "run chunk_groups' 1-thread build"
    "$hlorun" g3.so --random-inputs=3 --output-dir g3 > /dev/null || fail "run chunk_groups' 3-thread build"
    for i in 0 1 2; do
      cmp -s "g1/out$i.npy" "g3/out$i.npy" || fail "chunk_groups: result $i differs between 1 and 3 threads"
    done
    "$hloc" "$mlp" -o x.so --codegen-threads=9 2> bad.txt && fail "--codegen-threads=9 accepted"
    grep -q "needs a count from 1 to 8" bad.txt || fail "--codegen-threads=9: $(cat bad.txt)"
    ;;
  fusion)
    # The fusion pass: softmax and layernorm become one fusion each (row fusion, kInput), a
    # chain of elementwise ops one kLoop; the printed fused modules parse and verify again
    # under --strict, and recompiling a printed fused module fuses nothing more.
    for c in softmax_rows layernorm_rows data_movement_rows; do
      "$hloc" "$src/testdata/golden/fusion_$c/model.hlo" --emit=hlo --after-passes -o $c.hlo || fail "$c: fuse"
      "$hloc" $c.hlo --emit=none --strict || fail "$c: the fused module does not verify under --strict"
      "$hloc" $c.hlo --emit=hlo --after-passes -o $c.again.hlo || fail "$c: refuse"
      [ "$(grep -c ' fusion(' $c.again.hlo)" = "$(grep -c ' fusion(' $c.hlo)" ] || fail "$c: fused again"
    done
    [ "$(grep -c 'kind=kInput' softmax_rows.hlo)" = 1 ] && [ "$(grep -c ' fusion(' softmax_rows.hlo)" = 1 ] ||
      fail "softmax is not one kInput fusion"
    [ "$(grep -c ' fusion(' layernorm_rows.hlo)" = 1 ] || fail "layernorm is not one fusion"
    [ "$(grep -c 'kind=kLoop' data_movement_rows.hlo)" = 1 ] || fail "the data-movement chain is not one kLoop fusion"
    # kOutput: a dot and a convolution with their bias/ReLU epilogues are one fusion each; a dot
    # read transposed by its epilogue is not fused into it.
    for c in output_dot_bias_relu output_conv_bias output_dot_transposed; do
      "$hloc" "$src/testdata/golden/fusion_$c/model.hlo" --emit=hlo --after-passes -o $c.hlo || fail "$c: fuse"
      "$hloc" $c.hlo --emit=none --strict || fail "$c: the fused module does not verify under --strict"
    done
    [ "$(grep -c 'kind=kOutput' output_dot_bias_relu.hlo)" = 1 ] && [ "$(grep -c ' fusion(' output_dot_bias_relu.hlo)" = 1 ] ||
      fail "dot + bias + relu is not one kOutput fusion"
    [ "$(grep -c 'kind=kOutput' output_conv_bias.hlo)" = 1 ] || fail "convolution + bias is not one kOutput fusion"
    [ "$(grep -c 'kind=kOutput' output_dot_transposed.hlo)" = 0 ] || fail "a dot read transposed was fused in place"
    # A producer read by two slices at each of 24 levels is materialized, not recomputed per
    # index path (2^24 paths: the compile did not end).
    timeout 60 "$hloc" "$src/testdata/parse/ok/fusion_nested_slices.hlo" -o nested.so -O0 || fail "nested slices: compile"
    # A dynamic-update-slice whose operand dies there updates it in place: the chain of three
    # holds one f32[1024,64] buffer (%a's), not four.
    "$hloc" "$src/testdata/golden/fusion_in_place_updates/model.hlo" -o ipu.so --dump-dir ipu || fail "in-place: compile"
    [ "$(grep -c 'f32\[1024,64\]' ipu/buffer-assignment.txt)" = 1 ] || { cat ipu/buffer-assignment.txt; fail "dynamic-update-slice chain is not in place"; }
    # Multi-output fusion of siblings: the fused computation's root is a tuple of the outputs,
    # which the fusion's users read through get-tuple-element; the printed module verifies
    # under --strict and fuses nothing more when compiled again.
    for c in mof_loop_siblings mof_reduce_siblings mof_reduce_with_loop mof_siblings_dependent; do
      "$hloc" "$src/testdata/golden/fusion_$c/model.hlo" --emit=hlo --after-passes -o $c.hlo || fail "$c: fuse"
      "$hloc" $c.hlo --emit=none --strict || fail "$c: the fused module does not verify under --strict"
      "$hloc" $c.hlo --emit=hlo --after-passes -o $c.again.hlo || fail "$c: refuse"
      [ "$(grep -c ' fusion(' $c.again.hlo)" = "$(grep -c ' fusion(' $c.hlo)" ] || fail "$c: fused again"
    done
    grep -q '^  ROOT %[a-z0-9.]* = (f32\[300,200\]{1,0}, f32\[300,200\]{1,0}, s32\[300,200\]{1,0}) tuple(' mof_loop_siblings.hlo &&
      [ "$(grep -c ' fusion(.*kind=kLoop' mof_loop_siblings.hlo)" = 1 ] && [ "$(grep -c ' fusion(' mof_loop_siblings.hlo)" = 1 ] &&
      [ "$(grep -c ' = [fs]32\[300,200\]{1,0} get-tuple-element(' mof_loop_siblings.hlo)" = 3 ] ||
      { cat mof_loop_siblings.hlo; fail "the three loop siblings are not one tuple-rooted kLoop fusion"; }
    [ "$(grep -c ' = (f32\[[0-9]*\]{0}, f32\[[0-9]*\]{0}) fusion(.*kind=kInput' mof_reduce_siblings.hlo)" = 3 ] &&
      [ "$(grep -c ' fusion(' mof_reduce_siblings.hlo)" = 3 ] ||
      { cat mof_reduce_siblings.hlo; fail "each pair of sibling reductions is not one two-output kInput fusion"; }
    [ "$(grep -c ' = (f32\[512\]{0}, f32\[512,130\]{1,0}, f32\[512\]{0}) fusion(.*kind=kInput' mof_reduce_with_loop.hlo)" = 1 ] ||
      { cat mof_reduce_with_loop.hlo; fail "the row reductions and the loop of their input's shape are not one fusion"; }
    # %a is read by %b directly and by %e through a dot: it must stay out of their fusion.
    [ "$(grep -c ' fusion(' mof_siblings_dependent.hlo)" = 1 ] &&
      grep -q '^  %a = f32\[64,64\]{1,0} exponential(' mof_siblings_dependent.hlo &&
      grep -q ' = (f32\[64,64\]{1,0}, f32\[64,64\]{1,0}, f32\[64,64\]{1,0}) fusion(f32\[64,64\]{1,0} %x, f32\[64,64\]{1,0} %a, f32\[64,64\]{1,0} %d)' mof_siblings_dependent.hlo ||
      { cat mof_siblings_dependent.hlo; fail "dependent siblings"; }
    # Siblings reading different slices of one operand share none of its elements: no merge.
    "$hloc" "$src/testdata/golden/fusion_mof_slices_apart/model.hlo" --emit=hlo --after-passes -o slices.hlo || fail "slices: fuse"
    [ "$(grep -c ' fusion(' slices.hlo)" = 2 ] && ! grep -q ' = (.*) fusion(' slices.hlo ||
      { cat slices.hlo; fail "siblings reading different slices were merged"; }
    # XLA's own multi-output fusions compile as one kernel each, not as calls of their fused
    # computations (no kernel per fused instruction, no buffer for one).
    "$hloc" "$src/testdata/golden/fusion_mof_xla_prefused/model.hlo" -o mofx.so --dump-dir mofx || fail "XLA multi-output fusions: compile"
    [ "$(grep -c '^define internal ptr @hlo.kernel\.' mofx/llvm-before-opt.ll)" = 3 ] &&
      grep -q '^define internal ptr @hlo.kernel.main.fusion(' mofx/llvm-before-opt.ll &&
      grep -q '^define internal ptr @hlo.kernel.main.fusion.1(' mofx/llvm-before-opt.ll &&
      grep -q '^define internal ptr @hlo.kernel.main.fusion.2(' mofx/llvm-before-opt.ll &&
      ! grep -q '^  %\(multiply\|broadcast\)\.1:' mofx/buffer-assignment.txt ||
      { grep '^define' mofx/llvm-before-opt.ll; cat mofx/buffer-assignment.txt; fail "XLA multi-output fusions are not one kernel each"; }
    ;;
  header_once)
    # --header with the .so: the module is loaded once, so the elided-constants note is
    # printed once; both files are written.
    "$hloc" "$src/testdata/parse/ok/elided_constants.hlo" -o m.so --header m.h 2> err.txt || fail "compile"
    [ "$(grep -c 'note: filled 1 elided constant' err.txt)" = 1 ] || { cat err.txt; fail "note not printed exactly once"; }
    grep -q "hlo_status elided_constants(hlo_context \*ctx" m.h || fail "header"
    ;;
  header_names)
    # Names that clash in C (ctx, a keyword, a.1 vs a_1, _x) still give a header that compiles,
    # and the program calling it gets the results in the right order.
    "$hloc" "$src/testdata/driver/header_names.hlo" -o header_names.so --header header_names.h || fail "compile"
    cc -std=c17 -Wall -Wextra -Werror "$src/testdata/driver/header_names.c" -I. -I"$src/runtime/include" \
      header_names.so "$build/libhlort.a" -lffi -lm -lpthread -ldl -Wl,-rpath,"$work" -o prog || fail "cc"
    out=$(./prog) || fail "run"
    [ "$out" = "11 22 | 3 4 | 1 6" ] || fail "printed '$out'"
    ;;
  entry_name)
    # --entry-name names the three entry points in the .so and in the header; the .so's
    # soname is its file name.
    "$hloc" "$mlp" -o m.so --header m.h --entry-name my_model || fail "compile"
    syms=$(nm -D --defined-only m.so | awk '{print $3}' | grep -E '^my_model' | sort | tr '\n' ' ')
    [ "$syms" = "my_model my_model_describe my_model_run " ] || fail "exported: '$syms'"
    grep -q "hlo_status my_model(hlo_context \*ctx" m.h || fail "header"
    readelf -d m.so | grep -q 'SONAME.*\[m\.so\]' || fail "the soname is not the file name"
    ;;
  cc_words)
    # $CC may be a command with arguments; a C compiler that does not exist is a clear error.
    CC="cc -Wl,--no-undefined-version" "$hloc" "$mlp" -o m.so || fail "CC with words"
    "$hlorun" m.so --input "$src/testdata/examples/mlp_x.npy" --expected "$src/testdata/examples/mlp_expected.npy" \
      > /dev/null || fail "the .so linked by \$CC does not run"
    CC=no-such-cc "$hloc" "$mlp" -o n.so 2> err.txt
    rc=$?
    [ $rc = 1 ] || fail "exit $rc with a missing \$CC"
    grep -q "cannot run the C compiler 'no-such-cc'" err.txt || { cat err.txt; fail "message"; }
    ls | grep -q '\.o$' && fail "a temporary object was left behind"
    ;;
  target_cpus)
    # Named LLVM CPUs compile; the generic object has no instruction beyond x86-64 baseline
    # (no AVX: no ymm/zmm registers), the x86-64-v4 one uses AVX-512 somewhere.
    "$hloc" "$mlp" -o v3.o --target-cpu=x86-64-v3 || fail "x86-64-v3"
    "$hloc" "$mlp" -o skx.o --target-cpu=skylake-avx512 || fail "skylake-avx512"
    "$hloc" "$mlp" -o generic.s --target-cpu=generic -O3 || fail "generic"
    grep -Eq '%[yz]mm' generic.s && fail "generic assembly uses AVX registers"
    "$hloc" "$mlp" -o v4.s --target-cpu=x86-64-v4 -O3 || fail "x86-64-v4"
    grep -Eq '%zmm|\{%k[0-7]\}' v4.s || fail "x86-64-v4 assembly never uses AVX-512"
    ;;
  abi_doc)
    # docs/abi.md shows docs/abi_example.c verbatim and the header hloc writes for mlp.hlo
    # (`hloc mlp.hlo --header mlp.h`: only the header); both blocks must be current.
    "$hloc" "$mlp" --header mlp.h || fail "header only"
    [ "$(ls)" = "mlp.h" ] || fail "wrote more than the header: $(ls | tr '\n' ' ')"
    awk '/^```c$/{n++; on=1; next} /^```$/{on=0} on{print > ("block" n ".c")}' "$src/docs/abi.md"
    diff -u "$src/docs/abi_example.c" block1.c || fail "docs/abi.md's program differs from docs/abi_example.c"
    diff -u mlp.h block2.c || fail "docs/abi.md's header differs from what hloc writes"
    ;;
  help_doc)
    # docs/cli.md shows hloc --help verbatim (the first ``` block after "## hloc").
    "$hloc" --help > help.txt || fail "--help"
    awk '/^## hloc/{h=1} h&&/^```$/{n++; if(n==2) exit; next} h&&n==1{print}' "$src/docs/cli.md" > doc.txt
    diff -u doc.txt help.txt || fail "docs/cli.md does not show the current hloc --help"
    ;;
  elided_ranges)
    # Filled integer constants use exactly the ranges fill_elided.c documents: s1 {-1,0},
    # s2 [-2,2), u1 {0,1}, u2 [0,4), s8 [-8,8), u8 [0,16), pred {false,true} — in 64 draws
    # every value of a small range appears, at least 12 of a 16-value one — and two runs give
    # the same text.
    "$hloc" "$src/testdata/driver/elided_ints.hlo" --emit=hlo --after-passes -o one.hlo 2>/dev/null || fail "run 1"
    "$hloc" "$src/testdata/driver/elided_ints.hlo" --emit=hlo --after-passes -o two.hlo 2>/dev/null || fail "run 2"
    cmp -s one.hlo two.hlo || fail "two runs filled different values"
    /usr/bin/python3 - one.hlo <<'PY' || fail "ranges"
import re, sys
want = {"s2": set(range(-2, 2)), "u2": set(range(4)), "s1": {-1, 0}, "u1": {0, 1},
        "s8": set(range(-8, 8)), "u8": set(range(16)), "pred": {"false", "true"}}
for ty, vals in re.findall(r"= (\w+)\[64\]\{0\} constant\(\{(.*?)\}\)", open(sys.argv[1]).read()):
    got = [v.strip() for v in vals.split(",")]
    got = set(got) if ty == "pred" else {int(v) for v in got}
    allowed = want.pop(ty)
    if not got <= allowed or len(got) < min(len(allowed), 12):
        sys.exit("%s: values %s" % (ty, sorted(got, key=str)))
if want:
    sys.exit("missing constants: %s" % sorted(want))
PY
    ;;
  dce)
    # The dump after DCE keeps exactly the live instructions and computations (the file's
    # comment says which); the result still verifies.
    "$hloc" "$src/testdata/driver/dce.hlo" --emit=hlo --after-passes --dump-dir d -o after.hlo || fail "compile"
    "$hloc" after.hlo --emit=none || fail "the module after DCE does not verify"
    names=$(grep -oE '^ +(ROOT )?%[A-Za-z0-9_.]+ ' d/04-dce.hlo | sed 's/ROOT //; s/ //g' | sort | tr '\n' ' ')
    want="%e %f %hi %lo %of %r %sum %tok %total %x %y %zero "
    [ "$names" = "$want" ] || fail "instructions after DCE: '$names', expected '$want'"
    comps=$(grep -oE '^(ENTRY )?%[a-z_]+ ' d/04-dce.hlo | sed 's/ENTRY //; s/ //g' | tr '\n' ' ')
    [ "$comps" = "%add_used %main " ] || fail "computations after DCE: '$comps'"
    grep -q "%dead1" d/02-canonicalize-broadcasts.hlo || fail "the dump before DCE lost %dead1"
    ;;
  fold_dot_transposes)
    # After fold-dot-transposes the dots read b, a2 and k where they lie (rhs, lhs, batched);
    # d4's transpose reorders its free dimensions and stays; bt keeps its other user.
    m="$src/testdata/golden/dotin_folded_transposes/model.hlo"
    "$hloc" "$m" --emit=hlo --after-passes --dump-dir d -o after.hlo || fail "compile"
    f=d/03-fold-dot-transposes.hlo
    grep -qE '%d1 = .*dot\(f32\[8,16\]\{1,0\} %a, f32\[32,16\]\{1,0\} %b\)' $f || fail "d1 does not read b"
    grep -qE '%d1 = .*rhs_contracting_dims=\{1\}' $f || fail "d1's rhs contracting dimension"
    grep -qE '%d2 = .*dot\(f32\[16,8\]\{1,0\} %a2, ' $f || fail "d2 does not read a2"
    grep -qE '%d2 = .*lhs_contracting_dims=\{0\}' $f || fail "d2's lhs contracting dimension"
    grep -qE '%d3 = .*%k\), .*rhs_contracting_dims=\{2\}' $f || fail "d3 does not read k"
    grep -qE '%d4 = .*%wt\)' $f || fail "d4 lost its transpose"
    grep -qE '%also = .*negate\(f32\[16,32\]\{1,0\} %bt\)' $f || fail "bt's other user"
    ! grep -qE '%at = ' d/04-dce.hlo || fail "the unused transpose at survived DCE"
    ;;
  *)
    fail "unknown case $case_name"
    ;;
esac
echo ok
