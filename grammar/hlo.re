/* hlo.re — the re2c lexer for XLA HLO text.
 *
 * Input: hlo_lexer (NUL-terminated copy of the text; an embedded NUL is an error, not the
 * end).  Output: one token per call with its span (line/column and byte offsets) and, for
 * tokens with a value, an ir_av node allocated in the module arena.  Comments and
 * whitespace are skipped; \n, \r\n and lone \r all end a line.  Values of attributes that
 * hloc keeps verbatim (sharding={...}, metadata={...}, ...) are returned as one RAW token.
 * Tests: testdata/parse/err (lexer errors), fuzz/parse_fuzz.c.
 */
#include <stdio.h>
#include <string.h>

#include "lexer.h"
#include "hlo_parser.h"

/* Attributes whose brace values the grammar parses; every other `name={...}` is verbatim. */
static const char *const typed_brace_attrs[] = {
    "dimensions", "slice", "window", "replica_groups", "source_target_pairs",
    "branch_computations", "called_computations", "control-predecessors", "calls",
    "lhs_batch_dims", "rhs_batch_dims", "lhs_contracting_dims", "rhs_contracting_dims",
    "lhs_ragged_dims", "rhs_group_dims", "offset_dims", "collapsed_slice_dims",
    "start_index_map", "slice_sizes", "dynamic_slice_sizes", "operand_batching_dims",
    "start_indices_batching_dims", "update_window_dims", "inserted_window_dims",
    "scatter_dims_to_operand_dims", "input_batching_dims", "scatter_indices_batching_dims",
    "fft_length", "operand_precision", "precision_config", "operand_layout_constraints",
    "entry_computation_layout", "broadcast_dimensions", "target_shape", "literal", "result_accuracy",
    "tolerance", /* inside result_accuracy */
};

static bool is_typed_brace_attr(const unsigned char *s, size_t n) {
  for (size_t i = 0; i < sizeof typed_brace_attrs / sizeof *typed_brace_attrs; i++)
    if (strlen(typed_brace_attrs[i]) == n && memcmp(typed_brace_attrs[i], s, n) == 0)
      return true;
  return false;
}

static ir_loc loc_at(const hlo_lexer *lx, const unsigned char *p) {
  return (ir_loc){lx->line, (int)(p - lx->line_start) + 1};
}

/* Advances line bookkeeping over [from, to). */
static void count_lines(hlo_lexer *lx, const unsigned char *from, const unsigned char *to) {
  for (const unsigned char *p = from; p < to; p++) {
    if (*p == '\n' || (*p == '\r' && (p + 1 >= to || p[1] != '\n'))) {
      lx->line++;
      lx->line_start = p + 1;
    }
  }
}

static void set_span(hlo_lexer *lx, hlo_span *sp, const unsigned char *start,
                     const unsigned char *end) {
  sp->first_line = lx->line;
  sp->first_column = (int)(start - lx->line_start) + 1;
  sp->start = (size_t)(start - lx->base);
  sp->end = (size_t)(end - lx->base);
  count_lines(lx, start, end);
  sp->last_line = lx->line;
  sp->last_column = (int)(end - lx->line_start);
}

/* Skips a balanced {...} starting at lx->cur ('{'), honouring quoted strings.  Returns the
 * end, or NULL when the input ends first. */
static const unsigned char *skip_balanced(const hlo_lexer *lx, const unsigned char *p) {
  int depth = 0;
  while (p < lx->lim) {
    unsigned char c = *p;
    if (c == '"' || c == '\'') {
      unsigned char q = c;
      for (p++; p < lx->lim && *p != q; p++)
        if (*p == '\\' && p + 1 < lx->lim)
          p++;
      if (p >= lx->lim)
        return NULL;
    } else if (c == '{') {
      depth++;
    } else if (c == '}') {
      if (--depth == 0)
        return p + 1;
    } else if (c == 0) {
      return NULL;
    }
    p++;
  }
  return NULL;
}

/* The FileNames/FunctionNames/FileLocations/StackFrames block: runs until a line that
 * starts with something else (the first computation). */
