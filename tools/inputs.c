/* inputs.c — hlorun's inputs (inputs.h): expanding --input values into collections'
 * members, matching them to parameter leaves (by position, or by name), and reading them
 * zero-copy from read-only mappings where the stored bytes are what the leaf wants, copied
 * otherwise.  Also the folder collection (@DIR) and mapping files (archive.h).
 */
#include "inputs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/literal.h"
#include "literal_io.h"
#include "random_fill.h"

/* ---- mapped files and collections ----------------------------------------------------------- */

hlo_status mapped_file_open(const char *path, mapped_file *out) {
  memset(out, 0, sizeof *out);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: not a regular file", path);
  }
  if (st.st_size > 0) {
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      close(fd);
      return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: cannot map: %s", path, strerror(e));
    }
    out->bytes = p;
    out->size = (size_t)st.st_size;
  }
  close(fd);
  return NULL;
}

void mapped_file_close(mapped_file *m) {
  if (m->bytes)
    munmap((void *)m->bytes, m->size);
  memset(m, 0, sizeof *m);
}

void archive_close(archive *a) {
  for (int i = 0; a->members && i < a->n_members; i++) {
    free(a->members[i].name);
    free(a->members[i].path);
  }
  free(a->members);
  free(a->path);
  mapped_file_close(&a->map);
  memset(a, 0, sizeof *a);
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

static int by_name(const void *x, const void *y) {
  return strcmp(((const archive_member *)x)->name, ((const archive_member *)y)->name);
}

/* @DIR: every *.npy file in the folder (not its subfolders), sorted by name (byte order). */
static hlo_status dir_open(const char *path, archive *a) {
  DIR *d = opendir(path);
  if (!d)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: cannot open the folder: %s", path, strerror(errno));
  hlo_status s = NULL;
  int cap = 0;
  for (struct dirent *e; !s && (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    char *full = NULL;
    struct stat st;
    if (n < 5 || !ends_with(e->d_name, ".npy") || asprintf(&full, "%s/%s", path, e->d_name) < 0 ||
        stat(full, &st) != 0 || S_ISDIR(st.st_mode)) {
      free(full);
      continue;
    }
    if (a->n_members == cap) {
      cap = cap ? 2 * cap : 16;
      archive_member *grown = realloc(a->members, (size_t)cap * sizeof *grown);
      if (!grown) {
        free(full);
        s = hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
        break;
      }
      a->members = grown;
    }
    archive_member *m = &a->members[a->n_members++];
    memset(m, 0, sizeof *m);
    m->kind = MEMBER_FILE;
    m->path = full;
    m->name = strndup(e->d_name, n - 4);
    if (!m->name)
      s = hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  closedir(d);
  HLO_RETURN_IF_ERROR(s);
  if (a->n_members == 0)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: the folder has no .npy files", path);
  qsort(a->members, (size_t)a->n_members, sizeof *a->members, by_name);
  return NULL;
}

/* Which collection an --input path is, or -1: @ and a folder; a .safetensors file; a .npz
 * file, or any file that starts as a zip does. */
static int collection_kind(const char *path, bool at) {
  struct stat st;
  if (stat(path, &st) != 0)
    return -1;
  if (S_ISDIR(st.st_mode))
    return at ? ARCHIVE_DIR : -1;
  if (!S_ISREG(st.st_mode) || ends_with(path, ".npy"))
    return -1;
  if (ends_with(path, ".safetensors"))
    return ARCHIVE_SAFETENSORS;
  if (ends_with(path, ".npz"))
    return ARCHIVE_NPZ;
  unsigned char magic[4] = {0};
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(magic, 1, 4, f) : 0;
  if (f)
    fclose(f);
  return n == 4 && (memcmp(magic, "PK\3\4", 4) == 0 || memcmp(magic, "PK\5\6", 4) == 0) ? ARCHIVE_NPZ : -1;
}

static hlo_status open_collection(const char *path, int kind, archive *a) {
  memset(a, 0, sizeof *a);
  a->kind = (archive_kind)kind;
  if (!(a->path = strdup(path)))
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  if (kind == ARCHIVE_DIR)
    return dir_open(path, a);
  HLO_RETURN_IF_ERROR(mapped_file_open(path, &a->map));
  return kind == ARCHIVE_NPZ ? npz_open(path, a) : safetensors_open(path, a);
}

/* ---- expansion and matching ---------------------------------------------------------------- */

int input_replica_prefix(const char *arg, const char **rest) {
  *rest = arg;
  if (arg[0] != 'r' || arg[1] < '0' || arg[1] > '9')
    return -1;
  int k = 0, i = 1;
  for (; arg[i] >= '0' && arg[i] <= '9'; i++)
    if ((k = k * 10 + (arg[i] - '0')) > 1000000)
      return -1;
  if (arg[i] != ':')
    return -1;
  *rest = arg + i + 1;
  return k;
}

static hlo_status add_item(input_list *l, int *cap, input_item item) {
  if (l->n_items == *cap) {
    *cap = *cap ? 2 * *cap : 16;
    input_item *grown = realloc(l->items, (size_t)*cap * sizeof *grown);
    if (!grown)
      return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
    l->items = grown;
  }
  l->items[l->n_items++] = item;
  return NULL;
}

hlo_status inputs_expand(const char *const *args, int n, input_list *l) {
  memset(l, 0, sizeof *l);
  l->args = args;
  l->n_args = n;
  if (!(l->sources = calloc((size_t)n + 1, sizeof *l->sources)))
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  int cap = 0;
  for (int i = 0; i < n; i++) {
    const char *rest;
    int r = input_replica_prefix(args[i], &rest);
    bool at = rest[0] == '@';
    const char *text = at ? rest + 1 : rest;
    int kind = litio_looks_inline(text) ? -1 : collection_kind(text, at);
    if (kind < 0) {
      HLO_RETURN_IF_ERROR(add_item(l, &cap, (input_item){r, text, -1, 0}));
      continue;
    }
    archive *a = &l->sources[l->n_sources++];
    HLO_RETURN_IF_ERROR(open_collection(text, kind, a));
    for (int m = 0; m < a->n_members; m++)
      HLO_RETURN_IF_ERROR(add_item(l, &cap, (input_item){r, text, l->n_sources - 1, m}));
  }
  return NULL;
}

void inputs_free(input_list *l) {
  for (int i = 0; l->sources && i < l->n_sources; i++)
    archive_close(&l->sources[i]);
  free(l->sources);
  free(l->items);
  memset(l, 0, sizeof *l);
}

/* "w.npz:arr_0", a folder member's path, or the --input text. */
static void item_label(const input_list *l, const input_item *it, char *buf, size_t cap) {
  if (it->source < 0) {
    snprintf(buf, cap, "%s", it->text);
    return;
  }
  const archive *a = &l->sources[it->source];
  const archive_member *m = &a->members[it->member];
  if (m->kind == MEMBER_FILE)
    snprintf(buf, cap, "%s", m->path);
  else
    snprintf(buf, cap, "%s:%s", a->path, m->name);
}

static int param_named(const hlo_module_desc *desc, const char *name) {
  for (int i = 0; i < desc->num_params; i++)
    if (desc->params[i].name && strcmp(desc->params[i].name, name) == 0)
      return i;
  return -1;
}

/* Is collection s matched by name: every member names a parameter leaf, no two the same? */
static bool matched_by_name(const archive *a, const hlo_module_desc *desc) {
  if (a->n_members == 0)
    return false;
  unsigned char *seen = calloc((size_t)desc->num_params + 1, 1);
  bool ok = seen != NULL;
  for (int m = 0; ok && m < a->n_members; m++) {
    int p = param_named(desc, a->members[m].name);
    ok = p >= 0 && !seen[p];
    if (ok)
      seen[p] = 1;
  }
  free(seen);
  return ok;
}

static bool has_own_inputs(const input_list *l, int r) {
  const char *rest;
  for (int i = 0; i < l->n_args; i++)
    if (input_replica_prefix(l->args[i], &rest) == r)
      return true;
  return false;
}

static void desc_text(const hlo_array_desc *d, char *buf, size_t cap) {
  litio_shape_text(d->dtype, d->rank, d->dims, buf, cap);
}

/* ", member 3 of 3 of w.npz" for a collection's member, else "". */
static void member_note(const input_list *l, const input_item *it, char *buf, size_t cap) {
  buf[0] = 0;
  if (it && it->source >= 0)
    snprintf(buf, cap, " (member %d of %d of %s)", it->member + 1, l->sources[it->source].n_members,
             l->sources[it->source].path);
}

static hlo_status missing(const input_list *l, const hlo_module_desc *desc, const char *model, const char *who,
                          int given, int p, int named, const char *named_from, const input_item *last) {
  int np = desc->num_params;
  char want[256], note[4400] = "", label[4200], where[4400];
  desc_text(&desc->params[p], want, sizeof want);
  if (named)
    snprintf(note, sizeof note, "; %d matched by name from %s", named, named_from);
  if (last && last->source >= 0) {
    item_label(l, last, label, sizeof label);
    member_note(l, last, where, sizeof where);
    size_t k = strlen(note);
    snprintf(note + k, sizeof note - k, "; the last input by position is '%.1000s'%.1000s", label, where);
  }
  return hlo_status_make(HLO_INVALID_ARGUMENT, "%s takes %d input%s but %d %s given%s: parameter %d (%%%s) %s has no "
                         "--input%s%s", model, np, np == 1 ? "" : "s", given, given == 1 ? "was" : "were", who, p,
                         desc->params[p].name, want, np - p > 1 && !named ? " (nor do the ones after it)" : "", note);
}

static hlo_status extra(const input_list *l, const hlo_module_desc *desc, const char *model, const char *who,
                        int given, const input_item *it) {
  int np = desc->num_params;
  char label[4200], where[4400];
  item_label(l, it, label, sizeof label);
  member_note(l, it, where, sizeof where);
  return hlo_status_make(HLO_INVALID_ARGUMENT, "%s takes %d input%s but %d were given%s: '%s'%s is extra", model, np,
                         np == 1 ? "" : "s", given, who, label, where);
}

/* The collections that take their parameters by name, then every other input in order. */
static hlo_status assign(const input_list *l, const hlo_module_desc *desc, const char *model, const char *who,
                         const input_item **sel, int n, const input_item **out) {
  int named = 0;
  const char *named_from = NULL;
  for (int s = 0; s < l->n_sources; s++) {
    if (!matched_by_name(&l->sources[s], desc))
      continue;
    for (int i = 0; i < n; i++) {
      if (!sel[i] || sel[i]->source != s)
        continue;
      int p = param_named(desc, l->sources[s].members[sel[i]->member].name);
      if (out[p]) {
        char a[4200], b[4200];
        item_label(l, out[p], a, sizeof a);
        item_label(l, sel[i], b, sizeof b);
        return hlo_status_make(HLO_INVALID_ARGUMENT, "parameter %d (%%%s) is named by both '%s' and '%s'%s", p,
                               desc->params[p].name, a, b, who);
      }
      out[p] = sel[i];
      sel[i] = NULL;
      named++;
      named_from = !named_from || strcmp(named_from, l->sources[s].path) == 0 ? l->sources[s].path : "several files";
    }
  }
  int p = 0;
  const input_item *last = NULL;
  for (int i = 0; i < n; i++) {
    if (!sel[i])
      continue;
    while (p < desc->num_params && out[p])
      p++;
    if (p == desc->num_params)
      return extra(l, desc, model, who, n, sel[i]);
    out[p++] = last = sel[i];
  }
  for (p = 0; p < desc->num_params; p++)
    if (!out[p])
      return missing(l, desc, model, who, n, p, named, named_from, last);
  return NULL;
}

hlo_status inputs_match(const input_list *l, const hlo_module_desc *desc, const char *model, int r, int count,
                        const input_item **out) {
  char who[64] = "";
  if (count > 1 && r >= 0)
    snprintf(who, sizeof who, " for replica %d", r);
  int want = r >= 0 && has_own_inputs(l, r) ? r : -1;
  const input_item **sel = calloc((size_t)l->n_items + 1, sizeof *sel);
  if (!sel)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  int n = 0;
  for (int i = 0; i < l->n_items; i++)
    if (l->items[i].replica == want)
      sel[n++] = &l->items[i];
  memset(out, 0, (size_t)desc->num_params * sizeof *out);
  hlo_status s = assign(l, desc, model, who, sel, n, out);
  free(sel);
  return s;
}

/* ---- reading ------------------------------------------------------------------------------- */

hlo_status param_set_init(param_set *s, int num_params) {
  memset(s, 0, sizeof *s);
  s->params = calloc((size_t)num_params + 1, sizeof *s->params);
  s->owned = calloc((size_t)num_params + 1, sizeof *s->owned);
  s->maps = calloc((size_t)num_params + 1, sizeof *s->maps);
  if (!s->params || !s->owned || !s->maps)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  return NULL;
}

void param_set_free(param_set *s, int num_params) {
  for (int i = 0; i < num_params; i++) {
    if (s->owned)
      free(s->owned[i]);
    if (s->maps)
      mapped_file_close(&s->maps[i]);
  }
  free(s->params);
  free(s->owned);
  free(s->maps);
  memset(s, 0, sizeof *s);
}

/* A leaf buffer, 64-byte aligned, its size rounded up to 64 bytes; `zero`: all of it zeroed,
 * else only the rounding.  Large ones are aligned to 2 MiB and asked for transparent huge
 * pages: a fresh buffer's page faults are most of the cost of filling it. */
static void *alloc_leaf(int64_t bytes, bool zero) {
  enum { HUGE = 1 << 21 };
  size_t n = (size_t)(bytes > 0 ? bytes : 0), padded = (n + 64) & ~(size_t)63;
  bool huge = n >= 2 * (size_t)HUGE;
  if (huge)
    padded = (n + HUGE) & ~(size_t)(HUGE - 1);
  unsigned char *p = aligned_alloc(huge ? HUGE : 64, padded);
  if (p && huge)
    madvise(p, padded, MADV_HUGEPAGE); /* advice only: no huge pages is fine */
  if (p)
    memset(p + (zero ? 0 : n), 0, padded - (zero ? 0 : n));
  return p;
}

static hlo_status alloc_failed(int k, const hlo_array_desc *d) {
  return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory for parameter %d (%lld bytes)", k,
                         (long long)d->byte_size);
}

/* An array located in memory, as stored. */
typedef struct located {
  npy_array a;        /* dims, nbytes and the stored bytes (a.data); kind/itemsize for .npy */
  npy_layout layout;
  int32_t etype;      /* the HLO element type when the file names one (safetensors), else -1 */
  void *buffer;       /* owned memory holding a.data (an inflated member or a read pipe), or NULL */
} located;

bool inputs_npy_matches(const npy_array *a, int32_t dt) {
  if (dt == IR_PRED)
    return (a->kind == 'b' || a->kind == 'u') && a->itemsize == 1;
  if (dt == IR_BF16)
    return (a->kind == 'u' || a->kind == 'V') && a->itemsize == 2;
  const char *descr = ir_etype_table[dt].npy_descr;
  return descr[0] && a->kind == descr[1] && a->itemsize == atoi(descr + 2);
}

bool inputs_dims_match(const npy_array *a, const hlo_array_desc *d) {
  if (a->rank != d->rank)
    return false;
  for (int i = 0; i < d->rank; i++)
    if (a->dims[i] != d->dims[i])
      return false;
  return true;
}

static void located_text(const located *x, char *buf, size_t cap) {
  if (x->etype >= 0)
    litio_shape_text(x->etype, x->a.rank, x->a.dims, buf, cap);
  else
    npy_describe(&x->a, buf, cap);
}

/* Element alignment the generated code and the runtime assume: the element's (a complex
 * number's component's) natural alignment.  Any 64-byte-aligned buffer is faster, but the
 * loads carry no larger alignment (docs/abi.md). */
static bool aligned_for(const void *p, int32_t dtype) {
  int eb = ir_etype_table[dtype].storage_bytes / (ir_etype_is_complex((ir_etype)dtype) ? 2 : 1);
  return eb <= 1 || (uintptr_t)p % (uintptr_t)eb == 0;
}

static void bf16_from_f32(const unsigned char *src, int64_t n, unsigned char *dst) {
  for (int64_t i = 0; i < n; i++) { /* rounded to nearest even, as XLA's convert does */
    float f;
    memcpy(&f, src + 4 * i, 4);
    ir_lit_encode_float(IR_BF16, f, 0, dst + 2 * i);
  }
}

/* The located array becomes parameter k: passed as it is when it is exactly what the leaf
 * wants, else copied into a buffer of the leaf's own.  x->buffer is consumed. */
static hlo_status place(const char *label, int k, const hlo_array_desc *d, located *x, param_set *s) {
  char want[256], got[256];
  bool to_bf16 = d->dtype == IR_BF16 && (x->etype >= 0 ? x->etype == IR_F32 : x->a.kind == 'f' && x->a.itemsize == 4);
  bool same = x->etype >= 0 ? x->etype == d->dtype : inputs_npy_matches(&x->a, d->dtype);
  if (!inputs_dims_match(&x->a, d) || (!to_bf16 && (!same || x->a.nbytes != d->byte_size))) {
    desc_text(d, want, sizeof want);
    located_text(x, got, sizeof got);
    free(x->buffer);
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: parameter %d (%%%s) expects %s, got %s", label, k, d->name, want,
                           got);
  }
  if (!to_bf16 && !x->layout.fortran && !x->layout.swap && x->a.nbytes > 0 && aligned_for(x->a.data, d->dtype)) {
    s->params[k] = x->a.data;
    s->owned[k] = x->buffer;
    *(x->buffer ? &s->copied_bytes : &s->mapped_bytes) += x->a.nbytes; /* read (inflated) or mapped */
    return NULL;
  }
  unsigned char *dst = alloc_leaf(d->byte_size, false), *tmp = NULL;
  if (to_bf16 && dst && (x->layout.fortran || x->layout.swap) && (tmp = malloc((size_t)x->a.nbytes + 1)))
    npy_copy_normalized(&x->a, &x->layout, tmp);
  if (!dst || (to_bf16 && (x->layout.fortran || x->layout.swap) && !tmp)) {
    free(dst);
    free(x->buffer);
    return alloc_failed(k, d);
  }
  if (to_bf16)
    bf16_from_f32(tmp ? tmp : x->a.data, x->a.nbytes / 4, dst);
  else
    npy_copy_normalized(&x->a, &x->layout, dst);
  free(tmp);
  free(x->buffer);
  s->params[k] = s->owned[k] = dst;
  s->copied_bytes += d->byte_size;
  return NULL;
}

/* A .npy image in memory (a mapping, or `buffer`, which is consumed). */
static hlo_status place_npy(const char *label, int k, const hlo_array_desc *d, const unsigned char *bytes, size_t n,
                            void *buffer, param_set *s) {
  located x = {.etype = -1, .buffer = buffer};
  hlo_status e = npy_parse_header(label, bytes, n, &x.a, &x.layout);
  if (e) {
    free(buffer);
    return e;
  }
  return place(label, k, d, &x, s);
}

/* A .npy file: mapped when it is a regular file (the mapping kept while a parameter points
 * into it), read whole otherwise (a pipe). */
static hlo_status read_npy_file(const char *path, int k, const hlo_array_desc *d, param_set *s) {
  struct stat st;
  if (stat(path, &st) != 0)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: cannot open: %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode))
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: is a directory, not a .npy file (--input=@%s reads every .npy "
                           "file in it)", path, path);
  if (!S_ISREG(st.st_mode)) {
    npy_array a;
    HLO_RETURN_IF_ERROR(npy_read(path, &a));
    located x = {.a = a, .etype = -1, .buffer = a.data};
    return place(path, k, d, &x, s);
  }
  mapped_file map;
  HLO_RETURN_IF_ERROR(mapped_file_open(path, &map));
  hlo_status e = place_npy(path, k, d, map.bytes, map.size, NULL, s);
  if (!e && s->params[k] && s->params[k] != s->owned[k])
    s->maps[k] = map; /* zero-copy: the parameter points into the mapping */
  else
    mapped_file_close(&map);
  return e;
}

