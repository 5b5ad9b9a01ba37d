/* module.c — cg_emit_module: one LLVM function per computation (its instructions lowered in
 * order through lower.c's dispatch, buffers freed as their lifetimes end, results written to
 * the caller's buffers) and the ABI of runtime/include/hlo/abi.h (SYM_run, the typed SYM,
 * SYM_describe and a weak hlo_module_describe).  The top of the code generator: it calls the
 * stages below it (lower.c, frame.c, kernel.c, the floor) and nothing calls it but the driver.
 * Tests: testdata/golden through hlorun, the conformance suite.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "hlo/abi.h"


bool cg_symbol_reserved(const char *sym) {
  static const char *const suffixes[] = {"", "_run", "_describe"};
  if (strcmp(sym, "main") == 0 || strncmp(sym, "hlo_rt_", 7) == 0 || strcmp(sym, "hlo_module_describe") == 0)
    return true;
  for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
    char name[512];
    if (snprintf(name, sizeof name, "%s%s", sym, suffixes[i]) >= (int)sizeof name)
      return false;
    if (dlsym(RTLD_DEFAULT, name))
      return true;
  }
  return false;
}

char *cg_symbol_for_module(const char *name) {
  size_t n = strlen(name);
  char *s = malloc(n + 2);
  if (!s)
    return NULL;
  size_t k = 0;
  if (!isalpha((unsigned char)name[0]) && name[0] != '_')
    s[k++] = 'm';
  for (size_t i = 0; i < n; i++)
    s[k++] = isalnum((unsigned char)name[i]) ? name[i] : '_';
  s[k] = 0;
  for (int tries = 0; tries < 8 && cg_symbol_reserved(s); tries++) { /* "exp" -> "hlo_exp" */
    char *t = malloc(strlen(s) + 5);
    if (!t)
      break;
    sprintf(t, "hlo_%s", s);
    free(s);
    s = t;
  }
  return s;
}

/* A computation function whose body is this many LLVM instructions or more is left to LLVM
 * unoptimized (optnone): its work is calls into outlined kernels, which are optimized on their
 * own, while LLVM's function passes grow quadratically on one huge straight-line body (a 4000-op
 * training step took over 15 minutes at -O2). */
enum { CG_OPTNONE_INSTRUCTIONS = 4000 };

size_t cg_count_instructions(LLVMValueRef fn) {
  size_t n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
      n++;
  return n;
}

static void leave_large_function_unoptimized(cg_module *cm, LLVMValueRef fn) {
  if (cg_count_instructions(fn) < CG_OPTNONE_INSTRUCTIONS)
    return;
  cg_add_attr(cm, fn, LLVMAttributeFunctionIndex, "noinline");
  cg_add_attr(cm, fn, LLVMAttributeFunctionIndex, "optnone");
}

/* The result buffers of c (one per root leaf), and which instruction writes each directly
 * (buffer_plan_result_writers). */
static void assign_result_buffers(cg_function *f, ir_computation *c, LLVMValueRef results, LLVMValueRef *dst) {
  cg_module *cm = f->cm;
  int nr = ir_shape_count_leaves(c->root->shape);
  for (int i = 0; i < nr; i++)
    dst[i] = LLVMBuildLoad2(cm->b, cm->ptr, LLVMBuildGEP2(cm->b, cm->ptr, results, (LLVMValueRef[]){cg_i64(cm, i)}, 1, ""),
                            "res");
  f->result_buffer = calloc((size_t)c->n_instrs + 1, sizeof *f->result_buffer);
  int *writer = f->plan ? NULL : malloc(((size_t)c->n_instrs + 1) * sizeof *writer);
  const int *leaf = f->plan ? f->plan->result_leaf : writer;
  if (f->result_buffer && leaf) {
    if (writer)
      buffer_plan_result_writers(c, writer);
    for (int i = 0; i < c->n_instrs; i++)
      if (leaf[i] >= 0)
        f->result_buffer[i] = dst[leaf[i]];
  }
  free(writer);
}

/* Copies a root leaf into the caller's result buffer; a parameter's leaf only when the caller
 * did not pass the same buffer as parameter and result (a while loop's pass-through state). */
static bool holds_parameter_leaf(cg_function *f, const ir_computation *c, LLVMValueRef src) {
  for (int p = 0; p < c->n_params; p++) {
    cg_value v = f->values[c->params[p]->id];
    for (int k = 0; k < v.n; k++)
      if (v.leaves[k] == src)
        return true;
  }
  return false;
}

