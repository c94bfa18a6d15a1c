#!/usr/bin/env bash
# Device session for stage 3 by core/tridiagonal_dc (issue 7: the merges' GEMMs on the GPU; the
# merge matrices uploaded from pinned memory, or, for merges of order >= 512, secular roots and M
# made on the GPU by gpu/secular_merge.cu), after the lead's master script has configured and
# built $BUILD_DIR (default build-gpu) and sourced bench/gpu_node_setup.sh. From the repository
# root:
#   BUDGET_S=600 bash bench/gpu_dc2_session.sh
# 1 the gpu tests (a skip is a failure): gpu_tridiagonal_dc (dc on the GPU against dstedc, the
#   device-merge path against the host-merge path at n = 1000, 4099, 10007, bitwise repeatable;
#   the engine with dc);
# 2 dc_gpu_bench: both merge paths (host: dlaed4 + M uploaded; device: kernels) for Toeplitz T at
#   n = 4096 .. 32768, vs dstedc (n <= 16384), with the stage split;
# 3 evd_bench at n = 16384 (JOBZ = V) with the default (device merge) against cusolverDnXsyevd;
# 4 dc under mpirun's binding to one core (PIPEVD_VERBOSE shows the widened affinity).
# Logs in $OUT/dc2/, a summary at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-gpu}
budget=${BUDGET_S:-600}
OUT=${OUT:-$PWD/gpu-out}
out="$OUT/dc2"
mkdir -p "$out"
log() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "$out/session.log"; }
left() { echo $((budget - SECONDS)); }
cap() { local l; l=$(left); [ "$l" -gt "$1" ] && echo "$1" || echo "$((l > 5 ? l : 5))"; }

log "dc2 session: budget ${budget}s, build $build, $(nproc) cores"
rc=0

log "1 ctest -L gpu -R gpu_tridiagonal_dc"
PIPEVD_REQUIRE_GPU=1 timeout "$(cap 240)" ctest --test-dir "$build" -L gpu \
  -R 'gpu_tridiagonal_dc' --output-on-failure -V >"$out/ctest.log" 2>&1 ||
  { log "gpu tests FAILED"; rc=1; }
grep -E "^\s*[0-9]+: \[  (FAILED|PASSED)|Failure|Expected|Which is|actual|device merges|tests passed|Total Test" \
  "$out/ctest.log" | tail -40 | tee -a "$out/session.log"

if [ "$(left)" -gt 20 ]; then
  log "2 dc_gpu_bench (Toeplitz T; merge paths host and device; dstedc up to 16384)"
  t=$(cap 200)
  PIPEVD_VERBOSE=1 timeout "$t" "$build/bench/dc_gpu_bench" --n 4096,8192,16384,32768 \
    --kinds toeplitz --merge host,device --dstedc-max 16384 --seconds $((t - 50)) \
    >"$out/dc_gpu_bench.log" 2>"$out/dc_gpu_bench.err"
  tee -a "$out/session.log" <"$out/dc_gpu_bench.log"
fi

if [ "$(left)" -gt 120 ]; then
  log "2b dc_gpu_bench, device merge from order 256 (every merge level on the GPU with leaf 128)"
  t=$(cap 60)
  timeout "$t" "$build/bench/dc_gpu_bench" --n 16384,32768 --kinds toeplitz --merge device \
    --device-min 256 --dstedc-max 0 --seconds $((t - 25)) 2>&1 |
    tee "$out/dc_gpu_bench_min256.log" | tee -a "$out/session.log"
fi

if [ "$(left)" -gt 30 ]; then
  log "3 evd_bench n=16384 JOBZ=V, tridiagonal=dc (the default) vs cusolverDnXsyevd"
  t=$(cap 60)
  PIPEVD_VERBOSE=1 timeout "$t" "$build/bench/evd_bench" --n 16384 --jobz V --tridiagonal dc \
    --seconds $((t - 20)) 2>&1 | tee "$out/evd_bench.log" | tee -a "$out/session.log"
fi

if [ "$(left)" -gt 90 ]; then
  log "3b evd_bench n=16384 JOBZ=V with the host merge (PIPEVD_DC_DEVICE_MERGE=0), for comparison"
  t=$(cap 60)
  PIPEVD_DC_DEVICE_MERGE=0 PIPEVD_VERBOSE=1 timeout "$t" "$build/bench/evd_bench" --n 16384 \
    --jobz V --tridiagonal dc --seconds $((t - 20)) 2>&1 | tee "$out/evd_bench_hostmerge.log" |
    tee -a "$out/session.log"
fi

if [ "$(left)" -gt 20 ] && command -v mpirun >/dev/null; then
  log "4 dc under mpirun --bind-to core (n=16384, no dstedc)"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PIPEVD_VERBOSE=1 timeout "$(cap 40)" \
    mpirun -np 1 --bind-to core -x PIPEVD_VERBOSE -x LD_LIBRARY_PATH "$build/bench/dc_gpu_bench" \
    --n 16384 --kinds toeplitz --dstedc-max 0 2>&1 | tee "$out/dc_mpirun.log" | tee -a "$out/session.log"
fi

log "summary (rc=$rc): what to look for"
echo "  ctest: gpu_tridiagonal_dc passes (DeviceMergeAgainstHostMerge prints 'device merges'"
echo "     and the eigenvalue gap to the host path in eps ||T||)"
echo "  dc_gpu_bench: 'ok' on every row; per n the 'host' row (pinned upload: upload column vs"
echo "     0.52-0.66 s before at 16384) against the 'device' row (dev_mrg replaces host_mrg +"
echo "     upload; dc was 2.2 s at 16384, 6.9 s at 32768); path_diff (eps) small; 2b: whether"
echo "     --device-min 256 beats the default 512 (then lower DcOptions::device_merge_min)"
echo "  evd_bench: the dc column and 'engine' vs 'cusolver' at n = 16384 (3.95 s); 3b the same"
echo "     with the host merge (the D&C line of PIPEVD_VERBOSE shows the split in both)"
echo "  dc_mpirun: 'affinity widened from 1 to N CPUs' and a dc time close to row 2's"
grep -E "^ *[0-9]+ +toeplitz" "$out/dc_gpu_bench.log" 2>/dev/null
grep -E "D&C n=" "$out/dc_gpu_bench.err" 2>/dev/null | tail -4
exit $rc
