/* cg_internal.h — what the code generator's files share: the per-module and per-function
 * state, values as lists of leaf buffers (tuples exist only at compile time), element
 * load/store with storage<->compute conversion, loops over a shape's index space, calls of
 * computations, and the lowering rules that lower.c's per-opcode table dispatches to (the
 * rule of each opcode is named in ir/opcodes.def).
 *
 * Design (docs/architecture.md): each HLO computation is one LLVM function
 *   ptr @hlo.comp.N(ptr ctx, ptr params, ptr results)   -> hlo_status (null = ok)
 * taking arrays of leaf pointers.  Every array instruction is a loop over its result's
 * elements computing each one from operand buffers ("elemental" emission).
 */
#ifndef HLOC_CODEGEN_INTERNAL_H
#define HLOC_CODEGEN_INTERNAL_H

#include <llvm-c/Core.h>
#include <stdbool.h>
#include <stdio.h>

#include "codegen/codegen.h"
#include "ir/ir.h"
#include "passes/buffer_plan.h"

typedef struct cg_module {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  ir_module *ir;
  LLVMTypeRef ptr, i1, i8, i16, i32, i64, f16, f32, f64, void_t;
  LLVMTypeRef comp_fn_type;    /* ptr (ptr ctx, ptr params, ptr results, ptr frame) */
  LLVMValueRef *comp_fns;      /* by computation id */
  /* Buffer assignment (module.c): by computation id, the bytes of its own frame (the peak
   * of its arena buffers) and a constant global holding it, set once the function is done. */
  int64_t *frame_bytes;
  LLVMValueRef *frame_globals;
  int64_t *kernel_scratch;     /* by computation id: the largest scratch one of its kernels takes */
  const buffer_plan *plan;     /* where each computation's buffers sit (passes/buffer_plan.c) */
  FILE *assignment;            /* the buffer-assignment report (--dump-dir), or NULL */
  cg_options *opts;            /* where the largest temporaries are kept (frame_buffer) */
  hlo_status error;            /* first error; lowering stops */
} cg_module;

/* A value: one pointer per leaf buffer (a token leaf is null). */
typedef struct cg_value {
  LLVMValueRef *leaves;
  const ir_shape **shapes;     /* the leaf shapes */
  int n;
} cg_value;

/* A heap buffer of a function: the entry-block slot holding its pointer (null once freed), the
 * pointer as the allocating code sees it, and the last instruction position that may read it
 * (-1 while unknown: such a buffer lives until the function returns). */
typedef struct cg_heap_buffer {
  LLVMValueRef slot, ptr;
  int until;
  int64_t offset, bytes;       /* arena buffers: place in the frame (slot is null); heap: -1 */
  int planned_to;              /* a buffer of the plan: its planned last position; else -1 */
} cg_heap_buffer;

/* A line of the buffer-assignment report, printed once the offsets are final: instruction in
 * got arena buffer h of shape `shape`, or (reused set) took over operand reused's buffer h. */
typedef struct cg_report_line {
  const ir_instr *in, *reused;
  const ir_shape *shape;
  int h;
} cg_report_line;

/* A free range of a frame during buffer assignment. */
typedef struct cg_range {
  int64_t offset, bytes;
} cg_range;

