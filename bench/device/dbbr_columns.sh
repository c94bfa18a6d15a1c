#!/usr/bin/env bash
# DBBR's column distribution on 4 GPUs (issue 23; docs/dbbr_chain.md §5 names the gate): outer
# blocks dealt out cyclically against the contiguous blockwise columns (PIPEVD_DBBR_COLUMNS), and
# the device pool kept between calls (PIPEVD_KEEP_DEVICE_MEMORY), each a real pipevd run of its own
# per n of SIZES (32768) (first and repeated call, timelines and DBBR's per-block lines at verbose
# 2).
#   bash bench/device/dbbr_columns.sh   (after a build: STEPS=build; TESTS=1 first runs the GPU
#   tests of TEST_REGEX)
#   SIZES="32768 49152" VARIANTS="blockwise cyclic" bash bench/device/dbbr_columns.sh
# VARIANTS ("blockwise cyclic cyclic_kept"), GPUS (4: the engine ranks, one per GPU). Writes $OUT/columns/<run>/ and $OUT/columns.tgz;
# BUDGET_S (420) for the runs together, RUN_S (110) each.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/preamble.sh"
runs_folder columns 420
export RUN_S=${RUN_S:-110}
real() { scaling_run "$dir" "$1_n$n" SIZES="$n" GPU_COUNTS="${GPUS:-4}" CALLS=2 LABEL_SUFFIX="_$1" "${@:2}"; }
for n in ${SIZES:-32768}; do
  for v in ${VARIANTS:-blockwise cyclic cyclic_kept}; do
    case $v in
      blockwise) real blockwise PIPEVD_DBBR_COLUMNS=blockwise ;;
      cyclic) real cyclic PIPEVD_DBBR_COLUMNS=cyclic ;;
      cyclic_kept) real cyclic_kept PIPEVD_DBBR_COLUMNS=cyclic PIPEVD_KEEP_DEVICE_MEMORY=1 ;;
      *) echo "dbbr_columns.sh: unknown variant '$v'" ;;
    esac
  done
done
tar -C "$OUT" -czf "$OUT/columns.tgz" columns
