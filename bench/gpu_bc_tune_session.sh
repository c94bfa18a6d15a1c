#!/usr/bin/env bash
# One device-machine session tuning GPU bulge chasing at large n (issue 6): build (sm_90) the
# bulge-chasing test and bc_bench, the gpu bulge-chasing tests first (a skip is a failure:
# PIPEVD_REQUIRE_GPU=1), then bc_bench --tune-only over n in BC_TUNE_N (default 65536,32768) and b
# in BC_TUNE_B (default 32,16,64, in that order), stopping new runs when the budget is spent. Logs
# go to $OUT. From the repository root:
#   source .gpu-node/env.sh && bash bench/gpu_bc_tune_session.sh
# BC_BUDGET_S (default 390): the whole script's wall-clock budget.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-gpu}
budget=${BC_BUDGET_S:-390}
log() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "$OUT/session.log"; }

source bench/gpu_node_setup.sh

session_header

rc=0
log "configure"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DPIPEVD_BUILD_EXAMPLES=OFF >"$OUT/configure.log" 2>&1 || { log "configure FAILED"; tail -30 "$OUT/configure.log"; exit 1; }
log "build test_gpu_bulge_chasing bc_bench"
cmake --build "$build" -j16 --target test_gpu_bulge_chasing bc_bench >"$OUT/build.log" 2>&1 ||
  { log "build FAILED"; grep -E -A3 "error" "$OUT/build.log" | head -40; exit 1; }

log "ctest -L gpu -R bulge"
PIPEVD_REQUIRE_GPU=1 timeout 200 ctest --test-dir "$build" -L gpu -R bulge --output-on-failure -V \
  >"$OUT/ctest_gpu_bc.log" 2>&1 || { log "gpu bulge chasing tests FAILED"; rc=1; }
grep -E "FAILED|PASSED|Failure|Expected|Which is|tests passed|Total Test" \
  "$OUT/ctest_gpu_bc.log" | grep -v "^\s*[0-9]*: \[       OK" | tail -30

left=$((budget - SECONDS))
log "bc_bench --tune-only (new runs for ${left}s less 25)"
timeout $((left + 5)) "$build/bench/bc_bench" --tune-only --tune-n "${BC_TUNE_N:-65536,32768}" \
  --b "${BC_TUNE_B:-32,16,64}" --tune-seconds $((left - 25)) 2>&1 | tee "$OUT/bc_tune.log" ||
  { log "bc_bench FAILED or cut"; rc=1; }
log "done, rc=$rc"
exit $rc
