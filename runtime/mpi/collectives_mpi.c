/* collectives_mpi.c — the collective backend over MPI (libhlort_mpi.so, hlo/runtime_mpi.h):
 * one replica per process, replica id = rank in the group's communicator.
 * Its own primitives (native_ok / native_run, collectives_internal.h) run each leaf with
 * MPI's collective for it: all-reduce and reduce-scatter (MPI_Allreduce,
 * MPI_Reduce_scatter_block) with MPI's built-in reduction where the reducer is a plain one MPI
 * has, else with a user-defined MPI_Op that calls the model's reducer computation (the call
 * reaches it as an attribute of a per-call datatype); all-gather, all-to-all and
 * collective-broadcast (MPI_Allgather, MPI_Alltoall, MPI_Bcast, straight between the model's
 * buffers, strided datatypes describing the rows of an inner dimension); collective-permute and
 * the tuple all-to-all as MPI_Isend / MPI_Irecv pairs on a communicator of their own.  Each runs on the whole
 * communicator or on the cached one of the leaf's replica group.  Without a timeout the
 * blocking calls are used, with one their nonblocking forms, polled.  In exact order
 * (hlo_mpi_group_set_exact_order) a reduction whose result may depend on the order of its
 * operands (floating point, any user op) takes the gather path instead.
 * The gather path (exchange) packs this rank's leaves (each rounded up to 64 bytes, so that
 * every view stays aligned) into a send buffer and gathers them with one MPI_Iallgather into a
 * scratch buffer the views point into; collectives.c then computes the result, in group
 * order, exactly as with threads.  The gather spans the whole communicator, or, for a
 * collective with replica groups that partition the ranks, only this rank's group, on a
 * communicator split once per partition and cached (docs/distributed.md).  With a timeout the
 * request is polled, so that the timeout and the abort flag are honoured (without one,
 * MPI_Wait); release has nothing to wait for (the data was copied).  Send/recv channels are
 * MPI_Isend/MPI_Irecv pairs (p2p_header below).  Also the runner's MPI steps: init, an untimed
 * allgather, abort, finalize.
 * Tests: tests/mpi.cmake (the runtime's multi-replica cases under mpirun, the native cases of
 * testdata/mpi/native against numpy, the training step); unit.collectives_test (the hand-over).
 */
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context/collectives_internal.h"
#include "hlo/rt.h"
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

/* What the user-defined MPI_Op (call_reducer) needs to apply the model's reducer: an
 * MPI_User_function gets no pointer of ours, only the datatype, so this is an attribute of the
 * datatype made for the call (reducer_keyval).  It lives in coll_mpi, so that a call given up
 * by a timeout leaves nothing dangling. */
typedef struct reduce_call {
  hlo_coll_reducer_fn fn;
  hlo_context *ctx;
  int64_t eb;
  hlo_status failed; /* the reducer's first error in this call */
} reduce_call;