static void copy_result_leaf(cg_function *f, const ir_computation *c, LLVMValueRef dst, LLVMValueRef src,
                             const ir_shape *s) {
  if (holds_parameter_leaf(f, c, src))
    cg_copy_leaf_if_distinct(f, dst, src, s);
  else
    cg_copy_leaf(f, dst, src, s);
}

static void emit_computation(cg_module *cm, ir_computation *c) {
  cg_function f;
  cg_function_begin(&f, cm, c, cm->comp_fns[c->id]);
  LLVMValueRef params = LLVMGetParam(f.fn, 1), results = LLVMGetParam(f.fn, 2);
  int leaf = 0;
  for (int p = 0; p < c->n_params; p++)
    f.values[c->params[p]->id] = cg_leaves_from_array(&f, params, &leaf, c->params[p]->shape, c->params[p]->name.p);
  const comp_plan *cp = cm->plan && c->id < cm->plan->n_comps ? &cm->plan->comps[c->id] : NULL;
  f.plan = cp && cp->planned ? cp : NULL;
  f.scratch_base = f.plan ? f.plan->frame_bytes : 0;
  LLVMValueRef *dst = calloc((size_t)ir_shape_count_leaves(c->root->shape) + 1, sizeof *dst);
  assign_result_buffers(&f, c, results, dst);
  const int *last = f.plan ? f.plan->last_reader : NULL;
  if (cm->assignment)
    fprintf(cm->assignment, "computation %s:\n", c->name.p);
  for (int i = 0; i < c->n_instrs && !cm->error; i++) {
    f.current = c->instrs[i];
    if (c->instrs[i]->op != IR_OP_PARAMETER)
      cg_lower_instr(&f, c->instrs[i]);
    if (last && !cm->error)
      cg_free_dead_buffers(&f, i, last);
  }
  if (!cm->error) {
    /* Parameters first: a donated parameter's buffer may be a result buffer (the plan's
     * result_donor), which other results overwrite only after it has been read. */
    cg_value r = f.values[c->root->id];
    for (int pass = 0; pass < 2; pass++)
      for (int i = 0; i < r.n; i++)
        if (r.leaves[i] != dst[i] && holds_parameter_leaf(&f, c, r.leaves[i]) == (pass == 0))
          copy_result_leaf(&f, c, dst[i], r.leaves[i], r.shapes[i]);
  }
  free(dst);
  free(f.result_buffer);
  cg_report_print(&f);
  int64_t frame = f.scratch_base + f.frame_peak;
  cm->frame_bytes[c->id] = frame;
  LLVMSetInitializer(cm->frame_globals[c->id], cg_i64(cm, frame));
  if (cm->assignment && frame)
    fprintf(cm->assignment, "  frame: %lld bytes\n", (long long)frame);
  cg_function_end(&f);
  leave_large_function_unoptimized(cm, f.fn);
}

/* Computations that only fusions call, whose fused kernels compute them element by element
 * (fused.c): no function of their own is needed. */
static bool *fused_only(const ir_module *m) {
  bool *called_other = calloc((size_t)m->n_comps + 1, sizeof(bool)), *fused = calloc((size_t)m->n_comps + 1, sizeof(bool));
  if (!called_other || !fused) {
    free(called_other);
    free(fused);
    return NULL;
  }
  for (int ci = 0; ci < m->n_comps; ci++)
    for (int i = 0; i < m->comps[ci]->n_instrs; i++) {
      const ir_instr *in = m->comps[ci]->instrs[i];
      for (int k = 0; k < in->n_called; k++) {
        if (in->op == IR_OP_FUSION && cg_fusion_supported(in))
          fused[in->called[k]->id] = true;
        else
          called_other[in->called[k]->id] = true;
      }
    }
  for (int ci = 0; ci < m->n_comps; ci++)
    fused[ci] = fused[ci] && !called_other[ci] && !m->comps[ci]->is_entry;
  free(called_other);
  return fused;
}

/* A function that is never called: returns ok. */
static void emit_empty(cg_module *cm, ir_computation *c) {
  LLVMSetInitializer(cm->frame_globals[c->id], cg_i64(cm, 0));
  LLVMPositionBuilderAtEnd(cm->b, LLVMAppendBasicBlockInContext(cm->ctx, cm->comp_fns[c->id], "entry"));
  LLVMBuildRet(cm->b, LLVMConstNull(cm->ptr));
}

/* ---- ABI: entry points and the descriptor ------------------------------------------------ */

