/* runtime_mpi.h — replicas as MPI processes: the collective group over an MPI communicator and
 * the few MPI steps a runner needs around it.  These live in libhlort_mpi.so, which the build
 * makes only when mpi.h is found (docs/distributed.md); a compiled model.so never depends on
 * it, and hlorun loads it with dlopen only in multi-process mode.  Nothing here needs mpi.h:
 * a communicator is passed as a pointer to an MPI_Comm.  One replica per process; the
 * functions are called from one thread at a time (MPI_THREAD_SERIALIZED).
 */
#ifndef HLO_RUNTIME_MPI_H
#define HLO_RUNTIME_MPI_H

#include <stddef.h>
#include <stdint.h>

#include "hlo/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Initializes MPI unless the program already did; *rank and *size of MPI_COMM_WORLD. */
HLO_MUST_USE hlo_status hlo_mpi_init(int32_t *rank, int32_t *size);

/* A collective group whose replicas are the ranks of *comm (NULL: MPI_COMM_WORLD; the group
 * works on its own duplicate).  The context of the process of rank r takes replica_id = r and
 * num_replicas = the communicator's size.  timeout_s > 0 bounds how long one collective waits
 * for the other ranks (then it fails with HLO_CANCELLED); 0 waits for ever.  Destroy it with
 * hlo_collective_group_destroy before hlo_mpi_finalize. */
HLO_MUST_USE hlo_status hlo_collective_group_create_mpi(const void *comm, double timeout_s,
                                                        hlo_collective_group **out_group);

/* Collectives of a group from hlo_collective_group_create_mpi use MPI's own collectives
 * (MPI_Allreduce with its built-in reductions, or a reduction calling the model's reducer,
 * MPI_Reduce_scatter_block, MPI_Allgather, MPI_Alltoall, MPI_Bcast, MPI_Isend/MPI_Irecv pairs
 * for collective-permute) wherever the data's layout allows.  MPI may add floating-point
 * values in another order than a group of threads does (replica 0 first, then 1, ...), so its
 * bits may differ; exact != 0 makes every reduction whose result can depend on that order
 * (floating-point add or multiply, every reducer MPI has no built-in for) gather the operands
 * and reduce them in replica order instead, giving the threads' bits (docs/distributed.md).
 * Integer and pred reductions and all data movement are exact either way.  exact = 0 is the
 * default. */
HLO_MUST_USE hlo_status hlo_mpi_group_set_exact_order(hlo_collective_group *group, int exact);

/* Every rank of the group gives `bytes` bytes; on return all[r * bytes ...] holds rank r's
 * (all: size * bytes).  No timeout: for the runner's agreement steps and results. */
HLO_MUST_USE hlo_status hlo_mpi_allgather(hlo_collective_group *group, const void *mine, int64_t bytes, void *all);

/* Stops every process of MPI_COMM_WORLD with exit status `code` (MPI_Abort); does not return. */
void hlo_mpi_abort(int code);
void hlo_mpi_finalize(void);

/* The names a runner looks up with dlsym. */
typedef hlo_status (*hlo_mpi_init_fn)(int32_t *, int32_t *);
typedef hlo_status (*hlo_collective_group_create_mpi_fn)(const void *, double, hlo_collective_group **);
typedef hlo_status (*hlo_mpi_allgather_fn)(hlo_collective_group *, const void *, int64_t, void *);
typedef hlo_status (*hlo_mpi_group_set_exact_order_fn)(hlo_collective_group *, int);
typedef void (*hlo_mpi_abort_fn)(int);
typedef void (*hlo_mpi_finalize_fn)(void);

#ifdef __cplusplus
}
#endif

#endif
