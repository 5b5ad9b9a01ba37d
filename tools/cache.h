/* cache.h — hlorun's compile cache: a .hlo file becomes $XDG_CACHE_HOME/hloc/<key>.so
 * (default ~/.cache/hloc), keyed by a 128-bit hash of the file's bytes, the compile options,
 * HLOC_VERSION and the identity (size, mtime) of hlorun and of hloc, so a rebuilt compiler
 * never reuses an older build's code.  A hit reads the file and stats a few paths: no
 * parsing, no LLVM.  A miss runs hloc (next to hlorun, else on PATH; it compiles with
 * drv_compile_file) into a temporary file in the cache folder and renames it into place, so
 * concurrent runs never see half a file; it also removes entries unused for 30 days (a hit
 * refreshes the file's time).  An entry carries a size and checksum trailer and is loaded only
 * when it matches and the entry and folder are this user's and not writable by others
 * (otherwise it is rebuilt, or the cache is not used, with a warning).  Compiling in a child process keeps LLVM's shared library out
 * of hlorun, whose start-up it would otherwise dominate (docs/cli.md "Start-up time").
 * Tests: tests/hlorun_cli.cmake (hlorun_cache.sh), tests/cache_safety.sh.
 */
#ifndef HLOC_TOOLS_CACHE_H
#define HLOC_TOOLS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hlo/status.h"

/* The compile options that change the object code (hloc's flags of the same names). */
typedef struct cache_options {
  int opt_level;           /* -O0..-O3 */
  const char *target_cpu;  /* --target-cpu; NULL: native */
  bool strict;             /* --strict */
  int64_t nontemporal_min_bytes; /* --nontemporal-min-bytes; 0: hloc's default, < 0: off */
} cache_options;

/* The cache folder into buf: $XDG_CACHE_HOME/hloc, else $HOME/.cache/hloc. */
void cache_dir(char *buf, size_t cap);

/* The key of `text` compiled with `o` by the hloc at hloc_path, as 32 hex digits into hex
 * (cap >= 33). */
void cache_key(const void *text, size_t n, const cache_options *o, const char *hloc_path, char *hex, size_t cap);

/* The hloc that compiles for this hlorun: the one next to it, else "hloc" (found on PATH). */
void cache_find_hloc(char *buf, size_t cap);

typedef enum cache_outcome {
  CACHE_HIT,        /* the .so was there */
  CACHE_COMPILED,   /* compiled and stored */
  CACHE_UNCACHED,   /* compiled into a temporary file: the folder is not writable; unlink it */
} cache_outcome;

/* Finds or builds the shared object of `model_path` compiled with `o`; its path goes to
 * out_path.  `force` recompiles even on a hit (a cached file that would not load).
 * hloc's diagnostics and notes are copied to stderr (its own "hloc: " lines as "hlorun: ");
 * the status carries its last message: INVALID_ARGUMENT when hloc exits 2 (usage, parse or
 * verification error), UNIMPLEMENTED when it exits 1 (e.g. an op of a later milestone). */
HLO_MUST_USE hlo_status cache_get(const char *model_path, const cache_options *o, bool force, char *out_path,
                                  size_t cap, cache_outcome *out_outcome);

#endif
