/* collectives_mpi.c — the collective backend over MPI (libhlort_mpi.so, hlo/runtime_mpi.h):
 * one replica per process, replica id = rank in the group's communicator.  An exchange packs
 * this rank's leaves (each rounded up to 64 bytes, so that every view stays aligned) into a
 * send buffer and gathers them with one MPI_Iallgather into a scratch buffer the views point
 * into; collectives.c then computes the result, in group order, exactly as with threads.  The
 * gather spans the whole communicator, or, for a collective with replica groups that partition
 * the ranks, only this rank's group, on a communicator split once per partition and cached
 * (docs/distributed.md).  With a timeout the request is polled, so that the timeout and the
 * abort flag are honoured (without one, MPI_Wait); release has nothing to wait for (the data
 * was copied).  Send/recv channels are MPI_Isend/MPI_Irecv pairs (p2p_header below).  Also the
 * runner's MPI steps: init, an untimed allgather, abort, finalize.
 * Tests: tests/mpi.cmake (the runtime's multi-replica cases under mpirun, the training step).
 */
#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collectives_internal.h"
#include "hlo/runtime_mpi.h"

#define HLO_PUBLIC __attribute__((visibility("default")))

enum { ALIGN = 64 };

/* A communicator per replica-group partition, made when a collective first uses it: key is
 * the description's {n_groups, group_size, members...}, comm this rank's group in it (rank in
 * it = position in the group). */
typedef struct sub_comm {
  int64_t *key;
  size_t key_len;
  MPI_Comm comm;
} sub_comm;

/* Point to point: every message is a header (its byte count and shape text) and then its
 * bytes, both with tag = channel id, so MPI's matching by (source, tag) in posting order is the
 * runtime's rule.  A send copies both and is complete for the model at once (a send never waits
 * for its receiver); the backend keeps the MPI request until it completes. */
enum { SHAPE_TEXT = 248 };
typedef struct p2p_header {
  int64_t bytes;
  char shape[SHAPE_TEXT];
} p2p_header;

typedef struct p2p_send {
  struct p2p_send *next;
  MPI_Request req[2];
  p2p_header header;
  unsigned char data[];
} p2p_send;

typedef struct p2p_recv {
  MPI_Request req[2];
  int32_t from;
  int64_t bytes;
  char shape[SHAPE_TEXT];
  p2p_header header; /* what arrived */
} p2p_recv;

typedef struct coll_mpi {
  MPI_Comm comm;
  int rank, size;
  int tag_ub;                  /* the largest channel id MPI can carry as a tag */
  p2p_send *sends;             /* sent, not yet known to be complete */
  sub_comm *subs;
  size_t n_subs;
  double timeout_s;
  atomic_int aborted;
  MPI_Datatype unit;           /* ALIGN contiguous bytes */
  unsigned char *send, *recv;
  size_t send_cap, recv_cap;   /* bytes */
  const void **views;
  size_t views_cap;            /* entries */
} coll_mpi;

static hlo_status mpi_error(int rc, const char *what) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
    len = 0;
  text[len] = 0;
  return hlo_status_make(HLO_INTERNAL, "%s failed: %s", what, len ? text : "an MPI error");
}

static size_t round_up(int64_t bytes) { return ((size_t)(bytes > 0 ? bytes : 0) + ALIGN - 1) & ~(size_t)(ALIGN - 1); }

/* Makes *buf hold at least `need` bytes (64-byte aligned; the contents are not kept). */
static hlo_status reserve(unsigned char **buf, size_t *cap, size_t need) {
  if (need <= *cap)
    return NULL;
  unsigned char *p = aligned_alloc(ALIGN, need);
  if (!p)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory for a %zu-byte MPI exchange buffer", need);
  free(*buf);
  *buf = p;
  *cap = need;
  return NULL;
}

/* Polling: for the first 10 ms of a wait the core is only yielded between polls (MPI's
 * non-blocking collectives progress when polled), later waits sleep 50 us between polls. */