typedef struct cg_function {
  cg_module *cm;
  ir_computation *comp;
  LLVMValueRef fn, ctx_arg;
  /* The frame: this computation's part of the call's arena (its buffers at fixed offsets),
   * callees' frames following it.  Null in kernels and loop bodies, which allocate no arena
   * buffers of their own (their callees get frame_arg unchanged). */
  LLVMValueRef frame_arg;
  bool owns_frame;
  const void *scratch_owner;  /* who took the kernel scratch (cg_kernel_scratch), or NULL */
  /* The computation's buffer plan (null in kernels, or when the computation is unplanned).
   * Buffers the plan does not place (a lowerer's scratch) go after the planned ones, at
   * scratch_base, by a heap simulation over free_ranges. */
  const comp_plan *plan;
  int64_t scratch_base;
  cg_range *free_ranges;       /* the frame's free space while assigning (sorted by offset) */
  int n_free, cap_free;
  int64_t frame_peak;
  cg_report_line *report;      /* the buffer-assignment report's lines (when requested) */
  int n_report, cap_report;
  cg_value *values;            /* by instruction id */
  cg_heap_buffer *heap;        /* buffers to free on exit (or after their last use) */
  int n_heap, cap_heap;
  LLVMBasicBlockRef entry_bb;  /* allocas go here */
  LLVMBasicBlockRef fail_bb;   /* frees, returns the status in fail_slot */
  LLVMValueRef fail_slot;
  LLVMValueRef kernel_args;    /* one argument array shared by every kernel call (kernel_begin) */
  int kernel_args_len;
  /* In a kernel of cg_outline_value: the instruction it lowers and the caller's buffers for
   * its result leaves, which cg_result_value hands out so that nothing is copied back. */
  const ir_instr *current;     /* the instruction being lowered (for the assignment report) */
  /* While a kOutput fusion's dot or convolution is lowered (fused.c lower_output_producer):
   * that fusion instruction, whose operands its fused parameters are; else NULL. */
  const ir_instr *fusion_call;
  const ir_instr *result_of;
  LLVMValueRef *result_leaves;
  /* By instruction id: the caller's result buffer that instruction writes directly (the
   * computation's root, or a leaf of its root tuple), or null: cg_alloc_leaf for it. */
  LLVMValueRef *result_buffer;
  /* In a kernel: an instruction whose result took over the buffer of its operand
   * in_place_operand (that operand died there, module.c): a dynamic-update-slice updates its
   * operand 0 in place; a fused loop reads that operand through the result pointer (each
   * element only at its own index, passes/own_element.c), so no two buffer arguments alias. */
  const ir_instr *in_place;
  int in_place_operand;
} cg_function;

/* ---- errors ---- */
void cg_fail(cg_module *cm, const ir_instr *in, const char *fmt, ...);
/* As cg_fail, at loc: an error in the text of one of in's attributes. */
void cg_fail_at(cg_module *cm, const ir_instr *in, ir_loc loc, const char *fmt, ...);

/* ---- types and elements ---- */
/* The register type an element of et is computed in (pred -> i1, bf16 -> float, ...);
 * NULL for element types the code generator cannot compute with. */
LLVMTypeRef cg_compute_type(cg_module *cm, ir_etype et);
/* The 8- and 4-bit floats (computed in f32, converted by the runtime on load and store), and
 * every float type (those and f16, bf16, f32, f64). */
bool cg_is_f8(ir_etype et);
bool cg_is_float_type(ir_etype et);
LLVMTypeRef cg_storage_type(cg_module *cm, ir_etype et);
LLVMValueRef cg_load(cg_function *f, ir_etype et, LLVMValueRef base, LLVMValueRef index);
void cg_store(cg_function *f, ir_etype et, LLVMValueRef base, LLVMValueRef index, LLVMValueRef v);
LLVMValueRef cg_i64(cg_module *cm, int64_t v);

/* ---- the floor (emit.c): helpers that call nothing above them ---- */
/* Sets cm's scalar types (ptr, i1 ... f64, void_t) to those of ctx. */
void cg_module_types_init(cg_module *cm, LLVMContextRef ctx);
/* An alloca in the function's entry block (so that loops do not grow the stack). */
LLVMValueRef cg_entry_alloca(cg_function *f, LLVMTypeRef t, const char *name);
/* A private constant global holding init (callers may then set alignment, unnamed_addr). */
LLVMValueRef cg_const_global(cg_module *cm, LLVMValueRef init, const char *name);
/* A private constant, unnamed_addr global of the n values v as i64 (a descriptor or offset
 * table the runtime reads); NULL only when a table of more than 64 cannot be allocated. */
LLVMValueRef cg_const_i64_table(cg_module *cm, const int64_t *v, int64_t n, const char *name);
/* An entry-block array of n pointers (null entries for null), filled here. */
LLVMValueRef cg_ptr_table(cg_function *f, LLVMValueRef *ptrs, int n, const char *name);
/* Adds the enum attribute `name` to fn at index (LLVMAttributeFunctionIndex, or a parameter). */
void cg_add_attr(cg_module *cm, LLVMValueRef fn, unsigned index, const char *name);

/* The function attribute of a loop function whose aligned vector stores become non-temporal
 * after optimization (fused.c sets it, nontemporal.c reads it). */
#define CG_NONTEMPORAL_ATTR "hloc-nontemporal"

