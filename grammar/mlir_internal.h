/* mlir_internal.h — the StableHLO MLIR front end's shared state: the re2c lexer (mlir.re),
 * the syntax tree the recursive-descent parser (mlir_parse.c) builds, and the translator
 * (mlir_emit.c, mlir_ops.c, mlir_chlo.c) that turns that tree into HLO text for the HLO
 * parser.  Everything is allocated from one arena owned by ml_ctx and freed at once; strings
 * are views into the NUL-terminated copy of the input.  Errors are diagnostics at MLIR
 * line:col; nothing here crashes or exits on bad input.  Tests: tests/stablehlo.cmake,
 * testdata/mlir/, tests/hostile/ (mlir cases), fuzz/mlir_fuzz.c.
 */
#ifndef HLOC_GRAMMAR_MLIR_INTERNAL_H
#define HLOC_GRAMMAR_MLIR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grammar/mlir.h"
#include "ir/arena.h"
#include "ir/diag.h"
#include "ir/ir.h"

/* ---- lexer ------------------------------------------------------------------------------- */

typedef enum ml_tok_kind {
  MT_EOF, MT_ERROR,
  MT_VALUE,   /* %name or %name#3 (text includes the #3) */
  MT_SYMBOL,  /* @name or @"quoted" (text without the @) */
  MT_BLOCK,   /* ^bb0 */
  MT_HASH,    /* #name, or #name<...> with its body (text is the whole thing) */
  MT_BARE,    /* identifier: letters, digits, _ $ . */
  MT_INT,     /* decimal or 0x hex, no sign */
  MT_FLOAT,   /* 1.5, 2.0e-3 */
  MT_STRING,  /* "..." (text is the contents, still escaped) */
  MT_TYPE,    /* tensor<...>, tuple<...>, complex<...>, !dialect.type<...>, memref... */
  MT_DENSE,   /* dense<...> / array<...> / dense_resource<...> (text is the whole thing) */
  MT_ARROW,   /* -> */
  MT_PUNCT,   /* one character: ( ) [ ] { } < > , : = ? * + - ! */
} ml_tok_kind;

typedef struct ml_tok {
  ml_tok_kind kind;
  char c;              /* MT_PUNCT */
  const char *p;       /* text */
  size_t n;
  ir_loc loc;
} ml_tok;

typedef struct ml_lexer {
  const unsigned char *base, *cur, *lim, *line_start;
  int line;
  ir_loc base_loc;     /* sub-lexers over a span: where the span starts */
  bool sub;
} ml_lexer;

void ml_lexer_init(ml_lexer *lx, const char *text, size_t len, ir_loc at);
/* The next token; comments, whitespace and loc(...) are skipped. */
ml_tok ml_lex(ml_lexer *lx);

/* ---- syntax tree --------------------------------------------------------------------------- */

typedef struct ml_str {
  const char *p;
  size_t n;
} ml_str;

/* A type: tensors (rank, dims, element type as HLO spells it), tuples, tokens. */
typedef enum ml_type_kind { MLT_TENSOR, MLT_TUPLE, MLT_TOKEN, MLT_OTHER } ml_type_kind;
typedef struct ml_type ml_type;
struct ml_type {
  ml_type_kind kind;
  ir_etype et;         /* tensor element type */
  int rank;
  int64_t *dims;       /* -1: dynamic (?) */
  int64_t *bounds;     /* NULL, or per dim the bound of a dynamic dim (-1 none) */
  ml_type **elems;     /* tuple */
  int n_elems;
};

typedef enum ml_attr_kind {
  MA_INT, MA_FLOAT, MA_BOOL, MA_STRING, MA_WORD, MA_SYMBOL, MA_LIST, MA_DICT,
  MA_DENSE,   /* dense<...>: text + type */
  MA_HASH,    /* #dialect.name<...> or #dialect<name WORD>: text; kids parsed when key = value */
  MA_TYPE, MA_UNIT, MA_CROSS, /* [a] x [b] (-> [c]): kids are the lists */
  MA_RANGES,  /* [0:1, 2:4:2]: kids are MA_LIST of 2 or 3 ints */
} ml_attr_kind;

