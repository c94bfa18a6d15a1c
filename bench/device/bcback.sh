#!/usr/bin/env bash
# Device session for BC-back (issue 7): the gpu BC-back tests, then bc_back_bench (a tuning sweep
# of the BLAS2 variants at n = 16384, m = n and n/4, then BLAS2 vs BLAS3 at n = m in {8192, 16384,
# 32768} and m = n/4, b = 32). Run by bench/device/round.sh (TOPICS="bcback:200") with $BUILD_DIR
# (default build-gpu) built; alone: source .gpu-node/env.sh && BUDGET_S=200 bash bench/device/bcback.sh
# Logs under $OUT/bcback/. BUDGET_S (default 200): the whole script's wall-clock budget.
# BCBACK_TESTS=0: no tests (gpu_bc_back takes some 75 s on an H100).
# BCBACK_ARGS: bc_back_bench's arguments instead of the sweep above (--seconds is added).
# BCBACK_NCU: a variant-name substring: after the bench, Nsight Compute on that variant and the
# default at n = m = 8192 (launch statistics, pipes, warp stalls; clocks left alone; the bench's
# warm-up launches 20 bc_back_rows kernels first).
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
budget=${BUDGET_S:-200}
dir="$OUT/bcback"
mkdir -p "$dir"
log_file=$dir/session.log

rc=0
# Already built by the master script; this only catches a missing target (a no-op otherwise).
build_timeout=$((budget / 3)) build_gpu "$dir/build.log" test_gpu_bc_back bc_back_bench || exit 1

if [ "${BCBACK_TESTS:-1}" = 1 ]; then
log "ctest -L gpu -R 'gpu_bc_back|gpu_backend' (bc_back cases)"
PIPEVD_REQUIRE_GPU=1 timeout $((budget / 2)) ctest --test-dir "$build" -L gpu -R '^gpu_bc_back$' \
  --output-on-failure >"$dir/ctest.log" 2>&1 || { log "gpu bc_back tests FAILED"; rc=1; }
grep -E "Failure|Expected|Which is|trace|tests passed|Total Test|Passed|Failed" "$dir/ctest.log" |
  head -40
# The backend's own bc_back cases (the engine path through gpu::bc_back's default).
PIPEVD_REQUIRE_GPU=1 timeout 60 "$build/tests/test_gpu_backend" --gtest_filter='*BcBack*' \
  >"$dir/backend_bcback.log" 2>&1 || { log "test_gpu_backend *BcBack* FAILED"; rc=1; }
tail -3 "$dir/backend_bcback.log"
fi

left=$((budget - SECONDS))
log "bc_back_bench (${left}s left, cases start within $((left - 45))s)"
ncu_s=0
[ -n "${BCBACK_NCU:-}" ] && ncu_s=60
args=${BCBACK_ARGS:---n 8192,16384,32768 --mdiv 1,4 --b 32 --tune-n 16384}
timeout $((left - 5 - ncu_s)) "$build/bench/bc_back_bench" $args --seconds $((left - 45 - ncu_s)) 2>&1 |
  tee "$dir/bc_back_bench.log" || { log "bc_back_bench FAILED or cut"; rc=1; }
if [ -n "${BCBACK_NCU:-}" ]; then
  log "ncu on '${BCBACK_NCU}' and the default, n = m = 8192"
  timeout $((budget - SECONDS - 3)) ncu --clock-control none -k regex:bc_back_rows \
    --launch-skip 20 --launch-count 3 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
    --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    "$build/bench/bc_back_bench" --n 0 --tune-n 8192 --mdiv 1 --no-blas3 --only "$BCBACK_NCU" \
    >"$dir/ncu.log" 2>&1 || log "ncu failed or cut"
  grep -E "bc_back_rows|Duration|Throughput|Pipe|Issue|Stall|Occupancy|Registers|Warp Cycles" \
    "$dir/ncu.log" | tail -80
fi
log "done, rc=$rc"
exit $rc
