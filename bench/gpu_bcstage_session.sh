#!/usr/bin/env bash
# Topic of bench/gpu_round_session.sh (issue 6): the bulge-chasing gpu tests (staged windows against
# the in-place kernel and the host), then bc_bench with --stage both (each step's window staged in
# shared memory next to the kernel working in place in L2, bitwise compared) for n in BC_N (default
# 16384,32768,65536), b in BC_B (default 32,16), the copy ceiling; BC_STEP (default both): the
# staged step in registers next to its loops over shared memory; BC_ARGS: more bc_bench arguments
# (e.g. --tune --tune-n 16384,32768); BC_TESTS (ctest regex, default "bulge"; empty: none);
# BC_NCU=1: afterwards Nsight Compute on one chase at n = 8192, b = 32 (stall reasons per SASS line
# to $OUT/bcstage/ncu_source.csv). BUDGET_S (default 200).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-gpu}
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
  timeout $((budget - SECONDS - 3)) ncu --clock-control none -k regex:chase_sweeps --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats \
    --section SourceCounters --section MemoryWorkloadAnalysis -o "$out/chase" -f \
    "$build/bench/bc_bench" --stage on --step registers --reps 0 --n 8192 --b 32 --lapack-seconds 0 \
    >"$out/ncu.log" 2>&1 || echo "ncu failed or cut"
  ncu -i "$out/chase.ncu-rep" --page details >"$out/ncu_details.log" 2>&1
  ncu -i "$out/chase.ncu-rep" --page source --csv --print-source sass >"$out/ncu_source.csv" 2>&1
  rm -f "$out/chase.ncu-rep"
  grep -E "Duration|Stall|Warp Cycles|Issued|Occupancy|Registers|Throughput" "$out/ncu_details.log" | head -40
fi
exit $rc