static hlo_status read_member(const input_list *l, const input_item *it, int k, const hlo_array_desc *d,
                              param_set *s) {
  const archive *a = &l->sources[it->source];
  const archive_member *m = &a->members[it->member];
  char label[4200];
  item_label(l, it, label, sizeof label);
  if (m->kind == MEMBER_FILE)
    return read_npy_file(m->path, k, d, s);
  if (m->kind == MEMBER_NPY)
    return place_npy(label, k, d, m->bytes, (size_t)m->size, NULL, s);
  if (m->kind == MEMBER_NPY_DEFLATED) {
    unsigned char *image;
    HLO_RETURN_IF_ERROR(npz_inflate(a, m, &image));
    return place_npy(label, k, d, image, (size_t)m->inflated_size, image, s);
  }
  located x = {.etype = m->etype, .a = {.rank = m->rank, .data = (void *)m->bytes, .nbytes = (int64_t)m->size}};
  memcpy(x.a.dims, m->dims, sizeof x.a.dims);
  x.a.itemsize = ir_etype_table[m->etype].storage_bytes;
  return place(label, k, d, &x, s);
}

hlo_status inputs_read(const input_list *l, const hlo_module_desc *desc, const input_item *const *order,
                       param_set *s) {
  for (int i = 0; i < desc->num_params; i++) {
    const hlo_array_desc *d = &desc->params[i];
    const input_item *it = order[i];
    if (d->dtype == IR_TOKEN)
      continue; /* token leaves take NULL */
    if (d->byte_size < 0)
      return alloc_failed(i, d);
    if (it->source >= 0) {
      HLO_RETURN_IF_ERROR(read_member(l, it, i, d, s));
    } else if (litio_looks_inline(it->text)) {
      if (!(s->params[i] = s->owned[i] = alloc_leaf(d->byte_size, true)))
        return alloc_failed(i, d);
      HLO_RETURN_IF_ERROR(litio_parse_input(it->text, i, d, s->params[i]));
      s->copied_bytes += d->byte_size;
    } else {
      HLO_RETURN_IF_ERROR(read_npy_file(it->text, i, d, s));
    }
  }
  return NULL;
}

hlo_status inputs_random(uint64_t seed, const hlo_module_desc *desc, int threads, param_set *s) {
  for (int i = 0; i < desc->num_params; i++) {
    const hlo_array_desc *d = &desc->params[i];
    if (d->dtype == IR_TOKEN)
      continue;
    if (d->byte_size < 0 || !(s->params[i] = s->owned[i] = alloc_leaf(d->byte_size, false)))
      return alloc_failed(i, d);
    s->copied_bytes += d->byte_size;
  }
  return random_fill_params(seed, desc, s->params, threads);
}