static LLVMValueRef const_string(cg_module *cm, const char *s, const char *name) {
  return cg_const_global(cm, LLVMConstStringInContext(cm->ctx, s, (unsigned)strlen(s), 0), name);
}

/* The custom-call targets the module resolves by name, each once: a constant array of
 * strings (hlo_module_desc.custom_call_targets); *n gets the count. */
static LLVMValueRef custom_call_targets(cg_module *cm, int32_t *n) {
  const ir_module *m = cm->ir;
  int cap = 0;
  for (int ci = 0; ci < m->n_comps; ci++)
    cap += m->comps[ci]->n_instrs;
  ir_str *seen = calloc((size_t)cap + 1, sizeof *seen);
  LLVMValueRef *elems = calloc((size_t)cap + 1, sizeof *elems);
  *n = 0;
  for (int ci = 0; seen && elems && ci < m->n_comps; ci++)
    for (int i = 0; i < m->comps[ci]->n_instrs; i++) {
      const ir_instr *in = m->comps[ci]->instrs[i];
      if (!cg_custom_call_needs_target(in))
        continue;
      ir_str t = in->attrs.custom_text;
      bool dup = false;
      for (int k = 0; k < *n && !dup; k++)
        dup = seen[k].len == t.len && memcmp(seen[k].p, t.p, t.len) == 0;
      if (dup)
        continue;
      char name[300];
      snprintf(name, sizeof name, "%.*s", (int)t.len, t.p);
      seen[*n] = t;
      elems[(*n)++] = const_string(cm, name, "module.cc_target");
    }
  LLVMValueRef g = cg_const_global(cm, LLVMConstArray2(cm->ptr, elems, (uint64_t)*n), "module.cc_targets");
  free(seen);
  free(elems);
  return g;
}

static LLVMValueRef array_descs(cg_module *cm, LLVMTypeRef desc_t, const ir_shape **leaves, char **names, int n,
                                const char *tag) {
  LLVMValueRef *elems = calloc((size_t)n + 1, sizeof *elems);
  for (int i = 0; i < n; i++) {
    const ir_shape *s = leaves[i];
    LLVMValueRef dims_c[64];
    for (int d = 0; d < s->rank; d++)
      dims_c[d] = cg_i64(cm, s->dims[d]);
    LLVMValueRef dims_init = LLVMConstArray2(cm->i64, dims_c, (uint64_t)s->rank);
    char gname[64];
    snprintf(gname, sizeof gname, "%s.dims.%d", tag, i);
    LLVMValueRef dims_g = cg_const_global(cm, dims_init, gname);
    int64_t bytes = 0;
    if (ir_etype_is_array(s->et))
      ir_shape_byte_size(s, &bytes);
    snprintf(gname, sizeof gname, "%s.name.%d", tag, i);
    LLVMValueRef fields[5] = {LLVMConstInt(cm->i32, (unsigned long long)s->et, 0),
                              LLVMConstInt(cm->i32, (unsigned long long)s->rank, 0), dims_g, cg_i64(cm, bytes),
                              const_string(cm, names[i], gname)};
    elems[i] = LLVMConstNamedStruct(desc_t, fields, 5);
  }
  LLVMValueRef init = LLVMConstArray2(desc_t, elems, (uint64_t)n);
  free(elems);
  char gname[64];
  snprintf(gname, sizeof gname, "%s.descs", tag);
  return cg_const_global(cm, init, gname);
}

static void leaf_names(const ir_shape *s, const char *base, char **out, int *n) {
  if (s->et != IR_TUPLE) {
    out[(*n)++] = strdup(base);
    return;
  }
  for (int i = 0; i < s->n_elems; i++) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s{%d}", base, i);
    leaf_names(s->elems[i], buf, out, n);
  }
}

/* The arena a call of c needs: its own frame, then the largest of its callees' frames and of
 * its kernels' scratch. */
static int64_t total_frame(const cg_module *cm, const ir_computation *c, int64_t *memo) {
  if (memo[c->id] >= 0)
    return memo[c->id];
  int64_t callees = 0;
  for (int i = 0; i < c->n_instrs; i++)
    for (int k = 0; k < c->instrs[i]->n_called; k++) {
      int64_t t = total_frame(cm, c->instrs[i]->called[k], memo);
      callees = t > callees ? t : callees;
    }
  if (cm->kernel_scratch[c->id] > callees)
    callees = cm->kernel_scratch[c->id];
  return memo[c->id] = cm->frame_bytes[c->id] + callees;
}

