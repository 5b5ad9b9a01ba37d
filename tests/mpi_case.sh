#!/usr/bin/env bash
# mpi_case.sh HLORUN NP CASE LIB — a testdata/runtime case run again with one replica per MPI
# rank (NP ranks, the module's replica count): tests/runtime_case.sh with tests/mpi_hlorun.sh
# standing in for hlorun, so the hand-written CASE.expected (rank 0 prints every replica's
# results) and CASE.files (written by the rank that owns them) are checked unchanged.
# Exits 77 (CTest: skipped) when this build has no MPI backend or mpirun is missing.
here=$(dirname "$0")
run=$1 np=$2 case=$3 lib=$4
if [ ! -f "$(dirname "$run")/libhlort_mpi.so" ]; then
  echo "skipped: this build has no MPI backend (no mpi.h; install libopenmpi-dev)"
  exit 77
fi
command -v mpirun >/dev/null || { echo "skipped: mpirun not found (install openmpi-bin)"; exit 77; }
export HLORUN_MPI_BIN=$run HLORUN_MPI_NP=$np
exec "$here/runtime_case.sh" "$here/mpi_hlorun.sh" "$case" "$lib"
