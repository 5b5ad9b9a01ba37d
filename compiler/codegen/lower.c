/* lower.c — the lowering rules (elementwise values are elementwise.c's, element types
 * types.c's), and the per-opcode table of rules (generated
 * from ir/opcodes.def) through which cg_lower_instr dispatches every instruction.
 * Tests: codegen_test.c (and its fake-op build, tests/fake_op.cmake), the golden suites.
 */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "codegen/ops.h"
#include "codegen/vmath.h"
#include "hlo/rt.h"

static bool types_supported(cg_module *cm, const ir_instr *in) {
  const ir_shape *shapes[8];
  int n = 0;
  if (in->shape && in->shape->et != IR_TUPLE && ir_etype_is_array(in->shape->et))
    shapes[n++] = in->shape;
  for (int i = 0; i < in->n_operands && n < 8; i++)
    if (in->operands[i]->shape->et != IR_TUPLE && ir_etype_is_array(in->operands[i]->shape->et))
      shapes[n++] = in->operands[i]->shape;
  bool moves_only = !ir_is_elementwise(in) && ir_opcode_table[in->op].family != IR_FAM_REDUCE &&
                    ir_opcode_table[in->op].family != IR_FAM_REDUCE_WINDOW &&
                    ir_opcode_table[in->op].family != IR_FAM_SCATTER &&
                    ir_opcode_table[in->op].family != IR_FAM_SELECT_AND_SCATTER &&
                    ir_opcode_table[in->op].family != IR_FAM_CONVOLUTION &&
                    ir_opcode_table[in->op].family != IR_FAM_BATCH_NORM &&
                    ir_opcode_table[in->op].family != IR_FAM_DOT && ir_opcode_table[in->op].family != IR_FAM_MAP;
  for (int i = 0; i < n; i++)
    if (!moves_only && !cg_compute_type(cm, shapes[i]->et)) {
      cg_fail(cm, in, "element type %s cannot be computed with",
              ir_etype_table[shapes[i]->et].spelling);
      return false;
    }
  return true;
}

/* ---- shared by the rules ------------------------------------------------------------------------------ */

static void elementwise_loop(cg_function *f, ir_instr *in, LLVMValueRef out) {
  int64_t n;
  ir_shape_num_elements(in->shape, &n);
  cg_loop l = cg_loop_begin(f, cg_i64(f->cm, n), "ew");
  LLVMValueRef v = cg_elementwise_value(f, in, l.i);
  cg_store(f, in->shape->et, out, l.i, v);
  cg_loop_end(f, &l);
}

static void set_single(cg_function *f, ir_instr *in, LLVMValueRef leaf) {
  cg_value v;
  v.n = 1;
  v.leaves = calloc(2, sizeof *v.leaves);
  v.shapes = calloc(2, sizeof *v.shapes);
  v.leaves[0] = leaf;
  v.shapes[0] = in->shape;
  f->values[in->id] = v;
}

static void lower_tuple_ops(cg_function *f, ir_instr *in) {
  cg_value v = {0};
  if (in->op == IR_OP_TUPLE) {
    for (int i = 0; i < in->n_operands; i++)
      v.n += f->values[in->operands[i]->id].n;
    v.leaves = calloc((size_t)v.n + 1, sizeof *v.leaves);
    v.shapes = calloc((size_t)v.n + 1, sizeof *v.shapes);
    int k = 0;
    for (int i = 0; i < in->n_operands; i++) {
      cg_value o = f->values[in->operands[i]->id];
      for (int j = 0; j < o.n; j++, k++) {
        v.leaves[k] = o.leaves[j];
        v.shapes[k] = o.shapes[j];
      }
    }
  } else { /* get-tuple-element: a sub-range of the operand's leaves */
    const ir_shape *ts = in->operands[0]->shape;
    int start = 0;
    for (int64_t i = 0; i < in->attrs.u.tuple_index; i++)
      start += ir_shape_count_leaves(ts->elems[i]);
    cg_value o = f->values[in->operands[0]->id];
    v.n = ir_shape_count_leaves(in->shape);
    v.leaves = calloc((size_t)v.n + 1, sizeof *v.leaves);
    v.shapes = calloc((size_t)v.n + 1, sizeof *v.shapes);
    for (int j = 0; j < v.n; j++) {
      v.leaves[j] = o.leaves[start + j];
      v.shapes[j] = o.shapes[start + j];
    }
  }
  f->values[in->id] = v;
}

