#!/usr/bin/env bash
# Small calls (issue 26): the one-stage path against the two-stage engine on the 4 GPUs (2x2
# callers) at the n where the crossover table's 4-GPU row is not measured, and the one-GPU direct
# path at n = 2000 with the host threads that pack and scan the triangle's upload capped
# (PIPEVD_THREADS), since that upload took 8.9 ms for 16 MB on the 64-core 4-GPU host; last a
# first call on the 4 GPUs with NCCL's INIT log (NCCL_DEBUG=INFO), whose timings say where its
# set-up, the longest part of a first call before the engine, goes.
#   bash bench/device/small_calls.sh   (after a build: STEPS=build)
# Writes $OUT/small/<run>/ and $OUT/small.tgz; BUDGET_S (110) for the runs together.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/preamble.sh"
runs_folder small 110
scaling_run "$dir" paths SIZES="4000 6000" GPU_COUNTS=4 CALLS=3 ENGINE_PATHS="one_stage two_stage"
for t in ${THREADS_LIST:-1 4 16}; do
  scaling_run "$dir" "threads$t" PIPEVD_THREADS="$t" SIZES=2000 GPU_COUNTS=1 CALLS=4 LABEL_SUFFIX="_threads$t"
done
scaling_run "$dir" nccl_init NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV SIZES=4000 GPU_COUNTS=4 CALLS=1 \
  LABEL_SUFFIX=_nccl_debug
tar -C "$OUT" -czf "$OUT/small.tgz" small
