/* run.c — everything hlorun does, callable without argv (run.h): get the shared object
 * (cache.c compiles a .hlo file once), load it and read its descriptor, read the inputs
 * (.npy files, inline literals from literal_io.c, or deterministic random values), run every
 * replica on its own thread and context, calling the typed entry point through libffi, write
 * or print the results, compare them with expected .npy files, and time repeated runs.
 * Errors are statuses whose message is one line.
 */
#include "run.h"

#include <dlfcn.h>
#include <errno.h>
#include <ffi.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "checks.h"
#include "hlo/runtime.h"
#include "inputs.h"
#include "ir/literal.h"
#include "literal_io.h"
#include "npy.h"
#include "run_mpi.h"

enum { MAX_REPLICAS = 1024 };

/* ---- loading ------------------------------------------------------------------------------- */

typedef struct model {
  void *handle;
  const hlo_module_desc *desc;
  char so[4200];
} model;

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A model built with oneDNN loads libgomp with it, whose idle threads spin for a while (300000
 * polls by default) after each of oneDNN's parallel regions: on a machine with as many cores as
 * threads they take the cores from the context's own pool, which runs next.  Unless the user
 * chose (GOMP_SPINCOUNT or OMP_WAIT_POLICY set), libgomp reads a shorter spin when it loads:
 * mobilenet_v2's training step 1.97-2.08 -> 1.72-1.87 s, ssd_mobilenet 5.7-6.0 -> 5.2-5.6 ms on an
 * AMD EPYC family 26, 2 threads; a passive wait (no spin) lost 10-60 % on small convolutions
 * (docs/runtime.md "Threads"). */
static void shorten_openmp_spin(void) {
  if (!getenv("GOMP_SPINCOUNT") && !getenv("OMP_WAIT_POLICY"))
    setenv("GOMP_SPINCOUNT", "10000", 0);
}

static hlo_status open_so(const char *so, model *m) {
  char resolved[4300];
  shorten_openmp_spin();
  snprintf(resolved, sizeof resolved, "%s%s", strchr(so, '/') ? "" : "./", so);
  m->handle = dlopen(resolved, RTLD_NOW | RTLD_LOCAL);
  if (!m->handle)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: cannot load: %s", so, dlerror());
  hlo_describe_fn describe = (hlo_describe_fn)dlsym(m->handle, "hlo_module_describe");
  m->desc = describe ? describe() : NULL;
  if (!m->desc || m->desc->abi_version != HLO_ABI_VERSION || !m->desc->typed_entry) {
    dlclose(m->handle);
    m->handle = NULL;
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: not a model built by this version of hloc (ABI %d)", so,
                           HLO_ABI_VERSION);
  }
  return NULL;
}

/* A model.so carries its own copy of the runtime.  One of another hloc does not take this
 * hlorun's context for its own: it runs every loop on the calling thread and refuses feeds,
 * channels and custom calls.  Asked of the model's copy (hlo_rt_num_threads) on a two-thread
 * context; a warning, since the results stay right. */
static void warn_other_runtime(const run_options *o, const model *m) {
  typedef int32_t (*threads_fn)(hlo_context *);
  threads_fn threads = (threads_fn)dlsym(m->handle, "hlo_rt_num_threads");
  hlo_context_options co;
  hlo_context_options_init(&co);
  co.num_threads = 2;
  hlo_context *probe = NULL;
  hlo_status s = hlo_context_create(&co, &probe);
  if (!s && threads && threads(probe) != 2)
    fprintf(stderr,
            "%s: warning: built by another version of hloc; its runtime does not accept this hlorun's context, "
            "so it runs on one thread (and refuses feeds, channels and custom calls); rebuild it\n",
            o->model);
  hlo_status_free(s);
  hlo_context_destroy(probe);
}

/* A .so is loaded as it is; a .hlo file through the cache, recompiled once if the cached
 * file does not load (left by a crashed or different build). */
static hlo_status load_model(const run_options *o, model *m) {
  memset(m, 0, sizeof *m);
  if (ends_with(o->model, ".so")) {
    snprintf(m->so, sizeof m->so, "%s", o->model);
    HLO_RETURN_IF_ERROR(open_so(m->so, m));
  } else {
    cache_options d = {.opt_level = o->opt_level, .target_cpu = o->target_cpu, .strict = o->strict,
                       .nontemporal_min_bytes = o->nontemporal_min_bytes};
    cache_outcome how;
    HLO_RETURN_IF_ERROR(cache_get(o->model, &d, false, m->so, sizeof m->so, &how));
    hlo_status s = open_so(m->so, m);
    if (s && how == CACHE_HIT) {
      hlo_status_free(s);
      HLO_RETURN_IF_ERROR(cache_get(o->model, &d, true, m->so, sizeof m->so, &how));
      s = open_so(m->so, m);
    }
    if (how == CACHE_UNCACHED)
      unlink(m->so); /* the mapping stays valid */
    if (o->verbose)
      fprintf(stderr, "hlorun: cache %s: %s\n",
              how == CACHE_HIT ? "hit" : how == CACHE_COMPILED ? "miss, compiled" : "not writable, compiled", m->so);
    if (s)
      return s;
    if (how != CACHE_HIT)
      return NULL; /* the compiler printed its notes */
  }
  if (m->desc->features & HLO_FEATURE_ELIDED_CONSTANTS)
    fprintf(stderr, "%s: note: elided constants (constant({...})) were filled with deterministic values\n", o->model);
  warn_other_runtime(o, m);
  return NULL;
}

/* ---- inputs -------------------------------------------------------------------------------- */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}


static void desc_text(const hlo_array_desc *d, char *buf, size_t cap) {
  litio_shape_text(d->dtype, d->rank, d->dims, buf, cap);
}

/* ---- per-replica arguments ---- */

/* --input and --output values may start with rK: (replica K only).  A replica reads its own
 * rK: inputs when it has any, else the unprefixed ones; unprefixed outputs are replica 0's. */
typedef struct arg_list {
  const char **items;
  int n;
} arg_list;

static int replica_prefix(const char *arg, const char **rest) { return input_replica_prefix(arg, rest); }

/* The values of `args` that replica r uses (see above); `shared`: unprefixed values apply to
 * every replica without its own (inputs), else to replica 0 only (outputs). */
static hlo_status args_for_replica(const char *const *args, int n, int r, bool shared, arg_list *out) {
  out->n = 0;
  out->items = calloc((size_t)n + 1, sizeof *out->items);
  if (!out->items)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  const char *rest;
  for (int i = 0; i < n; i++)
    if (replica_prefix(args[i], &rest) == r)
      out->items[out->n++] = rest;
  if (out->n == 0 && (shared || r == 0))
    for (int i = 0; i < n; i++)
      if (replica_prefix(args[i], &rest) < 0)
        out->items[out->n++] = rest;
  return NULL;
}

/* Every rK: prefix names a replica that runs. */
static hlo_status check_prefixes(const char *flag, const char *const *args, int n, int count) {
  const char *rest;
  for (int i = 0; i < n; i++) {
    int k = replica_prefix(args[i], &rest);
    if (k >= count)
      return hlo_status_make(HLO_INVALID_ARGUMENT, "%s %s: there %s only %d replica%s (r0 to r%d)", flag, args[i],
                             count == 1 ? "is" : "are", count, count == 1 ? "" : "s", count - 1);
  }
  return NULL;
}

static hlo_status check_inputs(const run_options *o, const hlo_module_desc *desc, const input_list *inputs, int r,
                               int count) {
  if (o->random_inputs && inputs->n_args)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "give either --input or --random-inputs, not both");
  if (o->random_inputs)
    return NULL;
  const input_item **order = calloc((size_t)desc->num_params + 1, sizeof *order);
  if (!order)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  hlo_status s = inputs_match(inputs, desc, o->model, r, count, order);
  free(order);
  return s;
}

static hlo_status check_replica_args(const run_options *o, const hlo_module_desc *desc, const input_list *inputs,
                                     int r, int count) {
  int nr = desc->num_results;
  char who[64] = "";
  if (count > 1)
    snprintf(who, sizeof who, " for replica %d", r);
  arg_list out = {0};
  hlo_status s = check_inputs(o, desc, inputs, r, count);
  if (!s)
    s = args_for_replica(o->outputs, o->n_outputs, r, false, &out);
  if (!s && out.n && out.n != nr)
    s = hlo_status_make(HLO_INVALID_ARGUMENT, "%s has %d result%s but %d --output %s given%s", o->model, nr,
                        nr == 1 ? "" : "s", out.n, out.n == 1 ? "was" : "were", who);
  free(out.items);
  return s;
}

