#!/usr/bin/env bash
# arena_below.sh HLOC MODEL.hlo OUT.so LIMIT WHAT — compiles MODEL with `hloc -v` and passes
# when the arena it reports is under LIMIT bytes (WHAT says what LIMIT stands for).
hloc=$1 model=$2 so=$3 limit=$4 what=$5
out=$("$hloc" "$model" -v -o "$so" 2>&1) || { echo "$out"; exit 1; }
a=$(printf '%s\n' "$out" | sed -n 's/.*, arena \([0-9]*\) bytes$/\1/p' | tail -1)
echo "arena: ${a:-none} bytes (limit $limit: $what)"
[ -n "$a" ] && [ "$a" -lt "$limit" ]