static void pause_poll(double waited_s) {
  if (waited_s < 0.01) {
    sched_yield();
    return;
  }
  struct timespec ts = {0, 50000};
  nanosleep(&ts, NULL);
}

/* Waits for *req: MPI_Wait without a timeout, else polled until timeout_s or an abort. */
static hlo_status wait_request(coll_mpi *m, MPI_Request *req, double timeout_s, const char *what) {
  if (timeout_s <= 0) {
    int rc = MPI_Wait(req, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? NULL : mpi_error(rc, what);
  }
  double start = MPI_Wtime();
  for (;;) {
    int done = 0;
    int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
      return mpi_error(rc, what);
    if (done)
      return NULL;
    if (atomic_load(&m->aborted))
      return hlo_status_make(HLO_FAILED_PRECONDITION, "collective abandoned: this rank's run failed");
    double waited = MPI_Wtime() - start;
    if (waited > timeout_s)
      return hlo_status_make(HLO_CANCELLED,
                             "waited more than %g s for the other ranks in a collective "
                             "(--collective-timeout): a rank stopped or is far behind",
                             timeout_s);
    pause_poll(waited);
  }
}

/* Gathers `units` ALIGN-byte units from every rank of comm: recv[r * units ...] = rank r's. */
static hlo_status gather_units(coll_mpi *m, MPI_Comm comm, const void *send, size_t units, void *recv,
                               double timeout_s, const char *what) {
  if (units > INT_MAX)
    return hlo_status_make(HLO_UNIMPLEMENTED, "%s: %zu bytes from one rank, more than MPI counts (%lld)", what,
                           units * ALIGN, (long long)INT_MAX * ALIGN);
  MPI_Request req;
  int rc = MPI_Iallgather(send, (int)units, m->unit, recv, (int)units, m->unit, comm, &req);
  if (rc != MPI_SUCCESS)
    return mpi_error(rc, what);
  return wait_request(m, &req, timeout_s, what);
}

/* Packs this rank's leaves into m->send; *slot = the bytes one rank contributes. */
static hlo_status pack(coll_mpi *m, int32_t n, const void *const *leaves, const int64_t *bytes, int members,
                       size_t *slot) {
  if (atomic_load(&m->aborted))
    return hlo_status_make(HLO_FAILED_PRECONDITION, "collective abandoned: this rank's run failed");
  size_t total = 0;
  for (int32_t i = 0; i < n; i++)
    total += round_up(bytes[i]);
  if (total == 0)
    total = ALIGN; /* every rank still meets the others */
  HLO_RETURN_IF_ERROR(reserve(&m->send, &m->send_cap, total));
  HLO_RETURN_IF_ERROR(reserve(&m->recv, &m->recv_cap, total * (size_t)members));
  size_t need_views = (size_t)m->size * (size_t)(n > 0 ? n : 1);
  if (need_views > m->views_cap) {
    const void **v = realloc(m->views, need_views * sizeof *v);
    if (!v)
      return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory in a collective");
    m->views = v;
    m->views_cap = need_views;
  }
  size_t off = 0;
  for (int32_t i = 0; i < n; i++) {
    if (bytes[i] > 0)
      memcpy(m->send + off, leaves[i], (size_t)bytes[i]);
    off += round_up(bytes[i]);
  }
  *slot = total;
  return NULL;
}

/* Points replica replica_of(k)'s views at the k-th slot of m->recv. */
static void set_views(coll_mpi *m, int32_t n, const int64_t *bytes, size_t slot, int members,
                      const int64_t *ids) {
  for (int k = 0; k < members; k++) {
    size_t off = 0, r = ids ? (size_t)ids[k] : (size_t)k;
    for (int32_t i = 0; i < n; i++) {
      m->views[r * (size_t)n + (size_t)i] = m->recv + (size_t)k * slot + off;
      off += round_up(bytes[i]);
    }
  }
}

static hlo_status mpi_exchange(void *impl, int32_t replica, int32_t n, const void *const *leaves,
                               const int64_t *bytes, const void *const **out_all) {
  (void)replica; /* = m->rank */
  coll_mpi *m = impl;
  size_t slot;
  HLO_RETURN_IF_ERROR(pack(m, n, leaves, bytes, m->size, &slot));
  HLO_RETURN_IF_ERROR(gather_units(m, m->comm, m->send, slot / ALIGN, m->recv, m->timeout_s, "MPI_Iallgather"));
  set_views(m, n, bytes, slot, m->size, NULL);
  *out_all = m->views;
  return NULL;
}

/* The communicator of this rank's group in the partition `groups` (made and cached at its
 * first use: every rank meets the same collectives in the same order, so every rank makes it
 * at the same collective, as MPI_Comm_split needs); *members, *ids: the group. */
static hlo_status group_comm(coll_mpi *m, const int64_t *groups, MPI_Comm *out, int *members, const int64_t **ids) {
  int64_t n_groups = groups[0], size = groups[1];
  size_t key_len = 2 + (size_t)(n_groups * size);
  int64_t color = -1, key = 0;
  for (int64_t gi = 0; gi < n_groups && color < 0; gi++)
    for (int64_t k = 0; k < size; k++)
      if (groups[2 + gi * size + k] == m->rank) {
        color = gi;
        key = k;
        *ids = groups + 2 + gi * size;
        break;
      }
  if (color < 0 || size > INT_MAX)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "rank %d is in none of the replica groups", m->rank);
  *members = (int)size;
  for (size_t i = 0; i < m->n_subs; i++)
    if (m->subs[i].key_len == key_len && memcmp(m->subs[i].key, groups, key_len * sizeof *groups) == 0) {
      *out = m->subs[i].comm;
      return NULL;
    }
  sub_comm *grown = realloc(m->subs, (m->n_subs + 1) * sizeof *grown);
  int64_t *copy = malloc(key_len * sizeof *copy);
  if (grown)
    m->subs = grown;
  if (!grown || !copy) {
    free(copy);
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory for a replica group's communicator");
  }
  memcpy(copy, groups, key_len * sizeof *copy);
  MPI_Comm comm;
  int rc = MPI_Comm_split(m->comm, (int)color, (int)key, &comm);
  if (rc != MPI_SUCCESS) {
    free(copy);
    return mpi_error(rc, "MPI_Comm_split");
  }
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  m->subs[m->n_subs++] = (sub_comm){copy, key_len, comm};
  *out = comm;
  return NULL;
}