static void forward(cg_function *f, ir_instr *in) {
  cg_value o = f->values[in->operands[0]->id];
  cg_value v = {calloc((size_t)o.n + 1, sizeof(LLVMValueRef)), calloc((size_t)o.n + 1, sizeof(ir_shape *)), o.n};
  for (int i = 0; i < o.n; i++) {
    v.leaves[i] = o.leaves[i];
    v.shapes[i] = o.shapes[i];
  }
  if (in->shape->et != IR_TUPLE && v.n == 1)
    v.shapes[0] = in->shape; /* a reshape or bitcast: the same bytes seen as its own shape */
  f->values[in->id] = v;
}

/* Array results of more than one element get their own kernel function (cg_outline);
 * scalars (reducer bodies, loop counters) stay inline so that LLVM keeps them in registers. */
static bool outline(const ir_instr *in) {
  int64_t n;
  return in->shape->et != IR_TUPLE && ir_shape_num_elements(in->shape, &n) && n > 1;
}

/* Lowers an instruction whose family writes one array result: outlined or inline. */
static void lower_single(cg_function *f, ir_instr *in, cg_kernel_fn body) {
  if (outline(in)) {
    /* Kernels that call computations (map, select-and-scatter) can fail; others cannot. */
    cg_outline(f, in, body, in->n_called > 0);
    return;
  }
  LLVMValueRef out = cg_alloc_result_leaf(f, in, 0, in->shape);
  body(f, in, out);
  set_single(f, in, out);
}

/* Lowers an instruction whose lowerer sets a whole value (several results, or a scalar result of
 * array operands): outlined when it touches an array of more than one element. */
static bool touches_array(const ir_instr *in) {
  if (outline(in))
    return true;
  for (int i = 0; i < in->n_operands; i++)
    if (outline(in->operands[i]))
      return true;
  if (in->shape->et == IR_TUPLE)
    for (int i = 0; i < in->shape->n_elems; i++) {
      int64_t n;
      const ir_shape *e = in->shape->elems[i];
      if (e->et != IR_TUPLE && e->et != IR_TOKEN && ir_shape_num_elements(e, &n) && n > 1)
        return true;
    }
  return false;
}

static void lower_value(cg_function *f, ir_instr *in, cg_value_lower_fn lower) {
  if (touches_array(in))
    cg_outline_value(f, in, lower, in->n_called > 0);
  else
    lower(f, in);
}

/* ---- the rules ---------------------------------------------------------------------------------- */

void cg_lower_elementwise(cg_function *f, ir_instr *in) { lower_single(f, in, elementwise_loop); }

static void lower_none(cg_function *f, ir_instr *in) {
  cg_fail(f->cm, in, "internal error: opcode '%s' reached no lowering", ir_opcode_table[in->op].spelling);
}

static void lower_token(cg_function *f, ir_instr *in) { set_single(f, in, LLVMConstNull(f->cm->ptr)); }

static void lower_data(cg_function *f, ir_instr *in) {
  if (in->shape->et == IR_TUPLE && in->op == IR_OP_CONSTANT) {
    cg_lower_tuple_constant(f, in);
    return;
  }
  if (f->owns_frame && buffer_plan_constant_by_reference(f->plan, in)) {
    set_single(f, in, cg_constant_literal(f, in)); /* read in place: no copy per call */
    return;
  }
  if (in->shape->et == IR_TUPLE) { /* a copy of a tuple */
    cg_value o = f->values[in->operands[0]->id];
    cg_value v = cg_alloc_result(f, in);
    for (int i = 0; i < v.n; i++)
      cg_copy_leaf(f, v.leaves[i], o.leaves[i], v.shapes[i]);
    f->values[in->id] = v;
    return;
  }
  lower_single(f, in, cg_lower_data);
}

