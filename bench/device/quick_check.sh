#!/usr/bin/env bash
# A short device call's check: builds only TARGETS (pipevd-bench and the test executables named),
# runs the gpu tests TESTS (a ctest regex) with PIPEVD_REQUIRE_GPU=1, then real n = 32768 on 4
# GPUs as module_loading.sh's RUNS=grid runs it (first call and repeated call in one process, the
# device readied at the grid, LEAD_S seconds of lead), within BUDGET_S seconds for the whole
# script: for a session's last minutes of device time, where a full build and suite do not fit.
#   TARGETS="test_gpu_scoped_device" TESTS=gpu_scoped_device bash bench/device/quick_check.sh
# Writes $OUT/quick/ (build.log, ctest.log) and module_loading.sh's $OUT/loading.tgz.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/preamble.sh"
budget=${BUDGET_S:-170}
out=$OUT/quick
mkdir -p "$out"
log_file=$out/session.log
session_header >/dev/null 2>&1
configure_gpu_build "$build" || exit 1
build_gpu "$out/build.log" pipevd-bench ${TARGETS:-} || exit 1
log "built"
if [ -n "${TESTS:-}" ]; then
  PIPEVD_REQUIRE_GPU=1 timeout "${TESTS_S:-60}" ctest --test-dir "$build" -L gpu -R "$TESTS" \
    --output-on-failure >"$out/ctest.log" 2>&1
  grep -E "Test +#|tests passed|FAILED|Failure" "$out/ctest.log" | head -30
fi
left_s=$(left)
((left_s > 40)) && RUNS=grid LEAD_S="${LEAD_S:-4}" BUDGET_S=$((left_s - 5)) bash "$here/module_loading.sh"
log "done"