static int64_t arena_bytes(const cg_module *cm) {
  int64_t *memo = malloc(((size_t)cm->ir->n_comps + 1) * sizeof *memo);
  if (!memo)
    return -1;
  for (int i = 0; i < cm->ir->n_comps; i++)
    memo[i] = -1;
  int64_t t = total_frame(cm, cm->ir->entry, memo);
  free(memo);
  return t;
}

/* The descriptor's result_donors: a constant i32 array of the plan's donors, or null. */
static LLVMValueRef result_donors(cg_module *cm, int nr) {
  const ir_computation *e = cm->ir->entry;
  const comp_plan *cp = cm->plan && e->id < cm->plan->n_comps ? &cm->plan->comps[e->id] : NULL;
  if (!cp || !cp->result_donor)
    return LLVMConstNull(cm->ptr);
  LLVMValueRef *v = calloc((size_t)nr + 1, sizeof *v);
  if (!v)
    return LLVMConstNull(cm->ptr);
  for (int r = 0; r < nr; r++)
    v[r] = LLVMConstInt(cm->i32, (unsigned long long)(int64_t)cp->result_donor[r], 1);
  LLVMValueRef arr = LLVMConstArray2(cm->i32, v, (uint64_t)nr);
  free(v);
  return cg_const_global(cm, arr, "module.result_donors");
}

/* SYM_run(ctx, params, results): the entry computation with the call's arena. */
static LLVMValueRef emit_run(cg_module *cm, const char *name, int64_t arena) {
  LLVMBuilderRef b = cm->b;
  LLVMTypeRef run_t = LLVMFunctionType(cm->ptr, (LLVMTypeRef[]){cm->ptr, cm->ptr, cm->ptr}, 3, 0);
  LLVMValueRef run = LLVMAddFunction(cm->mod, name, run_t);
  LLVMSetVisibility(run, LLVMProtectedVisibility);
  LLVMValueRef ctx = LLVMGetParam(run, 0);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cm->ctx, run, "entry"));
  LLVMValueRef frame = LLVMConstNull(cm->ptr);
  if (arena > 0) {
    LLVMValueRef st_slot = LLVMBuildAlloca(b, cm->ptr, "st");
    frame = cg_runtime_call(cm, CG_RT_hlo_rt_arena_acquire, (LLVMValueRef[]){ctx, cg_i64(cm, arena), st_slot}, 3,
                            "arena");
    LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(cm->ctx, run, "ok");
    LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(cm->ctx, run, "no.arena");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, frame, LLVMConstNull(cm->ptr), ""), bad, ok);
    LLVMPositionBuilderAtEnd(b, bad);
    LLVMBuildRet(b, LLVMBuildLoad2(b, cm->ptr, st_slot, "st"));
    LLVMPositionBuilderAtEnd(b, ok);
  }
  LLVMValueRef st = LLVMBuildCall2(b, cm->comp_fn_type, cm->comp_fns[cm->ir->entry->id],
                                   (LLVMValueRef[]){ctx, LLVMGetParam(run, 1), LLVMGetParam(run, 2), frame}, 4, "st");
  if (arena > 0) {
    cg_runtime_call(cm, CG_RT_hlo_rt_arena_release, (LLVMValueRef[]){ctx, frame}, 2, "");
  }
  LLVMBuildRet(b, st);
  return run;
}