static hlo_status check_counts(const run_options *o, const hlo_module_desc *desc, const input_list *inputs,
                               int count) {
  int nr = desc->num_results;
  HLO_RETURN_IF_ERROR(check_prefixes("--input", o->inputs, o->n_inputs, count));
  HLO_RETURN_IF_ERROR(check_prefixes("--output", o->outputs, o->n_outputs, count));
  for (int r = 0; r < count; r++)
    HLO_RETURN_IF_ERROR(check_replica_args(o, desc, inputs, r, count));
  if (o->n_expected && o->n_expected != nr)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s has %d result%s but %d --expected %s given", o->model, nr,
                           nr == 1 ? "" : "s", o->n_expected, o->n_expected == 1 ? "was" : "were");
  return NULL;
}

static void *alloc_leaf(int64_t bytes) {
  size_t n = ((size_t)(bytes > 0 ? bytes : 1) + 63) & ~(size_t)63;
  void *p = aligned_alloc(64, n);
  if (p)
    memset(p, 0, n);
  return p;
}

/* The parameters of replica r (-1: the set shared by the replicas without rK: inputs). */
static hlo_status read_inputs(const run_options *o, const hlo_module_desc *desc, const input_list *inputs, int r,
                              int count, param_set *set) {
  HLO_RETURN_IF_ERROR(param_set_init(set, desc->num_params));
  double t0 = now_ms();
  if (o->random_inputs) {
    HLO_RETURN_IF_ERROR(inputs_random(o->seed, desc, o->threads, set));
  } else {
    const input_item **order = calloc((size_t)desc->num_params + 1, sizeof *order);
    hlo_status s = order ? inputs_match(inputs, desc, o->model, r, count, order)
                         : hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
    if (!s)
      s = inputs_read(inputs, desc, (const input_item *const *)order, set);
    free(order);
    HLO_RETURN_IF_ERROR(s);
  }
  double ms = now_ms() - t0;
  if (o->verbose && o->random_inputs)
    fprintf(stderr, "hlorun: random inputs: %lld bytes in %.1f ms (%.2f GB/s)\n", (long long)set->copied_bytes, ms,
            ms > 0 ? set->copied_bytes / ms / 1e6 : 0.0);
  else if (o->verbose)
    fprintf(stderr, "hlorun: inputs: %lld bytes mapped without a copy, %lld bytes copied, in %.1f ms\n",
            (long long)set->mapped_bytes, (long long)set->copied_bytes, ms);
  return NULL;
}

/* The infeed buffers (or host recv buffers, with their channels), read once and pushed before
 * every call. */
typedef struct feeds {
  npy_array *arrays;
  int64_t *channels;
  int n;
} feeds;

static hlo_status read_infeeds(const run_options *o, feeds *f) {
  f->arrays = calloc((size_t)o->n_infeeds + 1, sizeof *f->arrays);
  if (!f->arrays)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (; f->n < o->n_infeeds; f->n++) {
    hlo_status s = npy_read(o->infeeds[f->n], &f->arrays[f->n]);
    if (s)
      return hlo_status_annotate(s, "--infeed %d", f->n);
  }
  return NULL;
}

/* --recv CHANNEL:FILE.npy, each pushed to its channel of every replica before each call. */
static hlo_status read_recvs(const run_options *o, feeds *f) {
  f->arrays = calloc((size_t)o->n_recvs + 1, sizeof *f->arrays);
  f->channels = calloc((size_t)o->n_recvs + 1, sizeof *f->channels);
  if (!f->arrays || !f->channels)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (; f->n < o->n_recvs; f->n++) {
    const char *arg = o->recvs[f->n], *colon = strchr(arg, ':');
    char *end = NULL;
    errno = 0;
    long long ch = colon ? strtoll(arg, &end, 10) : 0;
    if (!colon || end != colon || colon == arg || errno)
      return hlo_status_make(HLO_INVALID_ARGUMENT, "--recv %s: want CHANNEL:FILE.npy (a channel_id, a colon, a file)",
                             arg);
    f->channels[f->n] = ch;
    hlo_status s = npy_read(colon + 1, &f->arrays[f->n]);
    if (s)
      return hlo_status_annotate(s, "--recv %s", arg);
  }
  return NULL;
}

static void free_feeds(feeds *f) {
  for (int i = 0; i < f->n; i++)
    free(f->arrays[i].data);
  free(f->arrays);
  free(f->channels);
}

/* ---- the call ------------------------------------------------------------------------------ */

/* One ffi_cif for the typed entry: (ctx, params..., results...) -> hlo_status. */
typedef struct call_plan {
  ffi_cif cif;
  ffi_type **types;
  int nargs;
} call_plan;

static hlo_status plan_call(const hlo_module_desc *desc, call_plan *p) {
  p->nargs = 1 + desc->num_params + desc->num_results;
  p->types = calloc((size_t)p->nargs, sizeof *p->types);
  if (!p->types)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (int i = 0; i < p->nargs; i++)
    p->types[i] = &ffi_type_pointer;
  if (ffi_prep_cif(&p->cif, FFI_DEFAULT_ABI, (unsigned)p->nargs, &ffi_type_pointer, p->types) != FFI_OK)
    return hlo_status_make(HLO_INTERNAL, "libffi cannot describe the entry point");
  return NULL;
}

/* One buffer the model sent to the outfeed; dtype -1 when it came without a shape. */
typedef struct outfeed_buf {
  void *data;
  int64_t nbytes;
  int32_t dtype, rank;
  int64_t dims[64];
} outfeed_buf;

/* One array the model sent to the host (send with is_host_transfer=true) on a channel. */
typedef struct send_buf {
  int64_t channel;
  int index;            /* the how-manieth on its channel */
  outfeed_buf a;
} send_buf;

typedef struct replica {
  const run_options *o;
  const hlo_module_desc *desc;
  const call_plan *plan;
  const feeds *infeeds;
  const feeds *recvs;
  send_buf *sends;      /* what the first call sent to the host */
  int n_sends, cap_sends;
  bool sends_done;      /* the first call is over: later sends are dropped */
  void **params;        /* read-only; shared by the replicas without rK: inputs */
  void **results;
  void **ptrs, **values;/* ffi argument slots */
  hlo_context *ctx;
  outfeed_buf *outfeeds;/* what the first call sent */
  int n_outfeeds, cap_outfeeds;
  double *times;        /* benchmark iterations, ms */
  double first_call_ms; /* the call whose results count */
  hlo_collective_group *group; /* shared by every replica; NULL for one */
  hlo_status status;
} replica;

/* The element type a .npy dtype stores, or -1 where several do (|u1: u8 and the f8 types;
 * <u2: u16 and bf16), so that the model's infeed checks the type as well as the dimensions. */
static int32_t npy_dtype(const npy_array *a) {
  static const struct { char kind; int size; int32_t dtype; } map[] = {
      {'b', 1, HLO_DTYPE_IR_PRED}, {'i', 1, HLO_DTYPE_IR_S8},  {'i', 2, HLO_DTYPE_IR_S16},
      {'i', 4, HLO_DTYPE_IR_S32},  {'i', 8, HLO_DTYPE_IR_S64}, {'u', 4, HLO_DTYPE_IR_U32},
      {'u', 8, HLO_DTYPE_IR_U64},  {'f', 2, HLO_DTYPE_IR_F16}, {'f', 4, HLO_DTYPE_IR_F32},
      {'f', 8, HLO_DTYPE_IR_F64},  {'c', 8, HLO_DTYPE_IR_C64}, {'c', 16, HLO_DTYPE_IR_C128}};
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (map[i].kind == a->kind && map[i].size == a->itemsize)
      return map[i].dtype;
  return -1;
}

static hlo_status push_infeeds(replica *r) {
  for (int i = 0; i < r->infeeds->n; i++) {
    const npy_array *a = &r->infeeds->arrays[i];
    HLO_RETURN_IF_ERROR(hlo_infeed_push_array(r->ctx, a->data, (size_t)a->nbytes, npy_dtype(a), a->rank, a->dims));
  }
  return NULL;
}

static hlo_status push_recvs(replica *r) {
  for (int i = 0; i < r->recvs->n; i++) {
    const npy_array *a = &r->recvs->arrays[i];
    HLO_RETURN_IF_ERROR(hlo_channel_push(r->ctx, r->recvs->channels[i], a->data, (size_t)a->nbytes, npy_dtype(a),
                                         a->rank, a->dims));
  }
  return NULL;
}

