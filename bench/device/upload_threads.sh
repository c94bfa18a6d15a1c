#!/usr/bin/env bash
# The one-GPU direct path's host copies against their threads (issue 26): whole repeated calls at
# n = 2000 and 4000 on one GPU (a 1x1 grid, the one-stage path, the triangle packed and scanned
# into pinned chunks on the host's threads) with PIPEVD_THREADS capping those threads, then
# cuSOLVER's and cuSOLVERMp's whole calls at the same n in the same run, the peers the 1-GPU
# crossover is judged against.
#   bash bench/device/upload_threads.sh   (after a build: STEPS=build)
# Settings: UPLOAD_SIZES ("2000 4000"), THREADS_LIST ("1 2 4 16"; "default" leaves PIPEVD_THREADS
# unset), PEERS ("cusolver cusolvermp"), BUDGET_S (110). Writes $OUT/upload/<run>/ and
# $OUT/upload.tgz.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/preamble.sh"
runs_folder upload 110
for n in ${UPLOAD_SIZES:-2000 4000}; do
  for t in ${THREADS_LIST:-default 1 2 4 16}; do
    setting=PIPEVD_THREADS=$t
    [ "$t" = default ] && setting=PIPEVD_THREADS=
    scaling_run "$dir" "n${n}_threads$t" $setting SIZES="$n" GPU_COUNTS=1 CALLS=6 \
      LABEL_SUFFIX="_threads$t"
  done
done
scaling_run "$dir" peers SIZES= PEERS="${PEERS:-cusolver cusolvermp}" \
  PEER_SIZES="${UPLOAD_SIZES:-2000 4000}" PEER_GPU_COUNTS=1 PEER_CALLS=6
tar -C "$OUT" -czf "$OUT/upload.tgz" upload
