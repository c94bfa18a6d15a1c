#!/usr/bin/env bash
# Stage 3, the tridiagonal problem (issue 7), in three forms, the first argument:
#
# tridiagonal.sh dc (the topic "dc2" of bench/device/round.sh; default budget BUDGET_S 600 s; logs
# in $OUT/dc2/, a summary at the end): core/tridiagonal_dc with the merges' GEMMs on the GPU, the
# merge matrices uploaded from pinned memory or, for merges of order >= 512, secular roots and M
# made on the GPU by gpu/secular_merge.cu; $BUILD_DIR (default build-gpu) built:
#   1 the gpu tests (a skip is a failure): gpu_tridiagonal_dc (dc on the GPU against dstedc, the
#     device-merge path against the host-merge path at n = 1000, 4099, 10007, bitwise repeatable;
#     the engine with dc);
#   2 dc_gpu_bench: both merge paths (host: dlaed4 + M uploaded; device: kernels) for Toeplitz T at
#     n = 4096 .. 32768, vs dstedc (n <= 16384), with the stage split;
#   3 evd_bench at n = 16384 (JOBZ = V) with the default (device merge) against cusolverDnXsyevd;
#   4 dc under mpirun's binding to one core (PIPEVD_VERBOSE shows the widened affinity).
#
# tridiagonal.sh evals (the topic "evals"; default budget 150 s; logs under $OUT/evals/): the
# eigenvalues-only stage and the memory plan; $BUILD_DIR built:
#   1 gpu tests: the memory plan against the device pool's high-water mark; the bisection kernel
#     bitwise against its host implementation (n = 1000, 4099, 20000, clusters, 1e-300 / 1e300
#     scales) and dsterf; PIPEVD_GPU_MEMORY_LIMIT small: auto forwards to ScaLAPACK
#     (route=scalapack ... forwarded), PIPEVD_BACKEND=gpu stops naming the bytes;
#   then pdsyevd_ end to end on the GPU (gpu_engine_e2e: JOBZ 'N' through the bisection);
#   2 eigenvalues_bench: GPU bisection vs LAPACK dsterf (one core) and the host bisection;
#   3 with time left, evd_bench JOBZ = 'N' at n = 16384 (the whole eigenvalues-only EVD, stage 3 now
#     the GPU bisection) next to cuSOLVER.
#
# tridiagonal.sh lapack (the topic "dc"; no build needed): the engine's first CPU tridiagonal
# stage, LAPACK dstedc / dsterf (bench/dc_bench.cpp, compiled with g++), at BLAS thread counts 16
# and 1; log in $OUT/dc.log.
#   source .gpu-node/env.sh && bash bench/device/tridiagonal.sh lapack
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
form=${1:-dc}

# cap S: S, or what is left of the budget if less (at least 5).
cap() { local l; l=$(left); [ "$l" -gt "$1" ] && echo "$1" || echo "$((l > 5 ? l : 5))"; }

dc() {
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
    PIPEVD_VERBOSE=1 timeout "$(cap 40)" \
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
}

evals() {
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
}

lapack() {
  g++ -O2 -std=c++17 -o /tmp/dc_bench bench/dc_bench.cpp -llapack -lblas -ldl -pthread || exit 1
  echo "$(nproc) cores; $(lscpu | grep 'Model name' | sed 's/  */ /g')" | tee "$OUT/dc.log"
  ls -l $(ldd /tmp/dc_bench | awk '/lapack|blas/{print $3}') | tee -a "$OUT/dc.log"
  for t in 16 1; do
    echo "== OPENBLAS_NUM_THREADS=$t" | tee -a "$OUT/dc.log"
    OPENBLAS_NUM_THREADS=$t timeout 200 /tmp/dc_bench 4096 8192 | tee -a "$OUT/dc.log"
  done
  echo "== OPENBLAS_NUM_THREADS=16, n=16384" | tee -a "$OUT/dc.log"
  OPENBLAS_NUM_THREADS=16 timeout 150 /tmp/dc_bench 16384 | tee -a "$OUT/dc.log"
}

case $form in
  dc) budget=${BUDGET_S:-600} out=$OUT/dc2 ;;
  evals) budget=${BUDGET_S:-150} out=$OUT/evals ;;
  lapack) budget=${BUDGET_S:-0} out=$OUT ;;
  *) echo "tridiagonal.sh: no form '$form' (dc, evals, lapack)" >&2; exit 2 ;;
esac
mkdir -p "$out"
log_file=$out/session.log
"$form"
