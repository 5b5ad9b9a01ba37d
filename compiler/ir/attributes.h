/* attributes.h — the one description of each instruction attribute hloc interprets: its
 * name, the opcode family that takes it, what kind of value it is, where in ir_attrs it is
 * stored and when it is printed.  The builder parses attributes by this table
 * (attributes.c) and the printer writes an instruction's family attributes by looping over it
 * (print.c), in the table's order, so the two cannot disagree on a name or a field.
 * Tests: testdata/parse/ok (round trip, byte for byte), testdata/parse/err, print_test.c.
 */
#ifndef HLOC_IR_ATTRIBUTES_H
#define HLOC_IR_ATTRIBUTES_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/ir.h"

enum { IR_ATTR_ANY = -1 }; /* a row any opcode may take (its handler decides) */

/* What the value is, which decides how it prints. */
typedef enum ir_attr_kind {
  IR_AK_OTHER,          /* printed outside the loop: print_instr, print_bc_attrs, print_called, print_common */
  IR_AK_I64,            /* int64_t */
  IR_AK_LIST,           /* ir_i64_list: {a,b} */
  IR_AK_LISTS,          /* ir_i64_list * with an int count at n_at: {{a,b},{c}} */
  IR_AK_BOOL,           /* bool: true or false */
  IR_AK_TRISTATE,       /* int: -1 not written, else 0/1 printed false/true */
  IR_AK_ENUM,           /* an enum (int-sized) printed as names[value] */
  IR_AK_TEXT,           /* ir_str printed as written */
  IR_AK_QUOTED,         /* ir_str printed as a quoted string */
  IR_AK_SLICE,          /* ir_slice_dim * with an int count at n_at: {[a:b:c], ...} */
  IR_AK_PADDING,        /* ir_pad_dim * with an int count at n_at: lo_hi_interior x ... */
  IR_AK_WINDOW,         /* ir_window */
  IR_AK_DIM_LABELS,     /* ir_conv_dnums */
  IR_AK_PRECISION,      /* ir_precision[] with an int count at n_at */
  IR_AK_SHAPE,          /* ir_shape * */
  IR_AK_SHAPES,         /* ir_shape ** with an int count at n_at */
  IR_AK_LITERAL,        /* ir_literal *, printed with its shape */
  IR_AK_REPLICA_GROUPS, /* ir_replica_groups */
  IR_AK_FLOAT,          /* double, printed with a decimal point */
} ir_attr_kind;

/* When the printer writes it. */
typedef enum ir_attr_when {
  IR_AW_ALWAYS,  /* always */
  IR_AW_SET,     /* when it holds something: a count or length above 0, a pointer, true, a
                  * window, labels or replica groups written, a precision not all default */
  IR_AW_NOT_ONE, /* an I64 other than 1 (the group counts) */
  IR_AW_NONNEG,  /* an I64 or TRISTATE of 0 or more */
  IR_AW_FLAG,    /* when the bool at flag_at is true (the parser sets it) */
} ir_attr_when;

struct attr_ctx; /* the builder's state while it applies one attribute (attributes.c) */

typedef struct ir_attr_desc {
  const char *name;
  int family;                        /* IR_FAM_* whose instructions take it, or IR_ATTR_ANY */
  bool fallback;                     /* also taken by opcodes with no row of this name */
  ir_attr_kind kind;
  ir_attr_when when;
  size_t at;                         /* offsetof(ir_attrs, the value) */
  size_t n_at;                       /* LISTS, SLICE, PADDING, PRECISION, SHAPES: the count */
  size_t flag_at;                    /* FLAG: the bool that says it was written */
  const char *const *names;          /* ENUM: the spellings, indexed by value */
  bool (*parse)(struct attr_ctx *x); /* reads the written value into `at`; false: kept verbatim */
} ir_attr_desc;

/* The rows: each family's in the order the printer writes them (XLA's), then those any
 * opcode may take. */
extern const ir_attr_desc ir_attr_table[];
extern const int ir_attr_table_n;

#endif
