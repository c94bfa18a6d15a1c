#!/usr/bin/env bash
# Device-machine session for issue 7's eigenvalues-only stage and memory plan (the `evals` work):
#   1 gpu tests: the memory plan against the device pool's high-water mark; the bisection kernel
#     bitwise against its host implementation (n = 1000, 4099, 20000, clusters, 1e-300 / 1e300
#     scales) and dsterf; PIPEVD_GPU_MEMORY_LIMIT small: auto forwards to ScaLAPACK
#     (route=scalapack ... forwarded), PIPEVD_BACKEND=gpu stops naming the bytes;
#   then pdsyevd_ end to end on the GPU (gpu_engine_e2e: JOBZ 'N' through the bisection);
#   2 eigenvalues_bench: GPU bisection vs LAPACK dsterf (one core) and the host bisection;
#   3 with time left, evd_bench JOBZ = 'N' at n = 16384 (the whole eigenvalues-only EVD, stage 3 now
#     the GPU bisection) next to cuSOLVER.
# Assumes the repository root as cwd, `source bench/gpu_node_setup.sh` done and $BUILD_DIR
# (default build-gpu) configured and built. Budget: $BUDGET_S seconds (default 150). Logs under
# $OUT/evals/.
set -uo pipefail
build=${BUILD_DIR:-build-gpu}
budget=${BUDGET_S:-150}
out=${OUT:-$PWD/gpu-out}/evals
mkdir -p "$out"
log() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "$out/session.log"; }
left() { echo $((budget - SECONDS)); }
rc=0

log "ctest -L gpu -R 'gpu_tridiagonal_bisection|gpu_memory'"
PIPEVD_REQUIRE_GPU=1 timeout $(( $(left) * 6 / 10 )) ctest --test-dir "$build" -L gpu \
  -R "gpu_tridiagonal_bisection|gpu_memory" --output-on-failure -V >"$out/ctest.log" 2>&1 ||
  { log "evals gpu tests FAILED"; rc=1; }
grep -E "Test #|\[  FAILED|Failure|Expected|Which is|differ|Required regular|route=scalapack|pipevd: error|high-water" \
  "$out/ctest.log" | head -40 | tee -a "$out/session.log"

# pdsyevd_ end to end on the GPU: its JOBZ = 'N' calls now take the bisection (against ScaLAPACK).
e2e_s=$(( $(left) - 70 ))
[ "$e2e_s" -gt 60 ] && e2e_s=60
if [ "$e2e_s" -gt 15 ]; then
  log "ctest -R gpu_engine_e2e (JOBZ N through the bisection), at most ${e2e_s} s"
  PIPEVD_REQUIRE_GPU=1 timeout "$e2e_s" ctest --test-dir "$build" -L gpu -R "^gpu_engine_e2e" \
    --output-on-failure >"$out/ctest_e2e.log" 2>&1 || { log "gpu_engine_e2e FAILED or timed out"; rc=1; }
  grep -E "Test #|\[  FAILED|Failure" "$out/ctest_e2e.log" | head -20 | tee -a "$out/session.log"
fi

bench_s=$(( $(left) - 5 ))
if [ "$bench_s" -gt 20 ]; then
  dsterf_max=16384
  [ "$bench_s" -gt 75 ] && dsterf_max=32768
  log "eigenvalues_bench (dsterf up to n = $dsterf_max), killed at ${bench_s} s"
  timeout "$bench_s" "$build/bench/eigenvalues_bench" --n 8192,16384,32768,65536 \
    --dsterf-max-n "$dsterf_max" --host-bisection-max-n 16384 2>&1 | tee "$out/eigenvalues_bench.log" ||
    { log "eigenvalues_bench FAILED or timed out"; rc=1; }
fi

bench_s=$(( $(left) - 5 ))
if [ "$bench_s" -gt 30 ] && [ -x "$build/bench/evd_bench" ]; then
  log "evd_bench --n 16384 --jobz N, killed at ${bench_s} s"
  timeout "$bench_s" "$build/bench/evd_bench" --n 16384 --jobz N --seconds $((bench_s - 20)) 2>&1 |
    tee "$out/evd_bench_jobz_n.log" || log "evd_bench timed out (budget)"
fi

log "summary (rc=$rc)"
{
  grep -E "Test #" "$out/ctest.log"
  grep -E "^eigenvalues_bench" "$out/eigenvalues_bench.log" 2>/dev/null
  grep -E "^ *n +jobz|^ *[0-9]+ +N " "$out/evd_bench_jobz_n.log" 2>/dev/null | head -5
} | tee -a "$out/session.log"
exit $rc
