#!/usr/bin/env bash
# mpi_identical.sh HLORUN CASE NP [ARGS...] — the same model, threads or processes, gives
# identical bits: runs CASE.hlo with CASE.args and ARGS (e.g. --collective-order exact, without
# which MPI's own float sums may associate otherwise) on NP threads (--replicas) and on NP MPI
# ranks, every replica
# writing every result (--output rK:...), and passes when the two runs' files are
# byte-identical and every replica holds replica 0's results (a data-parallel step ends with
# the same parameters everywhere).  Exits 77 (skipped) without an MPI backend or mpirun.
here=$(dirname "$0")
run=$1 case=$2 np=$3
shift 3
extra=("$@")
if [ ! -f "$(dirname "$run")/libhlort_mpi.so" ]; then
  echo "skipped: this build has no MPI backend (no mpi.h; install libopenmpi-dev)"
  exit 77
fi
command -v mpirun >/dev/null || { echo "skipped: mpirun not found (install openmpi-bin)"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
args=()
while IFS= read -r line || [ -n "$line" ]; do
  [ -z "$line" ] && continue
  line=${line//@CASEDIR@/$(dirname "$case")}
  args+=("$line")
done < <(grep -v -e '^--expected$' -e '^--rtol$' -e '^--atol$' -e 'train_expected' -e '^1e-' "$case.args")
nres=$(grep -c '^--expected$' "$case.args")
outs() { # outs DIR: --output rK:DIR/rK_I.npy for every replica and result
  for ((k = 0; k < np; k++)); do for ((i = 0; i < nres; i++)); do echo "--output=r$k:$1/r${k}_$i.npy"; done; done
}
mkdir "$dir/threads" "$dir/mpi"
mapfile -t o_threads < <(outs "$dir/threads")
mapfile -t o_mpi < <(outs "$dir/mpi")
"$run" "$case.hlo" "${args[@]}" "${extra[@]}" "${o_threads[@]}" --replicas "$np" --threads 1 || { echo "FAIL: the threaded run"; exit 1; }
HLORUN_MPI_BIN=$run HLORUN_MPI_NP=$np "$here/mpi_hlorun.sh" "$case.hlo" "${args[@]}" "${extra[@]}" "${o_mpi[@]}" ||
  { echo "FAIL: the MPI run"; exit 1; }
for ((k = 0; k < np; k++)); do
  for ((i = 0; i < nres; i++)); do
    cmp "$dir/threads/r${k}_$i.npy" "$dir/mpi/r${k}_$i.npy" || { echo "FAIL: replica $k result $i differs"; exit 1; }
    cmp "$dir/mpi/r0_$i.npy" "$dir/mpi/r${k}_$i.npy" || { echo "FAIL: replica $k result $i is not replica 0's"; exit 1; }
  done
done
echo "ok: $((np * nres)) result files identical"
