#!/usr/bin/env bash
# Topic of bench/gpu_round_session.sh: the gpu-labelled ctests named by TESTS (a ctest regex,
# default every gpu test), a skip counted as a failure (PIPEVD_REQUIRE_GPU=1), within BUDGET_S
# (default 300). Log in $OUT/tests/ctest.log, the summary on the console.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-gpu}
out=$OUT/tests
mkdir -p "$out"
PIPEVD_REQUIRE_GPU=1 timeout "${BUDGET_S:-300}" ctest --test-dir "$build" -L gpu -R "${TESTS:-.}" \
  --output-on-failure >"$out/ctest.log" 2>&1
rc=$?
grep -E "Test +#|tests passed|FAILED|Failure" "$out/ctest.log" | head -40
exit $rc
