/* convert_bits.c — bitcast-convert where an element type is narrower than a byte (s1/s2/s4,
 * u1/u2/u4, f4e2m1fn; a pred counts as its byte, as XLA's shape inference counts it).  Such elements occupy one byte each in our buffers (signed ones
 * sign-extended), so copying bytes would be wrong; instead every output element is built from
 * the operand's logical bits the way XLA's CPU pipeline rewrites width-changing bitcasts
 * (shifts by lane * width, lane 0 in the least significant bits): wider -> narrower splits one
 * element into a new last dimension of ratio lanes, narrower -> wider joins the last
 * dimension; equal widths reinterpret the bits.  Byte-or-wider pairs keep data.c's byte copy,
 * which is the same thing on a little-endian machine.  Tests: compiler/codegen/ops_test.c.
 */
#include "codegen/ops.h"

static int etype_bits(ir_etype et) { return et == IR_PRED ? 8 : ir_etype_table[et].bits; }

/* The logical bits of element i of a buffer of et, as an integer of etype_bits(et) bits. */
static LLVMValueRef load_bits(cg_function *f, ir_etype et, LLVMValueRef base, LLVMValueRef i) {
  LLVMBuilderRef b = f->cm->b;
  int bits = etype_bits(et), sbits = 8 * ir_etype_table[et].storage_bytes;
  LLVMTypeRef st = LLVMIntTypeInContext(f->cm->ctx, (unsigned)sbits);
  LLVMValueRef v = LLVMBuildLoad2(b, st, LLVMBuildGEP2(b, st, base, &i, 1, ""), "raw");
  return bits < sbits ? LLVMBuildTrunc(b, v, LLVMIntTypeInContext(f->cm->ctx, (unsigned)bits), "") : v;
}

/* Stores `bits` (etype_bits(et) wide) as element i: sub-byte signed types sign-extended into
 * their byte, every other sub-byte type zero-extended. */
static void store_bits(cg_function *f, ir_etype et, LLVMValueRef base, LLVMValueRef i, LLVMValueRef bits) {
  LLVMBuilderRef b = f->cm->b;
  int sbits = 8 * ir_etype_table[et].storage_bytes;
  LLVMTypeRef st = LLVMIntTypeInContext(f->cm->ctx, (unsigned)sbits);
  if (etype_bits(et) < sbits)
    bits = ir_etype_is_signed(et) ? LLVMBuildSExt(b, bits, st, "") : LLVMBuildZExt(b, bits, st, "");
  LLVMBuildStore(b, bits, LLVMBuildGEP2(b, st, base, &i, 1, ""));
}

static LLVMValueRef int_const(cg_function *f, LLVMTypeRef t, int64_t v) {
  return LLVMConstInt(t, (unsigned long long)v, 0);
}

/* Output element o of a wider -> narrower conversion: lane o % r of input element o / r. */
static LLVMValueRef split_lane(cg_function *f, ir_etype from, ir_etype to, LLVMValueRef src, LLVMValueRef o) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  int64_t r = etype_bits(from) / etype_bits(to);
  LLVMValueRef x = load_bits(f, from, src, LLVMBuildUDiv(b, o, cg_i64(cm, r), ""));
  LLVMTypeRef xt = LLVMTypeOf(x);
  LLVMValueRef lane = LLVMBuildURem(b, o, cg_i64(cm, r), "lane");
  LLVMValueRef shift = LLVMBuildMul(b, LLVMBuildZExtOrBitCast(b, lane, LLVMIntTypeInContext(cm->ctx, 64), ""),
                                    cg_i64(cm, etype_bits(to)), "");
  if (LLVMGetIntTypeWidth(xt) < 64)
    shift = LLVMBuildTrunc(b, shift, xt, "");
  else if (LLVMGetIntTypeWidth(xt) > 64)
    shift = LLVMBuildZExt(b, shift, xt, "");
  return LLVMBuildTrunc(b, LLVMBuildLShr(b, x, shift, ""), LLVMIntTypeInContext(cm->ctx, (unsigned)etype_bits(to)),
                        "");
}

/* Output element o of a narrower -> wider conversion: input elements o*r .. o*r + r-1 as
 * lanes, lane 0 lowest. */
static LLVMValueRef join_lanes(cg_function *f, ir_etype from, ir_etype to, LLVMValueRef src, LLVMValueRef o) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  int64_t r = etype_bits(to) / etype_bits(from);
  LLVMTypeRef wt = LLVMIntTypeInContext(cm->ctx, (unsigned)etype_bits(to));
  LLVMValueRef acc = LLVMConstNull(wt), first = LLVMBuildMul(b, o, cg_i64(cm, r), "");
  for (int64_t lane = 0; lane < r; lane++) {
    LLVMValueRef x = load_bits(f, from, src, LLVMBuildAdd(b, first, cg_i64(cm, lane), ""));
    x = LLVMBuildShl(b, LLVMBuildZExt(b, x, wt, ""), int_const(f, wt, lane * etype_bits(from)), "");
    acc = LLVMBuildOr(b, acc, x, "");
  }
  return acc;
}

bool cg_bitcast_convert_bits(cg_function *f, ir_instr *in, LLVMValueRef out) {
  ir_etype from = in->operands[0]->shape->et, to = in->shape->et;
  int fb = etype_bits(from), tb = etype_bits(to);
  if (in->op != IR_OP_BITCAST_CONVERT || (fb >= 8 && tb >= 8) || fb <= 0 || tb <= 0)
    return false;
  if (fb % tb != 0 && tb % fb != 0)
    return false; /* the verifier rejects these */
  int64_t n;
  if (!ir_shape_num_elements(in->shape, &n))
    return false;
  LLVMValueRef src = f->values[in->operands[0]->id].leaves[0];
  cg_loop l = cg_loop_begin(f, cg_i64(f->cm, n), "bitcvt");
  LLVMValueRef v;
  if (fb == tb)
    v = load_bits(f, from, src, l.i);
  else if (fb > tb)
    v = split_lane(f, from, to, src, l.i);
  else
    v = join_lanes(f, from, to, src, l.i);
  store_bits(f, to, out, l.i, v);
  cg_loop_end(f, &l);
  return true;
}