/* ---- a function's frame (frame.c) ---- */
/* Opens a computation's (or a kernel's) function body: entry block for allocas, the status
 * slot, the body block; closes it: the failure path, heap buffers freed, the status returned. */
void cg_function_begin(cg_function *f, cg_module *cm, ir_computation *c, LLVMValueRef fn);
void cg_function_end(cg_function *f);
/* The leaf shapes of s, depth first, appended at out[*n]. */
void cg_collect_leaves(const ir_shape *s, const ir_shape **out, int *n);
/* A value of `shape` whose leaves are loaded from the pointer array arr from slot *k on. */
cg_value cg_leaves_from_array(cg_function *f, LLVMValueRef arr, int *k, const ir_shape *shape, const char *name);
/* The buffer-assignment report of `hloc -v`: one line, and the function's lines printed. */
void cg_report_add(cg_function *f, cg_report_line l);
void cg_report_print(const cg_function *f);
/* After lowering instruction position i: the buffers whose lifetimes (last[id], the plan's
 * last readers) end there are freed; a planned buffer read past its planned end is an
 * internal error. */
void cg_free_dead_buffers(cg_function *f, int i, const int *last);

/* ---- buffers ---- */
/* A new buffer for one array leaf (alloca when small, else heap, freed at return). */
LLVMValueRef cg_alloc_leaf(cg_function *f, const ir_shape *s);
/* Buffers for every leaf of a shape. */
cg_value cg_alloc_value(cg_function *f, const ir_shape *s);
/* The buffer for result leaf k (of shape s) of `in`: the caller's result buffer when `in`
 * writes it directly, the frame buffer the plan gave it, else as cg_alloc_leaf. */
LLVMValueRef cg_alloc_result_leaf(cg_function *f, const ir_instr *in, int k, const ir_shape *s);
/* Buffers for every result leaf of `in` (cg_alloc_result_leaf). */
cg_value cg_alloc_result(cg_function *f, const ir_instr *in);
/* The buffer for temporary k (of shape s) of `in` the plan made (a while loop's next state),
 * else as cg_alloc_leaf. */
LLVMValueRef cg_alloc_temp_leaf(cg_function *f, const ir_instr *in, int k, const ir_shape *s);
/* A value of shape s with its leaf shapes and no buffers yet (leaves all NULL). */
cg_value cg_value_of_shape(const ir_shape *s);
/* The buffers for the result of `in` that its lowerer fills: the caller's when f is the kernel
 * cg_outline_value made for `in`, otherwise new ones (cg_alloc_value). */
cg_value cg_result_value(cg_function *f, const ir_instr *in);
/* Copies one leaf: a memcpy, or from CG_PARALLEL_COPY_MIN_BYTES on the context's pool
 * (hlo_rt_copy: one thread copied a 268 MB cache at 6 GB/s on an AMD EPYC family 25). */
enum { CG_PARALLEL_COPY_MIN_BYTES = 8 << 20 };
void cg_copy_leaf(cg_function *f, LLVMValueRef dst, LLVMValueRef src, const ir_shape *s);
/* cg_copy_leaf unless dst and src are the same buffer at run time (a buffer that is both a
 * computation's parameter and its result: a while loop's state kept in place). */
void cg_copy_leaf_if_distinct(cg_function *f, LLVMValueRef dst, LLVMValueRef src, const ir_shape *s);

/* ---- loops ---- */
/* for (i = 0; i < n; i++) body(i): returns i; call cg_loop_end afterwards. */
typedef struct cg_loop {
  LLVMBasicBlockRef cond, body, done;
  LLVMValueRef var;  /* alloca holding i */
  LLVMValueRef i;
} cg_loop;
cg_loop cg_loop_begin(cg_function *f, LLVMValueRef n, const char *name);
void cg_loop_end(cg_function *f, cg_loop *l);
/* The input index that window position w of output position o reads in one dimension of
 * size in_dim (stride, padding, base and window dilation of wd): returns whether it is a real
 * element (not padding, not a dilation hole); *out_idx is its index, 0 when it is not. */
LLVMValueRef cg_window_input(cg_function *f, const ir_window_dim *wd, int64_t in_dim, LLVMValueRef o, LLVMValueRef w,
                             LLVMValueRef *out_idx);
