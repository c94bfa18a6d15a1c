#!/usr/bin/env bash
# Topic of bench/device/round.sh: pdsyevd_ through the route on one GPU: the engine's gpu
# tests (ctest -R ROUTE_TESTS, default "gpu_engine_e2e|gpu_memory|gpu_backend"), then the
# multi-GPU end-to-end test with 2 caller ranks on 1 engine rank (PIPEVD_ENGINE_RANKS=1,
# PIPEVD_TEST_GPUS=1): redistribution both ways, the engine's release next to it. BUDGET_S
# (default 300). Logs under $OUT/route/.
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
budget=${BUDGET_S:-300}
out=$OUT/route
mkdir -p "$out"
rc=0
PIPEVD_REQUIRE_GPU=1 timeout $((budget * 2 / 3)) ctest --test-dir "$build" -L gpu \
  -R "${ROUTE_TESTS:-gpu_engine_e2e|gpu_memory|gpu_backend}" --output-on-failure >"$out/ctest.log" 2>&1 ||
  { echo "route gpu tests FAILED"; rc=1; }
grep -E "Test +#|tests passed|FAILED|Failure" "$out/ctest.log" | head -20
left=$((budget - SECONDS - 5))
echo "== test_gpu_multigpu_e2e, 2 caller ranks, 1 engine rank on 1 GPU (${left} s)"
timeout "$left" mpirun --bind-to none -n 2 -x PIPEVD_BACKEND=gpu -x PIPEVD_ENGINE_RANKS=1 \
  -x PIPEVD_TEST_GPUS=1 -x PIPEVD_VERBOSE=1 -x OPENBLAS_NUM_THREADS=8 -x LD_LIBRARY_PATH \
  "$build/tests/test_gpu_multigpu_e2e" --gtest_filter='-*n4099*' >"$out/callers2.log" 2>&1 ||
  { echo "2 callers on 1 GPU FAILED"; rc=1; }
grep -E "OK \]|FAILED|Failure|PASSED" "$out/callers2.log" | head -20
exit $rc