static const unsigned char *skip_stack_frames(const hlo_lexer *lx, const unsigned char *p) {
  static const char *const heads[] = {"FileNames", "FunctionNames", "FileLocations", "StackFrames"};
  for (;;) {
    while (p < lx->lim && *p != '\n' && *p != '\r')
      p++;
    while (p < lx->lim && (*p == '\n' || *p == '\r'))
      p++;
    const unsigned char *q = p;
    while (q < lx->lim && (*q == ' ' || *q == '\t'))
      q++;
    if (q >= lx->lim)
      return p;
    if (*q >= '0' && *q <= '9')
      continue;
    if (*q == '\n' || *q == '\r')
      continue;
    bool head = false;
    for (size_t i = 0; i < 4; i++)
      if (strncmp((const char *)q, heads[i], strlen(heads[i])) == 0)
        head = true;
    if (!head)
      return p;
  }
}

static int value_token(hlo_parser *p, HLO_STYPE *lval, hlo_span *lloc, ir_av_kind kind,
                       int token) {
  hlo_lexer *lx = &p->lx;
  set_span(lx, lloc, lx->tok, lx->cur);
  ir_av *v = irb_av(p->b, kind, (ir_loc){lloc->first_line, lloc->first_column}, lloc->start,
                    lloc->end);
  if (!v)
    return T_ERROR;
  v->s = irb_text(p->b, lloc->start, lloc->end);
  if (!v->s.p)
    return T_ERROR; /* out of memory, already reported */
  lval->av = v;
  return token;
}

static int lex_error(hlo_parser *p, hlo_span *lloc, const char *msg) {
  hlo_lexer *lx = &p->lx;
  ir_loc l = loc_at(lx, lx->tok);
  set_span(lx, lloc, lx->tok, lx->cur);
  irb_error(p->b, l, "%s", msg);
  return T_ERROR;
}

/* A token that starts like a number but is none of the number-like forms (int, float,
 * window dimensions 3x3, padding 0_1x2_2_1, dim labels). */
static int bad_number(hlo_parser *p, hlo_span *lloc) {
  hlo_lexer *lx = &p->lx;
  size_t n = (size_t)(lx->cur - lx->tok);
  const char *what = memchr(lx->tok, '_', n) ? "padding" : "number";
  char msg[128];
  snprintf(msg, sizeof msg, "malformed %s '%.*s'", what, n > 40 ? 40 : (int)n, (const char *)lx->tok);
  return lex_error(p, lloc, msg);
}

static int lex_one(hlo_parser *p, HLO_STYPE *lval, hlo_span *lloc);

/* Attributes that name a computation, whose value may be a body written inline. */
static const char *const computation_attrs[] = {
    "to_apply", "calls", "condition", "body", "select", "scatter", "true_computation", "false_computation",
};

/* Attributes that name a list of computations, whose items may be bodies written inline. */
static const char *const computation_list_attrs[] = {"branch_computations", "called_computations", "calls"};

static bool attr_is(const hlo_lexer *lx, const char *const *names, size_t n_names) {
  const unsigned char *a = lx->attr_name + (*lx->attr_name == '%');
  size_t n = lx->attr_name_len - (*lx->attr_name == '%');
  for (size_t i = 0; i < n_names; i++)
    if (strlen(names[i]) == n && memcmp(names[i], a, n) == 0)
      return true;
  return false;
}

/* Whether the braces at p start with an instruction ([ROOT] name =). */
static bool starts_instruction(const unsigned char *p) {
  p++;
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
    p++;
  if (strncmp((const char *)p, "ROOT", 4) == 0 && (p[4] == ' ' || p[4] == '\t'))
    return true;
  if (*p == '%')
    p++;
  if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_'))
    return false;
  while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
         *p == '.' || *p == '-')
    p++;
  while (*p == ' ' || *p == '\t')
    p++;
  return *p == '=';
}

/* Whether the '{' at p (after `attr=`) opens an inline computation body: the attribute names a
 * computation and the braces start with an instruction. */
