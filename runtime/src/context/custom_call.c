/* custom_call.c — running a compiled custom-call instruction (hlo/rt.h hlo_rt_custom_call):
 * resolves the target through the context (registered table, libraries, process), builds the
 * operand and result pointer tables the way XLA's CPU backend lays them out (an array leaf is
 * its buffer; a tuple is an array of pointers to its elements, nested tuples nested), and
 * calls the target with the argument list of its api_version.  XLA's status functions
 * (XlaCustomCallStatusSetSuccess/SetFailure) are exported here so that libraries written for
 * XLA load unchanged.  Failures come back as statuses naming the instruction and the target.
 * Tests: testdata/runtime/custom_call_* (tests/runtime.cmake).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/rt.h"
#include "hlo/rt_parallel.h"

/* XLA's XlaCustomCallStatus: opaque to libraries, which only call the two functions below. */
typedef struct XlaCustomCallStatus_ {
  int failed;
  char *message; /* malloc'd; NULL when none */
} XlaCustomCallStatus;

HLO_RT_EXPORT void XlaCustomCallStatusSetSuccess(XlaCustomCallStatus *status);
HLO_RT_EXPORT void XlaCustomCallStatusSetFailure(XlaCustomCallStatus *status, const char *message,
                                                 size_t message_len);

HLO_RT_EXPORT void XlaCustomCallStatusSetSuccess(XlaCustomCallStatus *status) {
  if (!status)
    return;
  free(status->message);
  status->message = NULL;
  status->failed = 0;
}

HLO_RT_EXPORT void XlaCustomCallStatusSetFailure(XlaCustomCallStatus *status, const char *message,
                                                 size_t message_len) {
  if (!status)
    return;
  free(status->message);
  status->failed = 1;
  status->message = malloc(message_len + 1);
  if (status->message) {
    if (message_len && message)
      memcpy(status->message, message, message_len);
    status->message[message_len] = 0;
  }
}

typedef void (*cc_original_fn)(void *out, const void **in);
typedef void (*cc_status_fn)(void *out, const void **in, XlaCustomCallStatus *status);
typedef void (*cc_unified_fn)(void *out, const void **in, const char *opaque, size_t opaque_len,
                              XlaCustomCallStatus *status);

/* The pointer tables of one call: every tuple node's array, freed together. */
typedef struct cc_tables {
  void **blocks[256];
  int n;
} cc_tables;

static void tables_free(cc_tables *t) {
  for (int i = 0; i < t->n; i++)
    free(t->blocks[i]);
}

/* Builds the pointer for the tree node at tree[*pos] (preorder: -1 a leaf, k >= 0 a tuple of k
 * elements), taking leaves from leaves[*leaf].  Returns false when out of memory. */
static bool build_node(const int64_t *tree, int64_t *pos, void *const *leaves, int64_t *leaf, cc_tables *t,
                       void **out) {
  int64_t k = tree[(*pos)++];
  if (k < 0) {
    *out = leaves[(*leaf)++];
    return true;
  }
  if (t->n == (int)(sizeof t->blocks / sizeof t->blocks[0]))
    return false;
  void **arr = calloc((size_t)(k ? k : 1), sizeof *arr);
  if (!arr)
    return false;
  t->blocks[t->n++] = arr;
  for (int64_t i = 0; i < k; i++)
    if (!build_node(tree, pos, leaves, leaf, t, &arr[i]))
      return false;
  *out = arr;
  return true;
}

static hlo_status call_target(int64_t api, void *fn, void *out, const void **in, const char *opaque,
                              int64_t opaque_len, XlaCustomCallStatus *st) {
  switch (api) {
  case 0: /* API_VERSION_UNSPECIFIED: XLA's CPU backend refuses it (thunk_emitter.cc) */
    return hlo_status_make(HLO_INVALID_ARGUMENT,
                           "Unknown custom-call API version enum value: 0 (API_VERSION_UNSPECIFIED), as XLA's CPU "
                           "backend says: the target's calling convention is not known");
  case 1: ((cc_original_fn)fn)(out, in); return NULL;
  case 2: ((cc_status_fn)fn)(out, in, st); return NULL;
  case 3: ((cc_unified_fn)fn)(out, in, opaque, (size_t)opaque_len, st); return NULL;
  default: return hlo_status_make(HLO_UNIMPLEMENTED, "api_version %lld is not a custom-call API", (long long)api);
  }
}

/* desc: [api_version, n_operands, n_operand_leaves, n_result_leaves, operand trees...,
 * result tree...]; see hlo/rt.h. */
HLO_RT_EXPORT hlo_status hlo_rt_custom_call(hlo_context *ctx, const int64_t *desc, const char *target,
                                            const char *instr, const char *opaque, int64_t opaque_len,
                                            void *const *operands, void *const *results) {
  void *fn = NULL;
  hlo_status s = hlo_rt_custom_call_resolve(ctx, target, &fn);
  if (s)
    return hlo_status_annotate(s, "%s", instr);
  int64_t api = desc[0], n_ops = desc[1], pos = 4, leaf = 0;
  cc_tables t = {.n = 0};
  const void **in = calloc((size_t)(n_ops ? n_ops : 1), sizeof *in);
  bool ok = in != NULL;
  for (int64_t i = 0; ok && i < n_ops; i++) {
    void *p = NULL;
    ok = build_node(desc, &pos, operands, &leaf, &t, &p);
    in[i] = p;
  }
  void *out = NULL;
  leaf = 0;
  if (ok)
    ok = build_node(desc, &pos, results, &leaf, &t, &out);
  XlaCustomCallStatus st = {0, NULL};
  if (!ok)
    s = hlo_status_make(HLO_RESOURCE_EXHAUSTED, "%s: out of memory building the custom-call arguments", instr);
  else if ((s = call_target(api, fn, out, in, opaque, opaque_len, &st)))
    s = hlo_status_annotate(s, "%s: custom call '%s'", instr, target);
  if (!s && st.failed)
    s = hlo_status_make(HLO_FAILED_PRECONDITION, "%s: custom call '%s' failed: %s", instr, target,
                        st.message ? st.message : "(no message)");
  free(st.message);
  tables_free(&t);
  free(in);
  return s;
}
