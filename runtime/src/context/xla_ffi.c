/* xla_ffi.c — running custom calls with api_version=API_VERSION_TYPED_FFI (hlo/rt.h
 * hlo_rt_ffi_call): builds XLA's call frame (hlo/xla_ffi.h) for one call — one XLA_FFI_Buffer
 * per operand leaf and per result leaf, the attributes the compiler decoded from
 * backend_config as constant data, the execute stage — calls the handler resolved through the
 * context, and turns a returned XLA_FFI_Error into a status carrying its message.  Also the
 * XLA_FFI_Api function table handlers reach through call_frame->api: errors, host memory,
 * type ids, futures and a thread pool that runs tasks at once in the calling thread; what has
 * no meaning without XLA's runtime (device streams, user data, per-instance state, handler
 * registration) answers with an error naming what to do instead.  docs/custom-call.md.
 * Tests: testdata/runtime/ffi_* (tests/runtime.cmake).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/rt.h"
#include "hlo/rt_parallel.h"
#include "hlo/xla_ffi.h"

struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  char message[]; /* NUL-terminated */
};

/* What call_frame->ctx points at during one call. */
struct XLA_FFI_ExecutionContext {
  hlo_context *ctx;
};

struct XLA_FFI_Future {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;
  XLA_FFI_Error *error;
};

/* ---- errors ---------------------------------------------------------------------------------- */

static XLA_FFI_Error *make_error(XLA_FFI_Error_Code code, const char *fmt, ...) HLO_PRINTF(2, 3);
static XLA_FFI_Error *make_error(XLA_FFI_Error_Code code, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  size_t n = strlen(buf);
  XLA_FFI_Error *e = malloc(sizeof *e + n + 1);
  if (!e)
    return NULL; /* out of memory: reads as success, which is all that can be done */
  e->code = code;
  memcpy(e->message, buf, n + 1);
  return e;
}

static XLA_FFI_Error *ffi_error_create(XLA_FFI_Error_Create_Args *a) {
  const char *m = a && a->message ? a->message : "";
  size_t n = strlen(m);
  XLA_FFI_Error *e = malloc(sizeof *e + n + 1);
  if (!e)
    return NULL;
  e->code = a ? a->errc : XLA_FFI_Error_Code_UNKNOWN;
  memcpy(e->message, m, n + 1);
  return e;
}

static void ffi_error_get_message(XLA_FFI_Error_GetMessage_Args *a) {
  if (a)
    a->message = a->error ? a->error->message : "";
}

static void ffi_error_destroy(XLA_FFI_Error_Destroy_Args *a) {
  if (a)
    free(a->error);
}

/* ---- what needs XLA's runtime ---------------------------------------------------------------- */

static XLA_FFI_Error *ffi_handler_register(XLA_FFI_Handler_Register_Args *a) {
  (void)a;
  return make_error(XLA_FFI_Error_Code_UNIMPLEMENTED,
                    "XLA_FFI_Handler_Register: hloc finds handlers by name; export the handler under its "
                    "custom_call_target name or register it with hlo_custom_call_register");
}

static XLA_FFI_Error *ffi_stream_get(XLA_FFI_Stream_Get_Args *a) {
  if (a)
    a->stream = NULL;
  return make_error(XLA_FFI_Error_Code_UNIMPLEMENTED, "XLA_FFI_Stream_Get: handlers run on the host; there is no "
                                                      "device stream");
}

static XLA_FFI_Error *ffi_context_get(XLA_FFI_ExecutionContext_Get_Args *a) {
  if (a)
    a->data = NULL;
  return make_error(XLA_FFI_Error_Code_NOT_FOUND, "XLA_FFI_ExecutionContext_Get: no user data of type id %lld (hloc "
                                                  "passes none)",
                    a && a->type_id ? (long long)a->type_id->type_id : 0LL);
}

