/* build.h — building the IR from parsed text: the calls the Bison grammar's actions make
 * (one call per action), and the generic attribute-value tree (ir_av) the grammar produces
 * for attribute values and literals.  build.c builds shapes, literals, computations and
 * instructions and resolves names, attributes.c interprets attributes per opcode family,
 * desugar.c rewrites the text forms XLA's parser rewrites; all report errors as diagnostics.
 * Tests: testdata/parse/ok (round trip) and testdata/parse/err (messages).
 */
#ifndef HLOC_IR_BUILD_H
#define HLOC_IR_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/diag.h"
#include "ir/ir.h"

typedef enum ir_av_kind {
  AV_INT,       /* i (and u for values above INT64_MAX), neg */
  AV_FLOAT,     /* f; s = the token text */
  AV_NAME,      /* s */
  AV_STRING,    /* s = unescaped contents */
  AV_LIST,      /* { kids } */
  AV_TUPLE,     /* ( kids ) */
  AV_RANGE,     /* [a:b(:c)]: kids are AV_INT */
  AV_KV,        /* s = key, kids[0] = value */
  AV_SHAPE,     /* shape */
  AV_RAW,       /* s = verbatim text (braces included) */
  AV_DIMLABELS, /* s */
  AV_DXD,       /* s, e.g. 3x3 */
  AV_PAD,       /* s, e.g. 0_1x2_2_1 */
  AV_IOTA,      /* [dims]<=[reshape](T(perm))?: kids[0..2] lists (kids[2] may be NULL) */
  AV_ELLIPSIS,  /* ... (elided literal data) */
  AV_BOOL,      /* i = 0/1 */
  AV_SPECIAL,   /* inf / -inf / nan / -nan / nan(0x..): s = text */
  AV_OPERAND,   /* s = name, shape = written shape or NULL, kids = #i tuple accesses */
  AV_NESTED,    /* s = opcode, kids = operands: an instruction nested as an operand */
  AV_SHAPED,    /* shape + kids[0]: a literal element written with its shape */
  AV_SIGNATURE, /* kids[0] = AV_TUPLE of AV_SHAPE params, shape = result */
  AV_BOUNDED,   /* a bounded dynamic dimension <=i */
} ir_av_kind;

typedef struct ir_av ir_av;
struct ir_av {
  ir_av_kind kind;
  ir_loc loc;
  size_t start, end;   /* byte span in the source */
  int64_t i;
  uint64_t u;
  bool neg, big;       /* AV_INT: written with '-'; above INT64_MAX (use u) */
  double f;
  ir_str s;
  ir_av **kids;
  int n, cap;
  ir_shape *shape;
};

/* One attribute as written: name=value. */
typedef struct ir_attr_in {
  ir_str name;
  ir_loc loc;
  ir_av *value;
} ir_attr_in;

typedef struct ir_attr_list {
  ir_attr_in *items;
  int n, cap;
} ir_attr_list;

typedef struct ir_builder ir_builder;

/* Creates a builder that fills `m`, reporting into `diags`; `text` is the source. */
ir_builder *irb_create(ir_module *m, ir_diag_list *diags, const char *text, size_t len);
ir_module *irb_module(ir_builder *b);
ir_diag_list *irb_diags(ir_builder *b);
void irb_error(ir_builder *b, ir_loc loc, const char *fmt, ...) HLO_PRINTF(3, 4);
bool irb_failed(ir_builder *b);
/* Out of memory while building: one diagnostic, then everything stops. */
void irb_oom(ir_builder *b, ir_loc loc);

/* ---- values ---- */
ir_av *irb_av(ir_builder *b, ir_av_kind kind, ir_loc loc, size_t start, size_t end);
ir_av *irb_av_append(ir_builder *b, ir_av *list, ir_av *item);
void irb_attr_append(ir_builder *b, ir_attr_list *list, ir_str name, ir_loc loc, ir_av *value);
ir_str irb_text(ir_builder *b, size_t start, size_t end);

/* ---- shapes ---- */
/* dims: AV_LIST of AV_INT, AV_BOUNDED (<=N) or AV_SPECIAL (?); layout: AV_LIST of
 * AV_INT (minor_to_major), or AV_RAW whose span is the text after ':' (kids = the ints). */
ir_shape *irb_array_shape(ir_builder *b, ir_av *etype, ir_av *dims, ir_av *layout);
ir_shape *irb_tuple_shape(ir_builder *b, ir_av *elems, ir_loc loc);
ir_shape *irb_buffer_shape(ir_builder *b, ir_shape *inner);

/* ---- structure ---- */
void irb_module_header(ir_builder *b, ir_av *name, ir_attr_list *attrs);
void irb_stack_frames(ir_builder *b, size_t start, size_t end);
void irb_begin_computation(ir_builder *b, ir_av *name, bool entry, ir_av *params,
                           ir_shape *result);
void irb_end_computation(ir_builder *b, ir_attr_list *attrs);
/* An inline computation body (to_apply={ ... }): begin before its instructions, end after
 * them; end returns a name value naming the new computation (placed before the one it is
 * written in), to be used as the attribute's value. */
void irb_begin_inline(ir_builder *b, ir_loc loc);
/* XLA's single-instruction input: an entry computation named after the module holding the
 * instruction as its ROOT (named after the module too when unnamed), with a parameter for
 * every operand it does not define (named as written, "_N" for a bare shape), numbered in
 * the order they appear. */
void irb_single_instruction(ir_builder *b, ir_av *name, ir_shape *shape, ir_av *opcode, ir_av *args,
                            ir_attr_list *attrs);
ir_av *irb_end_inline(ir_builder *b, ir_loc loc, size_t start, size_t end);
void irb_instruction(ir_builder *b, bool root, ir_av *name, ir_shape *shape, ir_av *opcode,
                     ir_av *args, ir_attr_list *attrs);
/* Resolves computation references, fills entry, rebuilds uses.  Returns false on errors. */
bool irb_finish(ir_builder *b);

#endif
