#!/usr/bin/env bash
# mpi_expect.sh HLORUN NP RC LINE MODEL ARGS... — an error path of hlorun's multi-process mode:
# runs MODEL on NP ranks (tests/mpi_hlorun.sh) and passes when mpirun exits with status RC, every
# "hlorun:" line on standard error is exactly LINE (each rank may print it; none prints
# anything else of ours), and it all ended within $HLORUN_MPI_TIMEOUT s (a hang fails).
# Exits 77 (CTest: skipped) without an MPI backend or mpirun.
here=$(dirname "$0")
run=$1 np=$2 want_rc=$3 line=$4
shift 4
if [ ! -f "$(dirname "$run")/libhlort_mpi.so" ]; then
  echo "skipped: this build has no MPI backend (no mpi.h; install libopenmpi-dev)"
  exit 77
fi
command -v mpirun >/dev/null || { echo "skipped: mpirun not found (install openmpi-bin)"; exit 77; }
export HLORUN_MPI_BIN=$run HLORUN_MPI_NP=$np HLORUN_MPI_TIMEOUT=${HLORUN_MPI_TIMEOUT:-60}
err=$(mktemp)
trap 'rm -f "$err"' EXIT
"$here/mpi_hlorun.sh" "$@" >/dev/null 2>"$err"
rc=$?
ours=$(grep '^hlorun:' "$err" | sort -u)
if [ "$rc" -ne "$want_rc" ] || [ "$ours" != "$line" ]; then
  echo "FAIL: exit status $rc (expected $want_rc); standard error:"
  cat "$err"
  echo "expected every hlorun line to be: $line"
  exit 1
fi
echo ok
