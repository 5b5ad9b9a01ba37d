#!/usr/bin/env bash
# reuse.sh HLOC SRC WORK — buffer assignment's in-place elementwise results (compiler/passes/
# buffer_plan.c, own_element.c) on the golden cases of testdata/golden/make_reuse.py: which results take
# over a dying operand's buffer (hloc --dump-dir's buffer-assignment.txt), which must not, and
# the arena hloc -v prints, against sizes worked out by hand from the shapes.  The values
# themselves are checked by golden.reuse_*.
set -uo pipefail
hloc=$1 src=$2 work=$3/arena-reuse
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
g=$src/testdata/golden

# compile CASE: builds the case with --dump-dir CASE and -v; report in CASE/buffer-assignment.txt,
# hloc's stderr in CASE.err.
compile() {
  "$hloc" "$g/reuse_$1/model.hlo" -o "$1.so" --dump-dir "$1" -v 2> "$1.err" || { cat "$1.err"; fail "$1: compile"; }
}
has() { grep -q -- "$2" "$1/buffer-assignment.txt" || { cat "$1/buffer-assignment.txt"; fail "$1: no line '$2'"; }; }
lacks() { ! grep -q -- "$2" "$1/buffer-assignment.txt" || { cat "$1/buffer-assignment.txt"; fail "$1: unexpected '$2'"; }; }
arena() { grep -q "arena of $2 bytes per call" "$1.err" || { cat "$1.err"; fail "$1: arena is not $2 bytes"; }; }

# a = exp(x), b = sin(a), c = exp(b), d = c + x, r = sin(d) over f32[64,1024] (256 KiB each):
# a needs a buffer (x is the caller's), b, c and d each take over their dying operand's, r
# writes the result buffer.  Arena: one buffer, 64*1024*4 = 262144 bytes (without reuse a
# and b would both be live at b: 524288).
compile fusion_chain
has fusion_chain "%a: f32\[64,1024\], 262144 bytes at offset 0"
has fusion_chain "%b: reuses %a's buffer"
has fusion_chain "%c: reuses %b's buffer"
has fusion_chain "%d: reuses %c's buffer"
arena fusion_chain 262144

# A lone negate takes its sorted operand's buffer; a same-size convert (f32 -> s32) fused with
# its multiply takes the second sort's.  s1 lives into the second sort's start; the second
# sort's result must not overlap it: two f32[16,4096] buffers, 2*16*4096*4 = 524288 bytes.
compile elementwise_sorts
has elementwise_sorts "%n: reuses %s1's buffer"
has elementwise_sorts "%k.fusion: reuses %s2's buffer"
arena elementwise_sorts 524288

# The softmax row fusion reads each row whole before writing it: it takes the sort's buffer.
compile softmax_rows
has softmax_rows "%y.fusion: reuses %s's buffer"

# Read transposed (b over a), through a broadcast of a row (d over c), reversed (e over d),
# one buffer behind two parameters (g over e), a narrower result (h over g): none reuses
# those; d takes b's buffer, which it reads at its own index.  Live at d: b (reused) and c;
# at e: d and e; every temporary is f32[256,256] (262144 bytes) but h (f16, 131072):
# 2*262144 = 524288 bytes.
compile not_other_index
has not_other_index "%d: reuses %b's buffer"
for bad in "%b: reuses" "reuses %c's" "%e: reuses" "%g: reuses" "%h: reuses"; do lacks not_other_index "$bad"; done
arena not_other_index 524288

# e is read again by g: f keeps a buffer of its own, g takes one of the two dying there.
compile still_live
lacks still_live "%f: reuses"
has still_live "%g: reuses %f's buffer"
arena still_live 524288

# dot(a, b) + t is a kOutput fusion: its dot writes the result buffer before the epilogue
# reads t, so t (dying there) keeps its buffer.
compile not_output_fusion
lacks not_output_fusion "reuses"
has not_output_fusion "%r.fusion: f32\[256,256\], 262144 bytes"

# Inside the while body t2 takes t1's buffer; the body's parameter v is never taken over.
compile while_body
has while_body "%t2: reuses %t1's buffer"
lacks while_body "reuses %v's"
# A variadic sort's two results and a batch norm's y and mean, returned by the root tuple
# through get-tuple-elements, are written by their kernels into the caller's buffers; only the
# variance (f32[256], not returned) takes arena: 1024 bytes (before: the four results too,
# 3 x 65536 + 1024 more, written there and copied out).
compile tuple_root
arena tuple_root 1024
echo ok