/* Whether window dimension wd reads the output's own index (size 1, stride 1, no padding, no
 * dilation): no bound to check. */
bool cg_window_dim_plain(const ir_window_dim *wd);
/* The multi-index (rank values) of linear index i in dims (row-major). */
void cg_unflatten(cg_function *f, LLVMValueRef i, const int64_t *dims, int rank, LLVMValueRef *out);
/* Row-major linear index of a multi-index. */
LLVMValueRef cg_flatten(cg_function *f, LLVMValueRef *idx, const int64_t *dims, int rank);

/* ---- calls ---- */
/* Calls computation c with leaf pointers args (n = its parameter leaves) writing its result
 * leaves to outs; a failing status jumps to the function's failure path. */
void cg_call_computation(cg_function *f, ir_computation *c, LLVMValueRef *args, int n_args,
                         LLVMValueRef *outs, int n_outs);
/* A scalar computation applied to scalar values (reducers, comparators, map): returns the
 * result values (n_results of them) in out. */
void cg_call_scalar(cg_function *f, ir_computation *c, LLVMValueRef *vals, const ir_etype *ets,
                    int n, LLVMValueRef *out, const ir_etype *out_ets, int n_out);
/* The runtime functions generated code may call: one enumerator per row of hlo/rt_abi.def
 * (CG_RT_hlo_rt_gemm_f32, ...), declared from that row (rt_abi.c). */
typedef enum cg_rt_fn {
#define HLO_RT_ARG(ctype, kind, name)
#define HLO_RT_FN(ret, name, params) CG_RT_##name,
#include "hlo/rt_abi.def"
  CG_RT_COUNT
} cg_rt_fn;
/* fn's declaration in cm's module, added on first use, and its LLVM function type. */
LLVMValueRef cg_runtime(cg_module *cm, cg_rt_fn fn);
LLVMTypeRef cg_runtime_type(cg_module *cm, cg_rt_fn fn);
const char *cg_runtime_name(cg_rt_fn fn);
/* Whether args (n of them) have the LLVM types of fn's parameters. */
bool cg_runtime_args_ok(cg_module *cm, cg_rt_fn fn, LLVMValueRef *args, unsigned n);
/* A call of fn with args at cm's builder (or at b), named `name` ("" for a void result); args
 * that differ from fn's row are a bug in hloc: it says so and aborts. */
LLVMValueRef cg_runtime_call(cg_module *cm, cg_rt_fn fn, LLVMValueRef *args, unsigned n, const char *name);
LLVMValueRef cg_runtime_call_at(cg_module *cm, LLVMBuilderRef b, cg_rt_fn fn, LLVMValueRef *args, unsigned n,
                                const char *name);
/* A libc/libm function (erf, powf, ...) of type fn_type, declared on first use; never hlo_rt_*. */
LLVMValueRef cg_libm_fn(cg_module *cm, const char *name, LLVMTypeRef fn_type);
/* Leaves through the function's failure path (its buffers freed, st returned) when the
 * status value st is not null; continues on the success path otherwise. */
void cg_fail_if_status(cg_function *f, LLVMValueRef st);
/* The frame pointer a function passes to the computations it calls: after its own buffers
 * in a computation function, unchanged in a kernel, null in a loop body. */
LLVMValueRef cg_callee_frame(cg_function *f);
/* Scratch for a kernel of cg_outline (f not owning a frame): `bytes` at the start of the
 * frame it was given, counted in the arena as one more callee frame (the kernel's loop bodies
 * get no frame, so nothing else uses that space while the kernel runs).  Null when f owns its
 * frame or has none (a loop body's kernel), and when another owner (an instruction) already
 * took it in this kernel: the caller then needs another plan. */
LLVMValueRef cg_kernel_scratch(cg_function *f, int64_t bytes, const void *owner);
/* Calls hlo_rt_poll(ctx) and takes the failure path when the context was cancelled
 * (cancel.c; emitted at while-loop back-edges). */
void cg_check_cancel(cg_function *f);
LLVMValueRef cg_intrinsic(cg_module *cm, const char *name, LLVMTypeRef type, int n_args);

/* ---- lowering ---- */
/* Emits `in` as its own noinline LLVM function ("kernel") called from f, so that no LLVM
 * function grows with the size of the module; body(kf, in, out) lowers it inside. */
