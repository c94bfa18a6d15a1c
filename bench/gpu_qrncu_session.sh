#!/usr/bin/env bash
# Nsight Compute on one fused panel QR (gpu/panel_qr.cu) of an m x 32 panel (QR_NCU_M, default
# 32768): stall reasons and per-SASS-instruction samples, to see where its ~12 us per column go.
# Assumes the repository root as cwd, `source bench/gpu_node_setup.sh` done and $BUILD_DIR
# (default build-gpu) with dbbr_bench built. Logs go to $OUT/qrncu/ (ncu_details.log, and
# ncu_top.txt: the SASS lines with the most warp samples).
set -uo pipefail
build=${BUILD_DIR:-build-gpu}
budget=${BUDGET_S:-90}
out=${OUT:-/tmp}/qrncu
mkdir -p "$out"
timeout $((budget - 10)) ncu --clock-control none -k regex:fused_panel_qr --launch-skip 2 \
  --launch-count 1 --section SpeedOfLight --section WarpStateStats --section LaunchStats \
  --section SourceCounters -o "$out/qr" -f "$build/bench/dbbr_bench" --qr-sweep "${QR_NCU_M:-32768}" \
  --qr-b 32 >"$out/ncu.log" 2>&1 || echo "ncu failed or cut"
ncu -i "$out/qr.ncu-rep" --page details >"$out/ncu_details.log" 2>&1
ncu -i "$out/qr.ncu-rep" --page source --csv --print-source sass >"$out/ncu_source.csv" 2>&1
rm -f "$out/qr.ncu-rep"
grep -E "Duration|Stall|Warp Cycles|Issued|Registers|Block Size|Grid Size" "$out/ncu_details.log" |
  head -30
