#!/usr/bin/env bash
# SBR-back's order on one GPU (issues 23, 28): Q_sb formed left to right on the identity's rows
# (PIPEVD_SBR_BACK_ORDER=right) against the reverse, left-applied order that touches only the
# trailing square (auto: the default on one engine rank), one pipevd process per scalar, n and
# variant (a first and a repeated call), then cuSOLVER's cusolverDnXsyevd on the complex sizes in
# the same call (issue 28's ratio) where PEER=1.
#   source .gpu-node/env.sh && SIZES="32768" SCALARS="real complex" bash bench/device/sbr_order.sh
# SIZES (32768), SCALARS ("real complex"), VARIANTS ("auto right"), PEER (1), PEER_SIZES (the
# complex sizes: SIZES), BUDGET_S (420) for the runs together, RUN_S (150) each. Writes
# $OUT/sbr_order/<run>/ and $OUT/sbr_order.tgz.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/preamble.sh"
runs_folder sbr_order 420
export RUN_S=${RUN_S:-150}
for scalar in ${SCALARS:-real complex}; do
  for n in ${SIZES:-32768}; do
    for v in ${VARIANTS:-auto right}; do
      scaling_run "$dir" "${scalar}_${v}_n$n" BENCH_SCALAR="$scalar" SIZES="$n" GPU_COUNTS=1 \
        CALLS=2 LABEL_SUFFIX="_sbr_$v" PIPEVD_SBR_BACK_ORDER="$v"
    done
  done
done
if [ "${PEER:-1}" = 1 ]; then
  scaling_run "$dir" complex_cusolver BENCH_SCALAR=complex SIZES= PEERS=cusolver \
    PEER_SIZES="${PEER_SIZES:-${SIZES:-32768}}" PEER_GPU_COUNTS=1 PEER_CAP=120
fi
tar -C "$OUT" -czf "$OUT/sbr_order.tgz" sbr_order
