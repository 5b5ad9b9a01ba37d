/* hlo.y — the Bison grammar of XLA HLO text (module, computations, instructions, shapes,
 * attribute values, literals).  Declarative: every action is one call into
 * compiler/ir/build.c (irb_*), which resolves names and reports semantic errors (attribute
 * values are interpreted per opcode family in compiler/ir/attributes.c).  Attribute values and literals are parsed
 * into the generic ir_av tree; values hloc keeps verbatim arrive as one RAW token.
 * Built with bison -Wall -Werror; %expect 0.  Tests: testdata/parse/{ok,err}.
 */
%require "3.8"
%define api.pure full
%define api.prefix {hlo_}
%define api.token.prefix {T_}
%define api.location.type {hlo_span}
%define parse.error custom
%define parse.lac full
%locations
%param {hlo_parser *p}
%expect 0

%code requires {
#include "ir/build.h"
#include "lexer.h"
}

%code provides {
int hlo_lex(HLO_STYPE *lval, hlo_span *lloc, hlo_parser *p);
}

%code {
#include <stdio.h>
#include <string.h>

#define YYLLOC_DEFAULT(cur, rhs, n)                                  \
  do {                                                               \
    if (n) {                                                         \
      (cur).first_line = YYRHSLOC(rhs, 1).first_line;                \
      (cur).first_column = YYRHSLOC(rhs, 1).first_column;            \
      (cur).start = YYRHSLOC(rhs, 1).start;                          \
      (cur).last_line = YYRHSLOC(rhs, n).last_line;                  \
      (cur).last_column = YYRHSLOC(rhs, n).last_column;              \
      (cur).end = YYRHSLOC(rhs, n).end;                              \
    } else {                                                         \
      (cur).first_line = (cur).last_line = YYRHSLOC(rhs, 0).last_line; \
      (cur).first_column = (cur).last_column = YYRHSLOC(rhs, 0).last_column; \
      (cur).start = (cur).end = YYRHSLOC(rhs, 0).end;                \
    }                                                                \
  } while (0)

#define LOC(l) ((ir_loc){(l).first_line, (l).first_column})
#define AV(kind, l) irb_av(p->b, (kind), LOC(l), (l).start, (l).end)

static void hlo_error(hlo_span *loc, hlo_parser *p, const char *msg) {
  irb_error(p->b, LOC(*loc), "%s", msg);
}
}

%union {
  ir_av *av;
  ir_shape *shape;
  ir_attr_list attrs;
  int flag;
}

%token <av> NAME "identifier" INT "integer" FLOAT "number" STRING "string"
%token <av> RAW "attribute value" DIMLABELS "dim labels" DXD "window dimensions"
%token <av> PAD "padding" TRUE "true" FALSE "false" SPECIAL "special float"
%token <av> ETYPE "element type" CONSTANT "constant" STACKFRAMES "stack frame table"
%token HLOMODULE "HloModule" ENTRY "ENTRY" ROOT "ROOT" ARROW "->" LE "<=" ELLIPSIS "..."
%token BUFFER "b(" TPERM "T(" LAYOUT_OPEN "layout '{'" COMP_OPEN "computation '{'" ERROR "invalid token"
%token EOF 0 "end of file"

%type <av> name dims dim ints int_list iota_groups value list list_item literal lit_items
%type <av> lit_item scalar operands operand access nested params param sig_opt shapes
%type <av> layout_opt attr_value array_literal shaped_literal shaped_literals shaped_literal_item
%type <shape> shape shape_opt array_shape
%type <attrs> attrs comp_attrs
%type <flag> root_opt

%%

module
  : header stack_frames computations
  | computations
  | single_instruction
  ;

/* XLA's single-instruction input: one instruction with no module around it, with or without
 * its name; operands it does not define become parameters (irb_single_instruction). */
single_instruction
  : name '=' shape_opt name '(' operands ')' attrs
                                      { irb_single_instruction(p->b, $1, $3, $4, $6, &$8); }
  | name '=' shape_opt CONSTANT '(' literal ')' attrs
                                      { irb_single_instruction(p->b, $1, $3, $4, $6, &$8); }
  | shape name '(' operands ')' attrs { irb_single_instruction(p->b, NULL, $1, $2, $4, &$6); }
  | shape CONSTANT '(' literal ')' attrs
                                      { irb_single_instruction(p->b, NULL, $1, $2, $4, &$6); }
  ;

header
  : HLOMODULE name attrs              { irb_module_header(p->b, $2, &$3); }
  | HLOMODULE name ':' attrs          { irb_module_header(p->b, $2, &$4); }  /* older dumps: HloModule m: */
  ;

