#!/usr/bin/env bash
# cache_safety.sh HLORUN NPY_DIR — the compile cache under concurrency and tampering
# (tools/cache.c): 4 hloruns compiling the same module at once all succeed and leave one
# entry and no temporary file; a truncated entry and one with a flipped byte are detected
# (size/checksum trailer), rebuilt, never loaded; a cache folder writable by other users is
# not used (a warning; the model still runs from a temporary file); an entry writable by
# others or owned by another user is not loaded but rebuilt.
hlorun=$1 npy=$2
dir=$(mktemp -d)
trap 'chmod -R u+rwX "$dir" 2>/dev/null; rm -rf "$dir"' EXIT
export XDG_CACHE_HOME=$dir/cache TMPDIR=$dir/tmp
mkdir -p "$TMPDIR"
cache=$dir/cache/hloc
fail() { echo "FAIL: $*"; cat "$dir/err" 2>/dev/null; exit 1; }
run() { "$hlorun" -v "$npy/add_f32_2x3.hlo" --input "$npy/f32_2x3.npy" --input "$npy/f32_2x3.npy" "$@" >"$dir/out" 2>"$dir/err"; }
want='  { 6, 8, 10 }'
entry() { ls "$cache"/*.so; }

# Concurrent compiles of one module: every run succeeds with the right answer.
pids=()
for k in 1 2 3 4; do
  ( "$hlorun" "$npy/add_f32_2x3.hlo" --input "$npy/f32_2x3.npy" --input "$npy/f32_2x3.npy" >"$dir/out$k" 2>"$dir/err$k"; echo $? >"$dir/rc$k" ) &
  pids+=($!)
done
wait "${pids[@]}"
for k in 1 2 3 4; do
  [ "$(cat "$dir/rc$k")" = 0 ] || { cat "$dir/err$k"; fail "concurrent run $k failed"; }
  grep -qF "$want" "$dir/out$k" || fail "concurrent run $k printed something else"
done
[ "$(ls "$cache" | wc -l)" -eq 1 ] || fail "expected one entry and no temporary files: $(ls "$cache")"
[ "$(stat -c %a "$cache")" = 700 ] || fail "the cache folder is not private: $(stat -c %a "$cache")"
[ "$(stat -c %a "$(entry)")" = 600 ] || fail "the entry is not private: $(stat -c %a "$(entry)")"
run || fail "hit"
grep -q "cache hit" "$dir/err" || fail "not a hit after the concurrent compiles"

# A truncated entry and a corrupted one: detected, rebuilt, never loaded.
e=$(entry)
size=$(stat -c %s "$e")
truncate -s $((size / 2)) "$e"
run || fail "run with a truncated entry"
grep -q "not loading the cached .*: it is truncated or corrupt (size or checksum mismatch); compiling it again" "$dir/err" \
  || fail "a truncated entry is not reported"
grep -q "cache miss, compiled" "$dir/err" || fail "a truncated entry is not rebuilt"
grep -qF "$want" "$dir/out" || fail "wrong result after rebuilding a truncated entry"
[ "$(stat -c %s "$e")" = "$size" ] || fail "the rebuilt entry has another size"
printf '\xff' | dd of="$e" bs=1 seek=$((size / 3)) conv=notrunc status=none
run || fail "run with a corrupted entry"
grep -q "truncated or corrupt" "$dir/err" || fail "a corrupted byte is not detected"
grep -qF "$want" "$dir/out" || fail "wrong result after rebuilding a corrupted entry"
run && grep -q "cache hit" "$dir/err" || fail "the rebuilt entry is not a hit"

# An entry writable by other users, or owned by another user: not loaded, rebuilt.
chmod 666 "$e"
run || fail "run with a world-writable entry"
grep -q "not loading the cached .*: it is writable by other users (mode 0666)" "$dir/err" || fail "a writable entry is not refused"
grep -q "cache miss, compiled" "$dir/err" || fail "a writable entry is not rebuilt"
if [ "$(id -u)" = 0 ]; then
  chown 65534 "$e"
  run || fail "run with a foreign entry"
  grep -q "not loading the cached .*: it belongs to user 65534" "$dir/err" || fail "a foreign entry is not refused"
fi

# A cache folder writable by other users: not used at all; the model still runs.
chmod 777 "$cache"
run || fail "run with a world-writable cache folder"
grep -q "warning: not using the compile cache $cache: it is writable by other users (mode 0777)" "$dir/err" \
  || fail "a writable cache folder is not refused"
grep -qF "$want" "$dir/out" || fail "wrong result without the cache"
[ -z "$(ls "$TMPDIR")" ] || fail "temporary files left behind: $(ls "$TMPDIR")"
echo "cache_safety: ok"
