#!/usr/bin/env bash
# Device session for stage 3 by core/tridiagonal_dc (issue 7: the merges' GEMMs on the GPU, the
# scalar parts on all host cores), after the lead's master script has configured and built
# $BUILD_DIR (default build-gpu) and sourced bench/gpu_node_setup.sh. From the repository root:
#   BUDGET_S=240 bash bench/gpu_dc2_session.sh
# 1 the gpu tests (a skip is a failure): tridiagonal_dc on the GPU against dstedc, the engine with
#   dc, and the pdsyevd e2e on the GPU route (dc is its default now);
# 2 dc_gpu_bench: dc on the GPU vs dstedc (n <= 16384) for Toeplitz T, with the stage split;
# 3 evd_bench at n = 16384 (JOBZ = V) with the new default against cusolverDnXsyevd;
# 4 dc under mpirun's binding to one core (PIPEVD_VERBOSE shows the widened affinity).
# Logs in $OUT/dc2/, a summary at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-gpu}
budget=${BUDGET_S:-240}
OUT=${OUT:-$PWD/gpu-out}
out="$OUT/dc2"
mkdir -p "$out"
log() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "$out/session.log"; }
left() { echo $((budget - SECONDS)); }
cap() { local l; l=$(left); [ "$l" -gt "$1" ] && echo "$1" || echo "$((l > 5 ? l : 5))"; }

log "dc2 session: budget ${budget}s, build $build, $(nproc) cores"
rc=0

log "1 ctest -L gpu -R 'gpu_tridiagonal_dc|gpu_engine_e2e'"
PIPEVD_REQUIRE_GPU=1 timeout "$(cap 90)" ctest --test-dir "$build" -L gpu \
  -R 'gpu_tridiagonal_dc|gpu_engine_e2e' --output-on-failure -V >"$out/ctest.log" 2>&1 ||
  { log "gpu tests FAILED"; rc=1; }
grep -E "^\s*[0-9]+: \[  (FAILED|PASSED)|Failure|Expected|Which is|actual|tests passed|Total Test" \
  "$out/ctest.log" | tail -30 | tee -a "$out/session.log"

if [ "$(left)" -gt 20 ]; then
  log "2 dc_gpu_bench (Toeplitz T; dstedc up to 16384)"
  t=$(cap 110)
  timeout "$t" "$build/bench/dc_gpu_bench" --n 4096,8192,16384,32768 --kinds toeplitz \
    --dstedc-max 16384 --seconds $((t - 40)) 2>&1 | tee "$out/dc_gpu_bench.log" | tee -a "$out/session.log"
fi

if [ "$(left)" -gt 30 ]; then
  log "3 evd_bench n=16384 JOBZ=V, tridiagonal=dc (the default) vs cusolverDnXsyevd"
  t=$(cap 60)
  PIPEVD_VERBOSE=1 timeout "$t" "$build/bench/evd_bench" --n 16384 --jobz V --tridiagonal dc \
    --seconds $((t - 20)) 2>&1 | tee "$out/evd_bench.log" | tee -a "$out/session.log"
fi

if [ "$(left)" -gt 20 ] && command -v mpirun >/dev/null; then
  log "4 dc under mpirun --bind-to core (n=16384, no dstedc)"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PIPEVD_VERBOSE=1 timeout "$(cap 40)" \
    mpirun -np 1 --bind-to core -x PIPEVD_VERBOSE -x LD_LIBRARY_PATH "$build/bench/dc_gpu_bench" \
    --n 16384 --kinds toeplitz --dstedc-max 0 2>&1 | tee "$out/dc_mpirun.log" | tee -a "$out/session.log"
fi

log "summary (rc=$rc): what to look for"
echo "  ctest: gpu_tridiagonal_dc and gpu_engine_e2e pass (ctest.log)"
echo "  dc_gpu_bench: 'ok' on every row; dc column vs dstedc column at 16384 (39 s before);"
echo "     leaves/host_mrg/upload/gemm split; 32768 runs (beyond dstedc's reach at 46340 anyway)"
echo "  evd_bench: the dc column and 'engine' vs 'cusolver' at n = 16384 (3.8 s)"
echo "  dc_mpirun: 'affinity widened from 1 to N CPUs' and a dc time close to row 2's"
grep -E "^ *[0-9]+ +toeplitz" "$out/dc_gpu_bench.log" 2>/dev/null
exit $rc
