#!/usr/bin/env bash
# The whole EVD on one GPU next to cuSOLVER (evd_bench: run_engine, host A in and host Z out,
# against cusolverDnXsyevd in the same process; issues 5, 7). Two forms:
#
# evd.sh (the topic of bench/device/round.sh, $BUILD_DIR built): the engine's gpu tests named by
# EVD_TESTS (ctest regex, default "gpu_engine_e2e|gpu_memory_plan"), then evd_bench. EVD_N
# (default 16384,32768), EVD_JOBZ (default N,V), EVD_OVERLAP (default 0,1: JOBZ = V with SBR-back
# after and next to bulge chasing, rows V and V+o). BUDGET_S (default 300): the bench stops
# starting sizes when its time is spent; EVD_TEST_S (default BUDGET_S / 4): the tests' cap.
# EVD_BC_BACK: PIPEVD_GPU_BC_BACK for the bench (and tests). Logs under $OUT/evd/.
#
# evd.sh engine (a session of its own, the first GPU-backend session): build (sm_90), the GPU
# backend tests and the pdsyevd_ end-to-end test on the GPU first (a skip is a failure:
# PIPEVD_REQUIRE_GPU=1), then evd_bench --n 8192,16384, then the other gpu tests (syr2k, bulge
# chasing) with the time that is left. Logs go to $OUT. ENGINE_BUDGET_S (default 450): the whole
# script's wall-clock budget.
#   source .gpu-node/env.sh && bash bench/device/evd.sh engine
set -uo pipefail
source "$(dirname "$0")/preamble.sh"

engine_session() {
  budget=${ENGINE_BUDGET_S:-450}
  session_header
  rc=0
  log "configure"
  configure_gpu_build "$build" || exit 1
  log "build"
  build_timeout=$(( $(left) - 120 )) build_gpu "$OUT/build.log" test_gpu_backend test_engine_stages \
    test_gpu_engine_e2e evd_bench test_gpu_syr2k test_gpu_bulge_chasing || exit 1

  log "ctest -L gpu: the GPU backend, its stages and pdsyevd_ on the GPU"
  PIPEVD_REQUIRE_GPU=1 timeout $(( $(left) / 2 )) ctest --test-dir "$build" -L gpu \
    -R "gpu_backend|gpu_engine_stages|gpu_engine_e2e" \
    -j2 --output-on-failure -V >"$OUT/ctest_gpu_engine.log" 2>&1 || { log "gpu engine tests FAILED"; rc=1; }
  grep -E "^\s*[0-9]+: \[  FAILED|Failure|Expected|Which is|Value of|error|Error|tests passed|Total Test|Passed|Failed|\*\*\*" \
    "$OUT/ctest_gpu_engine.log" | grep -v "OK \]" | head -80
  grep -E "pipevd: pdsyevd route=gpu|gpu engine rank" "$OUT/ctest_gpu_engine.log" | tail -3

  bench_s=$(( $(left) - 100 ))
  [ "$bench_s" -gt 240 ] && bench_s=240
  if [ "$bench_s" -gt 30 ]; then
    log "evd_bench --n 8192,16384 (stops starting cases after $((bench_s - 60)) s, killed at ${bench_s} s)"
    timeout "$bench_s" "$build/bench/evd_bench" --n 8192,16384 --jobz N,V --seconds $((bench_s - 60)) 2>&1 |
      tee "$OUT/evd_bench.log" || { log "evd_bench FAILED or timed out"; rc=1; }
  else
    log "no time left for evd_bench"
  fi

  if [ "$(left)" -gt 20 ]; then
    log "ctest -L gpu: the other gpu tests ($(left) s left)"
    PIPEVD_REQUIRE_GPU=1 timeout $(( $(left) - 5 )) ctest --test-dir "$build" -L gpu \
      -E "gpu_backend|gpu_engine_stages|gpu_engine_e2e" \
      --output-on-failure >"$OUT/ctest_gpu_other.log" 2>&1 || { log "other gpu tests FAILED or timed out"; rc=1; }
    tail -12 "$OUT/ctest_gpu_other.log"
  fi
  log "done, rc=$rc"
  exit $rc
}
[ "${1:-}" = engine ] && engine_session

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
