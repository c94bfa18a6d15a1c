#!/usr/bin/env bash
# Nsight Compute on one launch of a kernel, for the topics "qrncu" and "symmncu" of
# bench/device/round.sh (the first argument picks it; $BUILD_DIR, default build-gpu, built;
# BUDGET_S default 90). Logs under $OUT/<topic>/: ncu_details.log and ncu_source.csv (the SASS
# lines with their warp samples).
#
# ncu.sh qr: one fused panel QR (gpu/panel_qr.cu) of an m x 32 panel (QR_NCU_M, default 32768):
#   stall reasons and per-SASS-instruction samples, to see where its ~12 us per column go
#   (dbbr_bench built).
# ncu.sh symm: one launch of DBBR's one-triangle A W kernel (gpu/symmetric_product.cu, the default
#   shape) at m = SYMM_NCU_M (default 32768), issue 5: speed of light, pipe utilisation, warp stall
#   reasons and per-SASS-instruction samples, to see what holds it below the memory bandwidth
#   (symm_bench built).
# ncu.sh chase: one launch of the complex bulge-chasing kernel with staged windows
#   (gpu/bulge_chasing_complex.cu, chase_sweeps<true>) at n = CHASE_NCU_N (default 16384), b = 32,
#   issue 28: stall reasons, pipe and memory use and per-SASS-instruction samples, to see what a
#   step's ~13 us go to (bc_complex_bench built).
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
budget=${BUDGET_S:-90}
case ${1:-} in
  qr)
    out=$OUT/qrncu
    mkdir -p "$out"
    ncu_one_launch qr fused_panel_qr 2 "$budget" "SpeedOfLight WarpStateStats LaunchStats" -- \
      "$build/bench/dbbr_bench" --qr-sweep "${QR_NCU_M:-32768}" --qr-b 32
    grep -E "Duration|Stall|Warp Cycles|Issued|Registers|Block Size|Grid Size" "$out/ncu_details.log" |
      head -30
    ;;
  symm)
    out=$OUT/symmncu
    mkdir -p "$out"
    ncu_one_launch symm symmetric_product_stages 3 "$budget" \
      "SpeedOfLight WarpStateStats LaunchStats ComputeWorkloadAnalysis MemoryWorkloadAnalysis InstructionStats" \
      -- "$build/bench/symm_bench" --quick --m "${SYMM_NCU_M:-32768}"
    grep -E "Duration|Stall|Warp Cycles|Issued|Registers|Block Size|Grid Size|Pipe|Throughput|SM Frequency" \
      "$out/ncu_details.log" | head -40
    ;;
  chase)
    out=$OUT/chasencu
    mkdir -p "$out"
    # The mangled name tells the staged instantiation from the in-place one.
    NCU_NAME_BASE=mangled ncu_one_launch chase "chase_sweepsILb1E" 0 "$budget" \
      "SpeedOfLight WarpStateStats LaunchStats Occupancy ComputeWorkloadAnalysis MemoryWorkloadAnalysis InstructionStats" \
      -- "$build/bench/bc_complex_bench" --n "${CHASE_NCU_N:-16384}" --b 32 --reps 1
    grep -E "Duration|Stall|Warp Cycles|Issued|Registers|Block Size|Grid Size|Pipe|Throughput|SM Frequency|Shared" \
      "$out/ncu_details.log" | head -50
    ;;
  *) echo "ncu.sh qr|symm|chase" >&2; exit 2 ;;
esac
