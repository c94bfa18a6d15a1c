#!/usr/bin/env bash
# Where a first call's NCCL set-up goes (issue 23: a first call on 4 GPUs spends about 1.7 s making
# the engine's NCCL communicator, the longest part before the engine starts): first calls at
# n = NCCL_N on the 4 GPUs (2x2 callers), one process each, with NCCL's INIT log (its "Init timings"
# line splits ncclCommInitRank into kernels, bootstrap, topology, graphs, connections), under NCCL
# settings that leave out parts of that set-up. Each run's rank-0 timeline says what the whole
# "NCCL" interval of the preparing thread took. n (NCCL_N, 8000) is one the 4 GPUs take on the
# two-stage engine (below the crossover table's 4-GPU row the one-stage path needs no NCCL).
#   bash bench/device/nccl_setup.sh   (after a build: STEPS=build)
# Variants (VARIANTS, names below): default, cumem0 (NCCL_CUMEM_ENABLE=0: buffers by cudaMalloc and
# legacy IPC), simple (NCCL_PROTO=Simple: one protocol's buffers), ring (NCCL_ALGO=Ring: no tree),
# ch2 (PIPEVD_NCCL_CHANNELS=2). Writes $OUT/nccl/<variant>/ and $OUT/nccl.tgz; BUDGET_S (90).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/preamble.sh"
runs_folder nccl 90
setting() {
  case $1 in
    default) echo "PIPEVD_NCCL_CHANNELS=" ;;
    cumem0) echo "NCCL_CUMEM_ENABLE=0" ;;
    simple) echo "NCCL_PROTO=Simple" ;;
    ring) echo "NCCL_ALGO=Ring" ;;
    ch2) echo "PIPEVD_NCCL_CHANNELS=2" ;;
  esac
}
for v in ${VARIANTS:-default cumem0 simple ring ch2}; do
  scaling_run "$dir" "$v" $(setting "$v") NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV SIZES="${NCCL_N:-8000}" \
    GPU_COUNTS=4 CALLS=1 LABEL_SUFFIX="_nccl_$v"
  grep -h "Init timings\|set by environment" "$dir/$v/scaling/bench.log" 2>/dev/null | sort -u | head -12
done
tar -C "$OUT" -czf "$OUT/nccl.tgz" nccl