typedef struct ml_attr ml_attr;
struct ml_attr {
  ml_attr_kind kind;
  ml_str key;          /* in a dict: the key */
  ml_str text;         /* words, strings, symbols, dense/hash bodies */
  int64_t i;
  double f;
  bool neg;
  ml_attr **kids;
  int n;
  ml_type *type;       /* MA_DENSE / MA_TYPE / typed literals */
  struct ml_op *sig;   /* MA_TYPE of a function type: in_types/out_types */
  ir_loc loc;
};

typedef struct ml_use {
  ml_str name;         /* %x without the # part */
  int index;           /* #N, or -1 */
  ir_loc loc;
} ml_use;

typedef struct ml_region ml_region;
typedef struct ml_op ml_op;

struct ml_op {
  ml_str name;              /* stablehlo.add, func.func, ... */
  ml_str *results;          /* result groups: %0 or %0:2 */
  int *result_counts;
  int n_result_groups, n_results;
  ml_use *operands;
  int n_operands;
  ml_attr *attrs;           /* MA_DICT: properties, attribute dict and keyword attributes */
  ml_str *words;            /* bare words of the pretty form (LT, FLOAT, ...) */
  int n_words;
  ml_str callee;            /* @sym of call / custom_call pretty forms */
  ml_region **regions;
  int n_regions;
  ml_type **in_types, **out_types;
  int n_in, n_out;
  bool has_types;
  ir_loc loc;
};

struct ml_region {
  ml_str *arg_names;
  ml_type **arg_types;
  int n_args;
  ml_op **ops;
  int n_ops;
  ir_loc loc;
};

/* ---- context ------------------------------------------------------------------------------- */

typedef struct ml_buf {
  char *p;
  size_t n, cap;
  bool oom;
} ml_buf;

void ml_buf_put(ml_buf *b, const char *s, size_t n);
void ml_buf_printf(ml_buf *b, const char *fmt, ...) HLO_PRINTF(2, 3);
void ml_buf_free(ml_buf *b);

typedef struct ml_ctx ml_ctx;

/* Parser: the whole text into a module op (builtin.module with one region).  NULL on error. */
ml_op *ml_parse(ml_ctx *c, const char *text, size_t len);

void ml_error(ml_ctx *c, ir_loc loc, const char *fmt, ...) HLO_PRINTF(3, 4);
bool ml_failed(const ml_ctx *c);
void *ml_alloc(ml_ctx *c, size_t n);
/* Grows a pointer array of *n elements by one; false when out of memory. */
bool ml_push(ml_ctx *c, void ***arr, int *n, void *item);

/* ---- helpers over the tree ------------------------------------------------------------- */

bool ml_str_is(ml_str s, const char *z);
const ml_attr *ml_attr_get(const ml_op *op, const char *key);
const ml_attr *ml_dict_get(const ml_attr *dict, const char *key);
bool ml_word_has(const ml_op *op, const char *w);
/* Parses a hash attribute's body (#stablehlo.gather<k = v, ...>) into a dict. */
ml_attr *ml_hash_dict(ml_ctx *c, const ml_attr *hash);
/* The last word inside a #dialect<kind WORD> enum attribute, or the word itself. */
ml_str ml_enum_word(const ml_attr *a);
/* Integer list of an attribute (array<i64: ...>, [..], dense<[..]>); false when not one. */
bool ml_attr_ints(ml_ctx *c, const ml_attr *a, int64_t **out, int *out_n);
/* Decodes a dense<...> attribute to element storage of type t (t->et, t's element count). */
bool ml_dense_bytes(ml_ctx *c, const ml_attr *a, const ml_type *t, unsigned char **out, int64_t *out_count);

/* ---- translator ---------------------------------------------------------------------- */

/* A value as the translator knows it: the HLO instruction name and the MLIR type. */
typedef struct ml_value {
  ml_str mlir;
  int index;             /* -1 or the result index */
  char hlo[24];
  ml_type *type;
  int line;              /* the line of its computation that defines it, or -1 */
} ml_value;

