#!/usr/bin/env bash
# Topic of bench/gpu_round_session.sh (issue 6): the bulge-chasing gpu tests (staged windows against
# the in-place kernel and the host), then bc_bench with --stage both (each step's window staged in
# shared memory next to the kernel working in place in L2, bitwise compared) for n in BC_N (default
# 16384,32768,65536), b in BC_B (default 32,16), the copy ceiling. BUDGET_S (default 200).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-gpu}
budget=${BUDGET_S:-200}
out=$OUT/bcstage
mkdir -p "$out"
rc=0
PIPEVD_REQUIRE_GPU=1 timeout $((budget * 2 / 3)) ctest --test-dir "$build" -L gpu -R bulge \
  --output-on-failure -V >"$out/ctest.log" 2>&1 || { echo "bulge chasing gpu tests FAILED"; rc=1; }
grep -E "FAILED|Failure|Expected|Which is|tests passed|Total Test" "$out/ctest.log" | head -30
left=$((budget - SECONDS - 5))
timeout "$left" "$build/bench/bc_bench" --ceilings --stage "${BC_STAGE:-both}" --reps 1 --n "${BC_N:-16384,32768,65536}" \
  --b "${BC_B:-32,16}" --lapack-seconds 0 2>&1 | tee "$out/bc_bench.log" || { echo "bc_bench FAILED or cut"; rc=1; }
exit $rc
