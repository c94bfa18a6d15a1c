#!/usr/bin/env bash
# First calls under CUDA's lazy module loading (the default) against CUDA_MODULE_LOADING=EAGER, on
# the 4 GPUs: loading a kernel lazily may synchronise the context, so a kernel a side thread (the
# D&C, SBR-back) launches for the first time could wait for the long kernels running beside it.
# One call each (CALLS=1: the first call and its timeline), complex n = 16384 then real n = 32768
# (issue 23's first call): RUNS=preload (default) pipevd's kernels preloaded (PIPEVD_PRELOAD_KERNELS)
# against not; RUNS=eager CUDA's lazy loading against CUDA_MODULE_LOADING=EAGER, no preload.
#   bash bench/device/module_loading.sh   (after a build: STEPS=build)
# Writes $OUT/loading/ and $OUT/loading.tgz; BUDGET_S (150) for the runs together (the real runs
# need some 50 s each).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/preamble.sh"
budget=${BUDGET_S:-150}
dir=$OUT/loading
mkdir -p "$dir"
one() {  # one <folder> <settings...>: a scaling.sh run, one call, within what is left
  local name=$1
  shift
  local t
  t=$(left)
  ((t > 25)) || { echo "skipped $name (budget)"; return; }
  env OUT="$dir/$name" STEPS=bench GPU_COUNTS=4 CALLS=1 PEERS= BUDGET_S="$t" "$@" \
    bash "$here/scaling.sh" >"$dir/$name.log" 2>&1
  echo "== $name"
  grep -A3 "summary" "$dir/$name.log" | tail -2
  grep -h "D&C n=\|gpu engine rank=0" "$dir/$name/scaling/bench.log" 2>/dev/null | cut -c1-300
}
case ${RUNS:-preload} in
  preload)  # pipevd's kernels preloaded against loaded at their first launch (the default)
    one complex_preload PIPEVD_PRELOAD_KERNELS=on BENCH_SCALAR=complex SIZES=16384 LABEL_SUFFIX=_preload
    one complex_lazy PIPEVD_PRELOAD_KERNELS=off BENCH_SCALAR=complex SIZES=16384
    one real_preload PIPEVD_PRELOAD_KERNELS=on SIZES=32768 LABEL_SUFFIX=_preload
    one real_lazy PIPEVD_PRELOAD_KERNELS=off SIZES=32768 ;;
  eager)  # the twentieth session's call 6: CUDA's lazy loading against EAGER
    one complex_lazy PIPEVD_PRELOAD_KERNELS=off BENCH_SCALAR=complex SIZES=16384
    one complex_eager CUDA_MODULE_LOADING=EAGER BENCH_SCALAR=complex SIZES=16384 LABEL_SUFFIX=_eager
    one real_eager CUDA_MODULE_LOADING=EAGER SIZES=32768 LABEL_SUFFIX=_eager
    one real_lazy PIPEVD_PRELOAD_KERNELS=off SIZES=32768 ;;
esac
tar -C "$OUT" -czf "$OUT/loading.tgz" loading
