#!/usr/bin/env bash
# DBBR on one GPU (issue 5), a topic of bench/device/round.sh in three parts, the first argument
# (default dbbr); $BUILD_DIR (default build-gpu) configured and built by that master script (the
# part's own targets are built here if missing). From anywhere, after the build:
#   BUDGET_S=240 bash bench/device/dbbr.sh [dbbr|panelqr|aw]
#
# dbbr (default budget BUDGET_S 240 s; logs under $OUT/dbbr/):
#   1. gpu tests: test_gpu_syr2k, test_gpu_dbbr (syr2k_full and DBBR with the syr2k trailing
#      update against the host, bitwise repeatable; a skip is a failure: PIPEVD_REQUIRE_GPU=1)
#      and test_engine_stages's Gpu/ DBBR and SBR-back cases;
#   2. dbbr_bench: DBBR alone per n in 8192,16384,32768,49152 with the per-part time split, the
#      k sweep, panel updates with/without syr2k, cusolverDnDsytrd next to it, the panel QR and
#      A W alone; then b = 64 and b = 16 at n = 32768.
#
# panelqr, the fused panel QR, gpu/panel_qr.cuh (default budget 200 s; logs under $OUT/panelqr/):
#   1. gpu tests: test_gpu_panel_qr (fused kernel and cuSOLVER path against LAPACK, bitwise
#      repeatable), test_gpu_dbbr, test_gpu_backend's PanelQr cases and test_engine_stages's Gpu/
#      DBBR cases (DBBR against the host with the fused kernel as the default); a skip is a failure
#      (PIPEVD_REQUIRE_GPU=1);
#   2. dbbr_bench --qr-sweep: the panel QR alone, fused against the cuSOLVER path, at
#      m = 8192..49152, b = 32 and 64;
#      then at m = 32768 with at most 66 and 33 blocks (PIPEVD_GPU_PANEL_QR_BLOCKS);
#   3. dbbr_bench: the whole DBBR at n = 16384 and 32768, b = 32, k = 1024, with each panel QR path.
#
# aw, DBBR's A W (default budget 120 s; logs under $OUT/aw/): symm_bench (gpu/symmetric_product's
#   kernel, one triangle, against cuBLAS dgemm('T','N') on full storage, same run), then dbbr_bench
#   with A W through that kernel and through GEMMs (--aw symm,gemm), same run. AW_M: symm_bench's
#   sizes (default 4096,8192,16384,32768,49152); AW_N: dbbr_bench's (default 16384,32768); AW_K:
#   its outer blocks k (default 1024).
set -uo pipefail
source "$(dirname "$0")/preamble.sh"

# gpu_checks <ctest regex> <seconds> <log name> [<test executable> <gtest filter> <seconds>]...:
# the gpu-labelled ctests named, then each executable's cases of its filter; rc=1 on a failure.
gpu_checks() {
  log "ctest -L gpu -R \"$1\""
  PIPEVD_REQUIRE_GPU=1 timeout "$2" ctest --test-dir "$build" -L gpu -R "$1" --output-on-failure \
    -V >"$out/$3.log" 2>&1 || { log "$1 tests FAILED"; rc=1; }
  grep -E "^\s*[0-9]+: \[  FAILED|Failure|Expected|Which is|Value of|m=|tests passed|Total Test|\*\*\*" \
    "$out/$3.log" | head -40
  local name=$3
  shift 3
  while [ $# -ge 3 ]; do
    log "$1 --gtest_filter=$2"
    PIPEVD_REQUIRE_GPU=1 timeout "$3" "$build/tests/$1" --gtest_filter="$2" \
      >"$out/${name}_$1.log" 2>&1 || { log "$1 $2 FAILED"; rc=1; }
    grep -E "FAILED|PASSED|Failure" "$out/${name}_$1.log" | head -10
    shift 3
  done
}
part=${1:-dbbr}

dbbr() {
  rc=0
  if [ ! -x "$build/tests/test_gpu_dbbr" ] || [ ! -x "$build/bench/dbbr_bench" ]; then
    log "building test_gpu_dbbr dbbr_bench test_engine_stages"
    build_timeout=$(( $(left) / 2 )) build_gpu "$out/build.log" test_gpu_dbbr dbbr_bench \
      test_engine_stages || exit 1
  fi

  gpu_checks "gpu_dbbr|gpu_syr2k" 150 ctest_gpu_dbbr test_engine_stages 'Gpu/*Dbbr*:Gpu/*SbrBack*' 90

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
}

panelqr() {
  rc=0
  if [ ! -x "$build/tests/test_gpu_panel_qr" ] || [ ! -x "$build/bench/dbbr_bench" ]; then
    log "building test_gpu_panel_qr test_gpu_dbbr test_gpu_backend test_engine_stages dbbr_bench"
    build_timeout=$(( $(left) / 2 )) build_gpu "$out/build.log" test_gpu_panel_qr test_gpu_dbbr \
      test_gpu_backend test_engine_stages dbbr_bench || exit 1
  fi

  gpu_checks "gpu_panel_qr|gpu_dbbr" 130 ctest test_gpu_backend '*PanelQr*' 40 \
    test_engine_stages 'Gpu/*Dbbr*' 60

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
}

aw() {
  rc=0
  timeout $(( $(left) / 3 )) "$build/bench/symm_bench" --m "${AW_M:-4096,8192,16384,32768,49152}" 2>&1 |
    tee "$out/symm_bench.log" || { echo "symm_bench FAILED or cut"; rc=1; }
  bench_s=$(( $(left) - 5 ))
  timeout "$bench_s" "$build/bench/dbbr_bench" --n "${AW_N:-16384,32768}" --k "${AW_K:-1024}" --panel-syr2k 0 \
    --aw gemm,symm --sytrd-max-n 0 --qr 0 --seconds $((bench_s - 20)) 2>&1 | tee "$out/dbbr_bench.log" |
    grep -E "^dbbr|^#" || { echo "dbbr_bench FAILED or cut"; rc=1; }
  exit $rc
}

case $part in
  dbbr) budget=${BUDGET_S:-240} ;;
  panelqr) budget=${BUDGET_S:-200} ;;
  aw) budget=${BUDGET_S:-120} ;;
  *) echo "dbbr.sh: no part '$part' (dbbr, panelqr, aw)" >&2; exit 2 ;;
esac
out=$OUT/$part
mkdir -p "$out"
log_file=$out/session.log
"$part"
