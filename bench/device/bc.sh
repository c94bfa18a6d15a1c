#!/usr/bin/env bash
# GPU bulge chasing (issue 6). The mode, the first argument (or BC_MODE), picks the form:
#
# bc.sh [table] (a session of its own): LAPACK dsytrd_sb2st starts in the background at once
# (sb2st_bench, plain g++), then build (sm_90), the gpu bulge-chasing tests (a skip is a failure:
# PIPEVD_REQUIRE_GPU=1), then bc_bench (copy ceiling, tuning, the n x b table, LAPACK's times next
# to it). Logs go to $OUT. BC_BUDGET_S (default 520): the whole script's wall-clock budget;
# bc_bench waits for LAPACK only up to it.
#   source .gpu-node/env.sh && bash bench/device/bc.sh
# bc.sh tune (a session of its own, tuning at large n): no LAPACK; bc_bench --tune-only over n in
# BC_TUNE_N (default 65536,32768) and b in BC_TUNE_B (default 32,16,64), default budget 390 s.
#
# bc.sh stage (the topic "bcstage" of bench/device/round.sh, $BUILD_DIR built): the bulge-chasing
# gpu tests (staged windows against the in-place kernel and the host), then bc_bench with --stage
# BC_STAGE (default both: each step's window staged in shared memory next to the kernel working in
# place in L2, bitwise compared) for n in BC_N (default 16384,32768,65536), b in BC_B (default
# 32,16), the copy ceiling; BC_STEP (default both): the staged step in registers next to its loops
# over shared memory; BC_ARGS: more bc_bench arguments (e.g. --tune --tune-n 16384,32768);
# BC_TESTS (ctest regex, default "bulge"; empty: none); BC_NCU=1: afterwards Nsight Compute on one
# chase at n = 8192, b = 32 (stall reasons per SASS line to $OUT/bcstage/ncu_source.csv).
# BUDGET_S (default 200). Logs under $OUT/bcstage/.
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
mode=${1:-${BC_MODE:-table}}

if [ "$mode" = stage ]; then
  budget=${BUDGET_S:-200}
  out=$OUT/bcstage
  mkdir -p "$out"
  rc=0
  if [ -n "${BC_TESTS-bulge}" ]; then
    PIPEVD_REQUIRE_GPU=1 timeout $((budget * 2 / 3)) ctest --test-dir "$build" -L gpu -R "${BC_TESTS-bulge}" \
      --output-on-failure -V >"$out/ctest.log" 2>&1 || { echo "bulge chasing gpu tests FAILED"; rc=1; }
    grep -E "FAILED|Failure|Expected|Which is|tests passed|Total Test" "$out/ctest.log" | head -30
  fi
  ncu_s=0
  [ -n "${BC_NCU:-}" ] && ncu_s=70
  left=$((budget - SECONDS - 5 - ncu_s))
  timeout "$left" "$build/bench/bc_bench" --ceilings --stage "${BC_STAGE:-both}" \
    --step "${BC_STEP:-both}" ${BC_ARGS:-} --reps 1 --n "${BC_N:-16384,32768,65536}" \
    --b "${BC_B:-32,16}" --lapack-seconds 0 2>&1 | tee "$out/bc_bench.log" || { echo "bc_bench FAILED or cut"; rc=1; }
  if [ -n "${BC_NCU:-}" ]; then
    # Its timeout: what is left of the budget, less 3 s.
    ncu_one_launch chase chase_sweeps 0 $((budget - SECONDS + 7)) \
      "SpeedOfLight WarpStateStats Occupancy LaunchStats MemoryWorkloadAnalysis" -- \
      "$build/bench/bc_bench" --stage on --step registers --reps 0 --n 8192 --b 32 --lapack-seconds 0
    grep -E "Duration|Stall|Warp Cycles|Issued|Occupancy|Registers|Throughput" "$out/ncu_details.log" | head -40
  fi
  exit $rc
fi

if [ "$mode" = tune ]; then budget=${BC_BUDGET_S:-390}; else budget=${BC_BUDGET_S:-520}; fi
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
build_gpu "$OUT/build.log" test_gpu_bulge_chasing bc_bench || exit 1

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