/* The default send callback of every replica's context: keeps what the first call sends. */
static int keep_send(void *user, int64_t channel, const char *instr, const void *data, size_t nbytes, int32_t dtype,
                     int32_t rank, const int64_t *dims) {
  (void)instr;
  replica *r = user;
  if (r->sends_done)
    return 0;
  if (r->n_sends == r->cap_sends) {
    int cap = r->cap_sends ? 2 * r->cap_sends : 8;
    send_buf *grown = realloc(r->sends, (size_t)cap * sizeof *grown);
    if (!grown)
      return 1;
    r->sends = grown;
    r->cap_sends = cap;
  }
  send_buf *b = &r->sends[r->n_sends];
  memset(b, 0, sizeof *b);
  if (rank < 0 || rank > 64 || !(b->a.data = malloc(nbytes ? nbytes : 1)))
    return 1;
  memcpy(b->a.data, data, nbytes);
  b->a.nbytes = (int64_t)nbytes;
  b->a.dtype = dtype;
  b->a.rank = rank;
  if (rank > 0)
    memcpy(b->a.dims, dims, (size_t)rank * sizeof *dims);
  b->channel = channel;
  for (int i = 0; i < r->n_sends; i++)
    b->index += r->sends[i].channel == channel;
  r->n_sends++;
  return 0;
}

/* A failure inside the model is a run-time error (exit status 1) whatever its code, e.g. a
 * custom-call target that is not found. */
static hlo_status call_once(replica *r) {
  void *ret = NULL;
  ffi_call((ffi_cif *)&r->plan->cif, FFI_FN(r->desc->typed_entry), &ret, r->values);
  hlo_status s = (hlo_status)ret;
  hlo_status_code code = hlo_status_code_of(s);
  if (code != HLO_INVALID_ARGUMENT && code != HLO_NOT_FOUND)
    return s;
  hlo_status again = hlo_status_make(HLO_FAILED_PRECONDITION, "%s", hlo_status_message(s));
  hlo_status_free(s);
  return again;
}

static hlo_status keep_outfeeds(replica *r) {
  while (hlo_outfeed_count(r->ctx) > 0) {
    if (r->n_outfeeds == r->cap_outfeeds) {
      int cap = r->cap_outfeeds ? 2 * r->cap_outfeeds : 8;
      outfeed_buf *grown = realloc(r->outfeeds, (size_t)cap * sizeof *grown);
      if (!grown)
        return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
      r->outfeeds = grown;
      r->cap_outfeeds = cap;
    }
    outfeed_buf *b = &r->outfeeds[r->n_outfeeds];
    memset(b, 0, sizeof *b);
    size_t n = 0;
    HLO_RETURN_IF_ERROR(hlo_outfeed_pop_array(r->ctx, &b->data, &n, &b->dtype, &b->rank, b->dims));
    b->nbytes = (int64_t)n;
    r->n_outfeeds++;
  }
  return NULL;
}

static void drop_outfeeds(replica *r) {
  while (hlo_outfeed_count(r->ctx) > 0) {
    void *d = NULL;
    size_t n = 0;
    hlo_status s = hlo_outfeed_pop(r->ctx, &d, &n);
    bool failed = s != NULL;
    hlo_status_free(s);
    free(d);
    if (failed)
      break;
  }
}

/* --benchmark's warm-up: untimed calls until the calls so far, the one whose results count
 * included, have taken this long.  A fresh process's first few milliseconds of work run
 * slower on the machines we measured (a 512^3 GEMM took 0.9 ms for its first ten calls and
 * 0.7 ms after, on one thread as on two), and a library timed inside an already-busy process
 * (numpy in bench/run.py) does not pay that; every side of bench/ warms up the same way
 * (docs/performance.md, "Warm-up"). */
enum { BENCHMARK_WARMUP_MS = 100 };

/* How many untimed calls --benchmark makes before it times: as many as the warm-up time
 * holds after the first call (none when the first call alone took that long).  Replicas that
 * share a collective group make none, since every replica must make the same number of
 * calls. */
static int warmup_calls(const replica *r) {
  if (r->o->benchmark <= 0 || r->group)
    return 0;
  double first = r->first_call_ms > 0.01 ? r->first_call_ms : 0.01;
  double n = (BENCHMARK_WARMUP_MS - first) / first;
  return n <= 0 ? 0 : n > 10000 ? 10000 : (int)n + 1;
}

/* A replica's thread: the call whose results count, untimed warm-up calls, then the timed
 * iterations. */
static void *run_replica(void *arg) {
  replica *r = arg;
  r->status = push_infeeds(r);
  if (!r->status)
    r->status = push_recvs(r);
  double first_start = now_ms();
  if (!r->status)
    r->status = call_once(r);
  r->first_call_ms = now_ms() - first_start;
  r->sends_done = true;
  if (!r->status)
    r->status = keep_outfeeds(r);
  if (r->status && r->group) /* the others must not wait for this replica in a collective */
    hlo_collective_group_abort(r->group);
  for (int k = -warmup_calls(r); k < r->o->benchmark && !r->status; k++) {
    r->status = push_infeeds(r); /* untimed */
    if (!r->status)
      r->status = push_recvs(r);
    if (r->status)
      break;
    double t0 = now_ms();
    r->status = call_once(r);
    if (k >= 0)
      r->times[k] = now_ms() - t0;
    drop_outfeeds(r);
  }
  return NULL;
}

/* hlorun -v --donate: which results are their donated parameters' buffers. */
static void say_donated(const int32_t *donors, int nr, int np) {
  int n = 0;
  for (int i = 0; i < nr; i++)
    if (donors[i] >= 0 && donors[i] < np)
      fprintf(stderr, "%s%d", n++ ? ", " : "hlorun: results ", i);
  if (n)
    fprintf(stderr, " %s their donated parameters' buffers\n", n > 1 ? "are" : "is");
}

static hlo_status setup_replica(const run_options *o, const hlo_module_desc *desc, int id, int count, replica *r) {
  int np = desc->num_params, nr = desc->num_results;
  r->results = calloc((size_t)nr + 1, sizeof *r->results);
  r->ptrs = calloc((size_t)(1 + np + nr), sizeof *r->ptrs);
  r->values = calloc((size_t)(1 + np + nr), sizeof *r->values);
  r->times = calloc((size_t)o->benchmark + 1, sizeof *r->times);
  if (!r->results || !r->ptrs || !r->values || !r->times)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  const int32_t *donors = run_result_donors(o, desc, count);
  for (int i = 0; i < nr; i++) {
    const hlo_array_desc *d = &desc->results[i];
    if (donors && donors[i] >= 0 && donors[i] < np && r->params[donors[i]]) {
      r->results[i] = r->params[donors[i]]; /* donated: updated in place (not freed here) */
      continue;
    }
    if (d->dtype != IR_TOKEN && (d->byte_size < 0 || !(r->results[i] = alloc_leaf(d->byte_size))))
      return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory for result %d (%lld bytes)", i,
                             (long long)d->byte_size);
  }
  if (donors && o->verbose)
    say_donated(donors, nr, np);
  hlo_context_options co;
  hlo_context_options_init(&co);
  co.num_threads = o->threads;
  co.replica_id = id;
  co.num_replicas = count;
  co.group = r->group;
  HLO_RETURN_IF_ERROR(hlo_context_create(&co, &r->ctx));
  for (int i = 0; i < o->n_custom_call_libs; i++)
    HLO_RETURN_IF_ERROR(hlo_custom_call_add_library(r->ctx, o->custom_call_libs[i]));
  HLO_RETURN_IF_ERROR(hlo_channel_set_send_callback(r->ctx, -1, keep_send, r));
  HLO_RETURN_IF_ERROR(hlo_custom_call_resolve_all(r->ctx, desc)); /* a missing target: before anything runs */
  r->ptrs[0] = r->ctx;
  for (int i = 0; i < np; i++)
    r->ptrs[1 + i] = r->params[i];
  for (int i = 0; i < nr; i++)
    r->ptrs[1 + np + i] = r->results[i];
  for (int i = 0; i < 1 + np + nr; i++)
    r->values[i] = &r->ptrs[i];
  return NULL;
}

static void teardown_replica(replica *r, int nr) {
  hlo_context_destroy(r->ctx);
  for (int i = 0; r->results && i < nr; i++) {
    bool donated = false; /* a parameter's buffer (--donate): its owner frees it */
    for (int p = 0; r->params && r->desc && p < r->desc->num_params; p++)
      donated |= r->results[i] && r->results[i] == r->params[p];
    if (!donated)
      free(r->results[i]);
  }
  for (int i = 0; i < r->n_outfeeds; i++)
    free(r->outfeeds[i].data);
  free(r->outfeeds);
  for (int i = 0; i < r->n_sends; i++)
    free(r->sends[i].a.data);
  free(r->sends);
  free(r->results);
  free(r->ptrs);
  free(r->values);
  free(r->times);
  hlo_status_free(r->status);
}

