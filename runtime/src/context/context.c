/* context.c — hlo_context (hlo/runtime.h) and the context services models call
 * (hlo/rt_abi.def, hlo/rt_parallel.h): options, the thread pool behind parallel loops (started
 * lazily, so a small model pays nothing for it), the arena, the library scratch, data
 * prepared from a model's constants (hlo_ctx_prepared_*), the custom-call registry and
 * resolver, the replica identity.  The services on top of the context (feeds.c, channels.c,
 * ...) are reached from here only through their teardown table at destroy (services.h says
 * why).  Model calls are thread-compatible: one at a time per context.
 * Tests: context_test.c.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "context_internal.h"
#include "kernels/rt_copy.h"
#include "kernels/rt_isa.h"
#include "services.h"

#define HLO_PUBLIC __attribute__((visibility("default")))

/* ---- creation ---------------------------------------------------------------------------- */

HLO_PUBLIC void hlo_context_options_init(hlo_context_options *o) {
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->num_replicas = 1;
}

static void pool_init(hlo_pool *p) {
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->work, NULL);
  pthread_cond_init(&p->done, NULL);
  pthread_mutex_init(&p->busy, NULL);
  atomic_init(&p->stopping, false);
  atomic_init(&p->generation, 0);
  atomic_init(&p->remaining, 0);
  atomic_init(&p->unfinished, 0);
  atomic_init(&p->sleepers, 0);
  atomic_init(&p->caller_sleeps, 0);
}

HLO_PUBLIC hlo_status hlo_context_create(const hlo_context_options *opts, hlo_context **out_ctx) {
  *out_ctx = NULL;
  hlo_context_options o;
  hlo_context_options_init(&o);
  if (opts) {
    /* An older caller's smaller struct: take what it has, defaults for the rest. */
    size_t n = opts->struct_size && opts->struct_size < sizeof o ? opts->struct_size : sizeof o;
    memcpy(&o, opts, n);
    o.struct_size = sizeof o;
  }
  if (o.num_threads < 0 || o.num_replicas < 0 || o.replica_id < 0 || o.partition_id < 0)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "context options: negative count or id");
  if (o.num_replicas == 0)
    o.num_replicas = 1;
  if (o.replica_id >= o.num_replicas)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "context options: replica_id %d is not below num_replicas %d",
                           o.replica_id, o.num_replicas);
  if (o.num_threads == 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    o.num_threads = n > 0 ? (int32_t)(n < 1024 ? n : 1024) : 1;
  }
  hlo_context *c = calloc(1, sizeof *c);
  if (!c)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory creating a context");
  c->magic = HLO_CONTEXT_MAGIC;
  c->layout_size = sizeof *c;
  c->opts = o;
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->feed_cv, NULL);
  pthread_mutex_init(&c->scratch_busy, NULL);
  pool_init(&c->pool);
  *out_ctx = c;
  return NULL;
}

static void free_targets(hlo_custom_target *t, int n) {
  for (int i = 0; i < n; i++)
    free(t[i].name);
  free(t);
}

static void pool_stop(hlo_pool *p) {
  atomic_store(&p->stopping, true);
  pthread_mutex_lock(&p->mu);
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->num_threads; i++)
    pthread_join(p->threads[i], NULL);
  free(p->threads);
  pthread_cond_destroy(&p->work);
  pthread_cond_destroy(&p->done);
  pthread_mutex_destroy(&p->mu);
  pthread_mutex_destroy(&p->busy);
}

