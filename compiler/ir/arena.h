/* arena.h — bump allocator: one per module, plus scratch arenas for passes.
 *
 * Allocations are 16-byte aligned and zeroed, live until ir_arena_deinit() (or reset()).
 * A fault hook lets tests fail the Nth allocation to prove the error paths (STYLE.md 19).
 * Thread-compatible: one arena is used by one thread at a time.
 */
#ifndef HLOC_IR_ARENA_H
#define HLOC_IR_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct ir_arena_chunk ir_arena_chunk;

typedef struct ir_arena {
  ir_arena_chunk *head;
  size_t used;         /* bytes used in head */
  size_t total;        /* bytes handed out, for statistics */
  int64_t fail_after;  /* test hook: >0 makes the fail_after-th allocation from now fail;
                          it reads -1 once that failure has happened */
} ir_arena;

void ir_arena_init(ir_arena *a);
void ir_arena_deinit(ir_arena *a);
/* Frees everything allocated so far; the arena stays usable. */
void ir_arena_reset(ir_arena *a);
/* Zeroed, 16-aligned memory; NULL when out of memory or when n overflows. */
void *ir_arena_alloc(ir_arena *a, size_t n);
/* Zeroed array of count elements of size each; NULL on overflow or out of memory. */
void *ir_arena_alloc_array(ir_arena *a, size_t count, size_t size);
/* Copies n bytes into the arena. */
void *ir_arena_dup(ir_arena *a, const void *p, size_t n);

#endif
