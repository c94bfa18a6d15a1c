#!/usr/bin/env bash
# Topic of bench/gpu_round_session.sh (issue 7): the whole EVD on one GPU next to cuSOLVER
# (evd_bench), after the engine's gpu tests named by EVD_TESTS (ctest regex, default
# "gpu_engine_e2e|gpu_memory_plan"). EVD_N (default 16384,32768), EVD_JOBZ (default N,V), EVD_OVERLAP
# (default 0,1: JOBZ = V with SBR-back after and next to bulge chasing, rows V and V+o).
# BUDGET_S (default 300): the bench stops starting sizes when its time is spent; EVD_TEST_S
# (default BUDGET_S / 4): the tests' cap. EVD_BC_BACK: PIPEVD_GPU_BC_BACK for the bench (and tests).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-gpu}
budget=${BUDGET_S:-300}
out=$OUT/evd
mkdir -p "$out"
rc=0
[ -n "${EVD_BC_BACK:-}" ] && export PIPEVD_GPU_BC_BACK=$EVD_BC_BACK
if [ -n "${EVD_TESTS-gpu_engine_e2e|gpu_memory_plan}" ]; then
  PIPEVD_REQUIRE_GPU=1 timeout "${EVD_TEST_S:-$((budget / 4))}" ctest --test-dir "$build" -L gpu \
    -R "${EVD_TESTS-gpu_engine_e2e|gpu_memory_plan}" --output-on-failure >"$out/ctest.log" 2>&1 ||
    { echo "engine gpu tests FAILED"; rc=1; }
  grep -E "Test +#|tests passed|FAILED|Failure|high-water" "$out/ctest.log" | head -20
fi
left=$((budget - SECONDS - 5))
timeout "$left" "$build/bench/evd_bench" --n "${EVD_N:-16384,32768}" --jobz "${EVD_JOBZ:-N,V}" \
  --overlap-sbr "${EVD_OVERLAP:-0,1}" \
  --seconds $((left - 60)) 2>&1 | grep -v "pmix\|dlopen\|Perhaps" | tee "$out/evd_bench.log" ||
  { echo "evd_bench FAILED or cut"; rc=1; }
exit $rc
