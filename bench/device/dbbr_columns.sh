#!/usr/bin/env bash
# DBBR's column distribution on 4 GPUs (issue 23): outer blocks dealt out cyclically against the
# contiguous blockwise columns (PIPEVD_DBBR_COLUMNS), and the device pool kept between calls
# (PIPEVD_KEEP_DEVICE_MEMORY), each a real n = 32768 pipevd run of its own (first and repeated
# call, timelines and DBBR's per-block lines at verbose 2).
#   bash bench/device/dbbr_columns.sh   (after a build: STEPS=build; TESTS=1 first runs the GPU
#   tests of TEST_REGEX)
# Writes $OUT/columns/<run>/ and $OUT/columns.tgz; BUDGET_S (420) for the runs together, RUN_S
# (110) each.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/preamble.sh"
budget=${BUDGET_S:-420}
dir=$OUT/columns
mkdir -p "$dir"
one() {  # one <folder> <settings...>: a scaling.sh run within what is left
  local name=$1
  shift
  local t
  t=$(left)
  ((t > 30)) || { echo "skipped $name (budget)"; return; }
  ((t > ${RUN_S:-110})) && t=${RUN_S:-110}
  env OUT="$dir/$name" STEPS=bench PEERS= BUDGET_S="$t" "$@" bash "$here/scaling.sh" >"$dir/$name.log" 2>&1
  echo "== $name"
  grep -A12 "summary" "$dir/$name.log" | tail -n +3
  grep -h "gpu engine rank=0" "$dir/$name/scaling/bench.log" 2>/dev/null | cut -c1-300
}
one blockwise PIPEVD_DBBR_COLUMNS=blockwise SIZES=32768 GPU_COUNTS=4 CALLS=2 LABEL_SUFFIX=_blockwise
one cyclic PIPEVD_DBBR_COLUMNS=cyclic SIZES=32768 GPU_COUNTS=4 CALLS=2 LABEL_SUFFIX=_cyclic
one cyclic_kept PIPEVD_DBBR_COLUMNS=cyclic PIPEVD_KEEP_DEVICE_MEMORY=1 SIZES=32768 GPU_COUNTS=4 \
  CALLS=2 LABEL_SUFFIX=_cyclic_kept
tar -C "$OUT" -czf "$OUT/columns.tgz" columns
