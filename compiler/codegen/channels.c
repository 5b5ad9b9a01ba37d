/* channels.c — lowering of send, send-done, recv and recv-done.  Each is one runtime call
 * (hlo/rt.h: hlo_rt_send, hlo_rt_send_done, hlo_rt_recv, hlo_rt_recv_done) with a constant
 * description: channel_id, is_host_transfer, the (source, target) pairs of the frontend
 * attribute _xla_send_recv_source_target_pairs (as XLA's GPU backend reads them), and the
 * shape of every array leaf of the data.  The context tuple (data, u32[], token) is real: the
 * send's data leaves are its operand's buffers, the u32[] holds the request id the runtime
 * gives, and the -done reads that id back, so a context carried through a while loop works.
 * How the bytes move (host callbacks and queues, the collective backend between replicas) is
 * the runtime's business (runtime/src/context/channels.c).
 * Tests: testdata/runtime/sendrecv_*, host_* (tests/runtime.cmake).
 */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"

enum { MAX_DESC = 4096, MAX_PAIRS = 1024 };

typedef struct chan_desc_buf {
  LLVMValueRef v[MAX_DESC];
  int n;
} chan_desc_buf;

static void put(cg_module *cm, chan_desc_buf *d, int64_t x) {
  if (d->n < MAX_DESC)
    d->v[d->n] = cg_i64(cm, x);
  d->n++;
}

/* The text of frontend attribute `key` in *val (quotes removed; an unquoted {...} value whole);
 * false when absent. */
static bool frontend_attr(const ir_instr *in, const char *key, ir_str *val) {
  ir_str fa = in->common.frontend_attributes;
  size_t k = strlen(key);
  for (size_t i = 0; fa.p && i + k <= fa.len; i++) {
    if (memcmp(fa.p + i, key, k) != 0 || (i > 0 && fa.p[i - 1] != '{' && fa.p[i - 1] != ',' && fa.p[i - 1] != ' '))
      continue;
    size_t j = i + k;
    while (j < fa.len && fa.p[j] == ' ')
      j++;
    if (j >= fa.len || fa.p[j] != '=')
      continue;
    j++;
    while (j < fa.len && fa.p[j] == ' ')
      j++;
    bool quoted = j < fa.len && fa.p[j] == '"';
    size_t start = j + quoted, end = start;
    if (quoted) {
      while (end < fa.len && fa.p[end] != '"')
        end++;
    } else if (end < fa.len && fa.p[end] == '{') { /* XLA also prints {{0,1},...} unquoted */
      for (int depth = 0; end < fa.len; end++) {
        depth += fa.p[end] == '{' ? 1 : fa.p[end] == '}' ? -1 : 0;
        if (depth == 0) {
          end++;
          break;
        }
      }
    } else {
      while (end < fa.len && fa.p[end] != ',' && fa.p[end] != '}')
        end++;
    }
    *val = (ir_str){fa.p + start, end - start};
    return true;
  }
  return false;
}

static size_t skip_spaces(ir_str t, size_t i) {
  while (i < t.len && t.p[i] == ' ')
    i++;
  return i;
}

/* An integer at t[*i] into *out, then the character `after`; false when malformed. */
static bool parse_int_then(ir_str t, size_t *i, char after, int64_t *out) {
  char buf[32];
  size_t k = skip_spaces(t, *i), m = 0;
  while (k + m < t.len && m < sizeof buf - 1 && (t.p[k + m] == '-' || (t.p[k + m] >= '0' && t.p[k + m] <= '9')))
    m++;
  memcpy(buf, t.p + k, m);
  buf[m] = 0;
  char *end;
  *out = strtoll(buf, &end, 10);
  k = skip_spaces(t, k + m);
  if (m == 0 || *end || k >= t.len || t.p[k] != after)
    return false;
  *i = k + 1;
  return true;
}