stack_frames
  : %empty
  | STACKFRAMES                       { irb_stack_frames(p->b, @1.start, @1.end); }
  ;

computations
  : computation
  | computations computation
  ;

computation
  : ENTRY name sig_opt '{'            { irb_begin_computation(p->b, $2, 1, $3, $3 ? $3->shape : NULL); }
    instructions '}' comp_attrs       { irb_end_computation(p->b, &$8); }
  | name sig_opt '{'                  { irb_begin_computation(p->b, $1, 0, $2, $2 ? $2->shape : NULL); }
    instructions '}' comp_attrs       { irb_end_computation(p->b, &$7); }
  ;

sig_opt
  : %empty                            { $$ = NULL; }
  | '(' ')' ARROW shape               { $$ = AV(AV_SIGNATURE, @$); if ($$) $$->shape = $4; }
  | '(' params ')' ARROW shape        { $$ = $2; if ($$) { $$->kind = AV_SIGNATURE; $$->shape = $5; } }
  ;

params
  : param                             { $$ = irb_av_append(p->b, AV(AV_TUPLE, @1), $1); }
  | params ',' param                  { $$ = irb_av_append(p->b, $1, $3); }
  ;

param
  : name ':' shape                    { $$ = $1; if ($$) $$->shape = $3; }
  ;

comp_attrs
  : %empty                            { $$ = (ir_attr_list){0}; }
  | comp_attrs ',' name '=' value     { $$ = $1; irb_attr_append(p->b, &$$, $3->s, LOC(@3), $5); }
  ;

instructions
  : instruction
  | instructions instruction
  ;

instruction
  : root_opt name '=' shape_opt name '(' operands ')' attrs
                                      { irb_instruction(p->b, $1, $2, $4, $5, $7, &$9); }
  | root_opt name '=' shape_opt CONSTANT '(' literal ')' attrs
                                      { irb_instruction(p->b, $1, $2, $4, $5, $7, &$9); }
  ;

root_opt
  : %empty                            { $$ = 0; }
  | ROOT                              { $$ = 1; }
  ;

name
  : NAME
  ;

attrs
  : %empty                            { $$ = (ir_attr_list){0}; }
  | attrs ',' name '=' attr_value     { $$ = $1; irb_attr_append(p->b, &$$, $3->s, LOC(@3), $5); }
  ;

/* ---- operands ---- */

operands
  : %empty                            { $$ = AV(AV_TUPLE, @$); }
  | operand                           { $$ = irb_av_append(p->b, AV(AV_TUPLE, @1), $1); }
  | operands ',' operand              { $$ = irb_av_append(p->b, $1, $3); }
  ;

operand
  : name access                       { $$ = $2; if ($$) { $$->s = $1->s; $$->loc = $1->loc; } }
  | shape name access                 { $$ = $3; if ($$) { $$->s = $2->s; $$->loc = $2->loc; $$->shape = $1; } }
  | nested
  | shape nested                      { $$ = $2; if ($$) $$->shape = $1; }
  | shape                             { $$ = AV(AV_OPERAND, @1); if ($$) $$->shape = $1; }
  | INT
  ;

access
  : %empty                            { $$ = AV(AV_OPERAND, @$); }
  | access '#' INT                    { $$ = irb_av_append(p->b, $1, $3); }
  ;

nested
  : name '(' operands ')'             { $$ = $3; if ($$) { $$->kind = AV_NESTED; $$->s = $1->s; $$->loc = $1->loc; } }
  | CONSTANT '(' literal ')'          { $$ = irb_av_append(p->b, AV(AV_NESTED, @1), $3); if ($$) $$->s = $1->s; }
  ;

/* ---- shapes ---- */

shape_opt
  : %empty                            { $$ = NULL; }
  | shape
  ;

shape
  : array_shape
  | '(' ')'                           { $$ = irb_tuple_shape(p->b, NULL, LOC(@1)); }
  | '(' shapes ')'                    { $$ = irb_tuple_shape(p->b, $2, LOC(@1)); }
  | BUFFER '(' shape ')'              { $$ = irb_buffer_shape(p->b, $3); }
  ;

shapes
  : shape                             { ir_av *s = AV(AV_SHAPE, @1); if (s) s->shape = $1;
                                        $$ = irb_av_append(p->b, AV(AV_LIST, @1), s); }
  | shapes ',' shape                  { ir_av *s = AV(AV_SHAPE, @3); if (s) s->shape = $3;
                                        $$ = irb_av_append(p->b, $1, s); }
  ;