static hlo_status mpi_exchange_in_group(void *impl, int32_t replica, const int64_t *groups, int32_t n,
                                        const void *const *leaves, const int64_t *bytes,
                                        const void *const **out_all) {
  coll_mpi *m = impl;
  MPI_Comm comm = MPI_COMM_NULL;
  int members = 0;
  const int64_t *ids = NULL;
  if (groups[0] * groups[1] != m->size) /* not a partition of every rank: gather from all */
    return mpi_exchange(impl, replica, n, leaves, bytes, out_all);
  HLO_RETURN_IF_ERROR(group_comm(m, groups, &comm, &members, &ids));
  size_t slot;
  HLO_RETURN_IF_ERROR(pack(m, n, leaves, bytes, members, &slot));
  HLO_RETURN_IF_ERROR(gather_units(m, comm, m->send, slot / ALIGN, m->recv, m->timeout_s, "MPI_Iallgather"));
  set_views(m, n, bytes, slot, members, ids);
  *out_all = m->views;
  return NULL;
}

static hlo_status mpi_release(void *impl, int32_t replica) {
  (void)impl;
  (void)replica;
  return NULL; /* the views are this rank's own copy, reused by the next exchange */
}

/* ---- point to point ------------------------------------------------------------------------ */

/* Frees the sends MPI has completed. */
static void sweep_sends(coll_mpi *m) {
  for (p2p_send **p = &m->sends; *p;) {
    int done = 0;
    MPI_Testall(2, (*p)->req, &done, MPI_STATUSES_IGNORE);
    if (!done) {
      p = &(*p)->next;
      continue;
    }
    p2p_send *d = *p;
    *p = d->next;
    free(d);
  }
}