/* Reads "{{s,t},{s,t},...}" (spaces allowed) into pairs; false when malformed. */
static bool parse_pairs(ir_str t, int64_t *pairs, int *n) {
  size_t i = skip_spaces(t, 0);
  *n = 0;
  if (i >= t.len || t.p[i++] != '{')
    return false;
  for (;;) {
    i = skip_spaces(t, i);
    if (i < t.len && t.p[i] == '}')
      return true;
    if (i >= t.len || t.p[i++] != '{' || *n >= MAX_PAIRS)
      return false;
    if (!parse_int_then(t, &i, ',', &pairs[2 * *n]) || !parse_int_then(t, &i, '}', &pairs[2 * *n + 1]))
      return false;
    (*n)++;
    i = skip_spaces(t, i);
    if (i < t.len && t.p[i] == ',')
      i++;
  }
}

/* The pairs of a device transfer into d; false (after cg_fail) when they cannot be read. */
static bool put_pairs(cg_module *cm, const ir_instr *in, chan_desc_buf *d) {
  ir_str text;
  if (frontend_attr(in, "_xla_send_recv_validation", &text)) {
    cg_fail(cm, in, "frontend attribute _xla_send_recv_validation (XLA GPU's bounds for pipelined send/recv) "
                    "is not supported");
    return false;
  }
  if (in->attrs.u.send_recv.is_host_transfer || !frontend_attr(in, "_xla_send_recv_source_target_pairs", &text)) {
    put(cm, d, 0); /* a host transfer, or no pairs: nothing moves between replicas */
    return true;
  }
  int64_t *pairs = malloc(2 * MAX_PAIRS * sizeof *pairs);
  int n = 0;
  bool ok = pairs && parse_pairs(text, pairs, &n);
  if (!ok)
    cg_fail(cm, in, "cannot read _xla_send_recv_source_target_pairs=\"%.*s\" (want {{source,target},...})",
            (int)text.len, text.p);
  put(cm, d, ok ? n : 0);
  for (int i = 0; ok && i < 2 * n; i++)
    put(cm, d, pairs[i]);
  free(pairs);
  return ok;
}

/* The array leaves among the first n leaves of v (their shapes into the description, their
 * buffers into ptrs); returns how many. */
static int put_leaves(cg_module *cm, chan_desc_buf *d, const cg_value *v, int n, LLVMValueRef *ptrs) {
  int k = 0;
  for (int i = 0; i < n; i++)
    if (ir_etype_is_array(v->shapes[i]->et))
      k++;
  put(cm, d, k);
  k = 0;
  for (int i = 0; i < n; i++) {
    const ir_shape *s = v->shapes[i];
    int64_t bytes = 0;
    if (!ir_etype_is_array(s->et))
      continue;
    ir_shape_byte_size(s, &bytes);
    put(cm, d, s->et);
    put(cm, d, s->rank);
    for (int r = 0; r < s->rank; r++)
      put(cm, d, s->dims[r]);
    put(cm, d, bytes);
    ptrs[k++] = v->leaves[i];
  }
  return k;
}

static LLVMValueRef finish_desc(cg_module *cm, const ir_instr *in, chan_desc_buf *d) {
  if (d->n > MAX_DESC) {
    cg_fail(cm, in, "the description of '%s' is too large", ir_opcode_table[in->op].spelling);
    return NULL;
  }
  return cg_const_global(cm, LLVMConstArray2(cm->i64, d->v, (uint64_t)d->n), "chan.desc");
}

/* The u32[] request-id leaf of a context value (after the data leaves). */
static LLVMValueRef request_leaf(const cg_value *ctx, int n_data) { return ctx->leaves[n_data]; }

static void emit(cg_function *f, cg_rt_fn fn, LLVMValueRef *args, int n) {
  cg_fail_if_status(f, cg_runtime_call(f->cm, fn, args, (unsigned)n, "st"));
}

