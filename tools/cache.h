/* cache.h — hlorun's compile cache: a .hlo file becomes $XDG_CACHE_HOME/hloc/<key>.so
 * (default ~/.cache/hloc), keyed by a 128-bit hash of the file's bytes, the compile options,
 * HLOC_VERSION and the identity (size, mtime) of the running executable, so a rebuilt hloc
 * never reuses an older build's code.  A hit reads the file and stats two paths: no parsing,
 * no LLVM.  A miss compiles into a temporary file in the cache folder and renames it into
 * place, so concurrent runs never see half a file; it also removes entries unused for 30
 * days (a hit refreshes the file's time).  Tests: tests/hlorun_cli.cmake (hlorun_cache.sh).
 */
#ifndef HLOC_TOOLS_CACHE_H
#define HLOC_TOOLS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver/driver.h"
#include "hlo/status.h"

/* The cache folder into buf: $XDG_CACHE_HOME/hloc, else $HOME/.cache/hloc. */
void cache_dir(char *buf, size_t cap);

/* The key of `text` compiled with `o`, as 32 hex digits into hex (cap >= 33). */
void cache_key(const void *text, size_t n, const drv_options *o, char *hex, size_t cap);

typedef enum cache_outcome {
  CACHE_HIT,        /* the .so was there */
  CACHE_COMPILED,   /* compiled and stored */
  CACHE_UNCACHED,   /* compiled into a temporary file: the folder is not writable; unlink it */
} cache_outcome;

/* Finds or builds the shared object of `model_path` compiled with `o`; its path goes to
 * out_path.  `force` recompiles even on a hit (a cached file that would not load).
 * Compile errors were printed by the driver; the status carries the first. */
HLO_MUST_USE hlo_status cache_get(const char *model_path, const drv_options *o, bool force, char *out_path,
                                  size_t cap, cache_outcome *out_outcome);

#endif