static hlo_status check_tag(const coll_mpi *m, int64_t tag, int32_t peer) {
  if (tag < 0 || tag > m->tag_ub)
    return hlo_status_make(HLO_UNIMPLEMENTED, "channel id %lld is beyond the largest MPI tag (%d)", (long long)tag,
                           m->tag_ub);
  if (peer < 0 || peer >= m->size)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "replica %d is not a rank of %d", peer, m->size);
  return NULL;
}

static hlo_status mpi_send_start(void *impl, int32_t from, int32_t to, int64_t tag, const void *data, int64_t bytes,
                                 const char *shape, void **handle) {
  (void)from; /* = m->rank */
  coll_mpi *m = impl;
  *handle = NULL;
  HLO_RETURN_IF_ERROR(check_tag(m, tag, to));
  if (bytes < 0 || bytes > INT_MAX)
    return hlo_status_make(HLO_UNIMPLEMENTED, "a send of %lld bytes, more than one MPI message carries",
                           (long long)bytes);
  sweep_sends(m);
  p2p_send *d = malloc(sizeof *d + (size_t)bytes);
  if (!d)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory sending %lld bytes", (long long)bytes);
  memset(&d->header, 0, sizeof d->header);
  d->header.bytes = bytes;
  snprintf(d->header.shape, sizeof d->header.shape, "%s", shape);
  if (bytes > 0)
    memcpy(d->data, data, (size_t)bytes);
  int rc = MPI_Isend(&d->header, (int)sizeof d->header, MPI_BYTE, to, (int)tag, m->comm, &d->req[0]);
  if (rc == MPI_SUCCESS)
    rc = MPI_Isend(d->data, (int)bytes, MPI_BYTE, to, (int)tag, m->comm, &d->req[1]);
  if (rc != MPI_SUCCESS) {
    free(d); /* MPI_ERRORS_RETURN: a failed Isend started nothing worth keeping */
    return mpi_error(rc, "MPI_Isend");
  }
  d->next = m->sends;
  m->sends = d;
  return NULL;
}

static hlo_status mpi_recv_start(void *impl, int32_t to, int32_t from, int64_t tag, void *dst, int64_t bytes,
                                 const char *shape, void **handle) {
  (void)to; /* = m->rank */
  coll_mpi *m = impl;
  *handle = NULL;
  HLO_RETURN_IF_ERROR(check_tag(m, tag, from));
  if (bytes < 0 || bytes > INT_MAX)
    return hlo_status_make(HLO_UNIMPLEMENTED, "a recv of %lld bytes, more than one MPI message carries",
                           (long long)bytes);
  p2p_recv *r = calloc(1, sizeof *r);
  if (!r)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory posting a recv");
  r->from = from;
  r->bytes = bytes;
  snprintf(r->shape, sizeof r->shape, "%s", shape);
  r->req[0] = r->req[1] = MPI_REQUEST_NULL;
  int rc = MPI_Irecv(&r->header, (int)sizeof r->header, MPI_BYTE, from, (int)tag, m->comm, &r->req[0]);
  if (rc == MPI_SUCCESS) /* posted now, so that it matches this message's bytes, not a later one's */
    rc = MPI_Irecv(dst, (int)bytes, MPI_BYTE, from, (int)tag, m->comm, &r->req[1]);
  if (rc != MPI_SUCCESS) {
    if (r->req[0] != MPI_REQUEST_NULL) {
      MPI_Cancel(&r->req[0]);
      MPI_Wait(&r->req[0], MPI_STATUS_IGNORE);
    }
    free(r);
    return mpi_error(rc, "MPI_Irecv");
  }
  *handle = r;
  return NULL;
}

static void cancel_recv(p2p_recv *r) {
  for (int i = 0; i < 2; i++)
    if (r->req[i] != MPI_REQUEST_NULL) {
      MPI_Cancel(&r->req[i]);
      MPI_Wait(&r->req[i], MPI_STATUS_IGNORE);
    }
}

