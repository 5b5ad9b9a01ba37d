/* feeds.c — lowering of infeed and outfeed.  An infeed fills each array leaf of its data
 * (tuple leaves depth-first) with one hlo_rt_infeed_leaf call, which checks the queued buffer's
 * shape; an outfeed sends each array leaf of its operand with hlo_rt_outfeed.  The token
 * operands order them: instructions are lowered in a topological order, so an infeed inside a
 * while body runs once per iteration, in program order.
 * Tests: testdata/runtime/infeed_*, outfeed_* (tests/runtime.cmake).
 */
#include <stdio.h>
#include <stdlib.h>

#include "codegen/cg_internal.h"


static LLVMValueRef dims_global(cg_module *cm, const ir_shape *s) {
  LLVMValueRef d[64];
  for (int i = 0; i < s->rank && i < 64; i++)
    d[i] = cg_i64(cm, s->dims[i]);
  if (s->rank == 0)
    d[0] = cg_i64(cm, 0);
  return cg_const_global(cm, LLVMConstArray2(cm->i64, d, (uint64_t)(s->rank ? s->rank : 1)), "feed.dims");
}

LLVMValueRef cg_name_global(cg_module *cm, const ir_instr *in) {
  char name[300];
  int n = snprintf(name, sizeof name, "%.*s", (int)in->name.len, in->name.p);
  if (n < 0 || n >= (int)sizeof name)
    n = (int)sizeof name - 1;
  return cg_const_global(cm, LLVMConstStringInContext(cm->ctx, name, (unsigned)n, 0), "feed.name");
}

void cg_lower_infeed(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  cg_value v = cg_alloc_result(f, in);
  LLVMValueRef name = cg_name_global(cm, in);
  for (int i = 0; i < v.n; i++) {
    const ir_shape *s = v.shapes[i];
    int64_t bytes;
    if (!ir_etype_is_array(s->et) || !ir_shape_byte_size(s, &bytes))
      continue;
    LLVMValueRef args[7] = {f->ctx_arg, name, v.leaves[i], cg_i64(cm, bytes),
                            LLVMConstInt(cm->i32, (unsigned long long)s->et, 0),
                            LLVMConstInt(cm->i32, (unsigned long long)s->rank, 0), dims_global(cm, s)};
    cg_fail_if_status(f, cg_runtime_call(cm, CG_RT_hlo_rt_infeed_leaf, args, 7, "st"));
  }
  f->values[in->id] = v;
}

void cg_lower_outfeed(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  cg_value o = f->values[in->operands[0]->id];
  for (int i = 0; i < o.n; i++) {
    const ir_shape *s = o.shapes[i];
    int64_t bytes;
    if (!ir_etype_is_array(s->et) || !ir_shape_byte_size(s, &bytes))
      continue;
    LLVMValueRef args[6] = {f->ctx_arg, o.leaves[i], cg_i64(cm, bytes),
                            LLVMConstInt(cm->i32, (unsigned long long)s->et, 0),
                            LLVMConstInt(cm->i32, (unsigned long long)s->rank, 0), dims_global(cm, s)};
    cg_fail_if_status(f, cg_runtime_call(cm, CG_RT_hlo_rt_outfeed, args, 6, "st"));
  }
  cg_value v = cg_alloc_result(f, in); /* a token */
  f->values[in->id] = v;
}