array_shape
  : ETYPE '[' dims ']' layout_opt     { $$ = irb_array_shape(p->b, $1, $3, $5); }
  ;

dims
  : %empty                            { $$ = AV(AV_LIST, @$); }
  | dim                               { $$ = irb_av_append(p->b, AV(AV_LIST, @1), $1); }
  | dims ',' dim                      { $$ = irb_av_append(p->b, $1, $3); }
  ;

dim
  : INT
  | LE INT                            { $$ = $2; if ($$) $$->kind = AV_BOUNDED; }
  | '?'                               { $$ = AV(AV_SPECIAL, @1); }
  ;

layout_opt
  : %empty                            { $$ = NULL; }
  | LAYOUT_OPEN ints '}'              { $$ = $2; }
  | LAYOUT_OPEN ints ':' soup '}'     { $$ = $2; if ($$) { $$->start = @4.start; $$->end = @4.end; $$->kind = AV_RAW; } }
  ;

/* Layout items after ':' (T(..)(..), E(..), S(..), D(..), ...): kept as text, read by build.c. */
soup
  : %empty
  | soup soup_token
  ;

soup_token
  : NAME | INT | ETYPE | DXD | TPERM | '(' | ')' | '[' | ']' | ',' | ':' | '*' | '#' | '+' | '~' | '?' | LE
  ;

ints
  : %empty                            { $$ = AV(AV_LIST, @$); }
  | int_list
  ;

int_list
  : INT                               { $$ = irb_av_append(p->b, AV(AV_LIST, @1), $1); }
  | int_list ',' INT                  { $$ = irb_av_append(p->b, $1, $3); }
  ;

/* ---- attribute values ---- */

/* What may follow name= at the top level of an attribute list: any value, or a literal with
 * its shape (custom-call's literal=), which inside braces would be ambiguous. */
attr_value
  : value
  | COMP_OPEN                         { irb_begin_inline(p->b, LOC(@1)); }
    instructions '}'                  { $$ = irb_end_inline(p->b, LOC(@1), @1.start, @4.end); }
  | shaped_literal
  | '(' shaped_literals ')'           { $$ = $2; if ($$) { $$->kind = AV_TUPLE; $$->loc = LOC(@1); $$->start = @$.start; $$->end = @$.end; } }
  ;

value
  : INT | FLOAT | name | STRING | RAW | DIMLABELS | DXD | PAD | TRUE | FALSE | SPECIAL
  | shape                             { $$ = AV(AV_SHAPE, @1); if ($$) $$->shape = $1; }
  | '{' '}'                           { $$ = AV(AV_LIST, @$); }
  | '{' list '}'                      { $$ = $2; if ($$) { $$->start = @$.start; $$->end = @$.end; } }
  | iota_groups
  ;

iota_groups
  : '[' ints ']' LE '[' ints ']'      { $$ = AV(AV_IOTA, @$); $$ = irb_av_append(p->b, $$, $2);
                                        $$ = irb_av_append(p->b, $$, $6); }
  | '[' ints ']' LE '[' ints ']' TPERM ints ')'
                                      { $$ = AV(AV_IOTA, @$); $$ = irb_av_append(p->b, $$, $2);
                                        $$ = irb_av_append(p->b, $$, $6); $$ = irb_av_append(p->b, $$, $9); }
  ;

list
  : list_item                         { $$ = irb_av_append(p->b, AV(AV_LIST, @1), $1); }
  | list ',' list_item                { $$ = irb_av_append(p->b, $1, $3); }
  | list list_item                    { $$ = irb_av_append(p->b, $1, $2); }
  ;

list_item
  : value
  | COMP_OPEN                         { irb_begin_inline(p->b, LOC(@1)); }
    instructions '}'                  { $$ = irb_end_inline(p->b, LOC(@1), @1.start, @4.end); }
  | name '=' value                    { $$ = irb_av_append(p->b, AV(AV_KV, @$), $3); if ($$) $$->s = $1->s; }
  | '[' INT ':' INT ']'               { $$ = irb_av_append(p->b, irb_av_append(p->b, AV(AV_RANGE, @$), $2), $4); }
  | '[' INT ':' INT ':' INT ']'       { $$ = irb_av_append(p->b, irb_av_append(p->b, irb_av_append(p->b, AV(AV_RANGE, @$), $2), $4), $6); }
  | '(' ')' ARROW shape               { $$ = AV(AV_SIGNATURE, @$); if ($$) { $$->shape = $4; $$ = irb_av_append(p->b, $$, AV(AV_LIST, @1)); } }
  | '(' shapes ')' ARROW shape        { $$ = irb_av_append(p->b, AV(AV_SIGNATURE, @$), $2); if ($$) $$->shape = $5; }
  ;

