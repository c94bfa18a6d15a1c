#!/usr/bin/env bash
# Device-machine check of the engine's CPU tridiagonal stage (dc_bench) at several BLAS thread
# counts. From the repository root: source .gpu-node/env.sh && bash bench/gpu_dc_session.sh
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu_node_setup.sh
g++ -O2 -std=c++17 -o /tmp/dc_bench bench/dc_bench.cpp -llapack -lblas -ldl -pthread || exit 1
echo "$(nproc) cores; $(lscpu | grep 'Model name' | sed 's/  */ /g')" | tee "$OUT/dc.log"
ls -l $(ldd /tmp/dc_bench | awk '/lapack|blas/{print $3}') | tee -a "$OUT/dc.log"
for t in 16 1; do
  echo "== OPENBLAS_NUM_THREADS=$t" | tee -a "$OUT/dc.log"
  OPENBLAS_NUM_THREADS=$t timeout 200 /tmp/dc_bench 4096 8192 | tee -a "$OUT/dc.log"
done
echo "== OPENBLAS_NUM_THREADS=16, n=16384" | tee -a "$OUT/dc.log"
OPENBLAS_NUM_THREADS=16 timeout 150 /tmp/dc_bench 16384 | tee -a "$OUT/dc.log"
