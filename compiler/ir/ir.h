/* ir.h — the SSA IR of an HLO module: module -> computations -> instructions.
 *
 * Owns: element types and shapes, literals, typed per-family attributes, use lists, the
 * diagnostic list.  Everything hangs off one arena per module (ir_arena) and is freed at once
 * by ir_module_destroy(); nothing in the IR is freed alone.  Opcodes and element types come
 * from opcodes.def / elemtypes.def.  The floor of the compiler: includes no other stage.
 * Tests: compiler/ir/literal_test.c, compiler/ir/print_test.c; the parse/print round trip under
 * testdata/parse/ok (tests/roundtrip.c).
 */
#ifndef HLOC_IR_H
#define HLOC_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hlo/status.h"
#include "ir/arena.h"

/* ---- opcodes and element types (generated from the .def tables) ------------------ */

enum {
  OPF_ELEMENTWISE = 1 << 0,     /* result[i] depends on operand[i] only */
  OPF_COMMUTATIVE = 1 << 1,
  OPF_BROADCASTS = 1 << 2,      /* binary op that takes the broadcasting extensions */
  OPF_TRANSCENDENTAL = 1 << 3,  /* accepts result_accuracy= */
  OPF_SIDE_EFFECT = 1 << 4,     /* never removed, never reordered with its kind */
  OPF_COLLECTIVE = 1 << 5,
  OPF_ASYNC_START = 1 << 6,
  OPF_ASYNC_DONE = 1 << 7,
};

typedef enum ir_family {
  IR_FAM_PARAMETER, IR_FAM_CONSTANT, IR_FAM_IOTA, IR_FAM_REPLICA_ID, IR_FAM_TOKEN,
  IR_FAM_UNARY, IR_FAM_BINARY, IR_FAM_COMPARE, IR_FAM_SELECT, IR_FAM_CLAMP,
  IR_FAM_CONVERT, IR_FAM_BITCAST_CONVERT, IR_FAM_REDUCE_PRECISION, IR_FAM_STOCHASTIC_CONVERT,
  IR_FAM_BROADCAST, IR_FAM_RESHAPE, IR_FAM_DYNAMIC_RESHAPE, IR_FAM_TRANSPOSE, IR_FAM_SLICE,
  IR_FAM_DYNAMIC_SLICE, IR_FAM_DYNAMIC_UPDATE_SLICE, IR_FAM_CONCATENATE, IR_FAM_PAD,
  IR_FAM_REVERSE, IR_FAM_COPY, IR_FAM_BITCAST, IR_FAM_GATHER, IR_FAM_SCATTER,
  IR_FAM_DIMENSION_SIZE, IR_FAM_TUPLE, IR_FAM_GET_TUPLE_ELEMENT, IR_FAM_OPT_BARRIER,
  IR_FAM_DOMAIN, IR_FAM_REDUCE, IR_FAM_REDUCE_WINDOW, IR_FAM_SELECT_AND_SCATTER, IR_FAM_MAP,
  IR_FAM_SCAN, IR_FAM_SORT, IR_FAM_TOPK, IR_FAM_DOT, IR_FAM_CONVOLUTION, IR_FAM_FFT,
  IR_FAM_CHOLESKY, IR_FAM_TRIANGULAR_SOLVE, IR_FAM_BATCH_NORM, IR_FAM_WHILE,
  IR_FAM_CONDITIONAL, IR_FAM_CALL, IR_FAM_FUSION, IR_FAM_CUSTOM_CALL, IR_FAM_RNG,
  IR_FAM_RNG_BIT_GENERATOR, IR_FAM_RNG_STATE, IR_FAM_INFEED, IR_FAM_OUTFEED, IR_FAM_SEND,
  IR_FAM_RECV, IR_FAM_COLLECTIVE, IR_FAM_ASYNC_DONE, IR_FAM_ASYNC, IR_FAM_COPY_ASYNC,
  IR_FAM_MISC,
  IR_FAM_COUNT
} ir_family;

typedef enum ir_opcode {
#define OP(e, s, a, f, fam, rule) e,
#include "ir/opcodes.def"
#undef OP
  IR_OP_COUNT
} ir_opcode;

typedef struct ir_opcode_info {
  const char *spelling;
  int arity;        /* -1: variadic */
  unsigned flags;   /* OPF_* */
  ir_family family;
} ir_opcode_info;