typedef void (*cg_kernel_fn)(cg_function *kf, ir_instr *in, LLVMValueRef out);
void cg_outline(cg_function *f, ir_instr *in, cg_kernel_fn body, bool may_fail);
/* The same for a lowering that produces a whole value (several leaves: reduce, batch norm):
 * lower(kf, in) sets kf->values[in->id] inside the kernel, writing f's buffers directly when
 * it takes them from cg_result_value (otherwise the kernel copies its result over). */
typedef void (*cg_value_lower_fn)(cg_function *kf, ir_instr *in);
void cg_outline_value(cg_function *f, ir_instr *in, cg_value_lower_fn lower, bool may_fail);
/* Elementwise: the value of `in` at linear index i (operands share the result's dims). */
LLVMValueRef cg_elementwise_value(cg_function *f, ir_instr *in, LLVMValueRef i);
/* Elementwise: the value of `in` given its operands' values v (in operand order). */
LLVMValueRef cg_elementwise_apply(cg_function *f, ir_instr *in, LLVMValueRef *v);
/* Lowers one instruction into f->values[in->id]: forwarding and single-instruction loop kernels
 * first, then the opcode's rule from cg_lower_rules. */
void cg_lower_instr(cg_function *f, ir_instr *in);

/* How code generation lowers one opcode (lower.c defines one per kind of op; ir/opcodes.def
 * names each opcode's).  lower(f, in) sets f->values[in->id]; element, set for elementwise
 * ops only, computes one result element from the operands' element values v (operand
 * order), for plain loops and fused kernels alike (cg_elementwise_apply). */
typedef struct cg_lower_rule {
  void (*lower)(cg_function *f, ir_instr *in);
  LLVMValueRef (*element)(cg_function *f, ir_instr *in, LLVMValueRef *v);
} cg_lower_rule;
/* Every rule opcodes.def names, declared from the table itself. */
#define OP(e, s, a, fl, fam, rule) extern const cg_lower_rule rule;
#include "ir/opcodes.def"
#undef OP
/* The rule of each opcode (lower.c), generated from opcodes.def. */
extern const cg_lower_rule *const cg_lower_rules[IR_OP_COUNT];
/* The elementwise lowering of an instruction: lowered as one loop (or inline for a scalar)
 * over its rule's element function; the `lower` of every elementwise rule. */
void cg_lower_elementwise(cg_function *f, ir_instr *in);
/* Lowerers that rules call (data.c, control.c). */
void cg_lower_data(cg_function *f, ir_instr *in, LLVMValueRef out);
/* A tuple-shaped constant: one global per leaf literal (data.c). */
void cg_lower_tuple_constant(cg_function *f, ir_instr *in);
/* The address of an array constant's literal: a read-only global of the module, which is the
 * constant's value where the plan reads it in place (buffer_plan_constant_by_reference). */
LLVMValueRef cg_constant_literal(cg_function *f, const ir_instr *in);
/* A literal's bytes as a 64-byte aligned constant global (data.c).  unnamed_addr: code only
 * reads it and the runtime keys nothing by its address alone, so identical literals (a
 * model's repeated layers' constants) become one global (LLVM's constmerge) and the kernels
 * that read them identical functions (mergefunc). */
LLVMValueRef cg_literal_global(cg_module *cm, const ir_literal *lit, const char *name);
void cg_lower_reduce(cg_function *f, ir_instr *in);
void cg_lower_dot(cg_function *f, ir_instr *in, LLVMValueRef out);
void cg_lower_while(cg_function *f, ir_instr *in);
void cg_lower_conditional(cg_function *f, ir_instr *in);
void cg_lower_call(cg_function *f, ir_instr *in);
void cg_lower_map(cg_function *f, ir_instr *in, LLVMValueRef out);
/* wrappers.c: scan, async-start/-update/-done (and compact forms), copy-start/-done */
void cg_lower_scan(cg_function *f, ir_instr *in);
void cg_lower_async(cg_function *f, ir_instr *in);
void cg_lower_copy_async(cg_function *f, ir_instr *in);
/* batchnorm.c */
void cg_lower_batch_norm(cg_function *f, ir_instr *in);
/* conv.c */
void cg_lower_convolution(cg_function *f, ir_instr *in, LLVMValueRef out);
/* conv_dnnl.c: when the convolution maps onto oneDNN (builds with libdnnl-dev), emits the call
 * of hlo_rt_conv_dnnl writing `out`, leaves the builder in the block that runs when oneDNN
 * declines (the caller lowers the convolution there and branches to *out_join) and returns
 * true; else emits nothing and returns false. */