static void emit_abi(cg_module *cm, const cg_options *opts, const char *sym, int64_t arena) {
  ir_computation *entry = cm->ir->entry;
  LLVMBuilderRef b = cm->b;
  int np = 0, nr = ir_shape_count_leaves(entry->root->shape);
  for (int i = 0; i < entry->n_params; i++)
    np += ir_shape_count_leaves(entry->params[i]->shape);
  const ir_shape **pleaves = calloc((size_t)np + 1, sizeof *pleaves), **rleaves = calloc((size_t)nr + 1, sizeof *rleaves);
  char **pnames = calloc((size_t)np + 1, sizeof *pnames), **rnames = calloc((size_t)nr + 1, sizeof *rnames);
  int k = 0, kn = 0;
  for (int i = 0; i < entry->n_params; i++) {
    cg_collect_leaves(entry->params[i]->shape, pleaves, &k);
    leaf_names(entry->params[i]->shape, entry->params[i]->name.p, pnames, &kn);
  }
  k = kn = 0;
  cg_collect_leaves(entry->root->shape, rleaves, &k);
  leaf_names(entry->root->shape, entry->root->name.p, rnames, &kn);

  char name[512];
  snprintf(name, sizeof name, "%s_run", sym);
  LLVMValueRef run = emit_run(cm, name, arena);
  LLVMTypeRef run_t = LLVMGlobalGetValueType(run);

  /* SYM(ctx, p0, ..., r0, ...) */
  int nargs = 1 + np + nr;
  LLVMTypeRef *ats = calloc((size_t)nargs, sizeof *ats);
  for (int i = 0; i < nargs; i++)
    ats[i] = cm->ptr;
  LLVMTypeRef typed_t = LLVMFunctionType(cm->ptr, ats, (unsigned)nargs, 0);
  LLVMValueRef typed = LLVMAddFunction(cm->mod, sym, typed_t);
  LLVMSetVisibility(typed, LLVMProtectedVisibility);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cm->ctx, typed, "entry"));
  LLVMValueRef parr = LLVMBuildAlloca(b, LLVMArrayType2(cm->ptr, (uint64_t)(np ? np : 1)), "params");
  LLVMValueRef rarr = LLVMBuildAlloca(b, LLVMArrayType2(cm->ptr, (uint64_t)(nr ? nr : 1)), "results");
  for (int i = 0; i < np; i++)
    LLVMBuildStore(b, LLVMGetParam(typed, (unsigned)(1 + i)),
                   LLVMBuildGEP2(b, cm->ptr, parr, (LLVMValueRef[]){cg_i64(cm, i)}, 1, ""));
  for (int i = 0; i < nr; i++)
    LLVMBuildStore(b, LLVMGetParam(typed, (unsigned)(1 + np + i)),
                   LLVMBuildGEP2(b, cm->ptr, rarr, (LLVMValueRef[]){cg_i64(cm, i)}, 1, ""));
  LLVMBuildRet(b, LLVMBuildCall2(b, run_t, run, (LLVMValueRef[]){LLVMGetParam(typed, 0), parr, rarr}, 3, "st"));
  free(ats);

  /* The descriptor (field order and types mirror hlo_array_desc / hlo_module_desc). */
  LLVMTypeRef desc_t = LLVMStructCreateNamed(cm->ctx, "hlo_array_desc");
  LLVMStructSetBody(desc_t, (LLVMTypeRef[]){cm->i32, cm->i32, cm->ptr, cm->i64, cm->ptr}, 5, 0);
  LLVMTypeRef mod_t = LLVMStructCreateNamed(cm->ctx, "hlo_module_desc");
  LLVMTypeRef mfields[] = {cm->i32, cm->i32, cm->ptr, cm->ptr, cm->ptr, cm->i32, cm->ptr, cm->i32,
                           cm->ptr, cm->ptr, cm->ptr, cm->i32, cm->i32, cm->i32, cm->i64, cm->i32, cm->ptr, cm->ptr};
  LLVMStructSetBody(mod_t, mfields, 18, 0);
  unsigned long long size = LLVMABISizeOfType(LLVMGetModuleDataLayout(cm->mod), mod_t);
  LLVMValueRef pd = array_descs(cm, desc_t, pleaves, pnames, np, "param");
  LLVMValueRef rd = array_descs(cm, desc_t, rleaves, rnames, nr, "result");
  uint32_t features = opts->elided_constants ? HLO_FEATURE_ELIDED_CONSTANTS : 0;
  LLVMValueRef vals[] = {LLVMConstInt(cm->i32, HLO_ABI_VERSION, 0), LLVMConstInt(cm->i32, size, 0),
                         const_string(cm, cm->ir->name.p, "module.name"), const_string(cm, sym, "module.symbol"),
                         const_string(cm, HLOC_VERSION, "module.version"), LLVMConstInt(cm->i32, (unsigned long long)np, 0),
                         pd, LLVMConstInt(cm->i32, (unsigned long long)nr, 0), rd, run, typed,
                         LLVMConstInt(cm->i32, features, 0),
                         LLVMConstInt(cm->i32, (unsigned long long)(cm->ir->replica_count ? cm->ir->replica_count
                                                                     : cm->ir->inferred_replica_count ? cm->ir->inferred_replica_count : 1), 0),
                         LLVMConstInt(cm->i32, (unsigned long long)(cm->ir->num_partitions ? cm->ir->num_partitions : 1), 0),
                         cg_i64(cm, arena), NULL, NULL, NULL};
  int32_t n_targets = 0;
  vals[16] = custom_call_targets(cm, &n_targets);
  vals[15] = LLVMConstInt(cm->i32, (unsigned long long)n_targets, 0);
  vals[17] = result_donors(cm, nr);
  LLVMValueRef desc = cg_const_global(cm, LLVMConstNamedStruct(mod_t, vals, 18), "module.desc");
  LLVMTypeRef describe_t = LLVMFunctionType(cm->ptr, NULL, 0, 0);
  snprintf(name, sizeof name, "%s_describe", sym);
  const char *names[2] = {name, "hlo_module_describe"};
  for (int i = 0; i < 2; i++) {
    LLVMValueRef fn = LLVMAddFunction(cm->mod, names[i], describe_t);
    if (i == 1)
      LLVMSetLinkage(fn, LLVMWeakAnyLinkage);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cm->ctx, fn, "entry"));
    LLVMBuildRet(b, desc);
  }
  for (int i = 0; i < np; i++)
    free(pnames[i]);
  for (int i = 0; i < nr; i++)
    free(rnames[i]);
  free(pnames);
  free(rnames);
  free(pleaves);
  free(rleaves);
}