HLO_PUBLIC void hlo_context_destroy(hlo_context *c) {
  if (!c)
    return;
  pool_stop(&c->pool);
  for (const hlo_ctx_teardown_fn *t = hlo_ctx_teardowns; *t; t++)
    (*t)(c);
  free_targets(c->targets, c->n_targets);
  free_targets(c->resolved, c->n_resolved);
  for (int i = 0; i < c->n_libs; i++)
    dlclose(c->libs[i]);
  if (!c->arena_borrowed)
    free(c->arena);
  free(c->scratch);
  pthread_mutex_destroy(&c->scratch_busy);
  for (hlo_ctx_prepared *e = c->prepared, *next; e; e = next) {
    next = e->next;
    free(e->layout);
    free(e->data);
    free(e);
  }
  free(c->libs);
  pthread_cond_destroy(&c->feed_cv);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

/* Was ctx made by a runtime with this layout?  (See context_internal.h.) */
bool hlo_ctx_same_layout(const hlo_context *c) { return c->magic == HLO_CONTEXT_MAGIC && c->layout_size == sizeof *c; }

hlo_status hlo_ctx_foreign(const char *what) {
  return hlo_status_make(HLO_FAILED_PRECONDITION,
                         "%s: the context was made by another version of the hloc runtime; rebuild the model", what);
}

/* ---- the thread pool --------------------------------------------------------------------- */

/* How many times an idle worker, or the caller waiting for its workers, polls (with the CPU's
 * pause hint, tens of microseconds in all) before it sleeps on a condition variable.  A model's
 * parallel loops come one after another, and a sleeping thread takes tens of microseconds to
 * wake (more on a virtual machine): on a 1 ms matrix product the caller had often taken the
 * second thread's chunk itself before that thread woke. */
enum { POOL_SPIN = 2000 };

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Claims and runs chunks of the published loop until none are left (hlo_pool). */
static void run_chunks(hlo_pool *p) {
  for (;;) {
    int64_t k = atomic_fetch_sub_explicit(&p->remaining, 1, memory_order_acq_rel);
    if (k <= 0)
      return;
    int64_t chunk = p->chunks - k, begin = p->n * chunk / p->chunks, end = p->n * (chunk + 1) / p->chunks;
    p->fn(p->arg, begin, end);
    if (atomic_fetch_sub(&p->unfinished, 1) == 1 && atomic_load(&p->caller_sleeps)) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_broadcast(&p->done);
      pthread_mutex_unlock(&p->mu);
    }
  }
}

/* Polls until a new loop is posted or the pool stops (or the spin runs out). */
static void spin_for_work(hlo_pool *p, uint64_t seen) {
  for (int i = 0; i < POOL_SPIN; i++) {
    if (atomic_load_explicit(&p->generation, memory_order_acquire) != seen ||
        atomic_load_explicit(&p->stopping, memory_order_acquire))
      return;
    cpu_relax();
  }
}

static void *worker(void *arg) {
  hlo_pool *p = arg;
  uint64_t seen = 0;
  for (;;) {
    spin_for_work(p, seen);
    if (atomic_load(&p->generation) == seen && !atomic_load(&p->stopping)) {
      pthread_mutex_lock(&p->mu);
      atomic_fetch_add(&p->sleepers, 1);
      while (atomic_load(&p->generation) == seen && !atomic_load(&p->stopping))
        pthread_cond_wait(&p->work, &p->mu);
      atomic_fetch_sub(&p->sleepers, 1);
      pthread_mutex_unlock(&p->mu);
    }
    if (atomic_load(&p->stopping))
      break;
    seen = atomic_load_explicit(&p->generation, memory_order_acquire);
    run_chunks(p);
  }
  return NULL;
}

/* Starts num_threads - 1 workers once.  Called with p->busy held. */
static void pool_start(hlo_pool *p, int num_threads) {
  p->started = true;
  p->threads = calloc((size_t)num_threads, sizeof *p->threads);
  if (!p->threads)
    return;
  for (int i = 0; i < num_threads - 1; i++) {
    if (pthread_create(&p->threads[i], NULL, worker, p) != 0)
      break;
    p->num_threads++;
  }
}

HLO_RT_CTX_EXPORT int32_t hlo_rt_num_threads(hlo_context *c) { return c && hlo_ctx_same_layout(c) ? c->opts.num_threads : 1; }

typedef struct copy_job {
  char *dst;
  const char *src;
  int64_t bytes;
  bool stream; /* non-temporal stores (kernels/rt_copy.c) */
} copy_job;

enum { COPY_PIECE = 1 << 20 };

static void copy_pieces(void *arg, int64_t begin, int64_t end) {
  const copy_job *j = arg;
  int64_t from = begin * COPY_PIECE, to = end * COPY_PIECE < j->bytes ? end * COPY_PIECE : j->bytes;
  if (to <= from)
    return;
  if (j->stream)
    rt_copy_stream(j->dst + from, j->src + from, to - from);
  else
    memcpy(j->dst + from, j->src + from, (size_t)(to - from));
}

HLO_RT_CTX_EXPORT void hlo_rt_copy(hlo_context *c, void *dst, const void *src, int64_t bytes) {
  if (bytes <= 0)
    return;
  int64_t stream_min = rt_nontemporal_min_bytes(); /* -1: off */
  copy_job j = {dst, src, bytes, stream_min >= 0 && bytes >= stream_min};
  hlo_rt_parallel_for(c, (bytes + COPY_PIECE - 1) / COPY_PIECE, copy_pieces, &j);
}

