/* hlo/abi.h — the versioned ABI between a compiled model (model.so / model.o) and its users.
 *
 * Shared by hloc's code generator and libhlort; depends on <stdint.h> and hlo/status.h only.
 * A model built by `hloc model.hlo -o model.so` exports, for a module symbol SYM (the module
 * name made a C identifier, or --entry-name):
 *
 *   const hlo_module_desc *SYM_describe(void);               signature and entry points
 *   hlo_status SYM_run(hlo_context *ctx, void *const *params, void *const *results);
 *   hlo_status SYM(hlo_context *ctx, const T0 *p0, ..., T0 *r0, ...);   typed; in model.h
 *   const hlo_module_desc *hlo_module_describe(void);         same as SYM_describe; weak,
 *                                                             for dlopen() users (hlorun)
 *
 * Parameters and results are the ENTRY's leaves (tuples flattened depth-first), each a dense
 * row-major buffer of the leaf's element type (storage per hlo/elemtypes.def: pred is one
 * byte 0/1, bf16/f8 raw bits, sub-byte integers one byte each).  Token leaves take NULL.
 * The caller owns every buffer; result buffers must not alias parameter buffers, except that
 * a result may be its donor parameter's buffer (hlo_module_desc.result_donors).
 * ctx may be NULL: the model then runs single-threaded with no feeds or channels.
 */
#ifndef HLO_ABI_H
#define HLO_ABI_H

#include <stdint.h>

#include "hlo/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HLO_ABI_VERSION 2

/* Element types, numbered as the rows of hlo/elemtypes.def. */
typedef enum hlo_dtype {
#define ET(e, s, bits, bytes, cls, npy) HLO_DTYPE_##e,
#include "hlo/elemtypes.def"
#undef ET
  HLO_DTYPE_COUNT
} hlo_dtype;

typedef struct hlo_context hlo_context;

/* One parameter or result leaf. */
typedef struct hlo_array_desc {
  int32_t dtype;          /* hlo_dtype */
  int32_t rank;
  const int64_t *dims;    /* rank entries (bounds for bounded dynamic dims) */
  int64_t byte_size;      /* dense storage size */
  const char *name;       /* e.g. "Arg_0.1" or "Arg_0.1{1}" for a tuple leaf; results: root name */
} hlo_array_desc;

typedef hlo_status (*hlo_generic_entry)(hlo_context *ctx, void *const *params, void *const *results);

typedef struct hlo_module_desc {
  uint32_t abi_version;        /* HLO_ABI_VERSION of the compiler that built it */
  uint32_t struct_size;        /* sizeof(hlo_module_desc) at build time */
  const char *module_name;     /* the HloModule name */
  const char *symbol;          /* SYM: the typed entry's name */
  const char *compiler_version;
  int32_t num_params;
  const hlo_array_desc *params;
  int32_t num_results;
  const hlo_array_desc *results;
  hlo_generic_entry run;       /* generic entry */
  void (*typed_entry)(void);   /* the typed entry, to be cast (or called through libffi) */
  uint32_t features;           /* HLO_FEATURE_* the model uses */
  int32_t replica_count;
  int32_t num_partitions;
  int64_t arena_bytes;         /* scratch one call needs (hlo_context_set_arena); since ABI 2 */
  /* The custom-call targets the model resolves by name, each once (hlo_custom_call_resolve_all);
   * present when struct_size covers them. */
  int32_t num_custom_call_targets;
  const char *const *custom_call_targets;
  /* Donated parameters (the module's input_output_alias), present when struct_size covers
   * it: NULL when none, else num_results entries, result_donors[r] the flat parameter leaf
   * whose buffer the caller may also pass as result r (or -1).  The model then updates that
   * parameter in place (a training step's weights): it reads the parameter's old contents
   * before writing the result.  Passing separate buffers stays correct. */
  const int32_t *result_donors;
} hlo_module_desc;

enum {
  HLO_FEATURE_INFEED = 1u << 0,
  HLO_FEATURE_OUTFEED = 1u << 1,
  HLO_FEATURE_CHANNELS = 1u << 2,
  HLO_FEATURE_CUSTOM_CALL = 1u << 3,
  HLO_FEATURE_COLLECTIVES = 1u << 4,
  HLO_FEATURE_ELIDED_CONSTANTS = 1u << 5,  /* constants were filled deterministically */
};

typedef const hlo_module_desc *(*hlo_describe_fn)(void);

#ifdef __cplusplus
}
#endif
#endif /* HLO_ABI_H */
