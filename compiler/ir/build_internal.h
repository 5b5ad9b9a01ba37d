/* build_internal.h — what the three files of the IR builder share (not for other stages):
 * the builder's state, the name tables, computation references resolved at the end, and the
 * helpers that read attribute values.  build.c builds (shapes, literals, computations,
 * instructions), attributes.c interprets attributes, desugar.c rewrites the text forms XLA's
 * parser rewrites.  Tests: testdata/parse/ok (round trip) and testdata/parse/err (messages).
 */
#ifndef HLOC_IR_BUILD_INTERNAL_H
#define HLOC_IR_BUILD_INTERNAL_H

#include "ir/build.h"

/* ---- a small string -> pointer hash table in the arena (build.c) ----------------------------- */

typedef struct name_slot {
  ir_str key;
  void *value;
  ir_loc loc;
  bool generated;  /* a name hloc made up (p.get-tuple-element1 for p#0): yields to the text */
} name_slot;

typedef struct name_map {
  name_slot *slots;
  size_t cap, n;
} name_map;

name_slot *irb_map_find(name_map *m, ir_str key);
name_slot *irb_map_put_slot(ir_arena *a, name_map *m, name_slot slot);
bool irb_map_put(ir_arena *a, name_map *m, ir_str key, void *value, ir_loc loc);

/* ---- the builder --------------------------------------------------------------------- */

typedef struct comp_ref {   /* a called computation to resolve at the end */
  ir_instr *in;
  int slot;
  ir_str name;
  ir_loc loc;
} comp_ref;

typedef struct ctrl_ref {   /* a control predecessor to resolve at the end of its computation */
  ir_instr *in;
  int slot;
  ir_str name;
  ir_loc loc;
} ctrl_ref;

struct ir_builder {
  ir_module *m;
  ir_diag_list *diags;
  const char *text;
  size_t len;
  bool oom;
  ir_computation *cur;
  name_map instrs;        /* names in the current computation */
  name_map comps;         /* computation names */
  comp_ref *comp_refs;
  int n_comp_refs, cap_comp_refs;
  ctrl_ref *ctrl_refs;
  int n_ctrl_refs, cap_ctrl_refs;
  bool saw_entry;
  bool cur_has_root;
  int gensym;
  ir_av *sig;             /* the current computation's "(p: shape, ...) -> shape", or NULL */
  int ctrl_base;          /* control-predecessor references of the current computation start here */
  struct inline_frame *inl; /* the computations an inline body (to_apply={...}) interrupts */
  bool single;            /* single-instruction input: undefined operands become parameters */
  int n_single_params;
};

/* What an inline computation body saves of the computation it is written in. */
typedef struct inline_frame {
  struct inline_frame *up;
  ir_computation *cur;
  name_map instrs;
  bool cur_has_root;
  ir_av *sig;
  int n_ctrl_refs, ctrl_base;
  ir_loc loc;
} inline_frame;

static inline ir_family fam_of(const ir_instr *in) { return ir_opcode_table[in->op].family; }

/* ---- build.c -------------------------------------------------------------------------------- */

/* A name as written, without its leading '%'. */
ir_str irb_bare_name(ir_str s);
/* The text of an attribute value as written (interned). */
ir_str irb_av_text(ir_builder *b, const ir_av *v);
/* Numbers, lists and flags from attribute values; false after a diagnostic. */
bool irb_av_i64(ir_builder *b, const ir_av *v, int64_t *out);
bool irb_av_i64_list(ir_builder *b, const ir_av *v, ir_i64_list *out);
bool irb_av_bool(ir_builder *b, const ir_av *v, bool *out);
/* A quoted string's contents, or the text as written when it is not quoted. */
ir_str irb_unquote(ir_builder *b, const ir_av *v);
/* A literal of `shape` from its parsed value; NULL after a diagnostic. */
ir_literal *irb_literal_from_av(ir_builder *b, const ir_shape *shape, const ir_av *v);
/* Appends name=value to a list of attributes kept verbatim. */
void irb_add_raw(ir_builder *b, ir_raw_attr **arr, int *n, ir_str name, ir_str value);
/* Enters in's name into the current computation's table (`generated`: a name hloc made up). */
bool irb_register_instr_as(ir_builder *b, ir_instr *in, bool generated);
/* A new instruction in the current computation; NULL after reporting out of memory. */
ir_instr *irb_make_instr(ir_builder *b, ir_opcode op, ir_str name, ir_loc loc, ir_shape *shape, ir_instr **ops,
                         int n);
/* Records a called computation to resolve when the module ends. */
bool irb_add_comp_ref(ir_builder *b, comp_ref r);

/* ---- attributes.c --------------------------------------------------------------------------- */

/* Interprets each attribute of `in` per its opcode family (unknown ones are kept verbatim) and
 * assembles in->called in XLA's order. */
void irb_apply_attrs(ir_builder *b, ir_instr *in, ir_attr_list *attrs);
/* Reports the first attribute in's opcode requires that `attrs` lacks. */
void irb_check_required(ir_builder *b, ir_instr *in, const ir_attr_list *attrs);

/* ---- desugar.c ------------------------------------------------------------------------------ */

/* In single-instruction input, an operand nothing defines becomes the next parameter. */
ir_instr *irb_single_parameter(ir_builder *b, ir_av *v, ir_str n);
/* Builds the hidden computation a compact async start (dot-start(...)) wraps. */
void irb_desugar_compact_start(ir_builder *b, ir_instr *in, ir_opcode wrapped, ir_attr_list *attrs);

#endif
