#!/usr/bin/env bash
# hlorun_cache.sh HLORUN NPY_DIR — the compile cache: a miss compiles and stores one .so, a hit
# reuses it (same output), other options get another entry, a miss prunes old entries, a cached file that does not load
# is rebuilt, an unwritable cache folder still runs (nothing left behind), another hloc is
# another entry, a missing hloc is named, hlorun links no LLVM, and the elided-constants note
# is printed on a hit too.
hlorun=$1 npy=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export XDG_CACHE_HOME=$dir/cache TMPDIR=$dir/tmp
mkdir -p "$TMPDIR"
fail() { echo "FAIL: $*"; cat "$dir/err" 2>/dev/null; exit 1; }
run() { "$hlorun" -v "$npy/add_f32_2x3.hlo" --input "$npy/f32_2x3.npy" --input "$npy/f32_2x3.npy" "$@" >"$dir/out" 2>"$dir/err"; }

run || fail "first run"
grep -q "cache miss, compiled: $dir/cache/hloc/[0-9a-f]\{32\}\.so" "$dir/err" || fail "first run is not a miss"
[ "$(ls "$dir/cache/hloc" | wc -l)" -eq 1 ] || fail "expected one cached file"
cp "$dir/out" "$dir/out1"
t0=$(date +%s%N)
run || fail "second run"
t1=$(date +%s%N)
grep -q "cache hit" "$dir/err" || fail "second run is not a hit"
cmp -s "$dir/out" "$dir/out1" || fail "a hit prints something else"
echo "cached run: $(( (t1 - t0) / 1000000 )) ms"

old=$dir/cache/hloc/0123456789abcdef0123456789abcdef
touch -d '40 days ago' "$old.so" "$old.123.tmp.so" "$dir/cache/hloc/notes.txt"
touch -d '2 hours ago' "$old.456.tmp.so"
run -O0 || fail "-O0 run"
[ ! -e "$old.so" ] && [ ! -e "$old.123.tmp.so" ] || fail "a miss does not prune entries unused for 30 days"
[ -e "$dir/cache/hloc/notes.txt" ] && [ -e "$old.456.tmp.so" ] || fail "pruning removed a file it does not own"
rm -f "$dir/cache/hloc/notes.txt" "$old.456.tmp.so"
grep -q "cache miss" "$dir/err" || fail "-O0 must be another cache entry"
[ "$(ls "$dir/cache/hloc" | wc -l)" -eq 2 ] || fail "expected two cached files"

for f in "$dir/cache/hloc"/*.so; do echo "not an ELF file" >"$f"; done
run || fail "run with a corrupt cached file"
grep -q "cache miss, compiled" "$dir/err" || fail "a corrupt cached file is not rebuilt"
cmp -s "$dir/out" "$dir/out1" || fail "the rebuilt model prints something else"

XDG_CACHE_HOME=/proc/hlorun-no-such-dir run || fail "run with an unwritable cache"
grep -q "cache not writable, compiled" "$dir/err" || fail "unwritable cache not reported"
cmp -s "$dir/out" "$dir/out1" || fail "the uncached model prints something else"
[ -z "$(ls "$TMPDIR")" ] || fail "temporary files left behind: $(ls "$TMPDIR")"

# The compiler's identity is part of the key, and a missing compiler is named.
mkdir "$dir/bin"
cp "$hlorun" "$(dirname "$hlorun")/hloc" "$dir/bin/"
"$dir/bin/hlorun" -v "$npy/add_f32_2x3.hlo" --random-inputs >"$dir/out" 2>"$dir/err" || fail "copied hlorun"
"$dir/bin/hlorun" -v "$npy/add_f32_2x3.hlo" --random-inputs >"$dir/out" 2>"$dir/err" || fail "copied hlorun, again"
grep -q "cache hit" "$dir/err" || fail "copied hlorun: no hit"
touch -d '1 minute ago' "$dir/bin/hloc"
"$dir/bin/hlorun" -v "$npy/add_f32_2x3.hlo" --random-inputs >"$dir/out" 2>"$dir/err" || fail "changed hloc"
grep -q "cache miss" "$dir/err" || fail "another hloc must be another cache entry"
rm "$dir/bin/hloc"
PATH=/nonexistent "$dir/bin/hlorun" "$npy/add_f32_2x3.hlo" -O1 --random-inputs >"$dir/out" 2>"$dir/err"
[ $? -eq 2 ] && grep -q "cannot run the compiler hloc: No such file or directory" "$dir/err" || fail "missing hloc"

# hlorun itself carries no LLVM: a cache hit never loads it.
if ldd "$hlorun" | grep -q libLLVM; then echo "FAIL: hlorun links libLLVM"; exit 1; fi

for i in 1 2; do
  "$hlorun" "$npy/elided.hlo" --input "$npy/f32_3_bf16_exact.npy" >"$dir/out" 2>"$dir/err" || fail "elided run $i"
  grep -q "note: .*elided constant" "$dir/err" || fail "run $i of elided.hlo lacks the note"
done
echo ok
