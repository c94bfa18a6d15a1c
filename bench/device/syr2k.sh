#!/usr/bin/env bash
# The first device session (syr2k, panel QR): build pipevd with CUDA, run the gpu tests (a skip
# there is a failure: PIPEVD_REQUIRE_GPU=1), then syr2k_bench (our syr2k against cuBLAS Dsyr2k,
# the copy and GEMM ceilings, tuning) and the panel QR alone. Logs go to $OUT (the device tool
# brings that folder back). From anywhere:
#   source .gpu-node/env.sh && bash bench/device/syr2k.sh
# SESSION_STEPS (default "build test bench qr") picks the steps; SYR2K_BENCH_ARGS adds bench args.
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
steps=${SESSION_STEPS:-build test bench qr}
session_header || true

rc=0
if [[ " $steps " == *" build "* ]]; then
  log "configure"
  configure_gpu_build "$build" || exit 1
  log "build the GPU targets"
  build_gpu "$OUT/build.log" test_gpu_syr2k syr2k_bench || exit 1
  log "build everything else"
  cmake --build "$build" -j "$(nproc)" >>"$OUT/build.log" 2>&1 || { log "full build FAILED (see build.log)"; rc=1; }
fi
if [[ " $steps " == *" test "* ]]; then
  log "ctest -L gpu"
  PIPEVD_REQUIRE_GPU=1 timeout 300 ctest --test-dir "$build" -L gpu --output-on-failure -V \
    >"$OUT/ctest_gpu.log" 2>&1 || { log "gpu tests FAILED"; rc=1; }
  tail -15 "$OUT/ctest_gpu.log"
fi
if [[ " $steps " == *" bench "* ]]; then
  log "syr2k_bench --ceilings --tune ${SYR2K_BENCH_ARGS:-}"
  timeout 420 "$build/bench/syr2k_bench" --ceilings --tune ${SYR2K_BENCH_ARGS:-} 2>&1 | tee "$OUT/syr2k_bench.log" ||
    { log "syr2k_bench FAILED"; rc=1; }
fi
if [[ " $steps " == *" qr "* ]]; then
  log "panel QR"
  timeout 60 "$build/bench/syr2k_bench" --no-main --qr 2>&1 | tee "$OUT/panel_qr.log" ||
    { log "panel QR bench FAILED"; rc=1; }
fi
log "done, rc=$rc"
exit $rc