hlo_status cg_emit_module(ir_module *m, cg_options *opts, LLVMContextRef ctx, LLVMTargetMachineRef tm,
                          LLVMModuleRef *out_mod) {
  *out_mod = NULL;
  cg_module cm = {0};
  cm.ctx = ctx;
  cm.ir = m;
  cm.mod = LLVMModuleCreateWithNameInContext(m->name.p, ctx);
  if (tm) {
    char *triple = LLVMGetTargetMachineTriple(tm);
    LLVMSetTarget(cm.mod, triple);
    LLVMDisposeMessage(triple);
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(cm.mod, td);
    LLVMDisposeTargetData(td);
  }
  cm.b = LLVMCreateBuilderInContext(ctx);
  cg_module_types_init(&cm, ctx);
  cm.comp_fn_type = LLVMFunctionType(cm.ptr, (LLVMTypeRef[]){cm.ptr, cm.ptr, cm.ptr, cm.ptr}, 4, 0);
  cm.comp_fns = calloc((size_t)m->n_comps + 1, sizeof *cm.comp_fns);
  cm.frame_bytes = calloc((size_t)m->n_comps + 1, sizeof *cm.frame_bytes);
  cm.frame_globals = calloc((size_t)m->n_comps + 1, sizeof *cm.frame_globals);
  cm.kernel_scratch = calloc((size_t)m->n_comps + 1, sizeof *cm.kernel_scratch);
  cm.assignment = opts->assignment;
  cm.opts = opts;
  opts->n_largest = 0;
  for (int i = 0; i < m->n_comps; i++) {
    m->comps[i]->id = i;
    char name[600];
    snprintf(name, sizeof name, "hlo.comp.%d.%s", i, m->comps[i]->name.p);
    cm.comp_fns[i] = LLVMAddFunction(cm.mod, name, cm.comp_fn_type);
    LLVMSetLinkage(cm.comp_fns[i], LLVMInternalLinkage);
    snprintf(name, sizeof name, "hlo.frame.%d", i);
    cm.frame_globals[i] = LLVMAddGlobal(cm.mod, cm.i64, name);
    LLVMSetGlobalConstant(cm.frame_globals[i], 1);
    LLVMSetLinkage(cm.frame_globals[i], LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(cm.frame_globals[i], LLVMGlobalUnnamedAddr); /* read for its value only */
  }
  buffer_plan *own_plan = NULL;
  cm.plan = opts->plan;
  if (!cm.plan && !(cm.error = buffer_plan_build(m, &own_plan)))
    cm.plan = own_plan;
  bool *inlined = fused_only(m);
  for (int i = 0; i < m->n_comps && !cm.error; i++) {
    if (inlined && inlined[i])
      emit_empty(&cm, m->comps[i]);
    else
      emit_computation(&cm, m->comps[i]);
  }
  free(inlined);
  char *sym = opts->symbol ? strdup(opts->symbol) : cg_symbol_for_module(m->name.p);
  int64_t arena = cm.error ? 0 : arena_bytes(&cm);
  opts->arena_bytes = arena;
  if (!cm.error)
    emit_abi(&cm, opts, sym, arena);
  free(sym);
  LLVMDisposeBuilder(cm.b);
  free(cm.comp_fns);
  free(cm.frame_bytes);
  free(cm.frame_globals);
  free(cm.kernel_scratch);
  buffer_plan_free(own_plan);
  if (cm.error) {
    LLVMDisposeModule(cm.mod);
    return cm.error;
  }
  *out_mod = cm.mod;
  return NULL;
}
