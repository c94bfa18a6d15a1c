#!/usr/bin/env bash
# One device-machine session for GPU bulge chasing (issue 6): LAPACK dsytrd_sb2st starts in the
# background at once (sb2st_bench, plain g++), then build (sm_90), the gpu bulge-chasing tests
# (a skip is a failure: PIPEVD_REQUIRE_GPU=1), then bc_bench (copy ceiling, tuning, the n x b
# table, LAPACK's times next to it). Logs go to $OUT. From the repository root:
#   source .gpu-node/env.sh && bash bench/gpu_bc_session.sh
# BC_BUDGET_S (default 520): the whole script's wall-clock budget; bc_bench waits for LAPACK only
# up to it. BC_MODE=tune (bench/gpu_bc_tune_session.sh): no LAPACK; bc_bench --tune-only over n in
# BC_TUNE_N (default 65536,32768) and b in BC_TUNE_B (default 32,16,64), default budget 390 s.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-gpu}
mode=${BC_MODE:-table}
if [ "$mode" = tune ]; then budget=${BC_BUDGET_S:-390}; else budget=${BC_BUDGET_S:-520}; fi
log() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "$OUT/session.log"; }

source bench/gpu_node_setup.sh

session_header

# LAPACK first: it is sequential per case (no OpenMP in this LAPACK) and slow; its thread CPU times
# are what the table reports, so overlapping it with the build and tests costs the numbers nothing.
rm -rf /tmp/bc_lapack
if [ "$mode" = tune ]; then
  log "tuning session: no LAPACK"
elif g++ -O2 -I. bench/sb2st_bench.cpp -o /tmp/sb2st_bench -llapack -lpthread >"$OUT/sb2st.log" 2>&1; then
  log "sb2st_bench started (n 8192,16384,32768 x b 16,32,64, OPENBLAS_NUM_THREADS=16)"
  OPENBLAS_NUM_THREADS=16 /tmp/sb2st_bench --n 8192,16384,32768 --b 16,32,64 --dir /tmp/bc_lapack \
    >>"$OUT/sb2st.log" 2>&1 &
  lapack_pid=$!
else
  log "sb2st_bench did not build"; tail -5 "$OUT/sb2st.log"
fi

rc=0
log "configure"
configure_gpu_build "$build" || exit 1
log "build test_gpu_bulge_chasing bc_bench"
cmake --build "$build" -j16 --target test_gpu_bulge_chasing bc_bench >"$OUT/build.log" 2>&1 ||
  { log "build FAILED"; grep -E -A3 "error" "$OUT/build.log" | head -40; exit 1; }

log "ctest -L gpu -R bulge"
PIPEVD_REQUIRE_GPU=1 timeout 240 ctest --test-dir "$build" -L gpu -R bulge --output-on-failure -V \
  >"$OUT/ctest_gpu_bc.log" 2>&1 || { log "gpu bulge chasing tests FAILED"; rc=1; }
grep -E "n = |FAILED|PASSED|Failure|Expected|Which is|tests passed|Total Test" \
  "$OUT/ctest_gpu_bc.log" | grep -v "^\s*[0-9]*: \[       OK" | tail -60

left=$((budget - SECONDS))
if [ "$mode" = tune ]; then
  log "bc_bench --tune-only (new runs for ${left}s less 25)"
  timeout $((left + 5)) "$build/bench/bc_bench" --tune-only --tune-n "${BC_TUNE_N:-65536,32768}" \
    --b "${BC_TUNE_B:-32,16,64}" --tune-seconds $((left - 25)) 2>&1 | tee "$OUT/bc_tune.log" ||
    { log "bc_bench FAILED or cut"; rc=1; }
else
  log "bc_bench --ceilings --tune (waits for LAPACK at most ${left}s)"
  timeout $((left + 60)) "$build/bench/bc_bench" --ceilings --tune --lapack-dir /tmp/bc_lapack \
    --lapack-seconds "$left" 2>&1 | tee "$OUT/bc_bench.log" || { log "bc_bench FAILED"; rc=1; }
  [ -n "${lapack_pid:-}" ] && kill "$lapack_pid" 2>/dev/null
  log "sb2st log:"; cat "$OUT/sb2st.log"
fi
log "done, rc=$rc"
exit $rc