/* Static shapes: the size is a constant. */
static void lower_get_dimension_size(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  LLVMValueRef out = cg_alloc_leaf(f, in->shape);
  int64_t d = in->operands[0]->shape->dims[in->attrs.dimensions.v[0]];
  cg_store(f, IR_S32, out, cg_i64(cm, 0), LLVMConstInt(cm->i32, (unsigned long long)d, 0));
  set_single(f, in, out);
}

static void lower_fusion(cg_function *f, ir_instr *in) {
  if (!cg_lower_fusion(f, in))
    cg_lower_call(f, in);
}

static void lower_dot(cg_function *f, ir_instr *in) { lower_single(f, in, cg_lower_dot); }
static void lower_map(cg_function *f, ir_instr *in) { lower_single(f, in, cg_lower_map); }
static void lower_gather(cg_function *f, ir_instr *in) { lower_single(f, in, cg_lower_gather); }
static void lower_select_and_scatter(cg_function *f, ir_instr *in) {
  lower_single(f, in, cg_lower_select_and_scatter);
}
static void lower_reduce(cg_function *f, ir_instr *in) { lower_value(f, in, cg_lower_reduce); }
static void lower_reduce_window(cg_function *f, ir_instr *in) { lower_value(f, in, cg_lower_reduce_window); }
static void scatter_into(cg_function *f, ir_instr *in, LLVMValueRef out) { cg_lower_scatter_into(f, in, &out); }
/* A scatter of one operand writes one array and may update that operand's buffer in place
 * (cg_outline, as a dynamic-update-slice); several operands make a tuple. */
static void lower_scatter(cg_function *f, ir_instr *in) {
  if (in->shape->et != IR_TUPLE)
    lower_single(f, in, scatter_into);
  else
    lower_value(f, in, cg_lower_scatter);
}
static void lower_sort(cg_function *f, ir_instr *in) { lower_value(f, in, cg_lower_sort); }
static void lower_scan(cg_function *f, ir_instr *in) { lower_value(f, in, cg_lower_scan); }
static void lower_topk(cg_function *f, ir_instr *in) { cg_outline_value(f, in, cg_lower_topk, true); }
static void lower_cholesky(cg_function *f, ir_instr *in) { cg_outline_value(f, in, cg_lower_cholesky, true); }
static void lower_triangular_solve(cg_function *f, ir_instr *in) {
  cg_outline_value(f, in, cg_lower_triangular_solve, true);
}
static void lower_fft(cg_function *f, ir_instr *in) { cg_outline_value(f, in, cg_lower_fft, true); }
static void lower_rng(cg_function *f, ir_instr *in) { cg_outline_value(f, in, cg_lower_rng, false); }
static void lower_rng_bit_generator(cg_function *f, ir_instr *in) {
  cg_outline_value(f, in, cg_lower_rng_bit_generator, true);
}
static void lower_rng_state(cg_function *f, ir_instr *in) { cg_outline_value(f, in, cg_lower_rng_state, false); }

static void lower_batch_norm(cg_function *f, ir_instr *in) {
  if (!ir_etype_is_float(in->operands[0]->shape->et))
    lower_none(f, in);
  else
    lower_value(f, in, cg_lower_batch_norm);
}

static void lower_convolution(cg_function *f, ir_instr *in) {
  if (ir_etype_is_complex(in->shape->et) || in->shape->et == IR_PRED)
    lower_none(f, in);
  else
    lower_single(f, in, cg_lower_convolution);
}

/* Explicitly no lowering: the opcode never reaches code generation (parameters are bound by
 * the computation's function; ragged-dot, scaled-dot and shuffle are rewritten by passes). */
