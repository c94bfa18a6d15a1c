#!/usr/bin/env bash
# One device-machine session for the fused panel QR (issue 5, gpu/panel_qr.cuh). Assumes the
# repository root as cwd, `source bench/gpu_node_setup.sh` done and $BUILD_DIR (default build-gpu)
# configured and built by the master script (test_gpu_panel_qr, test_gpu_dbbr, test_gpu_backend
# and dbbr_bench are built here if missing).
#   1. gpu tests: test_gpu_panel_qr (fused kernel and cuSOLVER path against LAPACK, bitwise
#      repeatable), test_gpu_dbbr and test_gpu_backend's PanelQr and Dbbr cases (DBBR against the
#      host with the fused kernel as the default); a skip is a failure (PIPEVD_REQUIRE_GPU=1);
#   2. dbbr_bench --qr-sweep: the panel QR alone, fused against the cuSOLVER path, at
#      m = 8192..49152, b = 32 and 64;
#      then at m = 32768 with at most 66 and 33 blocks (PIPEVD_GPU_PANEL_QR_BLOCKS);
#   3. dbbr_bench: the whole DBBR at n = 16384 and 32768, b = 32, k = 1024, with each panel QR path.
# BUDGET_S (default 200): the whole script's wall-clock budget. Logs go to $OUT/panelqr/.
set -uo pipefail
build=${BUILD_DIR:-build-gpu}
budget=${BUDGET_S:-200}
out=${OUT:-/tmp}/panelqr
mkdir -p "$out"
log() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "$out/session.log"; }
left() { echo $((budget - SECONDS)); }

rc=0
if [ ! -x "$build/tests/test_gpu_panel_qr" ] || [ ! -x "$build/bench/dbbr_bench" ]; then
  log "building test_gpu_panel_qr test_gpu_dbbr test_gpu_backend dbbr_bench"
  timeout $(( $(left) / 2 )) cmake --build "$build" -j16 --target test_gpu_panel_qr test_gpu_dbbr \
    test_gpu_backend dbbr_bench >"$out/build.log" 2>&1 ||
    { log "build FAILED"; grep -E -B2 -A6 "error" "$out/build.log" | head -60; exit 1; }
fi

log "ctest -L gpu -R \"gpu_panel_qr|gpu_dbbr\""
PIPEVD_REQUIRE_GPU=1 timeout 130 ctest --test-dir "$build" -L gpu -R "gpu_panel_qr|gpu_dbbr" \
  --output-on-failure -V >"$out/ctest.log" 2>&1 || { log "gpu_panel_qr / gpu_dbbr tests FAILED"; rc=1; }
grep -E "^\s*[0-9]+: \[  FAILED|Failure|Expected|Which is|Value of|m=|tests passed|Total Test|\*\*\*" \
  "$out/ctest.log" | head -40
log "test_gpu_backend --gtest_filter=*PanelQr*:*Dbbr*"
PIPEVD_REQUIRE_GPU=1 timeout 40 "$build/tests/test_gpu_backend" --gtest_filter='*PanelQr*:*Dbbr*' \
  >"$out/gpu_backend.log" 2>&1 || { log "test_gpu_backend PanelQr/Dbbr FAILED"; rc=1; }
grep -E "FAILED|PASSED|Failure" "$out/gpu_backend.log" | head -10

bench_s=$(( $(left) - 5 ))
if [ "$bench_s" -gt 20 ]; then
  log "dbbr_bench --qr-sweep (panel QR alone: fused vs cusolver path)"
  timeout $(( bench_s < 40 ? bench_s : 40 )) "$build/bench/dbbr_bench" \
    --qr-sweep 8192,16384,32768,49152 --qr-b 32,64 2>&1 | tee "$out/qr_sweep.log" ||
    { log "qr sweep FAILED or cut"; rc=1; }
fi
bench_s=$(( $(left) - 5 ))
if [ "$bench_s" -gt 45 ]; then
  # Fewer, taller slabs: cheaper grid syncs against less parallel work per column.
  for nblk in 66 33; do
    log "qr sweep at m = 32768 with PIPEVD_GPU_PANEL_QR_BLOCKS=$nblk"
    PIPEVD_GPU_PANEL_QR_BLOCKS=$nblk timeout 20 "$build/bench/dbbr_bench" --qr-sweep 32768 \
      --qr-b 32,64 2>&1 | sed "s/^panel_qr /panel_qr blocks<=$nblk /" | tee -a "$out/qr_sweep.log"
  done
fi
bench_s=$(( $(left) - 5 ))
if [ "$bench_s" -gt 25 ]; then
  log "dbbr_bench n = 16384,32768 with each panel QR path (starts cases for $((bench_s - 20)) s)"
  timeout "$bench_s" "$build/bench/dbbr_bench" --n 16384,32768 --b 32 --k 1024 --panel-syr2k 0 \
    --sytrd-max-n 0 --qr 0 --panel-qr auto,cusolver --seconds $((bench_s - 20)) 2>&1 |
    tee "$out/dbbr_bench.log" || { log "dbbr_bench FAILED or cut"; rc=1; }
else
  log "no time left for the DBBR runs"
fi

log "summary"
grep -E "^panel_qr " "$out/qr_sweep.log" 2>/dev/null | sed 's/; TSQR.*//'
grep -E "^dbbr n=" "$out/dbbr_bench.log" 2>/dev/null | sed -E 's/\|.*\| panel_qr_path/| panel_qr_path/'
log "done rc=$rc"
exit $rc