extern const ir_opcode_info ir_opcode_table[IR_OP_COUNT];

/* Looks up an opcode by its text spelling; returns false when unknown. */
bool ir_opcode_from_name(const char *s, size_t len, ir_opcode *out_op);

typedef enum ir_etype_class {
  IR_ETC_PRED, IR_ETC_SIGNED, IR_ETC_UNSIGNED, IR_ETC_FLOAT, IR_ETC_COMPLEX,
  IR_ETC_TOKEN, IR_ETC_OPAQUE, IR_ETC_TUPLE
} ir_etype_class;

typedef enum ir_etype {
#define ET(e, s, bits, bytes, cls, npy) e,
#include "hlo/elemtypes.def"
#undef ET
  IR_ETYPE_COUNT
} ir_etype;

typedef struct ir_etype_info {
  const char *spelling;
  int bits;          /* logical width */
  int storage_bytes; /* bytes per element in buffers, literals and .npy */
  ir_etype_class cls;
  const char *npy_descr;
} ir_etype_info;

extern const ir_etype_info ir_etype_table[IR_ETYPE_COUNT];

bool ir_etype_from_name(const char *s, size_t len, ir_etype *out_et);
static inline bool ir_etype_is_float(ir_etype t) { return ir_etype_table[t].cls == IR_ETC_FLOAT; }
static inline bool ir_etype_is_complex(ir_etype t) { return ir_etype_table[t].cls == IR_ETC_COMPLEX; }
static inline bool ir_etype_is_int(ir_etype t) {
  return ir_etype_table[t].cls == IR_ETC_SIGNED || ir_etype_table[t].cls == IR_ETC_UNSIGNED;
}
static inline bool ir_etype_is_signed(ir_etype t) { return ir_etype_table[t].cls == IR_ETC_SIGNED; }
static inline bool ir_etype_is_array(ir_etype t) { return t < IR_TOKEN; }
/* The real component type of a complex type (c64 -> f32, c128 -> f64); t itself otherwise. */
ir_etype ir_etype_component(ir_etype t);

/* ---- strings and source locations ------------------------------------------------- */

/* A view of bytes; in the IR always interned in the module's arena (NUL-terminated there). */
typedef struct ir_str {
  const char *p;
  size_t len;
} ir_str;

static inline bool ir_str_eq(ir_str a, const char *b) {
  size_t n = 0;
  while (b[n]) n++;
  if (n != a.len) return false;
  for (size_t i = 0; i < n; i++)
    if (a.p[i] != b[i]) return false;
  return true;
}

/* A position in the source text; line and col are 1-based; 0 means "unknown". */
typedef struct ir_loc {
  int line, col;
} ir_loc;

typedef struct ir_i64_list {
  int64_t *v;
  int n;
} ir_i64_list;

/* The position of v in l, or -1. */
static inline int ir_i64_list_find(const ir_i64_list *l, int64_t v) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i] == v)
      return i;
  return -1;
}

/* ---- shapes ----------------------------------------------------------------------- */

enum { IR_DIM_STATIC = 0, IR_DIM_BOUNDED = 1, IR_DIM_UNBOUNDED = 2 };

/* The part of a layout after ':' — kept so it prints back. */
typedef struct ir_layout {
  ir_i64_list minor_to_major;
  ir_i64_list *tiles;          /* T(8,128)(2,1): n_tiles lists; a '*' dim is stored as -1 */
  int n_tiles;
  int64_t element_size_bits;   /* E(n); 0 = absent */
  int64_t memory_space;        /* S(n); 0 = absent (default space) */
  ir_str other;                /* any other layout items (D(..), L(..), #(..), SC(..), ...), verbatim */
} ir_layout;

typedef struct ir_shape ir_shape;
struct ir_shape {
  ir_etype et;          /* IR_TUPLE for tuples */
  int rank;             /* arrays */
  int64_t *dims;        /* rank entries; for bounded dims the bound, unbounded: -1 */
  uint8_t *dyn;         /* NULL when every dim is static, else IR_DIM_* per dim */
  ir_layout *layout;    /* NULL when no layout was written */
  ir_shape **elems;     /* tuples */
  int n_elems;
  bool is_buffer;       /* written b(shape) */
};