typedef struct coll_mpi {
  MPI_Comm comm;
  MPI_Comm permute_comm;       /* collective-permute's messages, apart from send/recv's */
  MPI_Op user_op;              /* call_reducer, not commutative */
  reduce_call call;
  int exact;                   /* hlo_mpi_group_set_exact_order */
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

/* Waits for n requests: MPI_Waitall without a timeout, else polled until timeout_s or an abort. */
static hlo_status wait_requests(coll_mpi *m, int n, MPI_Request *req, double timeout_s, const char *what) {
  if (timeout_s <= 0) {
    int rc = MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    return rc == MPI_SUCCESS ? NULL : mpi_error(rc, what);
  }
  double start = MPI_Wtime();
  for (;;) {
    int done = 0;
    int rc = MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
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
  return wait_requests(m, 1, &req, timeout_s, what);
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

/* ---- MPI's own collectives (native_ok / native_run) ------------------------------------------ */

/* The datatype attribute's key for reduce_call: the one process-wide value of this file, made
 * once after MPI_Init (the first group's creation) and never changed, because call_reducer can
 * find nothing of ours but through it. */
static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
static int reducer_keyval = MPI_KEYVAL_INVALID;

static void make_keyval(void) {
  if (MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &reducer_keyval, NULL) != MPI_SUCCESS)
    reducer_keyval = MPI_KEYVAL_INVALID;
}

/* The user-defined MPI_Op: inout[k] = reducer(in[k], inout[k]), in holding the lower ranks'
 * operands (MPI's rule for an op that does not commute).  The first error of the reducer is
 * kept in the call and reported when the collective ends; the rest of the call is skipped. */
static void call_reducer(void *in, void *inout, int *len, MPI_Datatype *type) {
  reduce_call *call = NULL;
  int found = 0;
  if (MPI_Type_get_attr(*type, reducer_keyval, &call, &found) != MPI_SUCCESS || !found || !call)
    return; /* cannot happen: every datatype this op is used with carries the attribute */
  _Alignas(16) unsigned char tmp[64];
  unsigned char *a = in, *b = inout;
  for (int k = 0; k < *len && !call->failed; k++) {
    void *params[2] = {a + (size_t)k * (size_t)call->eb, b + (size_t)k * (size_t)call->eb};
    void *results[1] = {tmp};
    call->failed = call->fn(call->ctx, params, results, NULL);
    if (!call->failed)
      memcpy(params[1], tmp, (size_t)call->eb);
  }
}

/* The types whose sums and products depend on the order of their operands. */
static bool is_float(int32_t dtype) {
  return dtype == HLO_DTYPE_IR_F32 || dtype == HLO_DTYPE_IR_F64 || dtype == HLO_DTYPE_IR_C64 ||
         dtype == HLO_DTYPE_IR_C128;
}

/* MPI's built-in reduction for the reducer, when it has one that gives the reducer's results:
 * add and multiply of integers (as unsigned: they wrap, as XLA's do) and floats, maximum and
 * minimum of integers (not of floats: XLA's propagate NaN, MPI_MAX need not), and / or of
 * integers, pred's and / or / minimum / maximum as bitwise and / or of 0 and 1, and the add of
 * c64 / c128 (component-wise; their multiply is left to the reducer, whose rounding MPI's
 * complex product need not share). */
static bool builtin_op(const hlo_coll_reducer *r, MPI_Datatype *type, MPI_Op *op) {
  bool wraps = r->op == HLO_RT_REDUCER_ADD || r->op == HLO_RT_REDUCER_MUL, pred = r->dtype == HLO_DTYPE_IR_PRED;
  switch (r->dtype) {
  case HLO_DTYPE_IR_PRED:
  case HLO_DTYPE_IR_U8: *type = MPI_UINT8_T; break;
  case HLO_DTYPE_IR_U16: *type = MPI_UINT16_T; break;
  case HLO_DTYPE_IR_U32: *type = MPI_UINT32_T; break;
  case HLO_DTYPE_IR_U64: *type = MPI_UINT64_T; break;
  case HLO_DTYPE_IR_S8: *type = wraps ? MPI_UINT8_T : MPI_INT8_T; break;
  case HLO_DTYPE_IR_S16: *type = wraps ? MPI_UINT16_T : MPI_INT16_T; break;
  case HLO_DTYPE_IR_S32: *type = wraps ? MPI_UINT32_T : MPI_INT32_T; break;
  case HLO_DTYPE_IR_S64: *type = wraps ? MPI_UINT64_T : MPI_INT64_T; break;
  case HLO_DTYPE_IR_F32: *type = MPI_FLOAT; break;
  case HLO_DTYPE_IR_F64: *type = MPI_DOUBLE; break;
  case HLO_DTYPE_IR_C64: *type = MPI_C_FLOAT_COMPLEX; break;
  case HLO_DTYPE_IR_C128: *type = MPI_C_DOUBLE_COMPLEX; break;
  default: return false;
  }
  int size = 0;
  if (MPI_Type_size(*type, &size) != MPI_SUCCESS || size != r->eb)
    return false;
  bool flt = is_float(r->dtype), cplx = r->dtype == HLO_DTYPE_IR_C64 || r->dtype == HLO_DTYPE_IR_C128;
  switch (r->op) {
  case HLO_RT_REDUCER_ADD: *op = MPI_SUM; return !pred;
  case HLO_RT_REDUCER_MUL: *op = MPI_PROD; return !pred && !cplx;
  case HLO_RT_REDUCER_MAX: *op = pred ? MPI_BOR : MPI_MAX; return !flt;
  case HLO_RT_REDUCER_MIN: *op = pred ? MPI_BAND : MPI_MIN; return !flt;
  case HLO_RT_REDUCER_AND: *op = MPI_BAND; return !flt;
  case HLO_RT_REDUCER_OR: *op = MPI_BOR; return !flt;
  default: return false;
  }
}

/* The group size of op's replica groups; 0 when they do not partition the ranks. */
static int64_t group_size(const coll_mpi *m, const hlo_coll_native *op) {
  if (op->groups[0] == 0)
    return m->size;
  return op->groups[0] * op->groups[1] == m->size ? op->groups[1] : 0;
}

static bool mpi_native_ok(void *impl, const hlo_coll_native *op) {
  coll_mpi *m = impl;
  int64_t g = group_size(m, op);
  if (g < 1 || op->bytes < 0 || op->bytes * (op->op == HLO_COLL_NATIVE_ALL_GATHER ? g : 1) > INT_MAX)
    return false;
  const hlo_coll_reducer *r = op->reducer;
  switch (op->op) {
  case HLO_COLL_NATIVE_ALL_REDUCE:
  case HLO_COLL_NATIVE_REDUCE_SCATTER: {
    if (r->eb < 1 || op->bytes % (r->eb * (op->op == HLO_COLL_NATIVE_REDUCE_SCATTER ? g : 1)) != 0 ||
        (op->op == HLO_COLL_NATIVE_REDUCE_SCATTER && op->outer != 1 && op->bytes > 0))
      return false; /* a reduce-scatter along an inner dimension: the exchange */
    MPI_Datatype type;
    MPI_Op mop;
    if (builtin_op(r, &type, &mop)) /* exact in any order unless it adds or multiplies floats */
      return !m->exact || !is_float(r->dtype);
    return !m->exact && r->fn && r->eb <= 64 && reducer_keyval != MPI_KEYVAL_INVALID;
  }
  case HLO_COLL_NATIVE_ALL_TO_ALL: return op->bytes == 0 || (op->outer > 0 && (op->bytes / op->outer) % g == 0);
  case HLO_COLL_NATIVE_SWAP: return op->peer >= 0 && op->peer < m->size;
  case HLO_COLL_NATIVE_ALL_GATHER:
  case HLO_COLL_NATIVE_PERMUTE:
  case HLO_COLL_NATIVE_BROADCAST: return true;
  default: return false;
  }
}

static bool overlap(const void *a, int64_t a_len, const void *b, int64_t b_len) {
  const unsigned char *p = a, *q = b;
  return p < q + b_len && q < p + a_len;
}

/* The operand, or a copy of it in m->send when it overlaps the result (MPI wants them apart). */
static hlo_status apart(coll_mpi *m, const hlo_coll_native *op, int64_t recv_bytes, const void **send) {
  *send = op->send;
  if (!overlap(op->send, op->bytes, op->recv, recv_bytes))
    return NULL;
  HLO_RETURN_IF_ERROR(reserve(&m->send, &m->send_cap, round_up(op->bytes)));
  memcpy(m->send, op->send, (size_t)op->bytes);
  *send = m->send;
  return NULL;
}

/* All-reduce or reduce-scatter of op on comm (g ranks) with MPI's reduction or call_reducer. */
static hlo_status run_reduce(coll_mpi *m, const hlo_coll_native *op, MPI_Comm comm, int g) {
  const hlo_coll_reducer *r = op->reducer;
  bool scatter = op->op == HLO_COLL_NATIVE_REDUCE_SCATTER;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op mop;
  bool user = !builtin_op(r, &type, &mop);
  const char *what = scatter ? "MPI_Reduce_scatter_block" : "MPI_Allreduce";
  int rc = MPI_SUCCESS;
  if (user) {
    mop = m->user_op;
    m->call = (reduce_call){r->fn, r->ctx, r->eb, NULL};
    rc = MPI_Type_contiguous((int)r->eb, MPI_BYTE, &type);
    if (rc == MPI_SUCCESS && (rc = MPI_Type_commit(&type)) == MPI_SUCCESS)
      rc = MPI_Type_set_attr(type, reducer_keyval, &m->call);
    if (rc != MPI_SUCCESS) {
      if (type != MPI_DATATYPE_NULL)
        MPI_Type_free(&type);
      return mpi_error(rc, "the reducer's MPI datatype");
    }
  }
  int count = (int)(op->bytes / r->eb);
  const void *send = op->send;
  hlo_status s = NULL;
  if (!scatter && send == op->recv)
    send = MPI_IN_PLACE;
  else
    s = apart(m, op, scatter ? op->bytes / g : op->bytes, &send);
  MPI_Request req = MPI_REQUEST_NULL;
  if (!s && m->timeout_s <= 0)
    rc = scatter ? MPI_Reduce_scatter_block(send, op->recv, count / g, type, mop, comm)
                 : MPI_Allreduce(send, op->recv, count, type, mop, comm);
  else if (!s)
    rc = scatter ? MPI_Ireduce_scatter_block(send, op->recv, count / g, type, mop, comm, &req)
                 : MPI_Iallreduce(send, op->recv, count, type, mop, comm, &req);
  if (!s)
    s = rc == MPI_SUCCESS ? wait_requests(m, 1, &req, m->timeout_s, what) : mpi_error(rc, what);
  if (user) {
    MPI_Type_free(&type); /* MPI keeps it while a request still uses it */
    if (!s && m->call.failed)
      s = hlo_status_annotate(m->call.failed, "the reducer computation, in %s", what);
    else
      hlo_status_free(m->call.failed);
    m->call.failed = NULL;
  }
  return s;
}

/* Leaf i of a tuple all-to-all: this leaf to group member i (op->peer) and the result from it.
 * Every replica meets its partners in the order of the leaves, so a pair {p, q} of positions
 * is served at p's leaf q and q's leaf p (hence one tag for all: the leaf index differs on
 * the two sides, and each pair exchanges once per instruction); sorted by (min, max) that is
 * one order on every replica, so the waits cannot form a cycle even when MPI sends without
 * buffering. */
static hlo_status run_swap(coll_mpi *m, const hlo_coll_native *op) {
  MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int tag = 0, bytes = (int)op->bytes;
  const void *send = NULL;
  HLO_RETURN_IF_ERROR(apart(m, op, op->bytes, &send));
  int rc = MPI_Irecv(op->recv, bytes, MPI_BYTE, op->peer, tag, m->permute_comm, &req[0]);
  if (rc == MPI_SUCCESS)
    rc = MPI_Isend(send, bytes, MPI_BYTE, op->peer, tag, m->permute_comm, &req[1]);
  if (rc != MPI_SUCCESS) /* the process stops on this error; what was posted is left to it */
    return mpi_error(rc, "all-to-all's MPI_Isend / MPI_Irecv");
  return wait_requests(m, 2, req, m->timeout_s, "all-to-all's MPI_Isend / MPI_Irecv");
}

/* collective-permute: a message from this replica to the target of the pair it is the source
 * of, and one into the result from the source of the pair it is the target of (else zeros). */
static hlo_status run_permute(coll_mpi *m, const hlo_coll_native *op) {
  MPI_Request req[2];
  int n = 0, rc = MPI_SUCCESS, tag = (int)(op->leaf % ((int64_t)m->tag_ub + 1));
  const void *send = NULL;
  bool received = false;
  HLO_RETURN_IF_ERROR(apart(m, op, op->bytes, &send));
  for (int64_t p = 0; p < op->n_pairs && rc == MPI_SUCCESS; p++)
    if (op->pairs[2 * p + 1] == op->replica) {
      rc = MPI_Irecv(op->recv, (int)op->bytes, MPI_BYTE, (int)op->pairs[2 * p], tag, m->permute_comm, &req[n++]);
      received = true;
    }
  for (int64_t p = 0; p < op->n_pairs && rc == MPI_SUCCESS; p++)
    if (op->pairs[2 * p] == op->replica)
      rc = MPI_Isend(send, (int)op->bytes, MPI_BYTE, (int)op->pairs[2 * p + 1], tag, m->permute_comm, &req[n++]);
  if (!received)
    memset(op->recv, 0, (size_t)op->bytes);
  if (rc != MPI_SUCCESS) /* the process stops on this error; what was posted is left to it */
    return mpi_error(rc, "collective-permute's MPI_Isend / MPI_Irecv");
  return wait_requests(m, n, req, m->timeout_s, "collective-permute's MPI_Isend / MPI_Irecv");
}

/* `outer` rows of `len` bytes, `stride` bytes apart, as one datatype whose extent is `len`, so
 * that the k-th of them in a buffer starts k * len bytes in (block k of every row). */
static int strided_rows(int64_t outer, int64_t len, int64_t stride, MPI_Datatype *out) {
  MPI_Datatype v;
  int rc = MPI_Type_vector((int)outer, (int)len, (int)stride, MPI_BYTE, &v);
  if (rc != MPI_SUCCESS)
    return rc;
  rc = MPI_Type_create_resized(v, 0, (MPI_Aint)len, out);
  MPI_Type_free(&v);
  if (rc == MPI_SUCCESS && (rc = MPI_Type_commit(out)) != MPI_SUCCESS)
    MPI_Type_free(out);
  return rc;
}

/* all-gather (each member's rows go to block k of every result row) and all-to-all (block k
 * of every row goes to member k, whose block from this rank is block `me` of its rows) on
 * comm (g ranks), for op->outer rows of op->bytes / outer bytes. */
static hlo_status run_rows(coll_mpi *m, const hlo_coll_native *op, MPI_Comm comm, int g) {
  bool gather = op->op == HLO_COLL_NATIVE_ALL_GATHER, block = m->timeout_s <= 0;
  int64_t outer = op->outer > 0 && op->bytes > 0 ? op->outer : 1, row = op->bytes / outer;
  const char *what = gather ? "MPI_Allgather" : "MPI_Alltoall";
  const void *send = NULL;
  HLO_RETURN_IF_ERROR(apart(m, op, gather ? op->bytes * g : op->bytes, &send));
  MPI_Datatype rows;
  int rc = gather ? strided_rows(outer, row, row * g, &rows) : strided_rows(outer, row / g, row, &rows);
  if (rc != MPI_SUCCESS)
    return mpi_error(rc, "a strided MPI datatype");
  MPI_Request req = MPI_REQUEST_NULL;
  int bytes = (int)op->bytes;
  if (gather)
    rc = block ? MPI_Allgather(send, bytes, MPI_BYTE, op->recv, 1, rows, comm)
               : MPI_Iallgather(send, bytes, MPI_BYTE, op->recv, 1, rows, comm, &req);
  else
    rc = block ? MPI_Alltoall(send, 1, rows, op->recv, 1, rows, comm)
               : MPI_Ialltoall(send, 1, rows, op->recv, 1, rows, comm, &req);
  hlo_status s = rc == MPI_SUCCESS ? wait_requests(m, 1, &req, m->timeout_s, what) : mpi_error(rc, what);
  MPI_Type_free(&rows); /* MPI keeps it while a request still uses it */
  return s;
}

/* collective-broadcast from the group's first member (rank 0 of comm). */
static hlo_status run_broadcast(coll_mpi *m, const hlo_coll_native *op, MPI_Comm comm) {
  int me = 0, rc;
  MPI_Comm_rank(comm, &me);
  if (me == 0 && op->send != op->recv)
    memmove(op->recv, op->send, (size_t)op->bytes);
  MPI_Request req = MPI_REQUEST_NULL;
  if (m->timeout_s <= 0)
    rc = MPI_Bcast(op->recv, (int)op->bytes, MPI_BYTE, 0, comm);
  else
    rc = MPI_Ibcast(op->recv, (int)op->bytes, MPI_BYTE, 0, comm, &req);
  return rc == MPI_SUCCESS ? wait_requests(m, 1, &req, m->timeout_s, "MPI_Bcast") : mpi_error(rc, "MPI_Bcast");
}

/* Without a collective timeout MPI's blocking calls (MPI_Wait would block as long), else their
 * nonblocking forms, polled. */
static hlo_status mpi_native_run(void *impl, const hlo_coll_native *op) {
  coll_mpi *m = impl;
  if (atomic_load(&m->aborted))
    return hlo_status_make(HLO_FAILED_PRECONDITION, "collective abandoned: this rank's run failed");
  MPI_Comm comm = m->comm;
  int g = m->size;
  const int64_t *ids = NULL;
  if (op->groups[0] != 0 && op->op != HLO_COLL_NATIVE_PERMUTE && op->op != HLO_COLL_NATIVE_SWAP)
    HLO_RETURN_IF_ERROR(group_comm(m, op->groups, &comm, &g, &ids));
  switch (op->op) {
  case HLO_COLL_NATIVE_ALL_REDUCE:
  case HLO_COLL_NATIVE_REDUCE_SCATTER: return run_reduce(m, op, comm, g);
  case HLO_COLL_NATIVE_PERMUTE: return run_permute(m, op);
  case HLO_COLL_NATIVE_SWAP: return run_swap(m, op);
  case HLO_COLL_NATIVE_ALL_GATHER:
  case HLO_COLL_NATIVE_ALL_TO_ALL: return run_rows(m, op, comm, g);
  case HLO_COLL_NATIVE_BROADCAST: return run_broadcast(m, op, comm);
  default: return hlo_status_make(HLO_INTERNAL, "unknown native collective %d", op->op);
  }
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
    MPI_Op_free(&m->user_op);
    MPI_Comm_free(&m->permute_comm);
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
                                             .exchange_in_group = mpi_exchange_in_group,
                                             .native_ok = mpi_native_ok,
                                             .native_run = mpi_native_run};

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
  pthread_once(&keyval_once, make_keyval);
  rc = MPI_Comm_dup(m->comm, &m->permute_comm);
  if (rc != MPI_SUCCESS) {
    MPI_Comm_free(&m->comm);
    return mpi_error(rc, "MPI_Comm_dup");
  }
  MPI_Comm_set_errhandler(m->permute_comm, MPI_ERRORS_RETURN);
  rc = MPI_Op_create(call_reducer, 0, &m->user_op);
  if (rc == MPI_SUCCESS && (rc = MPI_Type_contiguous(ALIGN, MPI_BYTE, &m->unit)) == MPI_SUCCESS &&
      (rc = MPI_Type_commit(&m->unit)) != MPI_SUCCESS)
    MPI_Type_free(&m->unit);
  if (rc != MPI_SUCCESS) {
    if (m->user_op != MPI_OP_NULL)
      MPI_Op_free(&m->user_op);
    MPI_Comm_free(&m->permute_comm);
    MPI_Comm_free(&m->comm);
    return mpi_error(rc, "making the group's MPI datatype and reduction");
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
  m->user_op = MPI_OP_NULL;
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

HLO_PUBLIC hlo_status hlo_mpi_group_set_exact_order(hlo_collective_group *g, int exact) {
  if (!g || g->magic != HLO_GROUP_MAGIC || g->backend != &mpi_backend)
    return hlo_status_make(HLO_INVALID_ARGUMENT,
                           "hlo_mpi_group_set_exact_order needs a group from hlo_collective_group_create_mpi");
  ((coll_mpi *)g->impl)->exact = exact != 0;
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