static bool opens_inline_computation(const hlo_lexer *lx, const unsigned char *p) {
  return attr_is(lx, computation_attrs, sizeof computation_attrs / sizeof *computation_attrs) && starts_instruction(p);
}

/* Whether the '{' at p is an item of a computation list written inline: directly inside
 * `branch_computations={`, after the '{' or a ','. */
static bool opens_inline_list_item(const hlo_lexer *lx, const unsigned char *p) {
  return lx->n_comp_lists > 0 && lx->comp_list_depth[lx->n_comp_lists - 1] == lx->brace_depth &&
         (lx->prev_tok == '{' || lx->prev_tok == ',') && starts_instruction(p);
}

/* Whether the token at lx->tok follows `replica_groups=`. */
static bool after_replica_groups(const hlo_lexer *lx) {
  if (lx->prev_tok != '=' || lx->prev_prev_tok != T_NAME)
    return false;
  const unsigned char *a = lx->attr_name + (*lx->attr_name == '%');
  size_t n = lx->attr_name_len - (*lx->attr_name == '%');
  return n == 14 && memcmp(a, "replica_groups", 14) == 0;
}

/* The end of XLA's mesh-axes replica groups starting at p (`mesh[..]` or `@mesh<..>`, maybe
 * `, device_ids=(..)`, then the `{axes}` list): the '}' closing the first brace, or NULL.
 * ir/mesh_groups.c reads the text. */
static const unsigned char *skip_mesh_groups(const hlo_lexer *lx, const unsigned char *p) {
  while (p < lx->lim && *p != '{' && *p != '\n' && *p != 0)
    p++;
  return p < lx->lim && *p == '{' ? skip_balanced(lx, p) : NULL;
}

/* Counts bracket nesting; a token that opens one level too many becomes an error. */
static int check_nesting(hlo_parser *p, hlo_span *lloc, int t) {
  hlo_lexer *lx = &p->lx;
  if (t == '(' || t == '[' || t == '{' || t == T_LAYOUT_OPEN || t == T_TPERM || t == T_COMP_OPEN) {
    if (++lx->nest > HLO_MAX_NESTING) {
      irb_error(p->b, (ir_loc){lloc->first_line, lloc->first_column},
                "brackets are nested too deeply (more than %d levels)", HLO_MAX_NESTING);
      return T_ERROR;
    }
  } else if ((t == ')' || t == ']' || t == '}') && lx->nest > 0) {
    lx->nest--;
  }
  return t;
}

int hlo_lex(HLO_STYPE *lval, hlo_span *lloc, hlo_parser *p) {
  int t = check_nesting(p, lloc, lex_one(p, lval, lloc));
  hlo_lexer *lx = &p->lx;
  if (t == '{' || t == T_LAYOUT_OPEN || t == T_COMP_OPEN)
    lx->brace_depth++;
  else if (t == '}' && --lx->brace_depth < (lx->n_comp_lists ? lx->comp_list_depth[lx->n_comp_lists - 1] : 0))
    lx->n_comp_lists--;
  if (t == '=' && lx->prev_tok == T_NAME) {
    /* attr_name was recorded when the NAME was lexed */
  } else if (t == T_NAME) {
    lx->attr_name = lx->tok;
    lx->attr_name_len = (size_t)(lx->cur - lx->tok);
  }
  lx->prev_prev_tok = lx->prev_tok;
  lx->prev_tok = t;
  return t;
}