/* --timeout: a thread that waits for the call to finish or the deadline.  At the deadline it
 * cancels every replica's context (the call returns HLO_CANCELLED at its next while back-edge);
 * a model with no back-edge to stop at gets 1 s more, then hlorun exits with status 1. */
typedef struct watchdog {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t thread;
  bool started, done, fired;
  double timeout_s;
  replica *reps;
  int count;
} watchdog;

static struct timespec deadline_after(double s) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  double whole = floor(s);
  t.tv_sec += (time_t)whole;
  t.tv_nsec += (long)((s - whole) * 1e9);
  if (t.tv_nsec >= 1000000000L) {
    t.tv_sec++;
    t.tv_nsec -= 1000000000L;
  }
  return t;
}

/* Waits on w->cv until done or `s` seconds passed (called with w->mu held). */
static void wait_done(watchdog *w, double s) {
  struct timespec t = deadline_after(s);
  while (!w->done)
    if (pthread_cond_timedwait(&w->cv, &w->mu, &t) == ETIMEDOUT)
      break;
}

static void *watchdog_main(void *arg) {
  watchdog *w = arg;
  pthread_mutex_lock(&w->mu);
  wait_done(w, w->timeout_s);
  if (!w->done) {
    w->fired = true;
    for (int i = 0; i < w->count; i++)
      hlo_context_cancel(w->reps[i].ctx);
    wait_done(w, 1.0);
    if (!w->done) {
      fprintf(stderr, "hlorun: timed out after %g s (--timeout) and the model did not stop at a while-loop "
                      "back-edge within 1 s more; exiting\n", w->timeout_s);
      fflush(stdout);
      _exit(1);
    }
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

static void watchdog_start(watchdog *w, double timeout_s, replica *reps, int count) {
  memset(w, 0, sizeof *w);
  if (timeout_s <= 0)
    return;
  w->timeout_s = timeout_s;
  w->reps = reps;
  w->count = count;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&w->cv, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&w->mu, NULL);
  w->started = pthread_create(&w->thread, NULL, watchdog_main, w) == 0;
}

/* Stops the watchdog; a status the deadline caused says so. */
static hlo_status watchdog_stop(watchdog *w, hlo_status s) {
  if (w->timeout_s <= 0)
    return s;
  pthread_mutex_lock(&w->mu);
  w->done = true;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  if (w->started)
    pthread_join(w->thread, NULL);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
  if (w->fired && hlo_status_code_of(s) == HLO_CANCELLED) {
    hlo_status_free(s);
    s = hlo_status_make(HLO_CANCELLED, "timed out after %g s (--timeout): the model call was cancelled", w->timeout_s);
  }
  return s;
}

/* The replica whose error to report: when one replica fails, the others' collectives and
 * recvs are abandoned ("... abandoned: another replica failed", runtime/src/
 * collectives_threads.c), so the first other error is the cause; -1 when all succeeded. */
static int first_cause(const replica *reps, int count) {
  int first = -1;
  for (int i = 0; i < count; i++) {
    if (!reps[i].status)
      continue;
    if (!strstr(hlo_status_message(reps[i].status), "abandoned: another replica failed"))
      return i;
    if (first < 0)
      first = i;
  }
  return first;
}

/* Runs every replica at once (collectives need them all), each on its own thread. */
static hlo_status run_replicas(replica *reps, int count) {
  if (count == 1) {
    run_replica(&reps[0]);
  } else {
    pthread_t *t = calloc((size_t)count, sizeof *t);
    if (!t)
      return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
    int started = 0;
    for (; started < count; started++)
      if (pthread_create(&t[started], NULL, run_replica, &reps[started]) != 0)
        break;
    for (int i = 0; i < started; i++)
      pthread_join(t[i], NULL);
    free(t);
    if (started < count)
      return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "cannot start a thread for replica %d", started);
  }
  int i = first_cause(reps, count);
  if (i < 0)
    return NULL;
  hlo_status s = reps[i].status;
  reps[i].status = NULL;
  return count > 1 ? hlo_status_annotate(s, "replica %d", i) : s;
}

/* ---- results ------------------------------------------------------------------------------- */

/* Integer and pred elements as exact 64-bit values (sign-extended when signed). */
static void element_as_int(ir_etype et, const unsigned char *p, int64_t *out_s, uint64_t *out_u) {
  uint64_t u = 0;
  int bytes = ir_etype_table[et].storage_bytes;
  memcpy(&u, p, (size_t)bytes);
  int bits = bytes * 8;
  *out_u = u;
  *out_s = ir_etype_is_signed(et) && bits < 64 ? (int64_t)(u << (64 - bits)) >> (64 - bits) : (int64_t)u;
}

/* A float element's position on the number line counted in units in the last place: the
 * magnitude bits, negated for negative values (so +0 and -0 are both 0). */
static bool ordinal(ir_etype et, const unsigned char *p, int64_t *out) {
  uint64_t bits = ir_lit_float_bits(et, p);
  int width = ir_etype_table[et].bits;
  if (et == IR_F8E8M0FNU) { /* no sign bit */
    *out = (int64_t)bits;
    return true;
  }
  if (width < 2 || width > 64)
    return false;
  uint64_t sign = 1ull << (width - 1), mag = bits & (sign - 1);
  if (mag > (uint64_t)INT64_MAX)
    return false;
  *out = bits & sign ? -(int64_t)mag : (int64_t)mag;
  return true;
}

/* Are two finite elements of type et at most n ulps apart? */
static bool within_ulps(ir_etype et, const unsigned char *g, const unsigned char *e, int n) {
  int64_t a, b;
  if (!ordinal(et, g, &a) || !ordinal(et, e, &b))
    return false;
  if ((a < 0) != (b < 0)) /* the distance through zero, without overflow */
    return (uint64_t)(a < 0 ? -a : a) + (uint64_t)(b < 0 ? -b : b) <= (uint64_t)n;
  return (uint64_t)(a > b ? a - b : b - a) <= (uint64_t)n;
}

typedef struct worst {
  int64_t index;  /* -1: no mismatch */
  int64_t count;
  double excess;  /* how far outside the tolerance */
  char got[64], want[64];
  double err;
} worst;

/* One float element (or complex component) of type ct at gp (got) and ep (expected). */
static void consider_float(const run_options *o, ir_etype ct, int64_t i, const unsigned char *gp,
                           const unsigned char *ep, worst *w) {
  double g = ir_lit_decode_float(ct, gp), e = ir_lit_decode_float(ct, ep);
  if ((isnan(g) && isnan(e)) || g == e)
    return;
  double err = fabs(g - e), excess;
  if (isnan(g) || isnan(e) || isinf(g) || isinf(e)) {
    excess = INFINITY;
    err = INFINITY;
  } else {
    excess = err - (o->atol + o->rtol * fabs(e));
    if (excess <= 0)
      return;
    if (o->ulp > 0 && within_ulps(ct, gp, ep, o->ulp))
      return;
  }
  w->count++;
  if (w->index < 0 || excess > w->excess) {
    w->index = i;
    w->excess = excess;
    w->err = err;
    snprintf(w->got, sizeof w->got, "%.9g", g);
    snprintf(w->want, sizeof w->want, "%.9g", e);
  }
}

static void consider_int(ir_etype et, int64_t i, const unsigned char *g, const unsigned char *e, worst *w) {
  int64_t gs, es;
  uint64_t gu, eu;
  element_as_int(et, g, &gs, &gu);
  element_as_int(et, e, &es, &eu);
  if (gu == eu)
    return;
  bool is_signed = ir_etype_is_signed(et);
  double err = is_signed ? fabs((double)gs - (double)es) : fabs((double)gu - (double)eu);
  w->count++;
  if (w->index < 0 || err > w->excess) {
    w->index = i;
    w->excess = err;
    w->err = err;
    if (is_signed) {
      snprintf(w->got, sizeof w->got, "%lld", (long long)gs);
      snprintf(w->want, sizeof w->want, "%lld", (long long)es);
    } else {
      snprintf(w->got, sizeof w->got, "%llu", (unsigned long long)gu);
      snprintf(w->want, sizeof w->want, "%llu", (unsigned long long)eu);
    }
  }
}

