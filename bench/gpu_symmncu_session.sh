#!/usr/bin/env bash
# Topic of bench/gpu_round_session.sh (issue 5): Nsight Compute on one launch of DBBR's one-triangle
# A W kernel (gpu/symmetric_product.cu, the default shape) at m = SYMM_NCU_M (default 32768):
# speed of light, pipe utilisation, warp stall reasons and per-SASS-instruction samples, to see
# what holds it below the memory bandwidth. Assumes $BUILD_DIR (default build-gpu) with symm_bench
# built. Logs go to $OUT/symmncu/ (ncu_details.log, ncu_source.csv).
set -uo pipefail
build=${BUILD_DIR:-build-gpu}
budget=${BUDGET_S:-90}
out=${OUT:-/tmp}/symmncu
mkdir -p "$out"
source "$(dirname "$0")/ncu_one_launch.sh"
ncu_one_launch symm symmetric_product_stages 3 "$budget" \
  "SpeedOfLight WarpStateStats LaunchStats ComputeWorkloadAnalysis MemoryWorkloadAnalysis InstructionStats" \
  -- "$build/bench/symm_bench" --quick --m "${SYMM_NCU_M:-32768}"
grep -E "Duration|Stall|Warp Cycles|Issued|Registers|Block Size|Grid Size|Pipe|Throughput|SM Frequency" \
  "$out/ncu_details.log" | head -40