bool cg_conv_dnnl(cg_function *f, ir_instr *in, LLVMValueRef out, LLVMBasicBlockRef *out_join);
/* conv_forms.c: which of hloc's own kernels takes a convolution (read by conv.c and conv_dnnl.c). */
/* The window of spatial dimension i (defaults when the instruction has no window). */
ir_window_dim cg_conv_window_dim(const ir_instr *in, int i);
/* The row-major element stride of dimension d of s. */
int64_t cg_dim_stride(const ir_shape *s, int64_t d);
/* Fills the direct kernel's descriptor (hlo/rt.h HLO_RT_CONV_*) and the kernel's element offset
 * of its first element used (nonzero with a reversed window); false when it does not apply
 * (grouped convolutions with at most 8 input features per group, bf16/f16/f32, 1-2 spatial
 * dimensions, no base dilation). */
bool cg_conv_direct_plan(const ir_instr *in, int64_t *desc, int64_t *k_first);
/* Whether the direct kernel runs `in` plane by plane (f32, one input feature per group, a
 * unit-stride input width: hlo/rt.h hlo_rt_conv_plane_fits), faster than oneDNN there. */
bool cg_conv_plane_path(const ir_instr *in);
/* Whether `in` is a 1x1 convolution over minor positions (NCHW: stride 1, no padding, one
 * group, f32 or f64, output [batch, feature, positions...]) that conv.c computes as one
 * product per image, operands in place. */
bool cg_conv_pointwise_path(const ir_instr *in);
/* Fills the descriptor of a depthwise convolution's weight gradient (hlo/rt.h HLO_RT_DWG_*:
 * f32, two spatial dimensions, batch_group_count = the channels with one per group, no base
 * dilation or reversal, rows of x and dy contiguous) and returns true; else false. */
bool cg_conv_dw_wgrad_plan(const ir_instr *in, int64_t *desc);
/* window.c */
void cg_lower_reduce_window(cg_function *f, ir_instr *in);
void cg_lower_gather(cg_function *f, ir_instr *in, LLVMValueRef out);
/* Gather `in`'s operand index src[] for its result index oi[] (XLA's semantics: offset and
 * batch dimensions split, start components clamped so the slice fits, collapsed and operand
 * batching dimensions), the index vector's component k at batch position ibatch (the indices'
 * dimensions without index_vector_dim) given by component(f, k, ibatch, arg) as an i64.  Shared
 * by window.c's loop and fused.c's gather_value. */
typedef LLVMValueRef cg_gather_component_fn(cg_function *f, int k, LLVMValueRef *ibatch, void *arg);
void cg_gather_source(cg_function *f, const ir_instr *in, LLVMValueRef *oi, cg_gather_component_fn *component,
                      void *arg, LLVMValueRef *src);
void cg_lower_scatter(cg_function *f, ir_instr *in);
/* Scatter into outs, the result's leaves: copies each operand there unless it is the same
 * buffer (an update in place), then applies the updates. */
void cg_lower_scatter_into(cg_function *f, ir_instr *in, const LLVMValueRef *outs);
void cg_lower_select_and_scatter(cg_function *f, ir_instr *in, LLVMValueRef out);
/* Select-and-scatter `in` for the source element at index oi[] (op, src, res: the operand,
 * source and result buffers): its window's selection -- the first position inside the operand,
 * replaced by each later one that select(current, later) rejects -- and the scatter of the
 * source element into the chosen result element.  Windows of at most CG_SAS_UNROLL_MAX
 * positions over a non-empty operand are unrolled.  Shared by window.c's loop and fused.c's
 * sas_value. */
enum { CG_SAS_UNROLL_MAX = 64 };
void cg_sas_element(cg_function *f, const ir_instr *in, LLVMValueRef op, LLVMValueRef src, LLVMValueRef res,
                    LLVMValueRef *oi);