static void index_text(const hlo_array_desc *d, int64_t linear, char *buf, size_t cap) {
  int64_t idx[64] = {0};
  for (int k = d->rank - 1; k >= 0 && k < 64; k--) {
    idx[k] = d->dims[k] ? linear % d->dims[k] : 0;
    linear = d->dims[k] ? linear / d->dims[k] : 0;
  }
  size_t w = (size_t)snprintf(buf, cap, "[");
  for (int k = 0; k < d->rank && k < 64 && w < cap; k++)
    w += (size_t)snprintf(buf + w, cap - w, "%s%lld", k ? "," : "", (long long)idx[k]);
  if (w < cap)
    snprintf(buf + w, cap - w, "]");
}

static hlo_status compare(const run_options *o, const char *path, int k, const hlo_array_desc *d, const void *got) {
  npy_array a;
  HLO_RETURN_IF_ERROR(npy_read(path, &a));
  char want[256], have[256];
  desc_text(d, want, sizeof want);
  npy_describe(&a, have, sizeof have);
  if (!inputs_dims_match(&a, d) || !inputs_npy_matches(&a, d->dtype) || a.nbytes != d->byte_size) {
    free(a.data);
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: result %d is %s but the expected array is %s", path, k, want, have);
  }
  ir_etype et = (ir_etype)d->dtype;
  int eb = ir_etype_table[et].storage_bytes;
  int64_t n = eb ? d->byte_size / eb : 0;
  bool is_float = ir_etype_is_float(et) || ir_etype_is_complex(et);
  int parts = ir_etype_is_complex(et) ? 2 : 1;
  worst w = {.index = -1};
  const unsigned char *g = got, *e = a.data;
  for (int64_t i = 0; i < n; i++)
    for (int c = 0; c < parts; c++)
      if (is_float)
        consider_float(o, ir_etype_component(et), i, g + i * eb + c * eb / parts, e + i * eb + c * eb / parts, &w);
      else
        consider_int(et, i, g + i * eb, e + i * eb, &w);
  free(a.data);
  if (w.index < 0)
    return NULL;
  char where[512];
  index_text(d, w.index, where, sizeof where);
  return hlo_status_make(HLO_FAILED_PRECONDITION,
                         "result %d does not match %s: worst element %s got %s expected %s (|error| %.3g; rtol %g atol %g%s; "
                         "%lld of %lld element%s differ)",
                         k, path, where, w.got, w.want, w.err, o->rtol, o->atol, o->ulp ? " or ulp" : "",
                         (long long)w.count, (long long)n, n == 1 ? "" : "s");
}

/* --output-dir and --outfeed-dir are created when missing (one level, like mkdir). */
static hlo_status ensure_dir(const char *dir) {
  struct stat st;
  if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
    return NULL;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return hlo_status_make(HLO_IO, "%s: cannot create the folder: %s", dir, strerror(errno));
  return NULL;
}

static hlo_status write_leaf(const char *path, const hlo_array_desc *d, const void *data) {
  return npy_write(path, ir_etype_table[d->dtype].npy_descr, d->rank, d->dims, data, d->byte_size);
}

/* --output (rK: for replica K, unprefixed for replica 0); replicas without results here (the
 * other ranks' under MPI) are skipped. */
static hlo_status write_outputs(const run_options *o, const hlo_module_desc *desc, replica *reps, int count) {
  for (int r = 0; r < count; r++) {
    if (!reps[r].results)
      continue;
    arg_list out;
    HLO_RETURN_IF_ERROR(args_for_replica(o->outputs, o->n_outputs, r, false, &out));
    hlo_status s = NULL;
    for (int i = 0; i < out.n && i < desc->num_results && !s; i++)
      if (desc->results[i].dtype != IR_TOKEN)
        s = write_leaf(out.items[i], &desc->results[i], reps[r].results[i]);
    free(out.items);
    HLO_RETURN_IF_ERROR(s);
  }
  return NULL;
}

/* --output-dir: replica 0's results. */
static hlo_status write_output_dir(const run_options *o, const hlo_module_desc *desc, const replica *r0) {
  for (int i = 0; i < desc->num_results && o->output_dir; i++) {
    const hlo_array_desc *d = &desc->results[i];
    if (d->dtype == IR_TOKEN)
      continue;
    HLO_RETURN_IF_ERROR(ensure_dir(o->output_dir));
    char path[4200];
    snprintf(path, sizeof path, "%s/out%d.npy", o->output_dir, i);
    HLO_RETURN_IF_ERROR(write_leaf(path, d, r0->results[i]));
  }
  return NULL;
}

/* Results are printed when nothing else was asked for them. */
static bool printing(const run_options *o) {
  return !o->n_outputs && !o->output_dir && !o->n_expected && o->benchmark <= 0;
}

static hlo_status print_results(const hlo_module_desc *desc, replica *reps, int count, FILE *out) {
  for (int r = 0; r < count; r++) {
    if (count > 1)
      fprintf(out, "replica %d:\n", r);
    for (int i = 0; i < desc->num_results; i++)
      HLO_RETURN_IF_ERROR(litio_print(&desc->results[i], reps[r].results[i], out));
  }
  return NULL;
}

static hlo_status emit_results(const run_options *o, const hlo_module_desc *desc, replica *reps, int count,
                               FILE *out) {
  HLO_RETURN_IF_ERROR(write_outputs(o, desc, reps, count));
  HLO_RETURN_IF_ERROR(write_output_dir(o, desc, &reps[0]));
  return printing(o) ? print_results(desc, reps, count, out) : NULL;
}

/* A buffer the model sent (outfeed or host send) as .npy; raw bytes (|u1) without a shape. */
static hlo_status write_sent(const char *path, const outfeed_buf *a) {
  int32_t dt = a->dtype;
  bool shaped = dt >= 0 && dt < IR_ETYPE_COUNT && ir_etype_table[dt].npy_descr[0];
  int64_t raw_dims[1] = {a->nbytes};
  return npy_write(path, shaped ? ir_etype_table[dt].npy_descr : "|u1", shaped ? a->rank : 1,
                   shaped ? a->dims : raw_dims, a->data, a->nbytes);
}

static hlo_status write_outfeeds(const run_options *o, replica *reps, int count) {
  HLO_RETURN_IF_ERROR(ensure_dir(o->outfeed_dir));
  for (int r = 0; r < count; r++)
    for (int i = 0; i < reps[r].n_outfeeds; i++) {
      char path[4200];
      if (r == 0)
        snprintf(path, sizeof path, "%s/outfeed%d.npy", o->outfeed_dir, i);
      else
        snprintf(path, sizeof path, "%s/replica%d_outfeed%d.npy", o->outfeed_dir, r, i);
      HLO_RETURN_IF_ERROR(write_sent(path, &reps[r].outfeeds[i]));
    }
  return NULL;
}

/* --send-dir: send_<channel>_<i>.npy (replica<r>_send_<channel>_<i>.npy for replica r > 0). */
static hlo_status write_sends(const run_options *o, replica *reps, int count) {
  HLO_RETURN_IF_ERROR(ensure_dir(o->send_dir));
  for (int r = 0; r < count; r++)
    for (int i = 0; i < reps[r].n_sends; i++) {
      const send_buf *b = &reps[r].sends[i];
      char path[4200], prefix[32] = "";
      if (r > 0)
        snprintf(prefix, sizeof prefix, "replica%d_", r);
      snprintf(path, sizeof path, "%s/%ssend_%lld_%d.npy", o->send_dir, prefix, (long long)b->channel, b->index);
      HLO_RETURN_IF_ERROR(write_sent(path, &b->a));
    }
  return NULL;
}

static hlo_status print_sent(const outfeed_buf *a, FILE *out) {
  if (a->dtype < 0 || a->dtype >= IR_ETYPE_COUNT) {
    fprintf(out, "(%lld bytes without a shape)\n", (long long)a->nbytes);
    return NULL;
  }
  hlo_array_desc d = {.dtype = a->dtype, .rank = a->rank, .dims = a->dims, .byte_size = (int64_t)a->nbytes};
  return litio_print(&d, a->data, out);
}

/* Without --send-dir: every host send printed after the outfeeds, headed "channel C send I:"
 * (with the replica when there are several). */
static hlo_status print_sends(replica *reps, int count, FILE *out) {
  for (int r = 0; r < count; r++)
    for (int i = 0; i < reps[r].n_sends; i++) {
      const send_buf *b = &reps[r].sends[i];
      if (count > 1)
        fprintf(out, "replica %d ", r);
      fprintf(out, "channel %lld send %d:\n", (long long)b->channel, b->index);
      HLO_RETURN_IF_ERROR(print_sent(&b->a, out));
    }
  return NULL;
}