static XLA_FFI_Error *ffi_state_set(XLA_FFI_State_Set_Args *a) {
  (void)a;
  return make_error(XLA_FFI_Error_Code_UNIMPLEMENTED,
                    "XLA_FFI_State_Set: hloc runs only the execute stage; handlers keep no per-instance state");
}

static XLA_FFI_Error *ffi_state_get(XLA_FFI_State_Get_Args *a) {
  if (a)
    a->state = NULL;
  return make_error(XLA_FFI_Error_Code_NOT_FOUND,
                    "XLA_FFI_State_Get: no state (hloc runs only the execute stage, never instantiate)");
}

/* ---- the cheap ones -------------------------------------------------------------------------- */

/* A type id from the name alone (FNV-1a, never 0): the same name gets the same id in every
 * process, and no registry is kept.  A caller-chosen id is accepted as it is. */
static XLA_FFI_Error *ffi_type_id_register(XLA_FFI_TypeId_Register_Args *a) {
  if (!a || !a->type_id)
    return make_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "XLA_FFI_TypeId_Register: no type_id");
  if (a->type_id->type_id != 0)
    return NULL;
  uint64_t h = UINT64_C(14695981039346656037);
  for (size_t i = 0; i < a->name.len; i++)
    h = (h ^ (unsigned char)a->name.ptr[i]) * UINT64_C(1099511628211);
  a->type_id->type_id = (int64_t)(h >> 1) | 1;
  return NULL;
}

static XLA_FFI_Error *ffi_memory_allocate(XLA_FFI_DeviceMemory_Allocate_Args *a) {
  if (!a)
    return make_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "XLA_FFI_DeviceMemory_Allocate: no arguments");
  size_t align = a->alignment < sizeof(void *) ? sizeof(void *) : a->alignment;
  a->data = NULL;
  if (align & (align - 1))
    return make_error(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                      "XLA_FFI_DeviceMemory_Allocate: alignment %zu is not a power of two", a->alignment);
  if (posix_memalign(&a->data, align, a->size ? a->size : 1) != 0) {
    a->data = NULL;
    return make_error(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "XLA_FFI_DeviceMemory_Allocate: cannot allocate %zu bytes",
                      a->size);
  }
  return NULL;
}

static XLA_FFI_Error *ffi_memory_free(XLA_FFI_DeviceMemory_Free_Args *a) {
  if (a)
    free(a->data);
  return NULL;
}

/* XLA allows a task to run in the calling thread: it runs at once. */
static XLA_FFI_Error *ffi_pool_schedule(XLA_FFI_ThreadPool_Schedule_Args *a) {
  if (!a || !a->task)
    return make_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "XLA_FFI_ThreadPool_Schedule: no task");
  a->task(a->data);
  return NULL;
}

static XLA_FFI_Error *ffi_pool_threads(XLA_FFI_ThreadPool_NumThreads_Args *a) {
  if (a && a->num_threads)
    *a->num_threads = 1;
  return NULL;
}

static XLA_FFI_Error *ffi_run_id(XLA_FFI_RunId_Get_Args *a) {
  if (a)
    a->run_id = 0;
  return NULL;
}

/* ---- futures: a handler may return before its work is done and complete the future later;
 * the call waits for it. ---- */

static XLA_FFI_Error *ffi_future_create(XLA_FFI_Future_Create_Args *a) {
  if (!a)
    return make_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "XLA_FFI_Future_Create: no arguments");
  XLA_FFI_Future *fu = calloc(1, sizeof *fu);
  a->future = fu;
  if (!fu)
    return make_error(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "XLA_FFI_Future_Create: out of memory");
  pthread_mutex_init(&fu->mu, NULL);
  pthread_cond_init(&fu->cv, NULL);
  return NULL;
}

static XLA_FFI_Error *complete(XLA_FFI_Future *fu, XLA_FFI_Error *err) {
  if (!fu)
    return make_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "XLA_FFI_Future: no future");
  pthread_mutex_lock(&fu->mu);
  bool twice = fu->done;
  if (!twice) {
    fu->done = true;
    fu->error = err;
    pthread_cond_broadcast(&fu->cv);
  }
  pthread_mutex_unlock(&fu->mu);
  if (twice) {
    free(err);
    return make_error(XLA_FFI_Error_Code_FAILED_PRECONDITION, "XLA_FFI_Future: completed twice");
  }
  return NULL;
}

