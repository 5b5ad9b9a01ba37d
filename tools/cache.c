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
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* A file's size and modification time: a rebuilt hlorun or hloc gets new keys. */
static void file_identity(const char *path, char *buf, size_t cap) {
  struct stat st;
  if (stat(path, &st) == 0)
    snprintf(buf, cap, "%lld.%lld.%ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
  else
    snprintf(buf, cap, "unknown");
}

void cache_find_hloc(char *buf, size_t cap) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash && snprintf(buf, cap, "%.*s/hloc", (int)(slash - self), self) < (int)cap && access(buf, X_OK) == 0)
      return;
  }
  snprintf(buf, cap, "hloc");
}

void cache_key(const void *text, size_t n, const cache_options *o, const char *hloc_path, char *hex, size_t cap) {
  char self[128], hloc[128], opts[1024];
  file_identity("/proc/self/exe", self, sizeof self);
  file_identity(hloc_path, hloc, sizeof hloc);
  int len = snprintf(opts, sizeof opts, "\nO%d|cpu=%s|strict=%d|nt=%lld|hloc %s|abi %d|hlorun %s|hloc %s\n",
                     o->opt_level, o->target_cpu ? o->target_cpu : "native", o->strict ? 1 : 0,
                     (long long)o->nontemporal_min_bytes, HLOC_VERSION, HLO_ABI_VERSION, self, hloc);
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

/* ---- integrity and ownership -------------------------------------------------------------
 * A stored entry is the .so followed by a 40-byte trailer: "HLOCACHE", the .so's size, and its
 * 128-bit hash (the key's hash function).  dlopen maps by program headers, so the trailer is
 * invisible to it.  A hit is loaded only when the trailer matches the bytes before it, and
 * the entry and its folder belong to this user and are not writable by others (loading a .so
 * runs its code).  Written to the temporary file before the atomic rename. */
enum { TRAILER_BYTES = 40 };
static const char trailer_magic[8] = {'H', 'L', 'O', 'C', 'A', 'C', 'H', 'E'};

static void trailer_of(const unsigned char *data, size_t n, unsigned char out[TRAILER_BYTES]) {
  hash128 h = {1469598103934665603ull, 0x243f6a8885a308d3ull, 0, 0};
  hash_update(&h, data, n);
  hash_final(&h, (uint64_t)n);
  uint64_t words[4] = {0, (uint64_t)n, h.a, h.b};
  memcpy(words, trailer_magic, 8);
  memcpy(out, words, TRAILER_BYTES - 8);
  memset(out + 32, 0, 8);
}

/* Appends the trailer to a freshly compiled file and makes it private (0600). */
static hlo_status seal_entry(const char *path) {
  unsigned char *data = NULL, tr[TRAILER_BYTES];
  size_t n = 0;
  HLO_RETURN_IF_ERROR(read_file(path, &data, &n));
  trailer_of(data, n, tr);
  free(data);
  int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
  bool ok = fd >= 0 && write(fd, tr, sizeof tr) == (ssize_t)sizeof tr && fchmod(fd, 0600) == 0;
  if (fd >= 0 && close(fd) != 0)
    ok = false;
  if (!ok)
    return hlo_status_make(HLO_IO, "%s: cannot write the cache entry: %s", path, strerror(errno));
  return NULL;
}

/* Who may change st: NULL when only this user, else why not (for a message). */
static const char *unsafe_owner(const struct stat *st, char *why, size_t cap) {
  if (st->st_uid != geteuid())
    snprintf(why, cap, "it belongs to user %ld, not to this user (%ld)", (long)st->st_uid, (long)geteuid());
  else if (st->st_mode & 022)
    snprintf(why, cap, "it is writable by other users (mode %04o)", (unsigned)(st->st_mode & 07777));
  else
    return NULL;
  return why;
}

/* Checks a cached entry before it is loaded: NULL if it may be; else a message why not
 * (corrupt, truncated, foreign or writable by others) into why. */
static const char *entry_problem(const char *path, char *why, size_t cap) {
  struct stat st;
  if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
    return snprintf(why, cap, "it is not a regular file"), why;
  if (unsafe_owner(&st, why, cap))
    return why;
  unsigned char *data = NULL, tr[TRAILER_BYTES];
  size_t n = 0;
  hlo_status s = read_file(path, &data, &n);
  if (s) {
    hlo_status_free(s);
    return snprintf(why, cap, "it cannot be read"), why;
  }
  bool ok = n > TRAILER_BYTES;
  if (ok) {
    trailer_of(data, n - TRAILER_BYTES, tr);
    ok = memcmp(tr, data + n - TRAILER_BYTES, TRAILER_BYTES) == 0;
  }
  free(data);
  return ok ? NULL : (snprintf(why, cap, "it is truncated or corrupt (size or checksum mismatch)"), why);
}

/* Is the cache folder safe to load code from?  NULL if so, else why not. */
static const char *dir_problem(const char *dir, char *why, size_t cap) {
  struct stat st;
  if (lstat(dir, &st) != 0)
    return NULL; /* made below, private */
  if (!S_ISDIR(st.st_mode))
    return snprintf(why, cap, "it is not a folder"), why;
  return unsafe_owner(&st, why, cap);
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
  if (mkdir(tmp, 0700) != 0 && errno != EEXIST) /* the cache itself: this user's only */
    return false;
  struct stat st;
  return stat(tmp, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Everything the child wrote, read until it closes the pipe (malloc'd, NUL-terminated). */
static char *read_all_fd(int fd) {
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n + 1 == cap) {
      char *grown = realloc(buf, cap * 2);
      if (!grown)
        break;
      buf = grown;
      cap *= 2;
    }
    ssize_t r = read(fd, buf + n, cap - 1 - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    n += (size_t)r;
  }
  if (buf)
    buf[n] = 0;
  return buf;
}

/* Copies the notes of a successful compile to stderr, but not hloc's note on a replica count it
 * inferred: hlorun runs that count (or --replicas) whether the model was compiled now or came
 * from the cache, so what it prints must not depend on which. */
static void relay_notes(const char *out) {
  for (const char *line = out; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
    const char *hit = strstr(line, "states no replica_count");
    if (!hit || (nl && hit > nl))
      fwrite(line, 1, len, stderr);
    line = nl ? nl + 1 : NULL;
  }
}

/* Copies hloc's output to stderr, its "hloc: " lines as "hlorun: ", except the last such line,
 * which becomes the status message (without the prefix); returns that status. */
static hlo_status relay(char *out, const char *model_path, int exit_code) {
  char *last = NULL;
  for (char *line = out; line && *line;) {
    char *nl = strchr(line, '\n');
    if (strncmp(line, "hloc: ", 6) == 0)
      last = line;
    line = nl ? nl + 1 : NULL;
  }
  for (char *line = out; line && *line;) {
    char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    if (line != last)
      fprintf(stderr, "%s%.*s\n", strncmp(line, "hloc: ", 6) == 0 ? "hlorun: " : "",
              (int)(len - (strncmp(line, "hloc: ", 6) == 0 ? 6 : 0)),
              line + (strncmp(line, "hloc: ", 6) == 0 ? 6 : 0));
    line = nl ? nl + 1 : NULL;
  }
  hlo_status_code code = exit_code == 2 ? HLO_INVALID_ARGUMENT : HLO_UNIMPLEMENTED;
  int errors = 0;
  for (const char *p = out; (p = strstr(p, ": error: ")); p++)
    errors++;
  if (!last && errors)
    return hlo_status_make(code, "%s: %d error%s", model_path, errors, errors == 1 ? "" : "s");
  if (!last)
    return hlo_status_make(code, "%s: not compiled (hloc exit status %d)", model_path, exit_code);
  char *end = strchr(last, '\n');
  return hlo_status_make(code, "%.*s", (int)((end ? (size_t)(end - last) : strlen(last)) - 6), last + 6);
}

/* Runs `hloc MODEL -o OUT --emit=so -On --target-cpu=CPU [--nontemporal-min-bytes=N] [--strict]`. */
static hlo_status compile_to(const char *model_path, const char *out, const cache_options *o) {
  char hloc[4200], opt[8], cpu[512], nt[64];
  cache_find_hloc(hloc, sizeof hloc);
  snprintf(opt, sizeof opt, "-O%d", o->opt_level >= 0 && o->opt_level <= 3 ? o->opt_level : 2);
  snprintf(cpu, sizeof cpu, "--target-cpu=%s", o->target_cpu ? o->target_cpu : "native");
  if (o->nontemporal_min_bytes < 0)
    snprintf(nt, sizeof nt, "--nontemporal-min-bytes=off");
  else
    snprintf(nt, sizeof nt, "--nontemporal-min-bytes=%lld", (long long)o->nontemporal_min_bytes);
  char *argv[10] = {hloc, (char *)model_path, "-o", (char *)out, "--emit=so", opt, cpu};
  int argc = 7;
  if (o->nontemporal_min_bytes)
    argv[argc++] = nt;
  if (o->strict)
    argv[argc++] = "--strict";
  argv[argc] = NULL;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return hlo_status_make(HLO_IO, "cannot start hloc: %s", strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
  pid_t pid;
  extern char **environ;
  int err = posix_spawnp(&pid, hloc, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (err) {
    close(fds[0]);
    return hlo_status_make(HLO_NOT_FOUND, "cannot run the compiler %s: %s (hlorun compiles .hlo files with hloc)", hloc,
                           strerror(err));
  }
  char *output = read_all_fd(fds[0]);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  hlo_status s = NULL;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    if (output)
      relay_notes(output); /* notes, e.g. elided constants */
  } else if (WIFEXITED(status)) {
    s = relay(output ? output : (char *)"", model_path, WEXITSTATUS(status));
  } else {
    if (output)
      fputs(output, stderr);
    s = hlo_status_make(HLO_INTERNAL, "%s: hloc was killed by signal %d", model_path,
                        WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  free(output);
  if (s)
    unlink(out);
  return s;
}

/* The folder cannot hold the result: compile into a temporary file the caller removes. */
static hlo_status compile_uncached(const char *model_path, const cache_options *o, char *out_path, size_t cap,
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

hlo_status cache_get(const char *model_path, const cache_options *o, bool force, char *out_path, size_t cap,
                     cache_outcome *out_outcome) {
  unsigned char *text = NULL;
  size_t n = 0;
  HLO_RETURN_IF_ERROR(read_file(model_path, &text, &n));
  char key[40], dir[4096], hloc[4200];
  cache_find_hloc(hloc, sizeof hloc);
  cache_key(text, n, o, hloc, key, sizeof key);
  free(text);
  cache_dir(dir, sizeof dir);
  if (snprintf(out_path, cap, "%s/%s.so", dir, key) >= (int)cap)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: the cache path is too long", dir);
  char why[160];
  if (dir_problem(dir, why, sizeof why)) {
    fprintf(stderr, "hlorun: warning: not using the compile cache %s: %s; compiling into a temporary file\n", dir,
            why);
    return compile_uncached(model_path, o, out_path, cap, out_outcome);
  }
  if (!force && access(out_path, F_OK) == 0) {
    if (!entry_problem(out_path, why, sizeof why)) {
      utimensat(AT_FDCWD, out_path, NULL, 0); /* recently used: kept by prune() */
      *out_outcome = CACHE_HIT;              /* no parsing, no LLVM */
      return NULL;
    }
    fprintf(stderr, "hlorun: warning: not loading the cached %s: %s; compiling it again\n", out_path, why);
  }
  if (!make_dirs(dir) || access(dir, W_OK) != 0)
    return compile_uncached(model_path, o, out_path, cap, out_outcome);
  prune(dir);
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s/%s.%ld.tmp.so", dir, key, (long)getpid());
  HLO_RETURN_IF_ERROR(compile_to(model_path, tmp, o));
  hlo_status sealed = seal_entry(tmp);
  if (sealed) {
    unlink(tmp);
    return sealed;
  }
  if (rename(tmp, out_path) != 0) {
    hlo_status s = hlo_status_make(HLO_IO, "%s: cannot store the compiled model: %s", out_path, strerror(errno));
    unlink(tmp);
    return s;
  }
  *out_outcome = CACHE_COMPILED;
  return NULL;
}