/* Without --outfeed-dir: every shaped outfeed buffer printed as a literal after the results,
 * headed "outfeed I:" (with the replica when there are several). */
static hlo_status print_outfeeds(replica *reps, int count, FILE *out) {
  for (int r = 0; r < count; r++)
    for (int i = 0; i < reps[r].n_outfeeds; i++) {
      const outfeed_buf *a = &reps[r].outfeeds[i];
      if (count > 1)
        fprintf(out, "replica %d outfeed %d:\n", r, i);
      else
        fprintf(out, "outfeed %d:\n", i);
      HLO_RETURN_IF_ERROR(print_sent(a, out));
    }
  return NULL;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The value of the "KEY: N kB" line of a /proc file, in bytes; -1 when it cannot be read. */
static int64_t proc_kb(const char *path, const char *key) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  char line[256];
  long long kb = -1;
  size_t n = strlen(key);
  while (kb < 0 && fgets(line, sizeof line, f))
    if (strncmp(line, key, n) == 0 && line[n] == ':' && sscanf(line + n + 1, "%lld", &kb) != 1)
      kb = -1;
  fclose(f);
  return kb >= 0 ? (int64_t)kb * 1024 : -1;
}

/* The process's peak resident memory in bytes (VmHWM: the high-water mark of its own memory
 * since exec, unlike getrusage's ru_maxrss, which keeps the forking parent's), -1 if unknown. */
static int64_t peak_rss(void) { return proc_kb("/proc/self/status", "VmHWM"); }

static void print_benchmark(int n, double *t, FILE *out) {
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  double median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
  fprintf(out, "benchmark: iterations=%d min_ms=%.4f median_ms=%.4f max_ms=%.4f\n", n, t[0], median, t[n - 1]);
}

/* ---- the whole run ------------------------------------------------------------------------- */

static int replica_count(const run_options *o, const hlo_module_desc *desc) {
  return o->replicas > 0 ? o->replicas : desc->replica_count > 1 ? desc->replica_count : 1;
}

static int64_t add_sat(int64_t a, int64_t b) { return b > 0 && a > INT64_MAX - b ? INT64_MAX : a + (b > 0 ? b : 0); }

const int32_t *run_result_donors(const run_options *o, const hlo_module_desc *desc, int replicas) {
  if (!o->donate || replicas != 1 ||
      desc->struct_size < offsetof(hlo_module_desc, result_donors) + sizeof desc->result_donors)
    return NULL;
  return desc->result_donors;
}

int64_t run_memory_needed(const hlo_module_desc *desc, int replicas, const int32_t *donors, run_memory *parts) {
  run_memory m = {0};
  for (int i = 0; i < desc->num_params; i++)
    m.params = add_sat(m.params, desc->params[i].byte_size);
  for (int r = 0; r < replicas; r++) { /* each replica: its results and its context's arena */
    for (int i = 0; i < desc->num_results; i++)
      if (!donors || donors[i] < 0)
        m.results = add_sat(m.results, desc->results[i].byte_size);
    if (desc->struct_size >= offsetof(hlo_module_desc, arena_bytes) + sizeof desc->arena_bytes)
      m.arena = add_sat(m.arena, desc->arena_bytes);
  }
  m.total = add_sat(add_sat(m.params, m.results), m.arena);
  if (parts)
    *parts = m;
  return m.total;
}

/* MemAvailable of /proc/meminfo in bytes, or -1 when it cannot be read. */
static int64_t memory_available(void) { return proc_kb("/proc/meminfo", "MemAvailable"); }

static double gb(int64_t bytes) { return (double)bytes / 1e9; }

/* Refused before anything is allocated for the model (no input read or generated): what the
 * model needs (parameters, every replica's results and arena) against --max-memory, or, by
 * default, the memory the machine has available, so that a model too big for the machine
 * stops with a message instead of being killed by the kernel. */
hlo_status run_check_memory(const run_options *o, const hlo_module_desc *desc, int replicas) {
  run_memory m;
  int64_t need = run_memory_needed(desc, replicas, run_result_donors(o, desc, replicas), &m);
  int64_t limit = o->max_memory > 0 ? o->max_memory : memory_available();
  if (limit < 0 || need <= limit)
    return NULL;
  char what[160];
  if (o->max_memory > 0)
    snprintf(what, sizeof what, "more than --max-memory %lld (%.2f GB)", (long long)limit, gb(limit));
  else
    snprintf(what, sizeof what, "more than the %.2f GB this machine has available (MemAvailable; --max-memory "
                                "sets another limit)", gb(limit));
  return hlo_status_make(HLO_RESOURCE_EXHAUSTED,
                         "%s needs %lld bytes (%.2f GB: parameters %.2f GB, results %.2f GB, arena %.2f GB), %s",
                         o->model, (long long)need, gb(need), gb(m.params), gb(m.results), gb(m.arena), what);
}

/* Every custom-call target the model names, resolved in a context of its own before any input
 * is read or generated: a missing target costs no time. */
static hlo_status check_targets(const run_options *o, const hlo_module_desc *desc) {
  if (desc->num_custom_call_targets == 0)
    return NULL;
  hlo_context_options co;
  hlo_context_options_init(&co);
  co.num_threads = 1;
  hlo_context *ctx = NULL;
  HLO_RETURN_IF_ERROR(hlo_context_create(&co, &ctx));
  hlo_status s = NULL;
  for (int i = 0; i < o->n_custom_call_libs && !s; i++)
    s = hlo_custom_call_add_library(ctx, o->custom_call_libs[i]);
  if (!s)
    s = hlo_custom_call_resolve_all(ctx, desc);
  hlo_context_destroy(ctx);
  return s;
}

void run_options_init(run_options *o) {
  memset(o, 0, sizeof *o);
  o->opt_level = 2;
  o->rtol = 1e-5;
  o->atol = 1e-6;
}

static hlo_status run_loaded(const run_options *o, const hlo_module_desc *desc, void ***params, int count,
                             const mlir_checks *checks, FILE *out) {
  call_plan plan = {0};
  feeds infeeds = {0}, recvs = {0};
  replica *reps = calloc((size_t)count, sizeof *reps);
  hlo_status s = reps ? NULL : hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (!s)
    s = plan_call(desc, &plan);
  if (!s)
    s = read_infeeds(o, &infeeds);
  if (!s)
    s = read_recvs(o, &recvs);
  hlo_collective_group *group = NULL;
  if (!s && count > 1)
    s = hlo_collective_group_create(count, &group);
  for (int r = 0; r < count && !s; r++) {
    reps[r] = (replica){.o = o, .desc = desc, .plan = &plan, .infeeds = &infeeds, .recvs = &recvs, .params = params[r],
                       .group = group};
    s = setup_replica(o, desc, r, count, &reps[r]);
  }
  if (!s) {
    watchdog w;
    watchdog_start(&w, o->timeout_s, reps, count);
    s = watchdog_stop(&w, run_replicas(reps, count));
  }
  if (!s && o->benchmark > 0)
    print_benchmark(o->benchmark, reps[0].times, out);
  /* A StableHLO file with checks prints their summary instead of its results. */
  bool print = printing(o) && checks->n == 0;
  if (!s && !(checks->n && printing(o)))
    s = emit_results(o, desc, reps, count, out);
  if (!s && o->outfeed_dir)
    s = write_outfeeds(o, reps, count);
  else if (!s && print)
    s = print_outfeeds(reps, count, out);
  if (!s && o->send_dir)
    s = write_sends(o, reps, count);
  else if (!s && print)
    s = print_sends(reps, count, out);
  for (int i = 0; i < o->n_expected && !s; i++)
    s = compare(o, o->expected[i], i, &desc->results[i], reps[0].results[i]);
  for (int r = 0; !s && checks->n && r < count; r++) { /* every replica's checks; one summary */
    s = checks_evaluate(o->model, checks, desc, reps[r].results, printing(o) && r == count - 1 ? out : NULL, stderr);
    if (s && count > 1)
      s = hlo_status_annotate(s, "replica %d", r);
  }
  for (int r = 0; reps && r < count; r++)
    teardown_replica(&reps[r], desc->num_results);
  free(reps);
  hlo_collective_group_destroy(group);
  free(plan.types);
  free_feeds(&infeeds);
  free_feeds(&recvs);
  return s;
}

static bool has_own_inputs(const run_options *o, int r) {
  const char *rest;
  for (int i = 0; i < o->n_inputs; i++)
    if (replica_prefix(o->inputs[i], &rest) == r)
      return true;
  return false;
}

/* One parameter set per replica with rK: inputs, and sets[count] shared by the others;
 * params[r] is replica r's. */
