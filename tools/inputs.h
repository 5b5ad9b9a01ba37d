/* inputs.h — hlorun's parameter values (docs/cli.md "Inputs"): --input arguments, each an
 * inline literal, a .npy file, or a collection — a .npz or .safetensors file, or @DIR, a
 * folder of .npy files (archive.h) — that expands to one input per member; matched to the
 * model's parameter leaves by position, or by name for a collection whose every member names
 * a parameter; then read into the buffers the entry point is passed: .npy data in a file or
 * a stored .npz member and safetensors data are passed straight from the read-only mapping
 * when they are stored as the parameter wants them (dtype, row-major, little-endian, aligned
 * to the element), and copied (converted, byte-swapped, transposed) otherwise.  The compiled
 * entry point never writes a parameter buffer (hlo/abi.h declares them const, and hloc
 * gives no parameter buffer to a result or temporary), so a read-only mapping is safe.
 * Also --random-inputs (random_fill.h).  Tests: tests/hlorun_inputs.cmake, hlorun_cli.cmake.
 */
#ifndef HLOC_TOOLS_INPUTS_H
#define HLOC_TOOLS_INPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "archive.h"
#include "hlo/abi.h"
#include "hlo/status.h"

/* K for a value written "rK:rest" (*rest set past the colon), or -1 (*rest = arg). */
int input_replica_prefix(const char *arg, const char **rest);

/* One input after expansion. */
typedef struct input_item {
  int replica;       /* K of an rK: prefix; -1 without one */
  const char *text;  /* the literal or path, without rK: and @ */
  int source;        /* its collection in input_list.sources, or -1 (a literal or a .npy file) */
  int member;        /* its index among the collection's members */
} input_item;

typedef struct input_list {
  const char *const *args; /* the --input values as given (not owned) */
  int n_args;
  input_item *items;
  int n_items;
  archive *sources;
  int n_sources;
} input_list;

/* Expands the --input values: every collection is opened (mapped, its members listed) once
 * and stays open until inputs_free. */
HLO_MUST_USE hlo_status inputs_expand(const char *const *args, int n, input_list *out);
void inputs_free(input_list *l);

/* The inputs of replica r of `count` (its rK: ones when it has any, else the unprefixed ones)
 * matched to desc's parameter leaves: out_order[i] (desc->num_params entries) for leaf i.
 * INVALID_ARGUMENT naming the parameter, the input and its collection when an input is
 * missing or extra, or two collections name the same parameter. */
HLO_MUST_USE hlo_status inputs_match(const input_list *l, const hlo_module_desc *desc, const char *model, int r,
                                     int count, const input_item **out_order);

/* One set of parameter buffers. */
typedef struct param_set {
  void **params;       /* what the entry point is passed (num_params entries) */
  void **owned;        /* what param_set_free frees: copies, literals, inflated members */
  mapped_file *maps;   /* .npy files mapped for zero-copy parameters */
  int64_t mapped_bytes, copied_bytes; /* passed from a mapping; read, inflated, converted or generated */
} param_set;

HLO_MUST_USE hlo_status param_set_init(param_set *s, int num_params);
void param_set_free(param_set *s, int num_params);
/* Reads every parameter leaf from order (inputs_match) into s. */
HLO_MUST_USE hlo_status inputs_read(const input_list *l, const hlo_module_desc *desc, const input_item *const *order,
                                    param_set *s);
/* --random-inputs[=seed]: every leaf allocated and filled on `threads` threads. */
HLO_MUST_USE hlo_status inputs_random(uint64_t seed, const hlo_module_desc *desc, int threads, param_set *s);

/* Does a .npy array's dtype store element type dt (types numpy lacks are raw bits: bf16 as
 * <u2 or <V2, pred as |b1 or |u1)?  Are its dimensions d's? */
bool inputs_npy_matches(const npy_array *a, int32_t dt);
bool inputs_dims_match(const npy_array *a, const hlo_array_desc *d);

#endif
