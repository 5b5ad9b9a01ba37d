/* buffer_plan.h — buffer assignment as a pass on the IR: for every computation, which
 * instruction results get a buffer of their own in the computation's frame (its part of the
 * call's arena) and at which offset, which alias another value's buffer (tuple,
 * get-tuple-element, reshape, bitcast and other forwarding ops, a while loop's pass-through
 * state), which take over a dying operand's buffer (in-place elementwise results and
 * dynamic-update-slice), and which write the caller's result buffer directly.  Code generation reads the plan; it does not
 * place buffers itself (compiler/codegen/module.c: cg_alloc_result).
 *
 * Positions are instruction ids (ir_renumber order, which is execution order).  A buffer lives
 * from the instruction that defines it to the last reader of any value that holds it; the root
 * holds its buffers to the end.  Buffers of at most BUFFER_PLAN_STACK_MAX bytes live on the
 * stack and are not planned.  Placement: the smaller of a best-fit heap simulation in execution
 * order and a largest-first placement among overlapping lifetimes.
 * Tests: compiler/passes/buffer_plan_test.c (exact offsets, aliasing rules, the arena against a
 * brute-force lower bound), tests/arena/.
 */
#ifndef HLOC_PASSES_BUFFER_PLAN_H
#define HLOC_PASSES_BUFFER_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "hlo/status.h"
#include "ir/ir.h"

enum {
  BUFFER_PLAN_STACK_MAX = 256, /* larger array leaves get frame buffers */
  BUFFER_PLAN_ALIGN = 64,      /* frame buffers start at multiples of this */
};

/* One frame buffer: leaf `leaf` of instruction `instr`'s result, or (leaf < 0) the instruction's
 * temporary -1 - leaf (a while loop's next-state buffer), live over positions [from, to]. */
typedef struct plan_buffer {
  int instr, leaf;
  int64_t bytes, offset;
  int from, to;
  int param_leaf;        /* >= 0: no frame buffer but the caller's parameter leaf (0 bytes),
                          * tracked only for its lifetime (a donated parameter) */
} plan_buffer;

/* Whether in's value is its operand 0's value, buffers and all: opt-barrier, domain,
 * add-dependency, set-dimension-size, and a reshape or bitcast of the same bytes (storage is
 * dense row-major, so the bytes do not move). */
bool buffer_plan_forwards_operand(const ir_instr *in);

/* How a while loop keeps each leaf of its state across iterations. */
typedef enum plan_state_leaf {
  PLAN_STATE_COPIED,   /* its own buffer; the body's result (a temporary) is copied into it */
  PLAN_STATE_PASSED,   /* passed through unchanged: the init operand's buffer itself */
  PLAN_STATE_IN_PLACE, /* updated in place by a dynamic-update-slice: one buffer for the loop */
} plan_state_leaf;

/* The plan of one computation.  Arrays are indexed by instruction id; leaf_buffer by
 * first_leaf[id] + leaf. */
typedef struct comp_plan {
  bool planned;          /* false: instructions are not numbered by position; nothing planned */
  int n_instrs;
  plan_buffer *buffers;  /* by offset order of definition */
  int n_buffers;
  int *first_leaf;       /* n_instrs + 1 entries */
  int *leaf_buffer;      /* the buffer a result leaf uses, or -1 (alias, stack, caller, none) */
  int *first_temp;       /* n_instrs + 1 entries: the instruction's temporaries in temp_buffer */
  int *temp_buffer;
  int *reuse;            /* the operand whose buffer the result takes over, or -1 */
  int *result_leaf;      /* the caller's result leaf the instruction writes directly, or -1 */
  int *last_reader;      /* the position of the instruction's last reader (the root: n_instrs) */
  /* The entry only, when its module donates parameters (input_output_alias): by result leaf,
   * the flat parameter leaf whose buffer the caller may pass as that result, or -1.  A root
   * leaf is then written directly only when nothing reads that parameter at or after its
   * writer; otherwise it gets a frame buffer and is copied out after every read. */
  int *result_donor;
  int64_t frame_bytes;   /* the frame: the end of the highest placed buffer */
  int64_t live_peak;     /* the most bytes live at one position: a lower bound of frame_bytes */
} comp_plan;

typedef struct buffer_plan {
  comp_plan *comps;      /* by computation id */
  int n_comps;
} buffer_plan;

/* Pre: the module codegen will emit (after fusion), instructions numbered.  Plans every
 * computation into *out (free with buffer_plan_free). */
HLO_MUST_USE hlo_status buffer_plan_build(const ir_module *m, buffer_plan **out);
void buffer_plan_free(buffer_plan *p);

/* The frame buffer of leaf `leaf` of instruction `id`, or NULL. */
const plan_buffer *buffer_plan_leaf(const comp_plan *cp, int id, int leaf);
/* The frame buffer of temporary `k` of instruction `id`, or NULL. */
const plan_buffer *buffer_plan_temp(const comp_plan *cp, int id, int k);

/* The rules the plan and code generation share. */

/* Whether constant x is read where its literal lies (a read-only global of the compiled
 * module) instead of being copied into a buffer on every call: an array constant of a planned
 * computation that does not write the caller's result.  Like a parameter it then has no
 * buffer (leaf_buffer -1), so no result takes it over in place and a while loop passes it
 * through or copies it; code generation (codegen/lower.c) uses the global itself. */
bool buffer_plan_constant_by_reference(const comp_plan *cp, const ir_instr *x);

/* Which caller result leaf each instruction of c writes directly (result_leaf[id], -1 none):
 * an array root, or each array operand of a root tuple the first time it appears; never a
 * parameter (its buffer is the caller's input). */
void buffer_plan_result_writers(const ir_computation *c, int *result_leaf);

/* How while loop `in` keeps each of its n_leaves state leaves; malloc'd, NULL when out of
 * memory. */
plan_state_leaf *buffer_plan_while_state(const ir_instr *in, int n_leaves);

/* Whether in's result is a tuple of arrays that one kernel writes, each leaf into whatever
 * buffer it is given (a multi-output fusion; a variadic sort, reduce, reduce-window or
 * scatter; batch-norm training or grad; top-k; rng-bit-generator): a leaf the root returns
 * through a get-tuple-element is then written straight into the caller's result buffer
 * (planned here, fusion_leaves_to_caller; written by codegen/kernel.c cg_outline_value). */
bool buffer_plan_tuple_writes_results(const ir_instr *in);

/* Whether element i of in's result may overwrite element i of operand k's buffer: in's kernel
 * reads that operand only at the element it writes, and both have the same element size
 * (own_element.c). */
bool buffer_plan_reads_only_own_element(const ir_instr *in, int k);

#endif
