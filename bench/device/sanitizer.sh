#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, synccheck) on the engine's own kernels at small orders
# (issue 24): bulge chasing, BC-back (real and complex), the D&C's device merge (secular roots, z-hat, M), the
# recursive syr2k and the one-triangle A W product, through their gpu tests with
# PIPEVD_TEST_MAX_N capping the orders (tests/support/test_size_limit.hpp). The jobs are shared
# out over the visible GPUs, one job per GPU at a time.
#   source .gpu-node/env.sh && BUDGET_S=240 bash bench/device/sanitizer.sh
# Settings: TOOLS ("memcheck racecheck synccheck"), MAX_N (300), JOB_S (the cap of one job, 75;
# BC-back's jobs BC_BACK_JOB_S, 240),
# SKIP (a regex of "tool binary" pairs not to run, e.g. "racecheck test_gpu_bc_back"),
# BUDGET_S (the whole script, 240). Expects $BUILD_DIR (default build-gpu) built (scaling.sh or
# round.sh builds it). Writes $OUT/sanitizer/summary.log: per job its exit, the sanitizer's ERROR
# SUMMARY and the first reports; the jobs' whole logs stay on the device (/tmp/sanitizer).
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
budget=${BUDGET_S:-240}
out=$OUT/sanitizer
mkdir -p "$out" /tmp/sanitizer
log_file=$out/summary.log
export PIPEVD_TEST_MAX_N=${MAX_N:-300} PIPEVD_REQUIRE_GPU=1
ngpu=$( (nvidia-smi -L 2>/dev/null || true) | grep -c "^GPU" || true)
((ngpu > 0)) || { log "no GPU"; exit 1; }
command -v compute-sanitizer >/dev/null || { log "compute-sanitizer not found"; exit 1; }

# binary|gtest filter: the kernels' own tests at the capped orders.
cases=(
  "test_gpu_bulge_chasing|Sizes/GpuBulgeChasing.*:GpuBulgeChasingSpecial.*:GpuBulgeChasingTunables.StagedWindowSameAsInPlace"
  "test_gpu_bc_back|GpuBcBack.Blas2EqualsHostEveryVariantBitwiseRepeatable"
  "test_gpu_bc_back|GpuBcBack.TensorGroupLanesEqualOneLaneBitwise"
  "test_gpu_bc_back_complex|GpuBcBackComplex.EqualsHostEveryKernelBitwiseRepeatable"
  "test_gpu_tridiagonal_dc|GpuTridiagonalDc.DeviceMergeAgainstHostMerge"
  "test_gpu_syr2k|Sizes/Syr2kVsCublas.*"
  "test_gpu_symmetric_product|Sizes/SymmetricProduct.*"
)
jobs=()
for tool in ${TOOLS:-memcheck racecheck synccheck}; do
  for c in "${cases[@]}"; do jobs+=("$tool|$c"); done
done
log "sanitizer: ${#jobs[@]} jobs on $ngpu GPUs, PIPEVD_TEST_MAX_N=$PIPEVD_TEST_MAX_N, budget $budget s"

run_job() {  # tool|binary|filter on GPU $2
  IFS='|' read -r tool bin filter <<<"$1"
  [[ -n ${SKIP:-} && "$tool $bin" =~ $SKIP ]] && return
  # BC-back's two kernels are two jobs (on two GPUs at once): their logs are named by the filter.
  local gpu=$2 tag=${bin}_${filter%%[:*]*} cap=${JOB_S:-75}
  tag=${tag//\//_}
  local jl=/tmp/sanitizer/${tool}_${tag}.log
  # BC-back's tests (the BLAS2 variants and the group lanes' wavefront) outlast the other jobs
  # under racecheck several times over.
  [[ $bin == test_gpu_bc_back* ]] && cap=${BC_BACK_JOB_S:-240}
  local room=$((budget - SECONDS - 5))
  ((room < cap)) && cap=$room
  if ((cap < 10)); then
    echo "$tool $bin: not run (budget)" >>"$log_file"
    return
  fi
  CUDA_VISIBLE_DEVICES=$gpu timeout "$cap" compute-sanitizer --tool "$tool" --error-exitcode 3 \
    "$build/tests/$bin" --gtest_filter="$filter" >"$jl" 2>&1
  local rc=$?
  {
    echo "== $tool $bin ($filter): exit $rc$( ((rc == 124)) && echo ' (cut by the job cap)')"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|\[  PASSED|\[  FAILED" "$jl" | head -4
    echo "  skipped (over MAX_N): $(grep -c "^\[  SKIPPED \]" "$jl")"
    # Each distinct report once (kernel, access pair), with how often it came.
    grep -E -A1 "^========= (Invalid|Race|Barrier|Error|Program hit|Uninitialized|Warning)" "$jl" |
      grep -v "^--" | sed -E 's/\[[0-9]+ hazards\]//; s/0x[0-9a-f]+ is/ADDR is/' | sort | uniq -c |
      sort -rn | head -12
  } >>"$log_file.$tool.$tag"
}

worker() {  # GPU $1 takes jobs $1, $1 + ngpu, ...
  for ((k = $1; k < ${#jobs[@]}; k += ngpu)); do run_job "${jobs[$k]}" "$1"; done
}
for ((g = 0; g < ngpu; ++g)); do worker "$g" & done
wait
for f in "$log_file".*; do cat "$f" >>"$log_file" && rm -f "$f"; done
grep -E "^== " "$log_file"
log "done"