static XLA_FFI_Error *ffi_future_available(XLA_FFI_Future_SetAvailable_Args *a) {
  return complete(a ? a->future : NULL, NULL);
}

static XLA_FFI_Error *ffi_future_error(XLA_FFI_Future_SetError_Args *a) {
  return complete(a ? a->future : NULL, a ? a->error : NULL);
}

/* Waits for fu, frees it and returns its error (NULL: available). */
static XLA_FFI_Error *future_wait(XLA_FFI_Future *fu) {
  pthread_mutex_lock(&fu->mu);
  while (!fu->done)
    pthread_cond_wait(&fu->cv, &fu->mu);
  XLA_FFI_Error *e = fu->error;
  pthread_mutex_unlock(&fu->mu);
  pthread_cond_destroy(&fu->cv);
  pthread_mutex_destroy(&fu->mu);
  free(fu);
  return e;
}

static const XLA_FFI_Api ffi_api = {
    .struct_size = XLA_FFI_Api_STRUCT_SIZE,
    .extension_start = NULL,
    .api_version = {XLA_FFI_Api_Version_STRUCT_SIZE, NULL, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR},
    .internal_api = NULL,
    .XLA_FFI_Error_Create = ffi_error_create,
    .XLA_FFI_Error_GetMessage = ffi_error_get_message,
    .XLA_FFI_Error_Destroy = ffi_error_destroy,
    .XLA_FFI_Handler_Register = ffi_handler_register,
    .XLA_FFI_Stream_Get = ffi_stream_get,
    .XLA_FFI_TypeId_Register = ffi_type_id_register,
    .XLA_FFI_ExecutionContext_Get = ffi_context_get,
    .XLA_FFI_State_Set = ffi_state_set,
    .XLA_FFI_State_Get = ffi_state_get,
    .XLA_FFI_DeviceMemory_Allocate = ffi_memory_allocate,
    .XLA_FFI_DeviceMemory_Free = ffi_memory_free,
    .XLA_FFI_ThreadPool_Schedule = ffi_pool_schedule,
    .XLA_FFI_ThreadPool_NumThreads = ffi_pool_threads,
    .XLA_FFI_Future_Create = ffi_future_create,
    .XLA_FFI_Future_SetAvailable = ffi_future_available,
    .XLA_FFI_Future_SetError = ffi_future_error,
    .XLA_FFI_RunId_Get = ffi_run_id,
};

/* ---- the call -------------------------------------------------------------------------------- */

static hlo_status_code status_code(XLA_FFI_Error_Code c) {
  switch (c) {
  case XLA_FFI_Error_Code_CANCELLED: return HLO_CANCELLED;
  case XLA_FFI_Error_Code_INVALID_ARGUMENT: return HLO_INVALID_ARGUMENT;
  case XLA_FFI_Error_Code_NOT_FOUND: return HLO_NOT_FOUND;
  case XLA_FFI_Error_Code_RESOURCE_EXHAUSTED: return HLO_RESOURCE_EXHAUSTED;
  case XLA_FFI_Error_Code_OUT_OF_RANGE: return HLO_OUT_OF_RANGE;
  case XLA_FFI_Error_Code_UNIMPLEMENTED: return HLO_UNIMPLEMENTED;
  case XLA_FFI_Error_Code_INTERNAL: return HLO_INTERNAL;
  default: return HLO_FAILED_PRECONDITION;
  }
}