/* fused.c: fused loop kernels.  cg_lower_fusion lowers a fusion instruction whose fused
 * computation the emitter handles (false: the caller lowers it as a call);
 * cg_lower_fused_single lowers one elementwise, data-movement or single-input reduce
 * instruction, a reduce-window that cg_reduce_window_loop_ok takes (one input, a window of
 * at most 64 positions or a running fold), a gather (cg_gather_loop_ok) or a
 * select-and-scatter (cg_select_and_scatter_loop_ok: a window of at most 64 positions), as a
 * loop kernel of its own (false when it is none of those). */
bool cg_fusion_supported(const ir_instr *in);
bool cg_reduce_window_loop_ok(const ir_instr *x);
bool cg_gather_loop_ok(const ir_instr *x);
bool cg_select_and_scatter_loop_ok(const ir_instr *x);
bool cg_lower_fusion(cg_function *f, ir_instr *in);
bool cg_lower_fused_single(cg_function *f, ir_instr *in);
/* sort.c: sort and topk through the runtime (hlo_rt_sort, hlo_rt_topk). */
void cg_lower_sort(cg_function *f, ir_instr *in);
void cg_lower_topk(cg_function *f, ir_instr *in);
/* linalg.c: cholesky and triangular-solve through the runtime. */
void cg_lower_cholesky(cg_function *f, ir_instr *in);
void cg_lower_triangular_solve(cg_function *f, ir_instr *in);
/* fft.c: fft through the runtime (hlo_rt_fft), one cached plan per call site. */
void cg_lower_fft(cg_function *f, ir_instr *in);
/* rng.c: rng, rng-bit-generator and rng-get-and-update-state. */
void cg_lower_rng(cg_function *f, ir_instr *in);
void cg_lower_rng_bit_generator(cg_function *f, ir_instr *in);
void cg_lower_rng_state(cg_function *f, ir_instr *in);
/* feeds.c; also the instruction's name as a NUL-terminated string global (for messages) */
void cg_lower_infeed(cg_function *f, ir_instr *in);
void cg_lower_outfeed(cg_function *f, ir_instr *in);
LLVMValueRef cg_name_global(cg_module *cm, const ir_instr *in);
/* channels.c: send, send-done, recv, recv-done through the runtime (hlo_rt_send, ...) */
void cg_lower_send_recv(cg_function *f, ir_instr *in);
/* collectives.c */
void cg_lower_replica_id(cg_function *f, ir_instr *in);
void cg_lower_collective(cg_function *f, ir_instr *in);
void cg_lower_collective_done(cg_function *f, ir_instr *in);
/* custom_call.c */
void cg_lower_custom_call(cg_function *f, ir_instr *in);
/* Whether the instruction calls a target resolved by name (a custom call that is no marker). */
bool cg_custom_call_needs_target(const ir_instr *in);
/* custom_call_ffi.c: an API_VERSION_TYPED_FFI call of in's target on the given operand and
 * result leaves (aliasing already applied), its backend_config decoded into constant
 * XLA_FFI_Attrs (hlo/xla_ffi.h). */
void cg_lower_ffi_call(cg_function *f, ir_instr *in, LLVMValueRef *op_leaves, int n_op, cg_value *res);

/* Element conversion between compute types (convert's semantics: saturating float->int,
 * NaN -> 0, round to nearest even). */
LLVMValueRef cg_convert(cg_function *f, LLVMValueRef v, ir_etype from, ir_etype to);
/* Saturating float -> integer of LLVM type t (NaN -> 0), the same on every CPU. */
LLVMValueRef cg_fp_to_int_sat(cg_function *f, LLVMValueRef v, LLVMTypeRef t, bool is_signed);
/* A computed value of type et (in its compute type) rounded to what a buffer of et holds:
 * bf16 and the 8- and 4-bit floats compute in f32 but hold fewer bits; every other type is
 * returned as it is.  Fused loops round only at narrowing converts; other members keep f32
 * precision until the value is stored (XLA's xla_allow_excess_precision; fused.c `rounds`). */
LLVMValueRef cg_round_to(cg_function *f, ir_etype et, LLVMValueRef v);
/* bf16 values that are only moved: the bits a widened value came from (NULL when it was
 * computed), and the widening of such bits; cg_store writes moved bits back unchanged. */
LLVMValueRef cg_bf16_source_bits(cg_function *f, LLVMValueRef v);
LLVMValueRef cg_bf16_widen(cg_function *f, LLVMValueRef bits);

#endif