HLO_RT_CTX_EXPORT void hlo_rt_parallel_for(hlo_context *c, int64_t n, hlo_rt_range_fn fn, void *arg) {
  if (n <= 0)
    return;
  if (!c || !hlo_ctx_same_layout(c) || c->opts.num_threads <= 1 || n < 2 || pthread_mutex_trylock(&c->pool.busy) != 0) {
    fn(arg, 0, n);
    return;
  }
  hlo_pool *p = &c->pool;
  if (!p->started)
    pool_start(p, c->opts.num_threads);
  int64_t threads = p->num_threads + 1;
  /* One contiguous chunk per thread: the loops compiled models run are even (a static split
   * measured 2x faster than four dynamic chunks per thread on 64 MB elementwise loops).
   * Never more chunks than iterations; n * k below stays in range because chunks <= 1024. */
  int64_t chunks = threads < n ? threads : n;
  if (threads == 1 || n > INT64_MAX / chunks) {
    pthread_mutex_unlock(&p->busy);
    fn(arg, 0, n);
    return;
  }
  p->fn = fn;
  p->arg = arg;
  p->n = n;
  p->chunks = chunks;
  atomic_store_explicit(&p->unfinished, chunks, memory_order_relaxed);
  atomic_store_explicit(&p->remaining, chunks, memory_order_release);
  atomic_fetch_add(&p->generation, 1);
  if (atomic_load(&p->sleepers) > 0) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
  }
  run_chunks(p);
  for (int i = 0; i < POOL_SPIN && atomic_load_explicit(&p->unfinished, memory_order_acquire) > 0; i++)
    cpu_relax();
  if (atomic_load_explicit(&p->unfinished, memory_order_acquire) > 0) {
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->caller_sleeps, 1);
    while (atomic_load(&p->unfinished) > 0)
      pthread_cond_wait(&p->done, &p->mu);
    atomic_store(&p->caller_sleeps, 0);
    pthread_mutex_unlock(&p->mu);
  }
  pthread_mutex_unlock(&p->busy);
}

/* ---- the arena --------------------------------------------------------------------------- */

HLO_PUBLIC hlo_status hlo_context_set_arena(hlo_context *c, void *buffer, size_t nbytes) {
  if (!c || !hlo_ctx_same_layout(c))
    return hlo_ctx_foreign("hlo_context_set_arena");
  if (buffer && ((uintptr_t)buffer & 63))
    return hlo_status_make(HLO_INVALID_ARGUMENT, "hlo_context_set_arena: the buffer must be 64-byte aligned");
  if (!c->arena_borrowed)
    free(c->arena);
  c->arena = buffer;
  c->arena_size = buffer ? nbytes : 0;
  c->arena_borrowed = buffer != NULL;
  return NULL;
}

/* A 64-byte aligned block of n bytes for an arena or scratch.  From 4 MiB on it is aligned to
 * and rounded up to 2 MiB and the kernel is asked for transparent huge pages
 * (MADV_HUGEPAGE, advice only): a large model's first call then takes one fault per 2 MiB
 * instead of per 4 KiB (mobilenet_v2's 7.5 GB arena: 2 million faults), and every call
 * walks its temporaries with far fewer TLB misses.  hlorun's parameter and result buffers
 * follow the same rule (tools/inputs.c alloc_leaf). */
static void *fresh_arena(size_t n) {
  enum { HUGE = 1 << 21 };
  void *p = NULL;
  if (n >= 2 * (size_t)HUGE) {
    size_t padded = (n + HUGE - 1) & ~(size_t)(HUGE - 1);
    if (posix_memalign(&p, HUGE, padded) != 0)
      return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, padded, MADV_HUGEPAGE);
#endif
    return p;
  }
  return posix_memalign(&p, 64, n ? (n + 63) & ~(size_t)63 : 64) == 0 ? p : NULL;
}

HLO_RT_CTX_EXPORT void *hlo_rt_arena_acquire(hlo_context *c, int64_t bytes, hlo_status *out_status) {
  *out_status = NULL;
  size_t n = bytes > 0 ? (size_t)bytes : 0;
  if (!c || !hlo_ctx_same_layout(c)) {
    void *p = fresh_arena(n);
    if (!p)
      *out_status = hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory allocating a %zu-byte arena", n);
    return p;
  }
  if (c->arena && c->arena_size >= n)
    return c->arena;
  if (c->arena_borrowed) {
    *out_status = hlo_status_make(HLO_RESOURCE_EXHAUSTED,
                                  "the arena given with hlo_context_set_arena holds %zu bytes; the model needs %zu",
                                  c->arena_size, n);
    return NULL;
  }
  free(c->arena);
  c->arena = fresh_arena(n);
  c->arena_size = c->arena ? n : 0;
  if (!c->arena)
    *out_status = hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory allocating a %zu-byte arena", n);
  return c->arena;
}

