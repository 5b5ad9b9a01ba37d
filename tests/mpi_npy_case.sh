#!/usr/bin/env bash
# mpi_npy_case.sh HLORUN CASE NP MODE CHECK [ARGS...] — a case of testdata/mpi/native
# (make_native.py) on NP replicas: MODE `threads` (--replicas NP) or `mpi` (NP ranks under
# mpirun, tests/mpi_hlorun.sh), with CASE.args and ARGS, every replica writing every result
# leaf (--output rK:...); passes when each equals numpy's CASE.want_rK_I.npy: CHECK `exact`
# (same dtype, shape and bits; NaN where numpy has NaN) or `close` (rtol 1e-6, atol 1e-4).
# Exits 77 (skipped) in mpi mode without an MPI backend or mpirun.
here=$(dirname "$0")
run=$1 case=$2 np=$3 mode=$4 check=$5
shift 5
if [ "$mode" = mpi ]; then
  if [ ! -f "$(dirname "$run")/libhlort_mpi.so" ]; then
    echo "skipped: this build has no MPI backend (no mpi.h; install libopenmpi-dev)"
    exit 77
  fi
  command -v mpirun >/dev/null || { echo "skipped: mpirun not found (install openmpi-bin)"; exit 77; }
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
args=()
while IFS= read -r line || [ -n "$line" ]; do
  [ -z "$line" ] && continue
  args+=("${line//@CASEDIR@/$(dirname "$case")}")
done <"$case.args"
nres=$(ls "$case".want_r0_*.npy | wc -l)
for ((k = 0; k < np; k++)); do
  for ((i = 0; i < nres; i++)); do args+=("--output=r$k:$dir/r${k}_$i.npy"); done
done
if [ "$mode" = mpi ]; then
  HLORUN_MPI_BIN=$run HLORUN_MPI_NP=$np "$here/mpi_hlorun.sh" "$case.hlo" "${args[@]}" "$@" >"$dir/log" 2>&1
else
  "$run" "$case.hlo" "${args[@]}" "$@" --replicas "$np" --threads 1 >"$dir/log" 2>&1
fi
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: hlorun exited $rc"; cat "$dir/log"; exit 1; }
/usr/bin/python3 - "$dir" "$case" "$np" "$nres" "$check" <<'PY'
import sys
import numpy as np
out, case, np_, nres, check = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
bad = 0
for k in range(np_):
    for i in range(nres):
        got, want = np.load('%s/r%d_%d.npy' % (out, k, i)), np.load('%s.want_r%d_%d.npy' % (case, k, i))
        if got.dtype != want.dtype or got.shape != want.shape:
            ok = False
        elif check == 'exact':
            nan = np.isnan(want) if want.dtype.kind == 'f' else np.zeros(want.shape, bool)
            ok = np.array_equal(np.isnan(got) if got.dtype.kind == 'f' else nan, nan) and \
                got[~nan].tobytes() == want[~nan].tobytes()
        else:
            ok = np.allclose(got, want, rtol=1e-6, atol=1e-4, equal_nan=True)
        if not ok:
            bad += 1
            print('FAIL: replica %d result %d: got %s %s %s, expected %s %s %s' % (
                k, i, got.dtype, got.shape, got.ravel().tolist()[:16], want.dtype, want.shape,
                want.ravel().tolist()[:16]))
if bad:
    sys.exit(1)
print('ok: %d results of %d replicas' % (nres, np_))
PY