static hlo_status read_all_inputs(const run_options *o, const hlo_module_desc *desc, const input_list *inputs,
                                  int count, param_set *sets, void ***params) {
  bool need_shared = false;
  for (int r = 0; r < count; r++)
    need_shared |= !has_own_inputs(o, r);
  for (int r = 0; r <= count; r++) {
    if (r < count ? !has_own_inputs(o, r) : !need_shared)
      continue;
    hlo_status s = read_inputs(o, desc, inputs, r < count ? r : -1, count, &sets[r]);
    if (s)
      return r < count && count > 1 ? hlo_status_annotate(s, "replica %d", r) : s;
  }
  for (int r = 0; r < count; r++)
    params[r] = sets[r].params ? sets[r].params : sets[count].params;
  return NULL;
}

static void free_all_inputs(const hlo_module_desc *desc, int count, param_set *sets) {
  for (int r = 0; sets && r <= count; r++)
    param_set_free(&sets[r], desc->num_params);
  free(sets);
}

static hlo_status run_model_mpi(const run_options *o, FILE *out);

hlo_status run_model(const run_options *o, FILE *out) {
  if (run_mpi_wanted(o))
    return run_model_mpi(o, out);
  model m;
  HLO_RETURN_IF_ERROR(load_model(o, &m));
  const hlo_module_desc *desc = m.desc;
  int count = replica_count(o, desc);
  param_set *sets = NULL;
  void ***params = NULL;
  input_list inputs = {0};
  hlo_status s = NULL;
  if (count > MAX_REPLICAS)
    s = hlo_status_make(HLO_INVALID_ARGUMENT, "--replicas %d: at most %d", count, MAX_REPLICAS);
  if (!s && (!(sets = calloc((size_t)count + 1, sizeof *sets)) || !(params = calloc((size_t)count, sizeof *params))))
    s = hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (!s)
    s = inputs_expand(o->inputs, o->n_inputs, &inputs);
  if (!s)
    s = check_counts(o, desc, &inputs, count);
  if (!s)
    s = run_check_memory(o, desc, count);
  if (!s)
    s = check_targets(o, desc);
  if (!s)
    s = read_all_inputs(o, desc, &inputs, count, sets, params);
  mlir_checks checks = {0};
  if (!s && !ends_with(o->model, ".so"))
    s = checks_read(o->model, &checks);
  if (!s)
    s = run_loaded(o, desc, params, count, &checks, out);
  mlir_checks_free(&checks);
  if (o->verbose)
    fprintf(stderr, "hlorun: peak RSS %lld bytes (VmHWM); arena %lld bytes per replica\n", (long long)peak_rss(),
            (long long)desc->arena_bytes);
  free_all_inputs(desc, count, sets);
  free(params);
  inputs_free(&inputs);
  if (s) { /* the status may be the model's own static record: copy it before unloading */
    hlo_status copy = hlo_status_make(hlo_status_code_of(s), "%s", hlo_status_message(s));
    hlo_status_free(s);
    s = copy;
  }
  dlclose(m.handle);
  return s;
}

/* ---- multi-process mode: one replica per MPI rank (docs/distributed.md) -------------------- */

/* Agreement steps let every rank stop together, with the same message, when one rank cannot
 * go on before or after the run; a rank whose run fails stops them all with MPI_Abort (the
 * others may be waiting in a collective it will never reach). */
typedef struct mpi_run {
  const run_options *o;
  const mpi_api *api;
  hlo_collective_group *group;
  int32_t rank, size;
  model m;
  const hlo_module_desc *desc;
  input_list inputs;
  param_set params;
  call_plan plan;
  feeds infeeds, recvs;
  replica *reps; /* size entries; only reps[rank] runs here */
  void **gathered;
} mpi_run;

enum { AGREE_MSG = 1016 };
typedef struct agree_rec {
  int32_t code, pad;
  char msg[AGREE_MSG];
} agree_rec;

/* Every rank gives its status (consumed); every rank gets the lowest failing rank's. */
static hlo_status mpi_agree(const mpi_run *r, hlo_status mine) {
  agree_rec rec = {.code = (int32_t)hlo_status_code_of(mine)};
  if (mine)
    snprintf(rec.msg, sizeof rec.msg, "%s", hlo_status_message(mine));
  hlo_status_free(mine);
  agree_rec *all = calloc((size_t)r->size, sizeof *all);
  if (!all)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  hlo_status s = r->api->allgather(r->group, &rec, (int64_t)sizeof rec, all);
  for (int32_t k = 0; k < r->size && !s; k++)
    if (all[k].code != HLO_OK)
      s = hlo_status_make((hlo_status_code)all[k].code, "rank %d of %d: %s", k, r->size, all[k].msg);
  free(all);
  return s;
}

/* This rank's inputs, plan, infeeds and context (replica id = rank). */
static hlo_status mpi_prepare(mpi_run *r) {
  const run_options *o = r->o;
  const hlo_module_desc *desc = r->desc;
  if (o->replicas > 0 && o->replicas != r->size)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "--replicas %d, but mpirun started %d ranks (one replica per rank)",
                           o->replicas, r->size);
  if (r->rank == 0 && o->replicas <= 0 && desc->replica_count > 1 && desc->replica_count != r->size)
    fprintf(stderr, "%s: note: the module says replica_count=%d; %d rank%s run%s it, one replica each\n", o->model,
            (int)desc->replica_count, r->size, r->size == 1 ? "" : "s", r->size == 1 ? "s" : "");
  HLO_RETURN_IF_ERROR(inputs_expand(o->inputs, o->n_inputs, &r->inputs));
  HLO_RETURN_IF_ERROR(check_counts(o, desc, &r->inputs, r->size));
  HLO_RETURN_IF_ERROR(run_check_memory(o, desc, 1)); /* this rank's replica */
  r->reps = calloc((size_t)r->size, sizeof *r->reps);
  r->gathered = calloc((size_t)desc->num_results + 1, sizeof *r->gathered);
  if (!r->reps || !r->gathered)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  HLO_RETURN_IF_ERROR(read_inputs(o, desc, &r->inputs, r->rank, r->size, &r->params));
  HLO_RETURN_IF_ERROR(plan_call(desc, &r->plan));
  HLO_RETURN_IF_ERROR(read_infeeds(o, &r->infeeds));
  HLO_RETURN_IF_ERROR(read_recvs(o, &r->recvs));
  replica *me = &r->reps[r->rank];
  *me = (replica){.o = o, .desc = desc, .plan = &r->plan, .infeeds = &r->infeeds, .recvs = &r->recvs,
                  .params = r->params.params, .group = r->size > 1 ? r->group : NULL};
  return setup_replica(o, desc, r->rank, r->size, me);
}

/* Printing: every rank's results gathered, so that rank 0 prints what --replicas N prints. */
static hlo_status mpi_gather_results(mpi_run *r, replica *view) {
  const hlo_module_desc *desc = r->desc;
  int nr = desc->num_results;
  for (int32_t k = 0; k < r->size; k++)
    if (!(view[k].results = calloc((size_t)nr + 1, sizeof *view[k].results)))
      return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (int i = 0; i < nr; i++) {
    int64_t b = desc->results[i].byte_size;
    if (desc->results[i].dtype == IR_TOKEN || b <= 0)
      continue;
    if (!(r->gathered[i] = aligned_alloc(64, ((size_t)b * (size_t)r->size + 63) & ~(size_t)63)))
      return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory gathering result %d", i);
    HLO_RETURN_IF_ERROR(r->api->allgather(r->group, r->reps[r->rank].results[i], b, r->gathered[i]));
    for (int32_t k = 0; k < r->size; k++)
      view[k].results[i] = (unsigned char *)r->gathered[i] + (size_t)k * (size_t)b;
  }
  return NULL;
}

/* What a rank's run sent (outfeeds, host sends), packed so that rank 0 can print every rank's:
 * per buffer a record, then its bytes rounded up to 8. */
typedef struct sent_rec {
  int64_t is_send, channel, index, nbytes;
  int32_t dtype, rank;
  int64_t dims[64];
} sent_rec;

static size_t pad8(int64_t n) { return ((size_t)(n > 0 ? n : 0) + 7) & ~(size_t)7; }

static void pack_one(unsigned char *p, size_t *off, int64_t is_send, int64_t channel, int64_t index,
                     const outfeed_buf *a) {
  sent_rec rec = {is_send, channel, index, a->nbytes, a->dtype, a->rank, {0}};
  if (a->rank > 0 && a->rank <= 64)
    memcpy(rec.dims, a->dims, (size_t)a->rank * sizeof *rec.dims);
  if (p) {
    memcpy(p + *off, &rec, sizeof rec);
    if (a->nbytes > 0)
      memcpy(p + *off + sizeof rec, a->data, (size_t)a->nbytes);
  }
  *off += sizeof rec + pad8(a->nbytes);
}

