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
timeout $((budget - 10)) ncu --clock-control none -k regex:symmetric_product_stages --launch-skip 3 \
  --launch-count 1 --section SpeedOfLight --section WarpStateStats --section LaunchStats \
  --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section InstructionStats \
  --section SourceCounters -o "$out/symm" -f "$build/bench/symm_bench" --quick \
  --m "${SYMM_NCU_M:-32768}" >"$out/ncu.log" 2>&1 || echo "ncu failed or cut"
ncu -i "$out/symm.ncu-rep" --page details >"$out/ncu_details.log" 2>&1
ncu -i "$out/symm.ncu-rep" --page source --csv --print-source sass >"$out/ncu_source.csv" 2>&1
rm -f "$out/symm.ncu-rep"
grep -E "Duration|Stall|Warp Cycles|Issued|Registers|Block Size|Grid Size|Pipe|Throughput|SM Frequency" \
  "$out/ncu_details.log" | head -40