static inline bool ir_shape_is_tuple(const ir_shape *s) { return s->et == IR_TUPLE; }
/* Element count of an array shape (bounds for dynamic dims); false on overflow. */
bool ir_shape_num_elements(const ir_shape *s, int64_t *out_n);
/* Bytes of an array shape's dense storage; false on overflow. */
bool ir_shape_byte_size(const ir_shape *s, int64_t *out_bytes);
/* The bytes of every array leaf of s (tuples summed; tokens and sizes that overflow count 0). */
int64_t ir_shape_total_bytes(const ir_shape *s);
/* Same rank and dims (element type and layout ignored). */
bool ir_shape_same_dims(const ir_shape *a, const ir_shape *b);
/* Same element type, rank and dims (layouts ignored); tuples recursively. */
bool ir_shape_equal(const ir_shape *a, const ir_shape *b);
/* Writes the shape as XLA prints it ("f32[2,3]{1,0}") into buf; returns chars needed.  The
 * one shape formatter (print.c), shared with the module printer. */
size_t ir_shape_format(const ir_shape *s, bool with_layout, char *buf, size_t cap);
/* Leaf (array/token) shapes of s in depth-first order; returns the count. */
int ir_shape_count_leaves(const ir_shape *s);

/* ---- literals --------------------------------------------------------------------- */

typedef struct ir_literal ir_literal;
struct ir_literal {
  ir_shape *shape;
  bool elided;          /* written constant({...}) — data is NULL until a pass fills it */
  void *data;           /* row-major (logical order), storage_bytes per element */
  int64_t nbytes;
  ir_literal **elems;   /* tuple literal */
  int n_elems;
};

/* ---- attributes ------------------------------------------------------------------- */

typedef struct ir_slice_dim {
  int64_t start, limit, stride;
} ir_slice_dim;

typedef struct ir_pad_dim {
  int64_t lo, hi, interior;
} ir_pad_dim;

typedef struct ir_window_dim {
  int64_t size, stride, pad_lo, pad_hi, lhs_dilate, rhs_dilate;
  bool rhs_reversal;
} ir_window_dim;

typedef struct ir_window {
  ir_window_dim *dims;  /* NULL/0 when absent */
  int n;
  unsigned written;     /* IR_WIN_* bits: which fields the text wrote (for printing back) */
} ir_window;
enum { IR_WIN_SIZE = 1, IR_WIN_STRIDE = 2, IR_WIN_PAD = 4, IR_WIN_LHS_DILATE = 8,
       IR_WIN_RHS_DILATE = 16, IR_WIN_RHS_REVERSAL = 32 };

typedef struct ir_conv_dnums {  /* dim_labels=b01f_01io->b01f */
  int64_t input_batch, input_feature;
  ir_i64_list input_spatial;
  int64_t kernel_input_feature, kernel_output_feature;
  ir_i64_list kernel_spatial;
  int64_t output_batch, output_feature;
  ir_i64_list output_spatial;
  bool present;
} ir_conv_dnums;

typedef struct ir_dot_dnums {
  ir_i64_list lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
  ir_i64_list lhs_ragged, rhs_group;   /* ragged-dot */
} ir_dot_dnums;

typedef enum ir_cmp_dir { IR_CMP_EQ, IR_CMP_NE, IR_CMP_LT, IR_CMP_LE, IR_CMP_GT, IR_CMP_GE } ir_cmp_dir;
typedef enum ir_cmp_type {
  IR_CMPT_DEFAULT, IR_CMPT_FLOAT, IR_CMPT_TOTALORDER, IR_CMPT_SIGNED, IR_CMPT_UNSIGNED
} ir_cmp_type;

/* The hloc broadcasting extensions on elementwise binary/compare ops (docs/broadcasting.md). */
typedef enum ir_auto_broadcast {
  IR_AB_NONE = 0,   /* not written: XLA's own rules (+ implicit scalar/degenerate ext.) */
  IR_AB_EXPLICIT,   /* auto_broadcast=none */
  IR_AB_NUMPY,      /* auto_broadcast=numpy */
  IR_AB_PDPD,       /* auto_broadcast=pdpd, with axis */
  IR_AB_BIDIRECTIONAL,
} ir_auto_broadcast;

typedef struct ir_broadcast_attrs {
  ir_i64_list broadcast_dimensions;   /* InDim broadcasting; has_ says it was written */
  bool has_broadcast_dimensions;
  ir_auto_broadcast auto_broadcast;
  int64_t axis;                       /* pdpd; -1 default */
  ir_i64_list target_shape;           /* broadcast(x), auto_broadcast=bidirectional, target_shape={..} */
} ir_broadcast_attrs;