/* Packs into p (NULL: only measures); the bytes. */
static size_t pack_sent(const replica *me, unsigned char *p) {
  size_t off = 0;
  for (int i = 0; i < me->n_outfeeds; i++)
    pack_one(p, &off, 0, 0, i, &me->outfeeds[i]);
  for (int i = 0; i < me->n_sends; i++)
    pack_one(p, &off, 1, me->sends[i].channel, me->sends[i].index, &me->sends[i].a);
  return off;
}

/* view's outfeeds and sends, their data pointing into blob (the arrays are view's to free). */
static hlo_status unpack_sent(unsigned char *blob, size_t bytes, replica *view) {
  int n_out = 0, n_send = 0;
  for (size_t off = 0; off + sizeof(sent_rec) <= bytes;) {
    sent_rec rec;
    memcpy(&rec, blob + off, sizeof rec);
    rec.is_send ? n_send++ : n_out++;
    off += sizeof rec + pad8(rec.nbytes);
  }
  view->outfeeds = calloc((size_t)n_out + 1, sizeof *view->outfeeds);
  view->sends = calloc((size_t)n_send + 1, sizeof *view->sends);
  if (!view->outfeeds || !view->sends)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (size_t off = 0; off + sizeof(sent_rec) <= bytes;) {
    sent_rec rec;
    memcpy(&rec, blob + off, sizeof rec);
    outfeed_buf a = {.data = blob + off + sizeof rec, .nbytes = rec.nbytes, .dtype = rec.dtype, .rank = rec.rank};
    memcpy(a.dims, rec.dims, sizeof a.dims);
    if (rec.is_send)
      view->sends[view->n_sends++] = (send_buf){.channel = rec.channel, .index = (int)rec.index, .a = a};
    else
      view->outfeeds[view->n_outfeeds++] = a;
    off += sizeof rec + pad8(rec.nbytes);
  }
  return NULL;
}

/* Every rank's outfeeds and host sends into view (for rank 0 to print); *blobs to free. */
static hlo_status mpi_gather_sent(mpi_run *r, replica *view, unsigned char **blobs) {
  const replica *me = &r->reps[r->rank];
  int64_t mine = (int64_t)pack_sent(me, NULL), most = 0;
  int64_t *sizes = calloc((size_t)r->size, sizeof *sizes);
  hlo_status s = sizes ? r->api->allgather(r->group, &mine, sizeof mine, sizes)
                       : hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  for (int32_t k = 0; !s && k < r->size; k++)
    most = sizes[k] > most ? sizes[k] : most;
  unsigned char *own = s ? NULL : calloc((size_t)most + 8, 1);
  *blobs = s ? NULL : calloc((size_t)most * (size_t)r->size + 8, 1);
  if (!s && (!own || !*blobs))
    s = hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory gathering what the ranks sent");
  if (!s && most > 0) {
    pack_sent(me, own);
    s = r->api->allgather(r->group, own, most, *blobs);
  }
  for (int32_t k = 0; !s && k < r->size; k++)
    s = unpack_sent(*blobs + (size_t)k * (size_t)most, (size_t)sizes[k], &view[k]);
  free(own);
  free(sizes);
  return s;
}

/* Rank 0 prints every rank's outfeeds and host sends, as the threaded mode does. */
static hlo_status mpi_print_sent(mpi_run *r, FILE *out) {
  const run_options *o = r->o;
  replica *view = calloc((size_t)r->size, sizeof *view);
  unsigned char *blobs = NULL;
  hlo_status s = view ? mpi_gather_sent(r, view, &blobs) : hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (!s && r->rank == 0 && !o->outfeed_dir)
    s = print_outfeeds(view, r->size, out);
  if (!s && r->rank == 0 && !o->send_dir)
    s = print_sends(view, r->size, out);
  for (int32_t k = 0; view && k < r->size; k++) {
    free(view[k].outfeeds);
    free(view[k].sends);
  }
  free(view);
  free(blobs);
  return s;
}

/* Results: rK: outputs by rank K, --output-dir, --expected and the benchmark line by rank 0;
 * printed results, outfeeds and host sends gathered to rank 0, which prints them as
 * --replicas N does; --outfeed-dir and --send-dir get every rank's files. */
static hlo_status mpi_emit(mpi_run *r, FILE *out) {
  const run_options *o = r->o;
  replica *me = &r->reps[r->rank];
  HLO_RETURN_IF_ERROR(write_outputs(o, r->desc, r->reps, r->size));
  if (o->outfeed_dir)
    HLO_RETURN_IF_ERROR(write_outfeeds(o, r->reps, r->size));
  if (o->send_dir)
    HLO_RETURN_IF_ERROR(write_sends(o, r->reps, r->size));
  if (printing(o)) {
    replica *view = calloc((size_t)r->size, sizeof *view);
    hlo_status s = view ? mpi_gather_results(r, view) : hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
    if (!s && r->rank == 0)
      s = print_results(r->desc, view, r->size, out);
    for (int32_t k = 0; view && k < r->size; k++)
      free(view[k].results);
    free(view);
    HLO_RETURN_IF_ERROR(s);
    if (!o->outfeed_dir || !o->send_dir)
      HLO_RETURN_IF_ERROR(mpi_print_sent(r, out));
  }
  if (r->rank != 0)
    return NULL;
  if (o->benchmark > 0)
    print_benchmark(o->benchmark, me->times, out);
  HLO_RETURN_IF_ERROR(write_output_dir(o, r->desc, me));
  for (int i = 0; i < o->n_expected; i++)
    HLO_RETURN_IF_ERROR(compare(o, o->expected[i], i, &r->desc->results[i], me->results[i]));
  return NULL;
}

/* The run: a failure stops every rank (MPI_Abort) after saying which rank failed and why. */
static void mpi_execute(mpi_run *r) {
  replica *me = &r->reps[r->rank];
  watchdog w;
  watchdog_start(&w, r->o->timeout_s, me, 1);
  hlo_status s = watchdog_stop(&w, run_replicas(me, 1));
  if (!s)
    return;
  fprintf(stderr, "hlorun: rank %d of %d failed, stopping every rank: %s\n", r->rank, r->size, hlo_status_message(s));
  fflush(stdout);
  fflush(stderr);
  r->api->abort(1);
  _exit(1); /* MPI_Abort does not return */
}

static void mpi_cleanup(mpi_run *r) {
  if (r->reps)
    teardown_replica(&r->reps[r->rank], r->desc->num_results);
  free(r->reps);
  param_set_free(&r->params, r->desc->num_params);
  inputs_free(&r->inputs);
  for (int i = 0; r->gathered && i < r->desc->num_results; i++)
    free(r->gathered[i]);
  free(r->gathered);
  free(r->plan.types);
  free_feeds(&r->infeeds);
  free_feeds(&r->recvs);
}

static hlo_status run_model_mpi(const run_options *o, FILE *out) {
  mpi_api api;
  HLO_RETURN_IF_ERROR(run_mpi_load(&api));
  mpi_run r = {.o = o, .api = &api};
  /* Before MPI starts: a cache miss forks hloc, which some MPI transports object to. */
  hlo_status loading = load_model(o, &r.m);
  bool loaded = r.m.handle != NULL;
  hlo_status s = api.init(&r.rank, &r.size);
  if (!s)
    s = run_mpi_group_create(&api, o, &r.group);
  if (s) {
    hlo_status_free(loading);
    if (loaded)
      dlclose(r.m.handle);
    api.finalize();
    return r.size ? hlo_status_annotate(s, "rank %d of %d", r.rank, r.size) : s;
  }
  s = mpi_agree(&r, loading);
  r.desc = r.m.desc;
  if (!s)
    s = mpi_agree(&r, mpi_prepare(&r));
  if (!s)
    mpi_execute(&r);
  if (!s)
    s = mpi_agree(&r, mpi_emit(&r, out));
  if (loaded) {
    mpi_cleanup(&r);
    if (s) { /* the status may be the model's own static record: copy it before unloading */
      hlo_status copy = hlo_status_make(hlo_status_code_of(s), "%s", hlo_status_message(s));
      hlo_status_free(s);
      s = copy;
    }
    dlclose(r.m.handle);
  }
  hlo_collective_group_destroy(r.group);
  fflush(out);
  api.finalize();
  return s;
}