/* ---- literals ---- */

/* A literal with its shape written before it, as custom-call's literal= prints it:
 * s32[2]{0} {1, 2}, f32[] 0.1, ( s32[1]{0} {4}, pred[] true ). */
shaped_literal
  : array_shape array_literal         { $$ = irb_av_append(p->b, AV(AV_SHAPED, @$), $2); if ($$) $$->shape = $1; }
  ;

/* An array literal after its shape; bare names (nan, inf) are left out, since there a name
 * may as well start the next instruction. */
array_literal
  : INT | FLOAT | TRUE | FALSE | SPECIAL
  | '{' '}'                           { $$ = AV(AV_LIST, @$); }
  | '{' lit_items '}'                 { $$ = $2; if ($$) { $$->kind = AV_LIST; $$->loc = LOC(@1); $$->start = @$.start; $$->end = @$.end; } }
  ;

shaped_literals
  : shaped_literal_item               { $$ = irb_av_append(p->b, AV(AV_LIST, @1), $1); }
  | shaped_literals ',' shaped_literal_item
                                      { $$ = irb_av_append(p->b, $1, $3); }
  ;

shaped_literal_item
  : shaped_literal
  | '(' shaped_literals ')'           { $$ = $2; if ($$) { $$->kind = AV_TUPLE; $$->loc = LOC(@1); $$->start = @$.start; $$->end = @$.end; } }
  ;

literal
  : scalar
  | '{' '}'                           { $$ = AV(AV_LIST, @$); }
  | '{' ELLIPSIS '}'                  { $$ = AV(AV_ELLIPSIS, @$); }
  | '{' lit_items '}'                 { $$ = $2; if ($$) { $$->kind = AV_LIST; $$->loc = LOC(@1); $$->start = @$.start; $$->end = @$.end; } }
  | '(' ')'                           { $$ = AV(AV_TUPLE, @$); }
  | '(' lit_items ')'                 { $$ = $2; if ($$) { $$->kind = AV_TUPLE; $$->loc = LOC(@1); $$->start = @$.start; $$->end = @$.end; } }
  ;

lit_items
  : lit_item                          { $$ = irb_av_append(p->b, AV(AV_LIST, @1), $1); }
  | lit_items ',' lit_item            { $$ = irb_av_append(p->b, $1, $3); }
  ;

lit_item
  : literal
  | array_shape literal               { $$ = irb_av_append(p->b, AV(AV_SHAPED, @$), $2); if ($$) $$->shape = $1; }
  ;

scalar
  : INT | FLOAT | TRUE | FALSE | SPECIAL | NAME
  ;

%%

static const char *token_text(yysymbol_kind_t k) {
  return yysymbol_name(k);
}

static int yyreport_syntax_error(const yypcontext_t *ctx, hlo_parser *p) {
  yysymbol_kind_t expected[6];
  int n = yypcontext_expected_tokens(ctx, expected, 6);
  yysymbol_kind_t got = yypcontext_token(ctx);
  const hlo_span *loc = yypcontext_location(ctx);
  char found[96];
  if (got == YYSYMBOL_YYEOF || got == YYSYMBOL_YYEMPTY) {
    snprintf(found, sizeof found, "end of file");
  } else if (got == YYSYMBOL_ERROR) {
    return 0;  /* the lexer already reported it */
  } else {
    size_t len = loc->end - loc->start;
    const char *text = (const char *)p->lx.base + loc->start;
    if (len > 40)
      len = 40;
    const char *name = token_text(got);
    size_t nl = strlen(name);
    bool quoted = nl >= 2 && (name[0] == '\'' || name[0] == '"');
    if (quoted || (nl == len && strncmp(name, text, len) == 0))
      snprintf(found, sizeof found, "'%.*s'", (int)len, text);
    else
      snprintf(found, sizeof found, "%s '%.*s'", name, (int)len, text);
  }
  char msg[512];
  if (n <= 0 || n > 5) {
    snprintf(msg, sizeof msg, "unexpected %s", found);
  } else {
    size_t off = (size_t)snprintf(msg, sizeof msg, "expected ");
    for (int i = 0; i < n && off < sizeof msg; i++)
      off += (size_t)snprintf(msg + off, sizeof msg - off, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ",
                              token_text(expected[i]));
    if (off < sizeof msg)
      snprintf(msg + off, sizeof msg - off, ", found %s", found);
  }
  irb_error(p->b, LOC(*loc), "%s", msg);
  return 0;
}