/* The message's header against what this recv wants (the threaded backend's wording). */
static hlo_status check_header(const p2p_recv *r) {
  const p2p_header *h = &r->header;
  char got[SHAPE_TEXT];
  snprintf(got, sizeof got, "%.*s", (int)sizeof h->shape - 1, h->shape);
  if (h->bytes == r->bytes && strcmp(got, r->shape) == 0)
    return NULL;
  return hlo_status_make(HLO_FAILED_PRECONDITION, "replica %d sent %s (%lld bytes) but this recv wants %s (%lld bytes)",
                         r->from, got, (long long)h->bytes, r->shape, (long long)r->bytes);
}

/* Polls a recv until both parts arrived, or cancellation, abort or the timeout. */
static hlo_status wait_recv(coll_mpi *m, p2p_recv *r, const atomic_int *cancelled) {
  double start = MPI_Wtime();
  int header_done = 0, data_done = 0;
  for (;;) {
    int rc = header_done ? MPI_SUCCESS : MPI_Test(&r->req[0], &header_done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
      return mpi_error(rc, "MPI_Irecv");
    if (header_done) {
      HLO_RETURN_IF_ERROR(check_header(r)); /* the bytes, which may not fit, are cancelled by the caller */
      rc = data_done ? MPI_SUCCESS : MPI_Test(&r->req[1], &data_done, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS)
        return mpi_error(rc, "MPI_Irecv");
      if (data_done)
        return NULL;
    }
    if (cancelled && atomic_load(cancelled))
      return hlo_status_make(HLO_CANCELLED, "cancelled while waiting for replica %d to send", r->from);
    if (atomic_load(&m->aborted))
      return hlo_status_make(HLO_FAILED_PRECONDITION, "recv abandoned: this rank's run failed");
    double waited = MPI_Wtime() - start;
    if (m->timeout_s > 0 && waited > m->timeout_s)
      return hlo_status_make(HLO_CANCELLED, "waited more than %g s for replica %d to send (--collective-timeout)",
                             m->timeout_s, r->from);
    pause_poll(waited);
  }
}

static hlo_status mpi_wait(void *impl, void *handle, const atomic_int *cancelled) {
  coll_mpi *m = impl;
  p2p_recv *r = handle;
  if (!r)
    return NULL; /* a send: complete when started */
  hlo_status s = wait_recv(m, r, cancelled);
  cancel_recv(r); /* nothing left when it completed; else what is still posted */
  free(r);
  sweep_sends(m);
  return s;
}

static void mpi_forget(void *impl, void *handle) {
  (void)impl;
  p2p_recv *r = handle;
  if (!r)
    return;
  cancel_recv(r);
  free(r);
}

static void mpi_abort_group(void *impl) {
  coll_mpi *m = impl;
  atomic_store(&m->aborted, 1);
}

static void mpi_destroy(void *impl) {
  coll_mpi *m = impl;
  int finalized = 0;
  MPI_Finalized(&finalized);
  /* Every rank has finished its run, so a send still pending now has no receiver: its request
   * is released and its copy left to the process's exit (MPI may still read it). */
  if (!finalized)
    sweep_sends(m);
  for (p2p_send *d = m->sends; d && !finalized; d = d->next)
    for (int i = 0; i < 2; i++)
      if (d->req[i] != MPI_REQUEST_NULL)
        MPI_Request_free(&d->req[i]);
  for (size_t i = 0; i < m->n_subs; i++) {
    if (!finalized)
      MPI_Comm_free(&m->subs[i].comm);
    free(m->subs[i].key);
  }
  free(m->subs);
  if (!finalized) {
    MPI_Type_free(&m->unit);
    MPI_Comm_free(&m->comm);
  }
  free(m->send);
  free(m->recv);
  free(m->views);
  free(m);
}

static const hlo_coll_backend mpi_backend = {.exchange = mpi_exchange,
                                             .release = mpi_release,
                                             .send_start = mpi_send_start,
                                             .recv_start = mpi_recv_start,
                                             .wait = mpi_wait,
                                             .forget = mpi_forget,
                                             .abort = mpi_abort_group,
                                             .destroy = mpi_destroy,
                                             .exchange_in_group = mpi_exchange_in_group};

static hlo_status open_comm(coll_mpi *m, const void *comm) {
  int rc = MPI_Comm_dup(comm ? *(const MPI_Comm *)comm : MPI_COMM_WORLD, &m->comm);
  if (rc != MPI_SUCCESS)
    return mpi_error(rc, "MPI_Comm_dup");
  MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(m->comm, &m->rank);
  MPI_Comm_size(m->comm, &m->size);
  int *ub = NULL, found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found);
  m->tag_ub = found && ub ? *ub : 32767; /* the least MPI promises */
  rc = MPI_Type_contiguous(ALIGN, MPI_BYTE, &m->unit);
  if (rc == MPI_SUCCESS)
    rc = MPI_Type_commit(&m->unit);
  if (rc != MPI_SUCCESS) {
    MPI_Comm_free(&m->comm);
    return mpi_error(rc, "MPI_Type_contiguous");
  }
  return NULL;
}

