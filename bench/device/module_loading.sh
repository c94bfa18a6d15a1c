#!/usr/bin/env bash
# First calls under CUDA's lazy module loading (the default) against CUDA_MODULE_LOADING=EAGER, on
# the 4 GPUs: loading a kernel lazily may synchronise the context, so a kernel a side thread (the
# D&C, SBR-back) launches for the first time could wait for the long kernels running beside it.
# One call each (CALLS=1: the first call and its timeline), complex n = 16384 then real n = 32768
# (issue 23's first call): RUNS=preload (default) pipevd's kernels preloaded (PIPEVD_PRELOAD_KERNELS)
# against not; RUNS=eager CUDA's lazy loading against CUDA_MODULE_LOADING=EAGER, no preload;
# RUNS=grid real n = 32768 with the device prepared at the grid's creation (PIPEVD_PREPARE_AT_GRID=1:
# the NCCL communicator and CUDA context made while pipevd-bench generates its matrix) against at
# the call's start (the grid runs make a second call too: first against repeated in one process;
# the first of them waits LEAD_S (4) seconds before its first call, an application's own set-up,
# so that the grid's preparation has finished).
#   bash bench/device/module_loading.sh   (after a build: STEPS=build)
# Writes $OUT/loading/ and $OUT/loading.tgz; BUDGET_S (150) for the runs together (the real runs
# need some 50 s each).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/preamble.sh"
runs_folder loading 150
first_call() { scaling_run "$dir" "$1" GPU_COUNTS=4 CALLS=1 "${@:2}"; }  # one call per process
case ${RUNS:-preload} in
  preload)  # pipevd's kernels preloaded against loaded at their first launch (the default)
    first_call complex_preload PIPEVD_PRELOAD_KERNELS=on BENCH_SCALAR=complex SIZES=16384 LABEL_SUFFIX=_preload
    first_call complex_lazy PIPEVD_PRELOAD_KERNELS=off BENCH_SCALAR=complex SIZES=16384
    first_call real_preload PIPEVD_PRELOAD_KERNELS=on SIZES=32768 LABEL_SUFFIX=_preload
    first_call real_lazy PIPEVD_PRELOAD_KERNELS=off SIZES=32768 ;;
  eager)  # the twentieth session's call 6: CUDA's lazy loading against EAGER
    first_call complex_lazy PIPEVD_PRELOAD_KERNELS=off BENCH_SCALAR=complex SIZES=16384
    first_call complex_eager CUDA_MODULE_LOADING=EAGER BENCH_SCALAR=complex SIZES=16384 LABEL_SUFFIX=_eager
    first_call real_eager CUDA_MODULE_LOADING=EAGER SIZES=32768 LABEL_SUFFIX=_eager
    first_call real_lazy PIPEVD_PRELOAD_KERNELS=off SIZES=32768 ;;
  grid)  # the device prepared at the grid's creation against at the first call's start
    first_call real_grid_lead PIPEVD_PREPARE_AT_GRID=1 BENCH_LEAD="${LEAD_S:-4}" SIZES=32768 CALLS=2 \
      LABEL_SUFFIX=_grid_lead
    first_call real_grid PIPEVD_PREPARE_AT_GRID=1 SIZES=32768 CALLS=2 LABEL_SUFFIX=_grid
    first_call real_call PIPEVD_PREPARE_AT_GRID=0 SIZES=32768 ;;
esac
tar -C "$OUT" -czf "$OUT/loading.tgz" loading
