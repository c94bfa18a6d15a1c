#!/usr/bin/env bash
# One device-machine session for the GPU backend (issues 5 and 7): build (sm_90), the GPU backend
# tests and the pdsyevd_ end-to-end test on the GPU first (a skip is a failure:
# PIPEVD_REQUIRE_GPU=1), then evd_bench (run_engine on one GPU next to cusolverDnXsyevd), then the
# other gpu tests (syr2k, bulge chasing) with the time that is left. Logs go to $OUT. From the
# repository root:
#   source .gpu-node/env.sh && bash bench/gpu_engine_session.sh
# ENGINE_BUDGET_S (default 450): the whole script's wall-clock budget.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-gpu}
budget=${ENGINE_BUDGET_S:-450}
log() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "$OUT/session.log"; }
left() { echo $((budget - SECONDS)); }

source bench/gpu_node_setup.sh

session_header

rc=0
log "configure"
configure_gpu_build "$build" || exit 1
log "build"
timeout $(( $(left) - 120 )) cmake --build "$build" -j16 --target test_gpu_backend test_gpu_engine_e2e \
  evd_bench test_gpu_syr2k test_gpu_bulge_chasing >"$OUT/build.log" 2>&1 ||
  { log "build FAILED"; grep -E -B2 -A6 "error" "$OUT/build.log" | head -80; exit 1; }

log "ctest -L gpu: the GPU backend and pdsyevd_ on the GPU"
PIPEVD_REQUIRE_GPU=1 timeout $(( $(left) / 2 )) ctest --test-dir "$build" -L gpu -R "gpu_backend|gpu_engine_e2e" \
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
  PIPEVD_REQUIRE_GPU=1 timeout $(( $(left) - 5 )) ctest --test-dir "$build" -L gpu -E "gpu_backend|gpu_engine_e2e" \
    --output-on-failure >"$OUT/ctest_gpu_other.log" 2>&1 || { log "other gpu tests FAILED or timed out"; rc=1; }
  tail -12 "$OUT/ctest_gpu_other.log"
fi
log "done, rc=$rc"
exit $rc