/* One computation being written: its lines (each with the MLIR location it came from). */
typedef struct ml_comp {
  ml_buf text;
  int *line_starts;
  ir_loc *line_locs;
  int n_lines, cap_lines;
  int root_line;         /* -1: none */
  char name[64];
  ml_value *vals;        /* scope: values visible here */
  int n_vals, cap_vals;
  ml_value *captures;    /* values of enclosing computations used here (become parameters) */
  int n_captures;
  bool allow_capture;
  struct ml_comp *outer;
  int n_params;
} ml_comp;

struct ml_ctx {
  ir_arena arena;
  ir_diag_list *diags;
  const char *text;
  size_t len;
  ml_buf module;             /* finished computations */
  ir_loc *module_line_locs;
  int module_lines, cap_module_lines;
  ml_buf entry;              /* the entry computation, appended last */
  ir_loc *entry_line_locs;
  int entry_lines, cap_entry_lines;
  int next_value, next_region;
  ml_op *module_op;
  mlir_check *checks;
  int n_checks, cap_checks;
  int entry_results;         /* results of the entry before the check pairs */
  int num_replicas, num_partitions;
  bool errors_capped;
};

/* Emitting instructions into the current computation. */
void ml_line(ml_ctx *c, ml_comp *k, ir_loc loc, const char *fmt, ...) HLO_PRINTF(4, 5);
void ml_new_name(ml_ctx *c, char out[24]);
void ml_shape_text(const ml_type *t, ml_buf *b);
char *ml_shape_str(ml_ctx *c, const ml_type *t);
/* Looks a use up (capturing from enclosing computations where allowed); NULL + error if unknown. */
const ml_value *ml_lookup(ml_ctx *c, ml_comp *k, const ml_use *u);
/* The value a use names in k or an enclosing computation, or NULL (no diagnostic). */
const ml_value *ml_find(const ml_comp *k, const ml_use *u);
bool ml_bind(ml_ctx *c, ml_comp *k, ml_str name, int index, const char *hlo, ml_type *t);
/* Binds an op's results to `hlo` (tuple-shaped when several: get-tuple-elements are emitted). */
bool ml_bind_results(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo);
ml_type *ml_result_type(ml_ctx *c, const ml_op *op);
ml_type *ml_tensor(ml_ctx *c, ir_etype et, int rank, const int64_t *dims);
ml_type *ml_operand_type(ml_ctx *c, ml_comp *k, const ml_op *op, int i);

/* Translates a region into a new computation; returns its name (arena) or NULL.  The block
 * arguments become parameters; with ML_TUPLE_PARAM they arrive as one tuple parameter (while
 * loops, conditional branches); with ML_TUPLE_RESULT the result is always a tuple (while body). */
enum { ML_TUPLE_PARAM = 1, ML_TUPLE_RESULT = 2 };
const char *ml_region_comp(ml_ctx *c, ml_comp *outer, const ml_region *r, int mode,
                           const ml_type *tuple_type, ir_loc loc);
/* A computation applying one binary HLO opcode to two scalars of type et. */
const char *ml_binary_comp(ml_ctx *c, const char *opcode, ir_etype et, ir_loc loc);
/* Translates every op of a block into k. */
bool ml_emit_ops(ml_ctx *c, ml_comp *k, ml_op **ops, int n);
/* One op (mlir_ops.c); false on error (reported). */
bool ml_emit_op(ml_ctx *c, ml_comp *k, const ml_op *op);
/* CHLO ops (mlir_chlo.c); *handled false when op is not a CHLO op it knows. */
bool ml_emit_chlo(ml_ctx *c, ml_comp *k, const ml_op *op, bool *handled);
/* Operand list text "%a, %b" of op's operands [from, to). */
bool ml_operands_text(ml_ctx *c, ml_comp *k, const ml_op *op, int from, int to, ml_buf *out);
/* Starts/ends a computation nested in `outer` (regions, expansions). */
void ml_comp_init(ml_ctx *c, ml_comp *k, ml_comp *outer, const char *name);
void ml_comp_finish(ml_ctx *c, ml_comp *k, bool entry);
void ml_comp_free(ml_comp *k);
void ml_add_check(ml_ctx *c, const mlir_check *chk);

#endif
