/* ffi_lib.c — typed-FFI handlers (API_VERSION_TYPED_FFI) written against hlo/xla_ffi.h the way
 * a handler for JAX's CPU backend is written against XLA's header: they check the call frame,
 * read typed buffers and attributes, write results and report failures as XLA_FFI_Error
 * objects made through call_frame->api.  Built into the custom-call library of
 * tests/runtime.cmake together with custom_call_lib.c; used by testdata/runtime/ffi_*.
 * docs/custom-call.md shows ffi_axpy. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hlo/xla_ffi.h"

#define EXPORT __attribute__((visibility("default")))

static XLA_FFI_Error *fail(const XLA_FFI_CallFrame *cf, XLA_FFI_Error_Code code, const char *msg) {
  XLA_FFI_Error_Create_Args a = {XLA_FFI_Error_Create_Args_STRUCT_SIZE, NULL, msg, code};
  return cf->api->XLA_FFI_Error_Create(&a);
}

/* What XLA's C++ binding checks before it decodes anything. */
static XLA_FFI_Error *check_frame(const XLA_FFI_CallFrame *cf, int64_t n_args, int64_t n_rets) {
  if (cf->struct_size != XLA_FFI_CallFrame_STRUCT_SIZE)
    return fail(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, "unexpected XLA_FFI_CallFrame size");
  if (cf->api->api_version.major_version != XLA_FFI_API_MAJOR || cf->api->api_version.minor_version != XLA_FFI_API_MINOR)
    return fail(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, "unexpected XLA FFI API version");
  if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE)
    return fail(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, "not the execute stage");
  if (cf->args.size != n_args || cf->rets.size != n_rets)
    return fail(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, "wrong number of arguments or results");
  for (int64_t i = 0; i < n_args; i++)
    if (cf->args.types[i] != XLA_FFI_ArgType_BUFFER ||
        ((XLA_FFI_Buffer *)cf->args.args[i])->struct_size != XLA_FFI_Buffer_STRUCT_SIZE)
      return fail(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, "an argument is not a buffer");
  for (int64_t i = 0; i < n_rets; i++)
    if (cf->rets.types[i] != XLA_FFI_RetType_BUFFER)
      return fail(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, "a result is not a buffer");
  return NULL;
}

static XLA_FFI_Buffer *arg(const XLA_FFI_CallFrame *cf, int i) { return cf->args.args[i]; }
static XLA_FFI_Buffer *ret(const XLA_FFI_CallFrame *cf, int i) { return cf->rets.rets[i]; }

static int64_t elements(const XLA_FFI_Buffer *b) {
  int64_t n = 1;
  for (int64_t d = 0; d < b->rank; d++)
    n *= b->dims[d];
  return n;
}