typedef enum ir_precision { IR_PREC_DEFAULT, IR_PREC_HIGH, IR_PREC_HIGHEST } ir_precision;

typedef enum ir_custom_call_api {
  IR_CC_API_UNSPECIFIED, IR_CC_API_ORIGINAL, IR_CC_API_STATUS_RETURNING,
  IR_CC_API_STATUS_RETURNING_UNIFIED, IR_CC_API_TYPED_FFI
} ir_custom_call_api;

typedef enum ir_fft_type { IR_FFT_FFT, IR_FFT_IFFT, IR_FFT_RFFT, IR_FFT_IRFFT } ir_fft_type;
typedef enum ir_rng_dist { IR_RNG_UNIFORM, IR_RNG_NORMAL } ir_rng_dist;
typedef enum ir_rng_algo { IR_RNG_ALG_DEFAULT, IR_RNG_ALG_THREE_FRY, IR_RNG_ALG_PHILOX } ir_rng_algo;
typedef enum ir_transpose_a { IR_TA_NO_TRANSPOSE, IR_TA_TRANSPOSE, IR_TA_ADJOINT } ir_transpose_a;

/* replica_groups={{0,1},{2,3}} or the iota form [2,2]<=[4] / [2,2]<=[2,2]T(1,0). */
typedef struct ir_replica_groups {
  ir_i64_list *groups;  /* explicit form: n_groups lists (expanded from the iota form too) */
  int n_groups;
  bool iota_form;       /* printed back in the iota form */
  ir_i64_list iota_group_shape, iota_reshape, iota_transpose;
  ir_str mesh_text;     /* the mesh-axes form as written (ir/mesh_groups.h), printed back */
  bool present;
} ir_replica_groups;

/* An attribute hloc keeps but does not interpret: printed back verbatim as name=value. */
typedef struct ir_raw_attr {
  ir_str name;
  ir_str value;
} ir_raw_attr;

/* Per-family attributes.  Which member is live is decided by the opcode's family (and for
 * custom-call by IR_FAM_CUSTOM_CALL, whose struct embeds the conv-like fields). */
