#!/usr/bin/env bash
# Topic of bench/device/round.sh: the gpu-labelled ctests named by TESTS (a ctest regex, default
# every gpu test), a skip counted as a failure (PIPEVD_REQUIRE_GPU=1), within BUDGET_S (default
# 300). Log in $OUT/tests/ctest.log, the summary on the console. TESTS_VERBOSE=1: ctest -V (every
# test's own output in the log, passed ones too).
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
out=$OUT/tests
mkdir -p "$out"
verbose=()
[ "${TESTS_VERBOSE:-0}" = 1 ] && verbose=(-V)
PIPEVD_REQUIRE_GPU=1 timeout "${BUDGET_S:-300}" ctest --test-dir "$build" -L gpu -R "${TESTS:-.}" \
  --output-on-failure "${verbose[@]}" >"$out/ctest.log" 2>&1
rc=$?
grep -E "Test +#|tests passed|FAILED|Failure" "$out/ctest.log" | head -40
exit $rc
