#!/bin/bash
# bench/prebuilt/run_packed.sh OUTDIR [SECONDS] — the other side of bench/prebuilt/pack.sh, run
# from the repository root on the borrowed machine: picks the set for this CPU, unpacks it and
# the libraries, then (within SECONDS, default 420) bench/run.py on two pinned cores, the
# mobilenet_v2 step against PyTorch, and, where jax is installed, the packed extra HLO files
# against XLA's CPU backend (the runtime at the host's level, and held to AVX-512 and AVX2).
# Everything it prints and writes goes to OUTDIR (results.md and .json, logs, lscpu.txt).
OUT=${1:?usage: run_packed.sh OUTDIR [SECONDS]}
BUDGET=${2:-420}
P=$(cd "$(dirname "$0")" && pwd)/pack
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
T0=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
say() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
lscpu > "$OUT/lscpu.txt"
grep -E 'Vendor|Model name|^Model:|CPU family|^CPU\(s\)|L1d|L2|L3' "$OUT/lscpu.txt"
F=$(grep -m1 '^flags' /proc/cpuinfo)
AMD=$(grep -q AuthenticAMD /proc/cpuinfo && echo 1)
# native where this CPU has every flag of the build machine's, else the family's set.
S=native
for f in $(cat "$P/sets/native.flags" 2>/dev/null); do
  [[ " ${F#*:} " == *" $f "* ]] || { S=; break; }
done
if [ -z "$S" ]; then
  if [[ $F == *avx512f* ]]; then S=${AMD:+znver4}; S=${S:-x86-64-v4}; else S=${AMD:+znver3}; S=${S:-x86-64-v3}; fi
fi
say "set $S; AMX: $([[ $F == *amx_bf16* ]] && echo yes || echo no)"
W=/tmp/hloc-packed; rm -rf $W; mkdir -p $W/lib
tar xJf "$P/sets/$S.tar.xz" -C $W
D=$W/$S; cp "$P/hlorun" $D/
for l in "$P"/lib/*.xz; do xz -dc "$l" > $W/lib/$(basename "$l" .xz); done
# bench/run.py looks for OpenBLAS and oneDNN where Debian puts them.
mkdir -p /usr/lib/x86_64-linux-gnu /usr/include
[ -e /usr/lib/x86_64-linux-gnu/libopenblas.so ] || cp $W/lib/libopenblas.so.0 /usr/lib/x86_64-linux-gnu/libopenblas.so
[ -e /usr/include/dnnl.h ] || touch /usr/include/dnnl.h
export LD_LIBRARY_PATH=$W/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
say "bench/run.py, 2 pinned cores"
CC=$D/cc-wrap OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 timeout $(( $(left) * 45 / 100 )) taskset -c 0,1 \
  python3 bench/run.py --no-models --reps 10 --threads 2 --hlorun $D/hlorun-wrap --out-dir $W/bench \
  > "$OUT/bench.log" 2>&1
cp $W/bench/results.md $W/bench/results.json "$OUT/" 2>/dev/null
grep -v '^\s*$' "$OUT/bench.log" | tail -26 | cut -c1-190
say "mobilenet_v2 step against PyTorch, 2 pinned cores"
OMP_NUM_THREADS=2 timeout $(( $(left) * 60 / 100 )) taskset -c 0,1 python3 bench/mobilenet_torch.py \
  --hlorun $D/hlorun-wrap --model testdata/parse/ok/model_mobilenet_v2.hlo --threads 2 --steps 2 \
  --json "$OUT/mobilenet.json" 2>&1 | tail -8
if ls $D/xla/*.so >/dev/null 2>&1 && python3 -c 'import jax' 2>/dev/null; then
  for isa in native avx512 avx2; do
    [ $isa = avx512 ] && [[ $F != *amx_bf16* ]] && continue
    [ "$(left)" -gt 20 ] || break
    say "xla_compare, runtime at $isa, 2 pinned cores"
    env $([ $isa != native ] && echo HLO_RT_ISA=$isa) timeout $(( $(left) / 2 )) taskset -c 0,1 \
      python3 bench/xla_compare.py --hlorun $D/hlorun --so-dir $D/xla --threads 2 --reps 3 \
      --json "$OUT/xla_$isa.json" "$P"/hlo/*.hlo 2>&1 | grep -v '^[IWE][0-9]' | tail -14
  done
fi
say done
