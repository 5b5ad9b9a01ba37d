/* mlir.re — the re2c lexer for MLIR text (StableHLO modules).
 *
 * Input: ml_lexer over a NUL-terminated buffer (an embedded NUL is an error token, not the
 * end).  Output: one ml_tok per call with its line:col.  Whitespace, // comments, loc(...)
 * location attributes and {-# ... #-} resource blocks are skipped.  Types (tensor<...>,
 * tuple<...>, !dialect.x<...>), dense<...>/array<...> values and #dialect.attr<...> are
 * returned whole (balanced angle brackets, strings and -> honoured): their bodies are read
 * by the parser, so dimension lists like 0x17xf32 never meet the number rules.
 * Tests: tests/hostile (mlir cases), fuzz/mlir_fuzz.c.
 */
#include <string.h>

#include "mlir_internal.h"

static ir_loc here(const ml_lexer *lx, const unsigned char *p) {
  ir_loc l = {lx->line, (int)(p - lx->line_start) + 1};
  if (lx->sub && l.line == 1)
    l.col += lx->base_loc.col - 1;
  if (lx->sub)
    l.line += lx->base_loc.line - 1;
  return l;
}

static void newlines(ml_lexer *lx, const unsigned char *from, const unsigned char *to) {
  for (const unsigned char *p = from; p < to; p++)
    if (*p == '\n') {
      lx->line++;
      lx->line_start = p + 1;
    }
}

/* From p (just after an opening '<' or '('), the position after the matching closer, or
 * NULL when the input ends (or holds a NUL) first. */
static const unsigned char *balanced(const ml_lexer *lx, const unsigned char *p, char open, char close) {
  int depth = 1, nest = 0;
  while (p < lx->lim) {
    unsigned char ch = *p;
    if (ch == 0)
      return NULL;
    if (ch == '"') {
      for (p++; p < lx->lim && *p != '"'; p++)
        if (*p == '\\' && p + 1 < lx->lim)
          p++;
      if (p >= lx->lim)
        return NULL;
    } else if (ch == '-' && p + 1 < lx->lim && p[1] == '>') {
      p++;
    } else if (ch == (unsigned char)open) {
      if (++nest > 200)
        return NULL;
      depth++;
    } else if (ch == (unsigned char)close) {
      if (--depth == 0)
        return p + 1;
    }
    p++;
  }
  return NULL;
}

void ml_lexer_init(ml_lexer *lx, const char *text, size_t len, ir_loc at) {
  memset(lx, 0, sizeof *lx);
  lx->base = lx->cur = lx->line_start = (const unsigned char *)text;
  lx->lim = lx->base + len;
  lx->line = 1;
  lx->base_loc = at;
  lx->sub = at.line > 0;
}

static ml_tok make(ml_lexer *lx, ml_tok_kind k, const unsigned char *s, const unsigned char *e) {
  ml_tok t = {.kind = k, .p = (const char *)s, .n = (size_t)(e - s), .loc = here(lx, s)};
  if (k == MT_PUNCT)
    t.c = (char)*s;
  return t;
}

/* A token whose body is a balanced <...> starting at lx->cur ('<'). */
static ml_tok angled(ml_lexer *lx, ml_tok_kind k, const unsigned char *s) {
  const unsigned char *e = balanced(lx, lx->cur + 1, '<', '>');
  if (!e)
    return make(lx, MT_ERROR, s, lx->cur);
  ml_tok t = make(lx, k, s, e);
  newlines(lx, s, e);
  lx->cur = e;
  return t;
}


ml_tok ml_lex(ml_lexer *lx) {
  const unsigned char *mark = NULL;
  for (;;) {
    const unsigned char *s = lx->cur;
    if (lx->cur >= lx->lim)
      return make(lx, MT_EOF, s, s);
    /*!re2c
  re2c:define:YYCTYPE = "unsigned char";
  re2c:define:YYCURSOR = "lx->cur";
  re2c:define:YYMARKER = "mark";
  re2c:define:YYLIMIT = "lx->lim";
  re2c:yyfill:enable = 0;
  re2c:eof = 0;
  re2c:api:style = free-form;

  id = [a-zA-Z_] [a-zA-Z0-9_$.]*;
  suffix = [a-zA-Z0-9_$.\-]+;
  dec = [0-9]+;
  hex = "0x" [0-9a-fA-F]+;
  exp = [eE] [+-]? dec;
  str = "\"" ([^"\\\n\x00] | "\\" [^\x00])* "\"";

      $ { return make(lx, MT_EOF, s, s); }
      [ \t\r]+ { continue; }
      "\n" { lx->line++; lx->line_start = lx->cur; continue; }
      "//" [^\n\x00]* { continue; }
      "loc(" {
        const unsigned char *e = balanced(lx, lx->cur, '(', ')');
        if (!e)
          return make(lx, MT_ERROR, s, lx->cur);
        newlines(lx, s, e);
        lx->cur = e;
        continue;
      }
      "{-#" {
        const unsigned char *e = lx->cur;
        while (e + 2 < lx->lim && !(e[0] == '#' && e[1] == '-' && e[2] == '}'))
          e++;
        if (e + 2 >= lx->lim)
          return make(lx, MT_ERROR, s, lx->cur);
        newlines(lx, s, e + 3);
        lx->cur = e + 3;
        continue;
      }
      "%" suffix ("#" dec)? { return make(lx, MT_VALUE, s, lx->cur); }
      "@" id { return make(lx, MT_SYMBOL, s + 1, lx->cur); }
      "@" str { return make(lx, MT_SYMBOL, s + 2, lx->cur - 1); }
      "^" suffix { return make(lx, MT_BLOCK, s, lx->cur); }
      "#" id "<" { lx->cur--; return angled(lx, MT_HASH, s); }
      "#" id { return make(lx, MT_HASH, s, lx->cur); }
      ("tensor" | "tuple" | "complex" | "vector" | "memref") "<" { lx->cur--; return angled(lx, MT_TYPE, s); }
      "!" id "<" { lx->cur--; return angled(lx, MT_TYPE, s); }
      "!" id { return make(lx, MT_TYPE, s, lx->cur); }
      ("dense" | "array" | "dense_resource" | "sparse") "<" { lx->cur--; return angled(lx, MT_DENSE, s); }
      id { return make(lx, MT_BARE, s, lx->cur); }
      dec | hex { return make(lx, MT_INT, s, lx->cur); }
      dec "." [0-9]* exp? | dec exp { return make(lx, MT_FLOAT, s, lx->cur); }
      str { return make(lx, MT_STRING, s + 1, lx->cur - 1); }
      "->" { return make(lx, MT_ARROW, s, lx->cur); }
      [()[\]{}<>,:=?*+\-!|] { return make(lx, MT_PUNCT, s, lx->cur); }
      * { return make(lx, MT_ERROR, s, lx->cur); }
    */
  }
}