/* The attribute called name (attributes are sorted: a binary search finds it). */
static int find_attr(const XLA_FFI_Attrs *at, const char *name) {
  int64_t lo = 0, hi = at->size;
  size_t len = strlen(name);
  while (lo < hi) {
    int64_t mid = (lo + hi) / 2;
    const XLA_FFI_ByteSpan *s = at->names[mid];
    size_t n = s->len < len ? s->len : len;
    int c = memcmp(s->ptr, name, n);
    if (c == 0)
      c = (s->len > len) - (s->len < len);
    if (c == 0)
      return (int)mid;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return -1;
}

/* y = alpha * x + b for f32 buffers of one shape; alpha a scalar f32 attribute. */
EXPORT XLA_FFI_Error *ffi_axpy(XLA_FFI_CallFrame *cf) {
  XLA_FFI_Error *e = check_frame(cf, 2, 1);
  if (e)
    return e;
  XLA_FFI_Buffer *x = arg(cf, 0), *b = arg(cf, 1), *y = ret(cf, 0);
  if (x->dtype != XLA_FFI_DataType_F32 || b->dtype != XLA_FFI_DataType_F32 || y->dtype != XLA_FFI_DataType_F32)
    return fail(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, "ffi_axpy takes f32 buffers");
  if (elements(x) != elements(y) || elements(b) != elements(y))
    return fail(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, "ffi_axpy: shapes differ");
  int k = find_attr(&cf->attrs, "alpha");
  if (k < 0 || cf->attrs.types[k] != XLA_FFI_AttrType_SCALAR)
    return fail(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, "ffi_axpy needs a scalar attribute 'alpha'");
  const XLA_FFI_Scalar *alpha = cf->attrs.attrs[k];
  if (alpha->dtype != XLA_FFI_DataType_F32)
    return fail(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, "ffi_axpy: alpha must be f32");
  float a = *(const float *)alpha->value;
  const float *xs = x->data, *bs = b->data;
  float *ys = y->data;
  for (int64_t i = 0; i < elements(y); i++)
    ys[i] = a * xs[i] + bs[i];
  return NULL;
}

/* y = x * 10; fails with INVALID_ARGUMENT naming the first negative element. */
EXPORT XLA_FFI_Error *ffi_check_positive(XLA_FFI_CallFrame *cf) {
  XLA_FFI_Error *e = check_frame(cf, 1, 1);
  if (e)
    return e;
  const float *x = arg(cf, 0)->data;
  float *y = ret(cf, 0)->data;
  for (int64_t i = 0; i < elements(arg(cf, 0)); i++) {
    if (x[i] < 0) {
      char msg[64];
      snprintf(msg, sizeof msg, "negative input at index %lld", (long long)i);
      return fail(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, msg);
    }
    y[i] = x[i] * 10;
  }
  return NULL;
}

/* ---- ffi_attrs_trace: every attribute written out as numbers ---- */

typedef struct trace {
  double *v;
  int64_t n, cap;
} trace;

static void put(trace *t, double x) {
  if (t->n < t->cap)
    t->v[t->n] = x;
  t->n++;
}

static double scalar_value(XLA_FFI_DataType dt, const void *p) {
  switch (dt) {
  case XLA_FFI_DataType_PRED: return *(const uint8_t *)p;
  case XLA_FFI_DataType_S8: return *(const int8_t *)p;
  case XLA_FFI_DataType_S16: return *(const int16_t *)p;
  case XLA_FFI_DataType_S32: return *(const int32_t *)p;
  case XLA_FFI_DataType_S64: return (double)*(const int64_t *)p;
  case XLA_FFI_DataType_U8: return *(const uint8_t *)p;
  case XLA_FFI_DataType_U16: return *(const uint16_t *)p;
  case XLA_FFI_DataType_U32: return *(const uint32_t *)p;
  case XLA_FFI_DataType_U64: return (double)*(const uint64_t *)p;
  case XLA_FFI_DataType_F32: return *(const float *)p;
  case XLA_FFI_DataType_F64: return *(const double *)p;
  default: return -999;
  }
}

static int dtype_bytes(XLA_FFI_DataType dt) {
  switch (dt) {
  case XLA_FFI_DataType_S8: case XLA_FFI_DataType_U8: case XLA_FFI_DataType_PRED: return 1;
  case XLA_FFI_DataType_S16: case XLA_FFI_DataType_U16: return 2;
  case XLA_FFI_DataType_S32: case XLA_FFI_DataType_U32: case XLA_FFI_DataType_F32: return 4;
  default: return 8;
  }
}

/* [size, then per attribute: name length, name bytes, type, then
 *  scalar: dtype, value | array: dtype, size, values | string: length, bytes | dictionary: (recursively)] */
static void trace_attrs(trace *t, const XLA_FFI_Attrs *at) {
  put(t, (double)at->size);
  for (int64_t i = 0; i < at->size; i++) {
    const XLA_FFI_ByteSpan *name = at->names[i];
    put(t, (double)name->len);
    for (size_t k = 0; k < name->len; k++)
      put(t, (unsigned char)name->ptr[k]);
    put(t, at->types[i]);
    if (at->types[i] == XLA_FFI_AttrType_SCALAR) {
      const XLA_FFI_Scalar *s = at->attrs[i];
      put(t, s->dtype);
      put(t, scalar_value(s->dtype, s->value));
    } else if (at->types[i] == XLA_FFI_AttrType_ARRAY) {
      const XLA_FFI_Array *a = at->attrs[i];
      put(t, a->dtype);
      put(t, (double)a->size);
      for (size_t k = 0; k < a->size; k++)
        put(t, scalar_value(a->dtype, (const char *)a->data + k * (size_t)dtype_bytes(a->dtype)));
    } else if (at->types[i] == XLA_FFI_AttrType_STRING) {
      const XLA_FFI_ByteSpan *s = at->attrs[i];
      put(t, (double)s->len);
      for (size_t k = 0; k < s->len; k++)
        put(t, (unsigned char)s->ptr[k]);
    } else if (at->types[i] == XLA_FFI_AttrType_DICTIONARY) {
      trace_attrs(t, at->attrs[i]);
    }
  }
}

/* No arguments; one f64[N] result: the trace, then zeros. */
EXPORT XLA_FFI_Error *ffi_attrs_trace(XLA_FFI_CallFrame *cf) {
  XLA_FFI_Error *e = check_frame(cf, 0, 1);
  if (e)
    return e;
  XLA_FFI_Buffer *y = ret(cf, 0);
  if (y->dtype != XLA_FFI_DataType_F64 || y->rank != 1)
    return fail(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, "ffi_attrs_trace writes an f64 vector");
  trace t = {y->data, 0, y->dims[0]};
  memset(y->data, 0, (size_t)t.cap * sizeof(double));
  trace_attrs(&t, &cf->attrs);
  if (t.n > t.cap)
    return fail(cf, XLA_FFI_Error_Code_OUT_OF_RANGE, "ffi_attrs_trace: the result is too short");
  return NULL;
}

/* Tuples flattened to leaves: arguments a s32[N], b f32[R,C], c f64[] (a and b from a tuple
 * operand); results p f32[R,C] = b * c, q s32[] = sum(a), meta s64[M] = for every argument
 * and result: dtype, rank, dims (then zeros). */
EXPORT XLA_FFI_Error *ffi_tuple_leaves(XLA_FFI_CallFrame *cf) {
  XLA_FFI_Error *e = check_frame(cf, 3, 3);
  if (e)
    return e;
  XLA_FFI_Buffer *a = arg(cf, 0), *b = arg(cf, 1), *c = arg(cf, 2);
  XLA_FFI_Buffer *p = ret(cf, 0), *q = ret(cf, 1), *meta = ret(cf, 2);
  if (a->dtype != XLA_FFI_DataType_S32 || b->dtype != XLA_FFI_DataType_F32 || c->dtype != XLA_FFI_DataType_F64 ||
      p->dtype != XLA_FFI_DataType_F32 || q->dtype != XLA_FFI_DataType_S32 || meta->dtype != XLA_FFI_DataType_S64)
    return fail(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, "ffi_tuple_leaves: unexpected element types");
  double scale = *(const double *)c->data;
  for (int64_t i = 0; i < elements(b); i++)
    ((float *)p->data)[i] = (float)(((const float *)b->data)[i] * scale);
  int32_t sum = 0;
  for (int64_t i = 0; i < elements(a); i++)
    sum += ((const int32_t *)a->data)[i];
  *(int32_t *)q->data = sum;
  int64_t *m = meta->data, k = 0, cap = elements(meta);
  memset(m, 0, (size_t)cap * sizeof *m);
  for (int pass = 0; pass < 2; pass++) {
    const XLA_FFI_Args *as = &cf->args;
    const XLA_FFI_Rets *rs = &cf->rets;
    int64_t n = pass ? rs->size : as->size;
    for (int64_t i = 0; i < n; i++) {
      const XLA_FFI_Buffer *x = pass ? rs->rets[i] : as->args[i];
      if (k + 2 + x->rank > cap)
        return fail(cf, XLA_FFI_Error_Code_OUT_OF_RANGE, "ffi_tuple_leaves: meta is too short");
      m[k++] = x->dtype;
      m[k++] = x->rank;
      for (int64_t d = 0; d < x->rank; d++)
        m[k++] = x->dims[d];
    }
  }
  return NULL;
}

/* The API functions a CPU handler may call; one s64[8] result:
 * [allocation aligned to 64 (1/0), its bytes usable (1/0), scheduled task ran (1/0),
 *  num_threads, type id nonzero and stable (1/0), stream error code, future completed (1/0),
 *  state error code]. */
static void set_flag(void *p) { *(int *)p = 1; }

static int64_t error_code_of(const XLA_FFI_Api *api, XLA_FFI_Error *e, int64_t code) {
  if (!e)
    return 0;
  XLA_FFI_Error_Destroy_Args d = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
  api->XLA_FFI_Error_Destroy(&d);
  return code;
}

EXPORT XLA_FFI_Error *ffi_api_probe(XLA_FFI_CallFrame *cf) {
  XLA_FFI_Error *e = check_frame(cf, 0, 1);
  if (e)
    return e;
  const XLA_FFI_Api *api = cf->api;
  int64_t *out = ret(cf, 0)->data;
  XLA_FFI_DeviceMemory_Allocate_Args al = {XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE, NULL, cf->ctx, 100, 64, NULL};
  if ((e = api->XLA_FFI_DeviceMemory_Allocate(&al)) != NULL)
    return e;
  out[0] = ((uintptr_t)al.data % 64) == 0;
  memset(al.data, 7, 100);
  out[1] = ((unsigned char *)al.data)[99] == 7;
  XLA_FFI_DeviceMemory_Free_Args fr = {XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE, NULL, cf->ctx, 100, al.data};
  if ((e = api->XLA_FFI_DeviceMemory_Free(&fr)) != NULL)
    return e;
  int ran = 0;
  XLA_FFI_ThreadPool_Schedule_Args sc = {XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE, NULL, cf->ctx, set_flag, &ran};
  if ((e = api->XLA_FFI_ThreadPool_Schedule(&sc)) != NULL)
    return e;
  out[2] = ran;
  int64_t threads = 0;
  XLA_FFI_ThreadPool_NumThreads_Args nt = {XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE, NULL, cf->ctx, &threads};
  if ((e = api->XLA_FFI_ThreadPool_NumThreads(&nt)) != NULL)
    return e;
  out[3] = threads;
  XLA_FFI_TypeId id1 = {0}, id2 = {0};
  XLA_FFI_TypeId_Register_Args t1 = {XLA_FFI_TypeId_Register_Args_STRUCT_SIZE, NULL, {"my_state", 8}, &id1};
  XLA_FFI_TypeId_Register_Args t2 = {XLA_FFI_TypeId_Register_Args_STRUCT_SIZE, NULL, {"my_state", 8}, &id2};
  if ((e = api->XLA_FFI_TypeId_Register(&t1)) != NULL || (e = api->XLA_FFI_TypeId_Register(&t2)) != NULL)
    return e;
  out[4] = id1.type_id != 0 && id1.type_id == id2.type_id;
  XLA_FFI_Stream_Get_Args sg = {XLA_FFI_Stream_Get_Args_STRUCT_SIZE, NULL, cf->ctx, NULL};
  out[5] = error_code_of(api, api->XLA_FFI_Stream_Get(&sg), 1);
  XLA_FFI_Future_Create_Args fc = {XLA_FFI_Future_Create_Args_STRUCT_SIZE, NULL, NULL};
  if ((e = api->XLA_FFI_Future_Create(&fc)) != NULL)
    return e;
  XLA_FFI_Future_SetAvailable_Args fa = {XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE, NULL, fc.future};
  if ((e = api->XLA_FFI_Future_SetAvailable(&fa)) != NULL)
    return e;
  cf->future = fc.future; /* the runtime waits for it (already available) and frees it */
  out[6] = 1;
  XLA_FFI_State_Get_Args st = {XLA_FFI_State_Get_Args_STRUCT_SIZE, NULL, cf->ctx, &id1, NULL};
  out[7] = error_code_of(api, api->XLA_FFI_State_Get(&st), 1);
  return NULL;
}

/* Completes its future with an error: the call fails with that error's message. */
EXPORT XLA_FFI_Error *ffi_future_fails(XLA_FFI_CallFrame *cf) {
  XLA_FFI_Error *e = check_frame(cf, 0, 1);
  if (e)
    return e;
  XLA_FFI_Future_Create_Args fc = {XLA_FFI_Future_Create_Args_STRUCT_SIZE, NULL, NULL};
  if ((e = cf->api->XLA_FFI_Future_Create(&fc)) != NULL)
    return e;
  XLA_FFI_Future_SetError_Args se = {XLA_FFI_Future_SetError_Args_STRUCT_SIZE, NULL, fc.future,
                                     fail(cf, XLA_FFI_Error_Code_UNAVAILABLE, "the asynchronous part failed")};
  if ((e = cf->api->XLA_FFI_Future_SetError(&se)) != NULL)
    return e;
  cf->future = fc.future;
  return NULL;
}

/* Tokens are buffers of type TOKEN without data: (x f32[N], token) -> (x + 1, token). */
EXPORT XLA_FFI_Error *ffi_token_probe(XLA_FFI_CallFrame *cf) {
  XLA_FFI_Error *e = check_frame(cf, 2, 2);
  if (e)
    return e;
  const XLA_FFI_Buffer *t = arg(cf, 1), *rt = ret(cf, 1);
  if (t->dtype != XLA_FFI_DataType_TOKEN || t->data != NULL || t->rank != 0 || rt->dtype != XLA_FFI_DataType_TOKEN)
    return fail(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, "ffi_token_probe: the token is not a TOKEN buffer");
  const float *x = arg(cf, 0)->data;
  float *y = ret(cf, 0)->data;
  for (int64_t i = 0; i < elements(arg(cf, 0)); i++)
    y[i] = x[i] + 1;
  return NULL;
}

/* With output_to_operand_aliasing={{}: (0, {})} the argument and the result are one buffer:
 * multiplies it by 3 in place; fails when they are not the same buffer. */
EXPORT XLA_FFI_Error *ffi_triple_in_place(XLA_FFI_CallFrame *cf) {
  XLA_FFI_Error *e = check_frame(cf, 1, 1);
  if (e)
    return e;
  if (arg(cf, 0)->data != ret(cf, 0)->data)
    return fail(cf, XLA_FFI_Error_Code_FAILED_PRECONDITION, "ffi_triple_in_place: argument and result differ");
  float *x = arg(cf, 0)->data;
  for (int64_t i = 0; i < elements(arg(cf, 0)); i++)
    x[i] *= 3;
  return NULL;
}
