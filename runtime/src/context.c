/* context.c — hlo_context (hlo/runtime.h): options, the infeed/outfeed queues (mutex
 * protected FIFOs of copied buffers) and the custom-call registry.  Thread-compatible for
 * model calls; the queues are thread-safe.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hlo/runtime.h"

#define HLO_PUBLIC __attribute__((visibility("default")))

typedef struct feed_item {
  struct feed_item *next;
  size_t n;
  unsigned char data[];
} feed_item;

typedef struct feed_queue {
  feed_item *head, *tail;
  size_t count;
} feed_queue;

typedef struct custom_target {
  char *name;
  void *fn;
} custom_target;

struct hlo_context {
  hlo_context_options opts;
  pthread_mutex_t mu;
  feed_queue infeed, outfeed;
  custom_target *targets;
  int n_targets;
  void **libs;
  int n_libs;
};

HLO_PUBLIC void hlo_context_options_init(hlo_context_options *o) {
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->num_replicas = 1;
}

HLO_PUBLIC hlo_status hlo_context_create(const hlo_context_options *opts, hlo_context **out_ctx) {
  *out_ctx = NULL;
  hlo_context *c = calloc(1, sizeof *c);
  if (!c)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory creating a context");
  if (opts)
    memcpy(&c->opts, opts, opts->struct_size && opts->struct_size < sizeof c->opts ? opts->struct_size : sizeof c->opts);
  else
    hlo_context_options_init(&c->opts);
  if (c->opts.num_threads <= 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    c->opts.num_threads = n > 0 ? (int32_t)n : 1;
  }
  pthread_mutex_init(&c->mu, NULL);
  *out_ctx = c;
  return NULL;
}

static void drain(feed_queue *q) {
  for (feed_item *it = q->head; it;) {
    feed_item *next = it->next;
    free(it);
    it = next;
  }
  q->head = q->tail = NULL;
  q->count = 0;
}

HLO_PUBLIC void hlo_context_destroy(hlo_context *c) {
  if (!c)
    return;
  drain(&c->infeed);
  drain(&c->outfeed);
  for (int i = 0; i < c->n_targets; i++)
    free(c->targets[i].name);
  free(c->targets);
  for (int i = 0; i < c->n_libs; i++)
    dlclose(c->libs[i]);
  free(c->libs);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

static hlo_status push(hlo_context *c, feed_queue *q, const void *data, size_t n) {
  feed_item *it = malloc(sizeof *it + n);
  if (!it)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory queueing %zu bytes", n);
  it->next = NULL;
  it->n = n;
  if (n)
    memcpy(it->data, data, n);
  pthread_mutex_lock(&c->mu);
  if (q->tail)
    q->tail->next = it;
  else
    q->head = it;
  q->tail = it;
  q->count++;
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

HLO_PUBLIC hlo_status hlo_infeed_push(hlo_context *c, const void *data, size_t nbytes) {
  return push(c, &c->infeed, data, nbytes);
}

HLO_PUBLIC hlo_status hlo_outfeed_pop(hlo_context *c, void **out_data, size_t *out_nbytes) {
  pthread_mutex_lock(&c->mu);
  feed_item *it = c->outfeed.head;
  if (it) {
    c->outfeed.head = it->next;
    if (!c->outfeed.head)
      c->outfeed.tail = NULL;
    c->outfeed.count--;
  }
  pthread_mutex_unlock(&c->mu);
  if (!it)
    return hlo_status_make(HLO_FAILED_PRECONDITION, "the outfeed queue is empty");
  void *data = malloc(it->n ? it->n : 1);
  if (!data) {
    free(it);
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  memcpy(data, it->data, it->n);
  *out_data = data;
  *out_nbytes = it->n;
  free(it);
  return NULL;
}

HLO_PUBLIC size_t hlo_outfeed_count(hlo_context *c) {
  pthread_mutex_lock(&c->mu);
  size_t n = c->outfeed.count;
  pthread_mutex_unlock(&c->mu);
  return n;
}

HLO_PUBLIC hlo_status hlo_custom_call_register(hlo_context *c, const char *target, void *fn) {
  custom_target *t = realloc(c->targets, (size_t)(c->n_targets + 1) * sizeof *t);
  if (!t)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  c->targets = t;
  t[c->n_targets].name = strdup(target);
  t[c->n_targets].fn = fn;
  if (!t[c->n_targets].name)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  c->n_targets++;
  return NULL;
}

HLO_PUBLIC hlo_status hlo_custom_call_add_library(hlo_context *c, const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return hlo_status_make(HLO_NOT_FOUND, "%s: cannot load custom-call library: %s", path, dlerror());
  void **libs = realloc(c->libs, (size_t)(c->n_libs + 1) * sizeof *libs);
  if (!libs) {
    dlclose(h);
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  c->libs = libs;
  c->libs[c->n_libs++] = h;
  return NULL;
}
