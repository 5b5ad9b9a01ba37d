/* run_mpi.c — finds and loads libhlort_mpi.so for hlorun's multi-process mode, and makes the run's
 * collective group with its options (run_mpi.h).
 * Tests: tests/mpi.cmake, tests/hlorun_cli.cmake (the messages when it cannot be loaded).
 */
#include "run_mpi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MPI_LIB_NAME "libhlort_mpi.so"

hlo_status run_mpi_group_create(const mpi_api *api, const run_options *o, hlo_collective_group **out) {
  HLO_RETURN_IF_ERROR(api->group_create(NULL, o->collective_timeout_s, out));
  hlo_status s = api->set_exact_order(*out, o->collective_exact);
  if (s) {
    hlo_collective_group_destroy(*out);
    *out = NULL;
  }
  return s;
}

bool run_mpi_wanted(const run_options *o) {
  return o->mpi || getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

#ifndef HLOC_HAVE_MPI

hlo_status run_mpi_load(mpi_api *api) {
  memset(api, 0, sizeof *api);
  return hlo_status_make(HLO_UNIMPLEMENTED,
                         "multi-process mode (--mpi, or running under mpirun) needs MPI, and this hlorun was built "
                         "without it (no mpi.h found): install libopenmpi-dev and rebuild (docs/distributed.md)");
}

#else

/* The folder hlorun runs from, or "" */
static void self_dir(char *buf, size_t cap) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  buf[0] = 0;
  if (n <= 0)
    return;
  self[n] = 0;
  char *slash = strrchr(self, '/');
  if (slash)
    snprintf(buf, cap, "%.*s", (int)(slash - self), self);
}

static void *open_lib(char *tried, size_t cap) {
  const char *env = getenv("HLORUN_MPI_LIB");
  if (env && *env) {
    snprintf(tried, cap, "%s", env);
    return dlopen(env, RTLD_NOW | RTLD_GLOBAL);
  }
  char dir[4096], path[4300];
  self_dir(dir, sizeof dir);
  const char *candidates[] = {"%s/" MPI_LIB_NAME, "%s/../" HLOC_INSTALL_LIBDIR_MPI "/" MPI_LIB_NAME};
  for (size_t i = 0; dir[0] && i < sizeof candidates / sizeof *candidates; i++) {
    snprintf(path, sizeof path, candidates[i], dir);
    if (access(path, R_OK) == 0) {
      snprintf(tried, cap, "%s", path);
      return dlopen(path, RTLD_NOW | RTLD_GLOBAL); /* Open MPI's plugins look for libmpi's symbols */
    }
  }
  snprintf(tried, cap, "%s", MPI_LIB_NAME);
  return dlopen(MPI_LIB_NAME, RTLD_NOW | RTLD_GLOBAL);
}

hlo_status run_mpi_load(mpi_api *api) {
  memset(api, 0, sizeof *api);
  char tried[4400];
  api->handle = open_lib(tried, sizeof tried);
  if (!api->handle)
    return hlo_status_make(HLO_FAILED_PRECONDITION, "multi-process mode (--mpi, or running under mpirun): cannot load %s: %s",
                           tried, dlerror());
  api->init = (hlo_mpi_init_fn)dlsym(api->handle, "hlo_mpi_init");
  api->group_create = (hlo_collective_group_create_mpi_fn)dlsym(api->handle, "hlo_collective_group_create_mpi");
  api->allgather = (hlo_mpi_allgather_fn)dlsym(api->handle, "hlo_mpi_allgather");
  api->set_exact_order = (hlo_mpi_group_set_exact_order_fn)dlsym(api->handle, "hlo_mpi_group_set_exact_order");
  api->abort = (hlo_mpi_abort_fn)dlsym(api->handle, "hlo_mpi_abort");
  api->finalize = (hlo_mpi_finalize_fn)dlsym(api->handle, "hlo_mpi_finalize");
  if (!api->init || !api->group_create || !api->allgather || !api->set_exact_order || !api->abort || !api->finalize)
    return hlo_status_make(HLO_FAILED_PRECONDITION, "%s: not the MPI backend of this hlorun (hlo_mpi_* missing)", tried);
  return NULL;
}

#endif
