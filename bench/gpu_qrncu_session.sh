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
source "$(dirname "$0")/ncu_one_launch.sh"
ncu_one_launch qr fused_panel_qr 2 "$budget" "SpeedOfLight WarpStateStats LaunchStats" -- \
  "$build/bench/dbbr_bench" --qr-sweep "${QR_NCU_M:-32768}" --qr-b 32
grep -E "Duration|Stall|Warp Cycles|Issued|Registers|Block Size|Grid Size" "$out/ncu_details.log" |
  head -30
