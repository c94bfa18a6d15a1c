#!/usr/bin/env bash
# SBR-back beside bulge chasing or after it (PIPEVD_SBR_BACK_BESIDE), whole pipevd calls on one
# GPU from host memory, first and repeated calls, through scaling.sh's bench step (every run's
# residual and orthogonality checked). Where the chase and SBR-back's GEMMs share the device, the
# chase runs on half the SMs: this measures whether that pays, per scalar and n.
#   source .gpu-node/env.sh && STEPS=build bash bench/device/scaling.sh && bash bench/device/sbr_back_beside.sh
# Settings: SIZES_COMPLEX ("8192 16384 32768"), SIZES_REAL ("16384 32768"), SETTINGS ("on off"),
# CALLS (3; 2 from n = 32768), RUN_S (150: each run's budget).
# Writes $OUT/beside.jsonl (every run's JSON lines), $OUT/beside_engine.txt (the engine lines with
# their run) and $OUT/beside_runs.tgz (each run's scaling.sh folder).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT/beside"
for scalar in complex real; do
  if [ $scalar = complex ]; then sizes=${SIZES_COMPLEX-8192 16384 32768}; else sizes=${SIZES_REAL-16384 32768}; fi
  for n in $sizes; do
    calls=${CALLS:-3}
    ((n >= 32768)) && calls=${CALLS:-2}
    for s in ${SETTINGS:-on off}; do
      dir=$OUT/beside/${scalar}_${n}_$s
      PIPEVD_SBR_BACK_BESIDE=$s OUT=$dir BENCH_SCALAR=$scalar STEPS=bench PEERS= GPU_COUNTS=1 \
        SIZES=$n CALLS=$calls LABEL_SUFFIX=_beside_$s BUDGET_S=${RUN_S:-150} bash "$here/scaling.sh" \
        >"$dir.log" 2>&1
      cat "$dir/scaling/runs.jsonl" >>"$OUT/beside.jsonl" 2>/dev/null
      grep -h "gpu engine" "$dir/scaling/bench.log" 2>/dev/null | sed "s/^/${scalar} n=$n beside=$s: /" >>"$OUT/beside_engine.txt"
      tail -3 "$dir.log"
    done
  done
done
tar -C "$OUT" -czf "$OUT/beside_runs.tgz" beside
rm -rf "$OUT/beside"