static int lex_one(hlo_parser *p, HLO_STYPE *lval, hlo_span *lloc) {
  hlo_lexer *lx = &p->lx;
  const unsigned char *marker = lx->cur;
  const unsigned char *yyt1 = NULL;
  (void)yyt1;
  lval->av = NULL;
  for (;;) {
    lx->tok = lx->cur;
    /*!stags:re2c format = 'const unsigned char *@@;\n'; */
    /*!re2c
      re2c:api:style = free-form;
      re2c:define:YYCTYPE = "unsigned char";
      re2c:define:YYCURSOR = "lx->cur";
      re2c:define:YYMARKER = "marker";
      re2c:define:YYLIMIT = "lx->lim";
      re2c:yyfill:enable = 0;
      re2c:eof = 0;
      re2c:flags:tags = 1;

      digit = [0-9];
      hex = [0-9a-fA-F];
      int = "-"? digit+;
      expo = [eE] [+-]? digit+;
      float = "-"? ((digit+ | digit+ "." digit* | digit* "." digit+) expo
                   | (digit+ "." digit* | digit* "." digit+));
      namechar = [a-zA-Z0-9_.];
      name = "%"? [a-zA-Z_] namechar* ("-" namechar+)*;
      etype = "pred" | "s1" | "s2" | "s4" | "s8" | "s16" | "s32" | "s64" | "u1" | "u2"
            | "u4" | "u8" | "u16" | "u32" | "u64" | "f16" | "bf16" | "f32" | "f64" | "c64"
            | "c128" | "f8e4m3fn" | "f8e5m2" | "f8e4m3" | "f8e3m4" | "f8e4m3fnuz"
            | "f8e5m2fnuz" | "f8e4m3b11fnuz" | "f4e2m1fn" | "f8e8m0fnu" | "token" | "opaque";
      dimlabels = [0-9bf?]{2,} "_" [0-9io?]{2,} "->" [0-9bf?]{2,};
      dxd = digit+ ("x" digit+)+;
      pad1 = "-"? digit+ "_" "-"? digit+ ("_" "-"? digit+)?;
      pad = pad1 ("x" pad1)*;
      dstring = ["] ([^"\\\x00] | "\\" [^\x00])* ["];
      sstring = ['] ([^'\\\x00] | "\\" [^\x00])* ['];

      $ { set_span(lx, lloc, lx->tok, lx->tok); return T_EOF; }
      [ \t\f\v]+ { continue; }
      "\r\n" | "\n" | "\r" { lx->line++; lx->line_start = lx->cur; continue; }
      "//" [^\n\r\x00]* { continue; }
      "/*" {
        const unsigned char *end = (const unsigned char *)strstr((const char *)lx->cur, "*/");
        if (!end || end >= lx->lim)
          return lex_error(p, lloc, "unterminated comment");
        count_lines(lx, lx->tok, end + 2);
        lx->cur = end + 2;
        continue;
      }

      "HloModule" { set_span(lx, lloc, lx->tok, lx->cur); return T_HLOMODULE; }
      "ENTRY" { set_span(lx, lloc, lx->tok, lx->cur); return T_ENTRY; }
      "ROOT" { set_span(lx, lloc, lx->tok, lx->cur); return T_ROOT; }
      "true" { return value_token(p, lval, lloc, AV_BOOL, T_TRUE); }
      "false" { return value_token(p, lval, lloc, AV_BOOL, T_FALSE); }
      "%"? "constant" / "(" { return value_token(p, lval, lloc, AV_NAME, T_CONSTANT); }
      etype / "[" { return value_token(p, lval, lloc, AV_NAME, T_ETYPE); }
      "b" / "(" { set_span(lx, lloc, lx->tok, lx->cur); return T_BUFFER; }
      "T(" { set_span(lx, lloc, lx->tok, lx->cur); return T_TPERM; }
      "FileNames" {
        if (lx->prev_tok == T_HLOMODULE || lx->brace_depth != 0)
          return value_token(p, lval, lloc, AV_NAME, T_NAME);
        lx->cur = skip_stack_frames(lx, lx->cur);
        return value_token(p, lval, lloc, AV_RAW, T_STACKFRAMES);
      }
      "-inf" | "-nan" | "-"? "nan(0x" hex+ ")" { return value_token(p, lval, lloc, AV_SPECIAL, T_SPECIAL); }
      dimlabels { return value_token(p, lval, lloc, AV_DIMLABELS, T_DIMLABELS); }
      dxd { return value_token(p, lval, lloc, AV_DXD, T_DXD); }
      pad { return value_token(p, lval, lloc, AV_PAD, T_PAD); }
      int { return value_token(p, lval, lloc, AV_INT, T_INT); }
      float { return value_token(p, lval, lloc, AV_FLOAT, T_FLOAT); }
      "-"? digit [0-9a-zA-Z_.]* { return bad_number(p, lloc); }
      "mesh[" | "@mesh<" {
        if (after_replica_groups(lx)) {
          const unsigned char *end = skip_mesh_groups(lx, lx->tok);
          if (!end)
            return lex_error(p, lloc, "unterminated mesh replica groups (expected {axes} after the mesh)");
          lx->cur = end;
          return value_token(p, lval, lloc, AV_RAW, T_RAW);
        }
        if (*lx->tok == '@')
          return lex_error(p, lloc, "a mesh @mesh<...> is only read as replica_groups");
        lx->cur = lx->tok + 4;
        return value_token(p, lval, lloc, AV_NAME, T_NAME);
      }
      name { return value_token(p, lval, lloc, AV_NAME, T_NAME); }
      dstring | sstring { return value_token(p, lval, lloc, AV_STRING, T_STRING); }
      ["'] { return lex_error(p, lloc, "unterminated string"); }

      "{" {
        if ((lx->prev_tok == '=' && lx->prev_prev_tok == T_NAME && opens_inline_computation(lx, lx->tok)) ||
            opens_inline_list_item(lx, lx->tok)) {
          set_span(lx, lloc, lx->tok, lx->cur);
          return T_COMP_OPEN;
        }
        if (lx->prev_tok == '=' && lx->prev_prev_tok == T_NAME &&
            attr_is(lx, computation_list_attrs, sizeof computation_list_attrs / sizeof *computation_list_attrs) &&
            lx->n_comp_lists < (int)(sizeof lx->comp_list_depth / sizeof *lx->comp_list_depth)) {
          lx->comp_list_depth[lx->n_comp_lists++] = lx->brace_depth + 1;
          set_span(lx, lloc, lx->tok, lx->cur);
          return '{';
        }
        if (lx->prev_tok == '=' && lx->prev_prev_tok == T_NAME &&
            !is_typed_brace_attr(lx->attr_name + (*lx->attr_name == '%'),
                                 lx->attr_name_len - (*lx->attr_name == '%'))) {
          const unsigned char *end = skip_balanced(lx, lx->tok);
          if (!end)
            return lex_error(p, lloc, "unterminated '{' in attribute value");
          lx->cur = end;
          return value_token(p, lval, lloc, AV_RAW, T_RAW);
        }
        set_span(lx, lloc, lx->tok, lx->cur);
        if (lx->prev_tok == ']') {
          /* After a shape's dims, '{' opens a layout only when a number or ':' follows, or,
           * written right after the ']', a '}' (the empty layout of a scalar, f32[]{}). */
          const unsigned char *q = lx->cur;
          while (*q == ' ' || *q == '\t')
            q++;
          if ((*q >= '0' && *q <= '9') || *q == ':' || (*q == '}' && lx->tok[-1] == ']'))
            return T_LAYOUT_OPEN;
        }
        return '{';
      }
      "->" { set_span(lx, lloc, lx->tok, lx->cur); return T_ARROW; }
      "<=" { set_span(lx, lloc, lx->tok, lx->cur); return T_LE; }
      "..." { set_span(lx, lloc, lx->tok, lx->cur); return T_ELLIPSIS; }
      [(){}[\],=:*?#+~<>] { set_span(lx, lloc, lx->tok, lx->cur); return lx->tok[0]; }
      "\x00" { return lex_error(p, lloc, "unexpected NUL byte in input"); }
      * {
        unsigned char c = lx->tok[0];
        char msg[64];
        if (c >= 0x20 && c < 0x7f)
          snprintf(msg, sizeof msg, "unexpected character '%c'", c);
        else
          snprintf(msg, sizeof msg, "unexpected byte 0x%02x", c);
        return lex_error(p, lloc, msg);
      }
    */
  }
}