const cg_lower_rule cg_rule_none = {.lower = lower_none};
/* Values resolved at compile time. */
const cg_lower_rule cg_rule_tuple = {.lower = lower_tuple_ops};
const cg_lower_rule cg_rule_forward = {.lower = forward};
const cg_lower_rule cg_rule_token = {.lower = lower_token};
const cg_lower_rule cg_rule_get_dimension_size = {.lower = lower_get_dimension_size};
/* Loops over one result (data.c, dot.c, conv.c, window.c, control.c). */
const cg_lower_rule cg_rule_data = {.lower = lower_data};
const cg_lower_rule cg_rule_dot = {.lower = lower_dot};
const cg_lower_rule cg_rule_convolution = {.lower = lower_convolution};
const cg_lower_rule cg_rule_map = {.lower = lower_map};
const cg_lower_rule cg_rule_gather = {.lower = lower_gather};
const cg_lower_rule cg_rule_select_and_scatter = {.lower = lower_select_and_scatter};
/* Whole values (several results, or a scalar of array operands). */
const cg_lower_rule cg_rule_reduce = {.lower = lower_reduce};
const cg_lower_rule cg_rule_reduce_window = {.lower = lower_reduce_window};
const cg_lower_rule cg_rule_scatter = {.lower = lower_scatter};
const cg_lower_rule cg_rule_batch_norm = {.lower = lower_batch_norm};
const cg_lower_rule cg_rule_sort = {.lower = lower_sort};
const cg_lower_rule cg_rule_scan = {.lower = lower_scan};
/* Runtime calls (sort.c, linalg.c, fft.c, rng.c). */
const cg_lower_rule cg_rule_topk = {.lower = lower_topk};
const cg_lower_rule cg_rule_cholesky = {.lower = lower_cholesky};
const cg_lower_rule cg_rule_triangular_solve = {.lower = lower_triangular_solve};
const cg_lower_rule cg_rule_fft = {.lower = lower_fft};
const cg_lower_rule cg_rule_rng = {.lower = lower_rng};
const cg_lower_rule cg_rule_rng_bit_generator = {.lower = lower_rng_bit_generator};
const cg_lower_rule cg_rule_rng_state = {.lower = lower_rng_state};
/* Control flow and calls (control.c, fused.c, wrappers.c, custom_call.c). */
const cg_lower_rule cg_rule_while = {.lower = cg_lower_while};
const cg_lower_rule cg_rule_conditional = {.lower = cg_lower_conditional};
const cg_lower_rule cg_rule_call = {.lower = cg_lower_call};
const cg_lower_rule cg_rule_fusion = {.lower = lower_fusion};
const cg_lower_rule cg_rule_async = {.lower = cg_lower_async};
const cg_lower_rule cg_rule_copy_async = {.lower = cg_lower_copy_async};
const cg_lower_rule cg_rule_custom_call = {.lower = cg_lower_custom_call};
/* Host transfers and collectives (feeds.c, channels.c, collectives.c). */
const cg_lower_rule cg_rule_infeed = {.lower = cg_lower_infeed};
const cg_lower_rule cg_rule_outfeed = {.lower = cg_lower_outfeed};
const cg_lower_rule cg_rule_send_recv = {.lower = cg_lower_send_recv};
const cg_lower_rule cg_rule_replica_id = {.lower = cg_lower_replica_id};
const cg_lower_rule cg_rule_collective = {.lower = cg_lower_collective};
const cg_lower_rule cg_rule_collective_done = {.lower = cg_lower_collective_done};

/* ---- dispatch ------------------------------------------------------------------------------------ */

/* Generated from opcodes.def: every opcode names its rule there, so none can be left out. */
const cg_lower_rule *const cg_lower_rules[IR_OP_COUNT] = {
#define OP(e, s, a, fl, fam, rule) [e] = &rule,
#include "ir/opcodes.def"
#undef OP
};

void cg_lower_instr(cg_function *f, ir_instr *in) {
  if (!types_supported(f->cm, in))
    return;
  if (buffer_plan_forwards_operand(in)) { /* the plan shares the operand's buffers */
    forward(f, in);
    return;
  }
  /* elementwise, data-movement and single-input reduce instructions, and pooling's
   * reduce-windows: a loop kernel of their own (never a fusion, which its rule lowers) */
  if (cg_lower_fused_single(f, in))
    return;
  cg_lower_rules[in->op]->lower(f, in);
}