HLO_PUBLIC hlo_status hlo_collective_group_create_mpi(const void *comm, double timeout_s, hlo_collective_group **out) {
  *out = NULL;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    return hlo_status_make(HLO_FAILED_PRECONDITION, "an MPI collective group needs MPI initialized (hlo_mpi_init)");
  hlo_collective_group *g = calloc(1, sizeof *g);
  coll_mpi *m = calloc(1, sizeof *m);
  if (!g || !m) {
    free(g);
    free(m);
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory creating a collective group");
  }
  hlo_status s = open_comm(m, comm);
  if (s) {
    free(g);
    free(m);
    return s;
  }
  m->timeout_s = timeout_s > 0 ? timeout_s : 0;
  g->magic = HLO_GROUP_MAGIC;
  g->layout_size = sizeof *g;
  g->num_replicas = m->size;
  g->backend = &mpi_backend;
  g->impl = m;
  *out = g;
  return NULL;
}

/* ---- the runner's steps ---------------------------------------------------------------- */

HLO_PUBLIC hlo_status hlo_mpi_init(int32_t *rank, int32_t *size) {
  int initialized = 0, r = 0, n = 1;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS)
      return mpi_error(rc, "MPI_Init_thread");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  *rank = r;
  *size = n;
  return NULL;
}

HLO_PUBLIC hlo_status hlo_mpi_allgather(hlo_collective_group *g, const void *mine, int64_t bytes, void *all) {
  if (!g || g->magic != HLO_GROUP_MAGIC || g->backend != &mpi_backend)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "hlo_mpi_allgather needs a group from hlo_collective_group_create_mpi");
  coll_mpi *m = g->impl;
  size_t slot = round_up(bytes);
  unsigned char *send = NULL, *recv = NULL;
  size_t send_cap = 0, recv_cap = 0;
  hlo_status s = reserve(&send, &send_cap, slot ? slot : ALIGN);
  if (!s)
    s = reserve(&recv, &recv_cap, (slot ? slot : ALIGN) * (size_t)m->size);
  if (!s) {
    memset(send, 0, slot ? slot : ALIGN);
    if (bytes > 0)
      memcpy(send, mine, (size_t)bytes);
    s = gather_units(m, m->comm, send, (slot ? slot : ALIGN) / ALIGN, recv, 0, "MPI_Iallgather");
  }
  for (int r = 0; !s && r < m->size && bytes > 0; r++)
    memcpy((unsigned char *)all + (size_t)r * (size_t)bytes, recv + (size_t)r * slot, (size_t)bytes);
  free(send);
  free(recv);
  return s;
}

HLO_PUBLIC void hlo_mpi_abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
}

HLO_PUBLIC void hlo_mpi_finalize(void) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized)
    MPI_Finalize();
}