typedef struct ir_attrs {
  /* Attributes shared by many families. */
  ir_i64_list dimensions;    /* broadcast transpose reverse concatenate reduce map sort
                                scan all-gather reduce-scatter all-to-all get/set-dimension-size */
  bool has_dimensions;
  int64_t channel_id;        /* 0 = absent */
  ir_str custom_text;        /* custom-call target / infeed_config / outfeed_config / domain kind */
  ir_broadcast_attrs bc;     /* hloc's broadcasting extensions: binary, compare, broadcast ops */
  bool called_list_form;     /* custom-call: written called_computations={...}, not to_apply */

  union {
    int64_t parameter_number;                                   /* PARAMETER */
    ir_literal *literal;                                        /* CONSTANT */
    int64_t iota_dimension;                                     /* IOTA */
    int64_t tuple_index;                                        /* GET_TUPLE_ELEMENT */
    int64_t inferred_dimension;                                 /* RESHAPE (-1 absent) */
    struct { ir_slice_dim *dims; int n; } slice;                /* SLICE */
    ir_i64_list dynamic_slice_sizes;                            /* DYNAMIC_SLICE */
    struct { ir_pad_dim *dims; int n; } padding;                /* PAD */
    struct { ir_cmp_dir dir; ir_cmp_type type; bool has_type; } compare;
    struct { int64_t exponent_bits, mantissa_bits; } reduce_precision;
    struct { ir_window window; } reduce_window;                 /* REDUCE_WINDOW, SELECT_AND_SCATTER */
    struct { int64_t num_carries; bool is_reverse, is_associative; } scan;
    struct { bool is_stable; } sort;
    struct { int64_t k; bool largest; bool has_largest; } topk;
    struct {
      ir_dot_dnums dnums;
      ir_precision precision[4]; int n_precision;
      ir_str algorithm;                                         /* verbatim; empty if absent */
    } dot;                                                      /* DOT (+ragged, scaled) */
    struct {
      ir_conv_dnums dnums; ir_window window;
      int64_t feature_group_count, batch_group_count;           /* 1 when absent */
      ir_precision precision[2]; int n_precision;
      ir_str conv_kind;
    } conv;                                                     /* CONVOLUTION */
    struct {
      ir_i64_list offset_dims, collapsed_slice_dims, start_index_map, operand_batching_dims,
          start_indices_batching_dims, slice_sizes;
      int64_t index_vector_dim;
      bool indices_are_sorted;
    } gather;
    struct {
      ir_i64_list update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
          input_batching_dims, scatter_indices_batching_dims;
      int64_t index_vector_dim;
      bool indices_are_sorted, unique_indices;
    } scatter;
    struct { ir_fft_type type; ir_i64_list length; } fft;
    struct { bool lower; } cholesky;
    struct { bool left_side, lower, unit_diagonal; ir_transpose_a transpose_a; } triangular_solve;
    struct { double epsilon; int64_t feature_index; } batch_norm;
    struct { ir_rng_dist distribution; } rng;
    struct { ir_rng_algo algorithm; } rng_bit_generator;
    struct { int64_t delta; } rng_state;
    struct { bool is_composite; } call;
    struct { ir_str kind; } fusion;                             /* kLoop, kInput, ... */
    struct {
      ir_custom_call_api api_version; bool has_api_version;
      bool has_side_effect;
      ir_window window;
      ir_conv_dnums dnums;
      int64_t feature_group_count, batch_group_count;
      ir_shape **operand_layout_constraints; int n_operand_layout_constraints;
      bool has_operand_layout_constraints;
      ir_literal *literal;
      ir_str schedule, padding_type;
    } custom_call;
    struct { bool is_host_transfer; } send_recv;                /* SEND, RECV */
    struct { ir_shape *outfeed_shape; } outfeed;
    struct {
      ir_replica_groups replica_groups;
      bool constrain_layout, use_global_device_ids;
      ir_i64_list *source_target_pairs; int n_source_target_pairs; /* pairs of 2 */
      /* collective-permute's in-place form (slice_sizes written): one list per buffer. */
      ir_i64_list *slice_sizes; int n_slice_sizes;
      bool inplace;
      /* collective-broadcast's has_dynamic_root: -1 not written, 0/1 (true: the last operand
       * names the root at run time). */
      int has_dynamic_root;
    } collective;
    struct {
      ir_str execution_thread;
      ir_opcode wrapped_opcode;  /* for compact forms like call-start: the wrapped opcode */
      bool compact;              /* written "<op>-start"/"-update"/"-done" */
      /* On a compact start wrapping an op other than call: the computation XLA's parser builds
       * for it (parameters for the operands, the op as ROOT with the start's attributes). */
      struct ir_computation *wrapped_comp;
    } async;
    struct { int64_t cross_program_prefetch_index; bool has_index; } copy_start;
  } u;
} ir_attrs;

/* Attributes every instruction may carry; kept verbatim except control predecessors. */
typedef struct ir_common_attrs {
  ir_str sharding, metadata, frontend_attributes, statistics, origin, result_accuracy;
  ir_str parameter_replication, output_to_operand_aliasing;
  ir_str backend_config;         /* the value as written, quotes or braces included */
  ir_loc backend_config_loc;     /* where that value starts (0:0 when not from text) */
  struct ir_instr **control_predecessors;
  int n_control_predecessors;
  ir_raw_attr *unknown;          /* attributes hloc does not know: printed back as written */
  int n_unknown;
} ir_common_attrs;

/* ---- instructions, computations, module ---------------------------------------------- */

typedef struct ir_instr ir_instr;
typedef struct ir_computation ir_computation;
typedef struct ir_module ir_module;

struct ir_instr {
  ir_opcode op;
  ir_str name;                 /* without '%' */
  ir_shape *shape;
  ir_instr **operands;
  int n_operands;
  ir_instr **users;            /* derived: rebuilt by ir_rebuild_uses() */
  int n_users;
  /* Called computations, in XLA's order: to_apply | condition, body | true, false |
   * branch_computations... | calls | select, scatter | called_computations. */
  ir_computation **called;
  int n_called;
  ir_attrs attrs;
  ir_common_attrs common;
  ir_computation *parent;
  ir_loc loc;
  int id;                      /* index in parent->instrs; recomputed by ir_renumber() */
  void *pass_data;             /* scratch for the pass that runs now; passes clear it */
};

