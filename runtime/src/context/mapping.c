/* mapping.c — a region of a file mapped read-only, to pass as a model's parameter without a
 * copy (hlo/runtime.h: hlo_map_file).  The region may start anywhere: the mapping starts at
 * the page below it and the data pointer is offset into it.  The pages belong to the page
 * cache, so a weight file mapped by several processes is in memory once.
 * Tests: runtime/src/context/mapping_test.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hlo/runtime.h"

#define HLO_PUBLIC __attribute__((visibility("default")))

struct hlo_mapping {
  void *base;    /* what mmap returned (page-aligned) */
  size_t length; /* bytes mapped from base */
  const void *data;
};

HLO_PUBLIC hlo_status hlo_map_file(const char *path, int64_t offset, int64_t bytes, hlo_mapping **out) {
  *out = NULL;
  if (!path || offset < 0 || bytes < 0)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "hlo_map_file: a path, an offset >= 0 and a size >= 0, please");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return hlo_status_make(HLO_NOT_FOUND, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: not a regular file", path);
  }
  if (offset > st.st_size || bytes > st.st_size - offset) {
    close(fd);
    return hlo_status_make(HLO_OUT_OF_RANGE, "%s: bytes %lld to %lld are past the end of the file (%lld bytes)", path,
                           (long long)offset, (long long)offset + (long long)bytes, (long long)st.st_size);
  }
  hlo_mapping *m = calloc(1, sizeof *m);
  if (!m) {
    close(fd);
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  long page = sysconf(_SC_PAGESIZE);
  int64_t start = offset / page * page;
  m->length = (size_t)(offset - start + bytes);
  if (m->length == 0) { /* an empty region: nothing to map, a valid pointer all the same */
    m->data = m;
    close(fd);
    *out = m;
    return NULL;
  }
  m->base = mmap(NULL, m->length, PROT_READ, MAP_PRIVATE, fd, (off_t)start);
  int err = errno;
  close(fd);
  if (m->base == MAP_FAILED) {
    free(m);
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "%s: cannot map %lld bytes: %s", path, (long long)bytes,
                           strerror(err));
  }
  m->data = (const char *)m->base + (offset - start);
  *out = m;
  return NULL;
}

HLO_PUBLIC const void *hlo_mapping_data(const hlo_mapping *m) { return m ? m->data : NULL; }

HLO_PUBLIC void hlo_unmap(hlo_mapping *m) {
  if (!m)
    return;
  if (m->base && m->base != MAP_FAILED)
    munmap(m->base, m->length);
  free(m);
}
