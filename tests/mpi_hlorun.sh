#!/usr/bin/env bash
# mpi_hlorun.sh MODEL ARGS... — stands in for hlorun in tests/runtime_case.sh when a case runs
# under MPI: compiles MODEL once with the hloc next to $HLORUN_MPI_BIN (so that the ranks do not
# all compile it), then runs `mpirun -np $HLORUN_MPI_NP hlorun MODEL.so ARGS... --threads 1`
# (every rank single-threaded: the machine may have fewer cores than ranks).
set -u
model=$1
shift
bin=$HLORUN_MPI_BIN
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
so=$model
if [ "${model%.hlo}" != "$model" ]; then
  so=$work/$(basename "${model%.hlo}").so
  "$(dirname "$bin")/hloc" "$model" -o "$so" || exit 2
fi
timeout "${HLORUN_MPI_TIMEOUT:-120}" mpirun --oversubscribe --allow-run-as-root -np "$HLORUN_MPI_NP" \
  "$bin" "$so" "$@" --threads 1