struct ir_computation {
  ir_str name;
  bool is_entry;
  bool has_signature;          /* written "(p: shape, ...) -> shape" */
  ir_instr **instrs;           /* in text order (a valid topological order after verify) */
  int n_instrs;
  ir_instr **params;           /* params[i] is parameter(i); filled by the builder */
  int n_params;
  ir_instr *root;
  ir_str execution_thread;     /* empty when not written */
  bool hidden;                 /* made by the parser for a compact async form; not printed */
  ir_module *module;
  ir_loc loc;
  int id;
  /* The written signature "(p: shape, ...) -> shape" when has_signature (filled by the
   * parser; NULL/0 otherwise).  The verifier checks parameters and the root against it. */
  ir_shape **sig_params;
  int n_sig_params;
  ir_shape *sig_result;
};

typedef struct ir_module {
  ir_arena arena;
  ir_str name;
  ir_computation **comps;      /* in text order; entry included */
  int n_comps;
  ir_computation *entry;
  /* Header attributes. */
  ir_shape **entry_layout_params;  /* entry_computation_layout, when written */
  int n_entry_layout_params;
  ir_shape *entry_layout_result;
  bool has_entry_layout;
  int is_scheduled;            /* -1 absent, 0/1 */
  int alias_passthrough_params;/* -1 absent, 0/1 */
  int64_t replica_count;       /* 0 absent */
  int64_t num_partitions;      /* 0 absent */
  int64_t inferred_replica_count; /* 0, or what the collectives' ids need when replica_count is absent
                                   * (pass_infer_replica_count; never printed) */
  ir_str input_output_alias, buffer_donor, frontend_attributes;  /* verbatim {...} */
  ir_raw_attr *header_unknown;
  int n_header_unknown;
  ir_str stack_frames;         /* FileNames..StackFrames block, verbatim; empty if absent */
  int n_filled_constants;      /* elided constants given values by pass_fill_elided_constants */
} ir_module;

/* ---- construction (ir.c) ------------------------------------------------------------ */

/* Creates an empty module with its arena; NULL when out of memory. */
ir_module *ir_module_create(void);
void ir_module_destroy(ir_module *m);

/* Copies s into the module's arena, NUL-terminated. */
ir_str ir_intern(ir_module *m, const char *s, size_t len);

ir_computation *ir_computation_add(ir_module *m, ir_str name);
/* Creates an instruction at the end of c with the given operands (copied). */
ir_instr *ir_instr_create(ir_computation *c, ir_opcode op, ir_str name, ir_shape *shape,
                          ir_instr *const *operands, int n_operands);
/* Shape constructors (arena-allocated). */
ir_shape *ir_shape_array(ir_module *m, ir_etype et, int rank, const int64_t *dims);
ir_shape *ir_shape_scalar(ir_module *m, ir_etype et);
ir_shape *ir_shape_tuple(ir_module *m, ir_shape *const *elems, int n);
ir_shape *ir_shape_clone(ir_module *m, const ir_shape *s);
/* Gives `s` the default (major-to-minor) layout, as XLA does for unlaid shapes. */
void ir_shape_set_default_layout(ir_module *m, ir_shape *s);
ir_i64_list ir_i64_list_copy(ir_module *m, const int64_t *v, int n);

/* Rebuilds every instruction's users list and renumbers ids (QBE's filluse). */
void ir_rebuild_uses(ir_module *m);
/* Replaces every use of `from` by `to` in c (operands and root). */
void ir_replace_all_uses(ir_computation *c, ir_instr *from, ir_instr *to);
/* Removes instructions that neither the root, a side-effecting instruction nor a parameter
 * reaches through operands and control edges (an explicit work list: no deep recursion), and
 * renumbers ids.  The one dead-code removal (pass_dce runs it on every computation).  False,
 * changing nothing, when out of memory. */
bool ir_computation_remove_dead(ir_computation *c);
/* Instructions of c in a post order from its root (operands before users), plus any
 * side-effecting instruction not reachable; returns the count written to out (cap >= n_instrs). */
int ir_computation_post_order(ir_computation *c, ir_instr **out);

ir_computation *ir_module_find_computation(const ir_module *m, const char *name, size_t len);

/* Whether `in` computes each result element from its operands' elements at the same index
 * (unary, binary, compare, select, clamp, convert, stochastic-convert). */
bool ir_is_elementwise(const ir_instr *in);

#endif /* HLOC_IR_H */