static const char *code_name(XLA_FFI_Error_Code c) {
  static const char *const names[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
                                      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
                                      "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
                                      "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  return (unsigned)c < sizeof names / sizeof names[0] ? names[c] : "UNKNOWN";
}

/* One frame's buffers: n XLA_FFI_Buffer with their type tags and pointer table. */
typedef struct ffi_buffers {
  XLA_FFI_Buffer *bufs;
  int *types; /* XLA_FFI_ArgType / XLA_FFI_RetType: both BUFFER = 1 */
  void **ptrs;
} ffi_buffers;

/* Fills n buffers from the description at desc[*pos] and the leaf pointers. */
static bool buffers_build(ffi_buffers *b, int64_t n, const int64_t *desc, int64_t *pos, void *const *leaves) {
  size_t k = (size_t)(n ? n : 1);
  b->bufs = calloc(k, sizeof *b->bufs);
  b->types = calloc(k, sizeof *b->types);
  b->ptrs = calloc(k, sizeof *b->ptrs);
  if (!b->bufs || !b->types || !b->ptrs)
    return false;
  for (int64_t i = 0; i < n; i++) {
    XLA_FFI_Buffer *x = &b->bufs[i];
    x->struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
    x->dtype = (XLA_FFI_DataType)desc[(*pos)++];
    x->rank = desc[(*pos)++];
    x->dims = (int64_t *)(uintptr_t)&desc[*pos]; /* handlers only read dims */
    *pos += x->rank;
    x->data = x->dtype == XLA_FFI_DataType_TOKEN ? NULL : leaves[i];
    b->types[i] = 1;
    b->ptrs[i] = x;
  }
  return true;
}

static void buffers_free(ffi_buffers *b) {
  free(b->bufs);
  free(b->types);
  free(b->ptrs);
}

/* The status for an error a handler returned (and that error destroyed). */
static hlo_status from_error(XLA_FFI_Error *e, const char *instr, const char *target) {
  hlo_status s = hlo_status_make(status_code(e->code), "%s: custom call '%s' failed: %s: %s", instr, target,
                                 code_name(e->code), e->message);
  free(e);
  return s;
}

HLO_RT_EXPORT hlo_status hlo_rt_ffi_call(hlo_context *ctx, const int64_t *desc, const char *target,
                                         const char *instr, const void *attrs, void *const *args,
                                         void *const *rets) {
  void *fn = NULL;
  hlo_status s = hlo_rt_custom_call_resolve(ctx, target, &fn);
  if (s)
    return hlo_status_annotate(s, "%s", instr);
  int64_t n_args = desc[0], n_rets = desc[1], pos = 2;
  ffi_buffers a = {0}, r = {0};
  bool ok = buffers_build(&a, n_args, desc, &pos, args) && buffers_build(&r, n_rets, desc, &pos, rets);
  if (ok) {
    static const XLA_FFI_Attrs no_attrs = {XLA_FFI_Attrs_STRUCT_SIZE, NULL, 0, NULL, NULL, NULL};
    struct XLA_FFI_ExecutionContext ec = {ctx};
    XLA_FFI_CallFrame frame = {
        .struct_size = XLA_FFI_CallFrame_STRUCT_SIZE,
        .api = &ffi_api,
        .ctx = &ec,
        .stage = XLA_FFI_ExecutionStage_EXECUTE,
        .args = {XLA_FFI_Args_STRUCT_SIZE, NULL, n_args, (XLA_FFI_ArgType *)a.types, a.ptrs},
        .rets = {XLA_FFI_Rets_STRUCT_SIZE, NULL, n_rets, (XLA_FFI_RetType *)r.types, r.ptrs},
        .attrs = attrs ? *(const XLA_FFI_Attrs *)attrs : no_attrs,
        .future = NULL,
    };
    XLA_FFI_Error *e = ((XLA_FFI_Handler *)fn)(&frame);
    if (frame.future) {
      XLA_FFI_Error *fe = future_wait(frame.future);
      if (e)
        free(fe);
      else
        e = fe;
    }
    if (e)
      s = from_error(e, instr, target);
  } else {
    s = hlo_status_make(HLO_RESOURCE_EXHAUSTED, "%s: out of memory building the call frame of '%s'", instr, target);
  }
  buffers_free(&a);
  buffers_free(&r);
  return s;
}