/* The value of a send: its operand's leaves (no copy), a new u32[] and the token. */
static cg_value send_context(cg_function *f, const ir_instr *in, int n_data) {
  cg_value o = f->values[in->operands[0]->id];
  int n = n_data + 2;
  cg_value v = {calloc((size_t)n, sizeof(LLVMValueRef)), calloc((size_t)n, sizeof(ir_shape *)), n};
  for (int i = 0; i < n_data && i < o.n; i++) {
    v.leaves[i] = o.leaves[i];
    v.shapes[i] = o.shapes[i];
  }
  v.shapes[n_data] = in->shape->elems[1];
  v.leaves[n_data] = cg_alloc_leaf(f, in->shape->elems[1]);
  v.shapes[n_data + 1] = in->shape->elems[2];
  v.leaves[n_data + 1] = NULL;
  return v;
}

/* send(data, token) -> (data, u32[], token); recv(token) -> (data, u32[], token). */
static void lower_start(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  bool is_send = in->op == IR_OP_SEND;
  int n_data = ir_shape_count_leaves(in->shape->elems[0]);
  cg_value v = is_send ? send_context(f, in, n_data) : cg_alloc_result(f, in);
  chan_desc_buf *d = calloc(1, sizeof *d);
  LLVMValueRef *ptrs = calloc((size_t)n_data + 1, sizeof *ptrs);
  if (d && ptrs) {
    put(cm, d, in->attrs.channel_id);
    put(cm, d, in->attrs.u.send_recv.is_host_transfer);
    if (put_pairs(cm, in, d)) {
      int k = put_leaves(cm, d, &v, n_data, ptrs);
      LLVMValueRef desc = finish_desc(cm, in, d);
      LLVMValueRef name = cg_name_global(cm, in), req = request_leaf(&v, n_data);
      if (desc && is_send)
        emit(f, CG_RT_hlo_rt_send, (LLVMValueRef[]){f->ctx_arg, desc, name, cg_ptr_table(f, ptrs, k, "send.data"), req},
             5);
      else if (desc)
        emit(f, CG_RT_hlo_rt_recv, (LLVMValueRef[]){f->ctx_arg, desc, name, req}, 4);
    }
  }
  free(d);
  free(ptrs);
  f->values[in->id] = v;
}

/* send-done(context) -> token; recv-done(context) -> (data, token). */
static void lower_done(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  const ir_shape *cs = in->operands[0]->shape;
  int n_data = ir_shape_count_leaves(cs->elems[0]);
  cg_value ctx = f->values[in->operands[0]->id];
  cg_value v = cg_alloc_result(f, in);
  LLVMValueRef name = cg_name_global(cm, in), req = request_leaf(&ctx, n_data);
  if (in->op == IR_OP_SEND_DONE) {
    emit(f, CG_RT_hlo_rt_send_done, (LLVMValueRef[]){f->ctx_arg, name, req}, 3);
    f->values[in->id] = v;
    return;
  }
  chan_desc_buf *d = calloc(1, sizeof *d);
  LLVMValueRef *ptrs = calloc((size_t)n_data + 1, sizeof *ptrs);
  if (d && ptrs) {
    put(cm, d, in->attrs.channel_id);
    put(cm, d, in->attrs.u.send_recv.is_host_transfer);
    put(cm, d, 0);
    int k = put_leaves(cm, d, &v, n_data, ptrs);
    LLVMValueRef desc = finish_desc(cm, in, d);
    if (desc)
      emit(f, CG_RT_hlo_rt_recv_done,
           (LLVMValueRef[]){f->ctx_arg, desc, name, req, cg_ptr_table(f, ptrs, k, "recv.data")}, 5);
  }
  free(d);
  free(ptrs);
  f->values[in->id] = v;
}

void cg_lower_send_recv(cg_function *f, ir_instr *in) {
  if (in->op == IR_OP_SEND || in->op == IR_OP_RECV)
    lower_start(f, in);
  else
    lower_done(f, in);
}
