/* arena.c — chunked bump allocator behind ir_arena (see arena.h). Large requests get a
 * chunk of their own so that a 2 GB literal does not waste a 2 GB standard chunk. */
#include "ir/arena.h"

#include <stdlib.h>
#include <string.h>

enum { CHUNK_SIZE = 64 * 1024, ALIGN = 16 };

struct ir_arena_chunk {
  ir_arena_chunk *next;
  size_t cap;
  _Alignas(16) unsigned char data[];
};

void ir_arena_init(ir_arena *a) { memset(a, 0, sizeof *a); }

void ir_arena_deinit(ir_arena *a) {
  ir_arena_chunk *c = a->head;
  while (c) {
    ir_arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  memset(a, 0, sizeof *a);
}

void ir_arena_reset(ir_arena *a) {
  int64_t fail_after = a->fail_after;
  ir_arena_deinit(a);
  a->fail_after = fail_after;
}

static ir_arena_chunk *new_chunk(size_t cap) {
  if (cap > SIZE_MAX - sizeof(ir_arena_chunk))
    return NULL;
  ir_arena_chunk *c = malloc(sizeof(ir_arena_chunk) + cap);
  if (c)
    c->cap = cap;
  return c;
}

void *ir_arena_alloc(ir_arena *a, size_t n) {
  if (a->fail_after > 0 && --a->fail_after == 0) {
    a->fail_after = -1; /* fired: tests read this */
    return NULL;
  }
  if (n > SIZE_MAX - ALIGN)
    return NULL;
  n = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
  if (n == 0)
    n = ALIGN;
  if (!a->head || a->head->cap - a->used < n) {
    if (n > CHUNK_SIZE / 4) {
      /* A big block gets its own chunk, linked behind the head so the head keeps its room. */
      ir_arena_chunk *big = new_chunk(n);
      if (!big)
        return NULL;
      if (a->head) {
        big->next = a->head->next;
        a->head->next = big;
      } else {
        big->next = NULL;
        a->head = big;
        a->used = n;
      }
      memset(big->data, 0, n);
      a->total += n;
      return big->data;
    }
    ir_arena_chunk *c = new_chunk(CHUNK_SIZE);
    if (!c)
      return NULL;
    c->next = a->head;
    a->head = c;
    a->used = 0;
  }
  void *p = a->head->data + a->used;
  a->used += n;
  a->total += n;
  memset(p, 0, n);
  return p;
}

void *ir_arena_alloc_array(ir_arena *a, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size)
    return NULL;
  return ir_arena_alloc(a, count * size);
}

void *ir_arena_dup(ir_arena *a, const void *p, size_t n) {
  void *q = ir_arena_alloc(a, n);
  if (q && n)
    memcpy(q, p, n);
  return q;
}
