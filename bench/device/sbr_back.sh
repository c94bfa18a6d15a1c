#!/usr/bin/env bash
# SBR-back's variants (issues 23, 28), one pipevd process per scalar, n and variant (a first and a
# repeated call) on GPUS GPUs, then cuSOLVER's cusolverDnXsyevd on the complex sizes in the same
# device call (issue 28's ratio) where PEER=1. Variants:
#   auto   the defaults (one engine rank: Q_sb formed from the left in reverse block order)
#   right  PIPEVD_SBR_BACK_ORDER=right: X multiplied from the right in forward order on every rank
#   dbbr   PIPEVD_SBR_BACK_BESIDE=dbbr: on several engine ranks, each of DBBR's outer blocks
#          applied as soon as DBBR has it, beside DBBR
#   source .gpu-node/env.sh && SIZES="32768" SCALARS="real complex" bash bench/device/sbr_back.sh
#   GPUS=2 SIZES="32768 49152" SCALARS=real VARIANTS="auto dbbr" PEER=0 bash bench/device/sbr_back.sh
# SIZES (32768), SCALARS ("real complex"), VARIANTS ("auto right"), GPUS (1), PEER (1: on one GPU
# only), PEER_SIZES (SIZES), BUDGET_S (420) for the runs together, RUN_S (150) each. Writes
# $OUT/sbr_back/<run>/ and $OUT/sbr_back.tgz.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/preamble.sh"
runs_folder sbr_back 420
export RUN_S=${RUN_S:-150}
gpus=${GPUS:-1}
for scalar in ${SCALARS:-real complex}; do
  for n in ${SIZES:-32768}; do
    for v in ${VARIANTS:-auto right}; do
      case $v in
        auto) set -- ;;
        right) set -- PIPEVD_SBR_BACK_ORDER=right ;;
        dbbr) set -- PIPEVD_SBR_BACK_BESIDE=dbbr ;;
        *) echo "sbr_back.sh: unknown variant '$v'"; continue ;;
      esac
      scaling_run "$dir" "${scalar}_${v}_${gpus}gpu_n$n" BENCH_SCALAR="$scalar" SIZES="$n" \
        GPU_COUNTS="$gpus" CALLS=2 LABEL_SUFFIX="_sbr_$v" "$@"
    done
  done
done
if [ "${PEER:-1}" = 1 ] && [ "$gpus" = 1 ]; then
  scaling_run "$dir" complex_cusolver BENCH_SCALAR=complex SIZES= PEERS=cusolver \
    PEER_SIZES="${PEER_SIZES:-${SIZES:-32768}}" PEER_GPU_COUNTS=1 PEER_CAP=120
fi
tar -C "$OUT" -czf "$OUT/sbr_back.tgz" sbr_back
