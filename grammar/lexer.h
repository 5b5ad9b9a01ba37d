/* lexer.h — state shared by the re2c lexer (hlo.re), the Bison grammar (hlo.y) and the
 * builder (compiler/ir/build.c): the input, the position, and the parse context.
 *
 * The lexer never allocates except through the module arena; every error becomes a
 * diagnostic.  Token spans carry byte offsets so that verbatim attribute values can be kept
 * exactly as written.
 */
#ifndef HLOC_GRAMMAR_LEXER_H
#define HLOC_GRAMMAR_LEXER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/build.h"

/* A source span: 1-based line/column of the first and last character, byte offsets
 * [start, end). */
typedef struct hlo_span {
  int first_line, first_column, last_line, last_column;
  size_t start, end;
} hlo_span;

typedef struct hlo_lexer {
  const unsigned char *base;  /* NUL-terminated copy of the input */
  const unsigned char *cur;
  const unsigned char *lim;   /* points at the terminating NUL */
  const unsigned char *tok;
  const unsigned char *line_start;
  int line;
  /* For verbatim capture: the last two tokens were NAME '=' (name in attr_name). */
  int prev_tok, prev_prev_tok;
  const unsigned char *attr_name;
  size_t attr_name_len;
  int brace_depth;
  /* Brace depths just inside `branch_computations={` / `called_computations={` lists, whose
   * items may be bodies written inline (XLA's canonical text); innermost last. */
  int comp_list_depth[16];
  int n_comp_lists;
  int nest;                   /* open (, [, { (all kinds): bounded by HLO_MAX_NESTING */
} hlo_lexer;

/* Deepest bracket nesting accepted.  Real modules stay below 15 (rank-8 constants inside
 * operand lists); the bound keeps every recursive walk of shapes, literals and attribute
 * values (here and in later stages) far from the stack limit on hostile input. */
enum { HLO_MAX_NESTING = 100 };

typedef struct hlo_parser {
  hlo_lexer lx;
  ir_builder *b;
} hlo_parser;

#endif