void *hlo_ctx_scratch_take(hlo_context *c, size_t bytes) {
  if (!c || !hlo_ctx_same_layout(c) || pthread_mutex_trylock(&c->scratch_busy) != 0)
    return NULL;
  if (c->scratch_size < bytes) {
    free(c->scratch);
    c->scratch = fresh_arena(bytes);
    c->scratch_size = c->scratch ? bytes : 0;
  }
  if (!c->scratch)
    pthread_mutex_unlock(&c->scratch_busy);
  return c->scratch;
}

void hlo_ctx_scratch_give(hlo_context *c, void *scratch) {
  if (scratch)
    pthread_mutex_unlock(&c->scratch_busy);
}

/* The entry of (site, source, key), under c->mu; NULL when none. */
static hlo_ctx_prepared *prepared_at(hlo_context *c, const void *site, const void *source, int64_t key) {
  for (hlo_ctx_prepared *e = c->prepared; e; e = e->next)
    if (e->site == site && e->source == source && e->key == key)
      return e;
  return NULL;
}

const hlo_ctx_prepared *hlo_ctx_prepared_find(hlo_context *c, const void *site, const void *source, int64_t key) {
  if (!c || !hlo_ctx_same_layout(c))
    return NULL;
  pthread_mutex_lock(&c->mu);
  const hlo_ctx_prepared *e = prepared_at(c, site, source, key);
  pthread_mutex_unlock(&c->mu);
  return e;
}

bool hlo_ctx_prepared_keep(hlo_context *c, const void *site, const void *source, int64_t key, const void *layout,
                           size_t layout_bytes, const void *data, size_t data_bytes) {
  if (!c || !hlo_ctx_same_layout(c))
    return false;
  /* data 64-byte aligned, as a library's own allocations are (its kernels may load aligned) */
  void *l = malloc(layout_bytes ? layout_bytes : 1), *d = aligned_alloc(64, (data_bytes + 64) / 64 * 64);
  if (!l || !d) {
    free(l);
    free(d);
    return false;
  }
  memcpy(l, layout, layout_bytes);
  memcpy(d, data, data_bytes);
  pthread_mutex_lock(&c->mu);
  hlo_ctx_prepared *e = prepared_at(c, site, source, key);
  if (!e && (e = calloc(1, sizeof *e))) {
    *e = (hlo_ctx_prepared){.site = site, .source = source, .key = key, .next = c->prepared};
    c->prepared = e;
  }
  if (e) {
    free(e->layout);
    free(e->data);
    e->layout = l, e->layout_bytes = layout_bytes, e->data = d, e->data_bytes = data_bytes;
  }
  pthread_mutex_unlock(&c->mu);
  if (!e) {
    free(l);
    free(d);
  }
  return e != NULL;
}

HLO_RT_CTX_EXPORT void hlo_rt_arena_release(hlo_context *c, void *arena) {
  if (!c || !hlo_ctx_same_layout(c))
    free(arena);
}

/* ---- custom calls ------------------------------------------------------------------------ */

static hlo_status add_target(hlo_custom_target **t, int *n, const char *name, void *fn) {
  hlo_custom_target *grown = realloc(*t, (size_t)(*n + 1) * sizeof *grown);
  if (!grown)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  *t = grown;
  char *copy = strdup(name);
  if (!copy)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  grown[*n].name = copy;
  grown[*n].fn = fn;
  (*n)++;
  return NULL;
}

static void *find_target(const hlo_custom_target *t, int n, const char *name) {
  for (int i = n - 1; i >= 0; i--) /* the latest registration wins */
    if (strcmp(t[i].name, name) == 0)
      return t[i].fn;
  return NULL;
}

HLO_PUBLIC hlo_status hlo_custom_call_register(hlo_context *c, const char *target, void *fn) {
  if (!c || !target || !fn)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "hlo_custom_call_register: no context, target or function");
  pthread_mutex_lock(&c->mu);
  hlo_status s = add_target(&c->targets, &c->n_targets, target, fn);
  pthread_mutex_unlock(&c->mu);
  return s;
}

HLO_PUBLIC hlo_status hlo_custom_call_add_library(hlo_context *c, const char *path) {
  if (!c || !path)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "hlo_custom_call_add_library: no context or path");
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return hlo_status_make(HLO_NOT_FOUND, "%s: cannot load custom-call library: %s", path, dlerror());
  pthread_mutex_lock(&c->mu);
  void **libs = realloc(c->libs, (size_t)(c->n_libs + 1) * sizeof *libs);
  if (libs) {
    c->libs = libs;
    c->libs[c->n_libs++] = h;
  }
  pthread_mutex_unlock(&c->mu);
  if (!libs) {
    dlclose(h);
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  return NULL;
}

