#!/usr/bin/env bash
# One device-machine session: build pipevd with CUDA (sm_90 only, to keep the build short), run the
# gpu tests (a skip there is a failure: PIPEVD_REQUIRE_GPU=1), then the GPU benchmarks. Logs go to
# $OUT (the device tool brings that folder back). Run from the repository root or anywhere:
#   source .gpu-node/env.sh && bash bench/gpu_session.sh [bench args...]
# SESSION_STEPS (default "build test bench qr") picks the steps; SYR2K_BENCH_ARGS adds bench args.
set -uo pipefail
cd "$(dirname "$0")/.."
steps=${SESSION_STEPS:-build test bench qr}
build=${BUILD_DIR:-build-gpu}
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/session.log"; }

source bench/gpu_node_setup.sh

session_header || true

rc=0
if [[ " $steps " == *" build "* ]]; then
  log "configure"
  configure_gpu_build "$build" || exit 1
  log "build the GPU targets"
  cmake --build "$build" -j16 --target test_gpu_syr2k syr2k_bench >"$OUT/build.log" 2>&1 ||
    { log "build FAILED"; grep -E -A3 "error" "$OUT/build.log" | head -40; exit 1; }
  log "build everything else"
  cmake --build "$build" -j16 >>"$OUT/build.log" 2>&1 || { log "full build FAILED (see build.log)"; rc=1; }
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
