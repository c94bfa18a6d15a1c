#!/usr/bin/env bash
# One device-machine topic for DBBR's A W (issue 5): symm_bench (gpu/symmetric_product's kernel,
# one triangle, against cuBLAS dgemm('T','N') on full storage, same run), then dbbr_bench with
# A W through that kernel and through GEMMs (--aw symm,gemm), same run. Assumes the repository
# root as cwd, `source bench/gpu_node_setup.sh` done and $BUILD_DIR (default build-gpu) built.
# AW_M: symm_bench's sizes (default 4096,8192,16384,32768,49152); AW_N: dbbr_bench's (default
# 16384,32768); AW_K: its outer blocks k (default 1024). BUDGET_S (default 120). Logs go to
# $OUT/aw/.
set -uo pipefail
build=${BUILD_DIR:-build-gpu}
budget=${BUDGET_S:-120}
out=${OUT:-/tmp}/aw
mkdir -p "$out"
left() { echo $((budget - SECONDS)); }
rc=0
timeout $(( $(left) / 3 )) "$build/bench/symm_bench" --m "${AW_M:-4096,8192,16384,32768,49152}" 2>&1 |
  tee "$out/symm_bench.log" || { echo "symm_bench FAILED or cut"; rc=1; }
bench_s=$(( $(left) - 5 ))
timeout "$bench_s" "$build/bench/dbbr_bench" --n "${AW_N:-16384,32768}" --k "${AW_K:-1024}" --panel-syr2k 0 \
  --aw gemm,symm --sytrd-max-n 0 --qr 0 --seconds $((bench_s - 20)) 2>&1 | tee "$out/dbbr_bench.log" |
  grep -E "^dbbr|^#" || { echo "dbbr_bench FAILED or cut"; rc=1; }
exit $rc
