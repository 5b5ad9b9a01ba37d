/* cache.c — the compile cache (cache.h).  The key is two independent 64-bit hashes (FNV-1a
 * over bytes, and a multiply-xorshift over 8-byte words) of the text followed by a line of
 * options; 128 bits make an accidental collision between a user's models negligible.
 */
#include "cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hlo/abi.h"

typedef struct hash128 {
  uint64_t a, b;
  uint64_t word;  /* bytes not yet folded into b */
  int fill;
} hash128;

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

static void hash_update(hash128 *h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) {
    h->a = (h->a ^ s[i]) * 1099511628211ull;
    h->word |= (uint64_t)s[i] << (8 * h->fill);
    if (++h->fill == 8) {
      h->b = mix(h->b ^ h->word) + 0x9e3779b97f4a7c15ull;
      h->word = 0;
      h->fill = 0;
    }
  }
}

static void hash_final(hash128 *h, uint64_t total) {
  h->b = mix(h->b ^ h->word ^ (total << 8) ^ (uint64_t)h->fill);
  h->a = mix(h->a);
}

void cache_dir(char *buf, size_t cap) {
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (xdg && *xdg)
    snprintf(buf, cap, "%s/hloc", xdg);
  else
    snprintf(buf, cap, "%s/.cache/hloc", home && *home ? home : "/tmp");
}

/* The running executable's size and modification time: a rebuilt hlorun gets new keys. */
static void exe_identity(char *buf, size_t cap) {
  struct stat st;
  if (stat("/proc/self/exe", &st) == 0)
    snprintf(buf, cap, "%lld.%lld.%ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
  else
    snprintf(buf, cap, "unknown");
}

void cache_key(const void *text, size_t n, const drv_options *o, char *hex, size_t cap) {
  char exe[128], opts[512];
  exe_identity(exe, sizeof exe);
  int len = snprintf(opts, sizeof opts, "\nO%d|cpu=%s|strict=%d|entry=%s|hloc %s|abi %d|exe %s\n", o->opt_level,
                     o->target_cpu ? o->target_cpu : "native", o->strict ? 1 : 0, o->symbol ? o->symbol : "",
                     HLOC_VERSION, HLO_ABI_VERSION, exe);
  hash128 h = {1469598103934665603ull, 0x243f6a8885a308d3ull, 0, 0};
  hash_update(&h, text, n);
  hash_update(&h, opts, len > 0 && (size_t)len < sizeof opts ? (size_t)len : sizeof opts - 1);
  hash_final(&h, (uint64_t)n);
  snprintf(hex, cap, "%016llx%016llx", (unsigned long long)h.a, (unsigned long long)h.b);
}

/* The whole file, malloc'd (non-regular files such as pipes are read to the end). */
static hlo_status read_file(const char *path, unsigned char **out, size_t *out_n) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return hlo_status_make(HLO_NOT_FOUND, "%s: cannot open: %s", path, strerror(errno));
  struct stat st = {0};
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: is a directory, not an HLO module", path);
  }
  size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536, n = 0;
  unsigned char *buf = malloc(cap);
  for (;;) {
    if (!buf) {
      close(fd);
      return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "%s: out of memory reading the file", path);
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      hlo_status s = hlo_status_make(HLO_IO, "%s: cannot read: %s", path, strerror(errno));
      free(buf);
      close(fd);
      return s;
    }
    if (r == 0)
      break;
    n += (size_t)r;
    if (n == cap) {
      unsigned char *grown = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
      if (!grown)
        free(buf);
      buf = grown;
      cap *= 2;
    }
  }
  close(fd);
  *out = buf;
  *out_n = n;
  return NULL;
}

/* mkdir -p; false (errno set) when the folder cannot be made. */
static bool make_dirs(const char *dir) {
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp) {
    errno = ENAMETOOLONG;
    return false;
  }
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return false;
      *p = '/';
    }
  if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
    return false;
  struct stat st;
  return stat(tmp, &st) == 0 && S_ISDIR(st.st_mode);
}

static hlo_status compile_to(const char *model_path, const char *tmp, const drv_options *o) {
  hlo_status s = drv_compile_file(model_path, tmp, DRV_EMIT_SO, o);
  if (s)
    unlink(tmp);
  return s;
}

/* The folder cannot hold the result: compile into a temporary file the caller removes. */
static hlo_status compile_uncached(const char *model_path, const drv_options *o, char *out_path, size_t cap,
                                   cache_outcome *out_outcome) {
  const char *t = getenv("TMPDIR");
  char tmpl[4096];
  snprintf(tmpl, sizeof tmpl, "%s/hlorun-XXXXXX.so", t && *t ? t : "/tmp");
  int fd = mkstemps(tmpl, 3);
  if (fd < 0)
    return hlo_status_make(HLO_IO, "cannot create a temporary file for the compiled model: %s", strerror(errno));
  close(fd);
  HLO_RETURN_IF_ERROR(compile_to(model_path, tmpl, o));
  snprintf(out_path, cap, "%s", tmpl);
  *out_outcome = CACHE_UNCACHED;
  return NULL;
}

/* Is name "<32 hex digits>.so" or "<32 hex>.<pid>.tmp.so" (a file this cache made)? */
static bool cache_file_kind(const char *name, bool *out_tmp) {
  size_t n = strlen(name);
  if (n < 35 || strspn(name, "0123456789abcdef") != 32 || name[32] != '.')
    return false;
  *out_tmp = strcmp(name + 33, "so") != 0;
  return !*out_tmp || (n > 40 && strcmp(name + n - 7, ".tmp.so") == 0);
}

/* On a miss: entries unused for 30 days go (hits refresh the time), and temporary files
 * older than a day (left by a killed compile).  Best effort; errors are ignored. */
static void prune(const char *dir) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  time_t now = time(NULL);
  struct dirent *e;
  while ((e = readdir(d))) {
    bool tmp;
    if (!cache_file_kind(e->d_name, &tmp))
      continue;
    char path[4400];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (stat(path, &st) == 0 && now - st.st_mtime > (tmp ? 86400 : 30 * 86400))
      unlink(path);
  }
  closedir(d);
}

hlo_status cache_get(const char *model_path, const drv_options *o, bool force, char *out_path, size_t cap,
                     cache_outcome *out_outcome) {
  unsigned char *text = NULL;
  size_t n = 0;
  HLO_RETURN_IF_ERROR(read_file(model_path, &text, &n));
  char key[40], dir[4096];
  cache_key(text, n, o, key, sizeof key);
  free(text);
  cache_dir(dir, sizeof dir);
  if (snprintf(out_path, cap, "%s/%s.so", dir, key) >= (int)cap)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: the cache path is too long", dir);
  if (!force && access(out_path, R_OK) == 0) {
    utimensat(AT_FDCWD, out_path, NULL, 0); /* recently used: kept by prune() */
    *out_outcome = CACHE_HIT;              /* no parsing, no LLVM */
    return NULL;
  }
  if (!make_dirs(dir) || access(dir, W_OK) != 0)
    return compile_uncached(model_path, o, out_path, cap, out_outcome);
  prune(dir);
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s/%s.%ld.tmp.so", dir, key, (long)getpid());
  HLO_RETURN_IF_ERROR(compile_to(model_path, tmp, o));
  if (rename(tmp, out_path) != 0) {
    hlo_status s = hlo_status_make(HLO_IO, "%s: cannot store the compiled model: %s", out_path, strerror(errno));
    unlink(tmp);
    return s;
  }
  *out_outcome = CACHE_COMPILED;
  return NULL;
}
