#!/usr/bin/env bash
# One device-machine session for DBBR on the GPU (issue 5). Assumes the repository root as cwd,
# `source bench/gpu_node_setup.sh` done and $BUILD_DIR (default build-gpu) configured and built by
# the master script (test_gpu_dbbr, test_gpu_backend, dbbr_bench are built here if missing;
# test_gpu_syr2k is expected built).
#   1. gpu tests: test_gpu_syr2k, test_gpu_dbbr (syr2k_full and DBBR with the syr2k trailing
#      update against the host, bitwise repeatable; a skip is a failure: PIPEVD_REQUIRE_GPU=1)
#      and test_gpu_backend's DBBR + SBR-back case;
#   2. dbbr_bench: DBBR alone per n in 8192,16384,32768,49152 with the per-part time split, the
#      k sweep, panel updates with/without syr2k, cusolverDnDsytrd next to it, the panel QR and
#      A W alone; then b = 64 and b = 16 at n = 32768.
# BUDGET_S (default 240): the whole script's wall-clock budget. Logs go to $OUT/dbbr/.
set -uo pipefail
build=${BUILD_DIR:-build-gpu}
budget=${BUDGET_S:-240}
out=${OUT:-/tmp}/dbbr
mkdir -p "$out"
log() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "$out/session.log"; }
left() { echo $((budget - SECONDS)); }

rc=0
if [ ! -x "$build/tests/test_gpu_dbbr" ] || [ ! -x "$build/bench/dbbr_bench" ]; then
  log "building test_gpu_dbbr dbbr_bench test_gpu_backend"
  timeout $(( $(left) / 2 )) cmake --build "$build" -j16 --target test_gpu_dbbr dbbr_bench \
    test_gpu_backend >"$out/build.log" 2>&1 ||
    { log "build FAILED"; grep -E -B2 -A6 "error" "$out/build.log" | head -60; exit 1; }
fi

log "ctest -L gpu -R \"gpu_dbbr|gpu_syr2k\""
PIPEVD_REQUIRE_GPU=1 timeout 150 ctest --test-dir "$build" -L gpu -R "gpu_dbbr|gpu_syr2k" --output-on-failure \
  -V >"$out/ctest_gpu_dbbr.log" 2>&1 || { log "gpu_dbbr tests FAILED"; rc=1; }
grep -E "^\s*[0-9]+: \[  FAILED|Failure|Expected|Which is|Value of|tests passed|Total Test|\*\*\*" \
  "$out/ctest_gpu_dbbr.log" | head -40
log "test_gpu_backend --gtest_filter=*Dbbr*"
PIPEVD_REQUIRE_GPU=1 timeout 60 "$build/tests/test_gpu_backend" --gtest_filter='*Dbbr*' \
  >"$out/gpu_backend_dbbr.log" 2>&1 || { log "test_gpu_backend DBBR FAILED"; rc=1; }
grep -E "FAILED|PASSED|Failure" "$out/gpu_backend_dbbr.log" | head -10

bench_s=$(( $(left) - 70 ))
if [ "$bench_s" -gt 40 ]; then
  # dbbr_bench stops starting cases 30 s before it is killed (n = 49152 runs take ~10 s each).
  log "dbbr_bench (starts cases for $((bench_s - 30)) s, killed at ${bench_s} s)"
  timeout "$bench_s" "$build/bench/dbbr_bench" --seconds $((bench_s - 30)) 2>&1 |
    tee "$out/dbbr_bench.log" || { log "dbbr_bench FAILED or cut"; rc=1; }
else
  log "no time left for dbbr_bench"
fi
# b = 64 / 16 at n = 32768: A W reads A once per panel (bandwidth-bound at b = 32), so a wider
# panel halves that traffic; bulge chasing pays for it (see bc_bench for that side).
bench_s=$(( $(left) - 5 ))
if [ "$bench_s" -gt 25 ]; then
  log "dbbr_bench b sweep at n = 32768 (${bench_s} s)"
  timeout "$bench_s" "$build/bench/dbbr_bench" --n 32768 --b 64 --k 1024,2048 --panel-syr2k 0 \
    --sytrd-max-n 0 --seconds $((bench_s - 15)) 2>&1 | tee -a "$out/dbbr_bench.log" ||
    { log "dbbr_bench b = 64 cut"; }
  bench_s=$(( $(left) - 5 ))
  [ "$bench_s" -gt 15 ] && timeout "$bench_s" "$build/bench/dbbr_bench" --n 32768 --b 16 --k 1024 \
    --panel-syr2k 0 --sytrd-max-n 0 --qr 0 --seconds 5 2>&1 | tee -a "$out/dbbr_bench.log"
fi

log "summary (best DBBR per n and b; sytrd; target >= 25 TFLOP/s at n = 32768):"
for n in 8192 16384 32768 49152; do
  for b in 16 32 64; do
    grep -E "^dbbr n=$n b=$b " "$out/dbbr_bench.log" 2>/dev/null | sort -t" " -k6,6 -g | head -1
  done
  grep -E "^sytrd n=$n:" "$out/dbbr_bench.log" 2>/dev/null
done | tee -a "$out/session.log"
log "done, rc=$rc"
exit $rc