/* Whether fn is an entry point of a model hloc built (its typed entry, generic entry or
 * describe function): a model exports its entry under its module's name, and a custom call
 * whose target has that name must not call the model itself. */
static bool is_model_entry(void *fn) {
  Dl_info info;
  if (!dladdr(fn, &info) || !info.dli_fname)
    return false;
  void *h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    return false;
  hlo_describe_fn describe = (hlo_describe_fn)dlsym(h, "hlo_module_describe");
  const hlo_module_desc *d = describe ? describe() : NULL;
  bool entry = (void *)describe == fn ||
               (d && ((void *)d->typed_entry == fn || (void *)d->run == fn));
  dlclose(h);
  return entry;
}

/* Looks in the registered table, the libraries, then the global scope (never at a model's own
 * entry points).  Called with c->mu held. */
static void *lookup(hlo_context *c, const char *target) {
  void *fn = find_target(c->targets, c->n_targets, target);
  if (!fn)
    fn = find_target(c->resolved, c->n_resolved, target);
  for (int i = 0; !fn && i < c->n_libs; i++)
    if ((fn = dlsym(c->libs[i], target)) && is_model_entry(fn))
      fn = NULL;
  if (!fn && (fn = dlsym(RTLD_DEFAULT, target)) && is_model_entry(fn))
    fn = NULL;
  return fn;
}

HLO_RT_CTX_EXPORT hlo_status hlo_rt_custom_call_resolve(hlo_context *c, const char *target, void **out_fn) {
  *out_fn = NULL;
  if (!target)
    return hlo_status_make(HLO_INTERNAL, "custom call without a target name");
  if (!c) {
    *out_fn = dlsym(RTLD_DEFAULT, target);
    if (*out_fn && is_model_entry(*out_fn))
      *out_fn = NULL;
    return *out_fn ? NULL
                   : hlo_status_make(HLO_NOT_FOUND,
                                     "custom-call target '%s' not found in the process (the model ran without a context)",
                                     target);
  }
  if (!hlo_ctx_same_layout(c))
    return hlo_ctx_foreign("custom call");
  pthread_mutex_lock(&c->mu);
  bool cached = find_target(c->targets, c->n_targets, target) || find_target(c->resolved, c->n_resolved, target);
  void *fn = lookup(c, target);
  hlo_status s = NULL;
  if (fn && !cached)
    s = add_target(&c->resolved, &c->n_resolved, target, fn);
  int n_targets = c->n_targets, n_libs = c->n_libs;
  pthread_mutex_unlock(&c->mu);
  if (s)
    return s;
  if (!fn)
    return hlo_status_make(HLO_NOT_FOUND,
                           "custom-call target '%s' not found (looked in %d registered target%s, %d custom-call "
                           "librar%s and the process)",
                           target, n_targets, n_targets == 1 ? "" : "s", n_libs, n_libs == 1 ? "y" : "ies");
  *out_fn = fn;
  return NULL;
}

HLO_PUBLIC hlo_status hlo_custom_call_resolve_all(hlo_context *c, const hlo_module_desc *desc) {
  size_t end = offsetof(hlo_module_desc, custom_call_targets) + sizeof desc->custom_call_targets;
  if (!desc || desc->struct_size < end)
    return NULL; /* built before models listed their targets: resolved at first use */
  for (int32_t i = 0; i < desc->num_custom_call_targets; i++) {
    void *fn;
    hlo_status s = hlo_rt_custom_call_resolve(c, desc->custom_call_targets[i], &fn);
    if (s)
      return hlo_status_annotate(s, "loading %s", desc->module_name ? desc->module_name : "the model");
  }
  return NULL;
}

/* ---- replica identity -------------------------------------------------------------------- */

HLO_RT_CTX_EXPORT int32_t hlo_rt_replica_id(hlo_context *c) { return c && hlo_ctx_same_layout(c) ? c->opts.replica_id : 0; }
HLO_RT_CTX_EXPORT int32_t hlo_rt_num_replicas(hlo_context *c) { return c && hlo_ctx_same_layout(c) ? c->opts.num_replicas : 1; }
HLO_RT_CTX_EXPORT int32_t hlo_rt_partition_id(hlo_context *c) { return c && hlo_ctx_same_layout(c) ? c->opts.partition_id : 0; }
