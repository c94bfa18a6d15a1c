#!/usr/bin/env bash
# Topic of bench/device/round.sh (issues 5, 7): where the GPU's SMs go when two stages share it,
# and the fused panel QR's block shape.
#   1. bc_bench at n = PART_N (default 16384), b = 32, with the bulge chasing on fewer blocks and
#      more sweeps per block (PIPEVD_GPU_BC_BLOCKS / PIPEVD_GPU_BC_SWEEPS_PER_BLOCK), each entry of
#      PART_BC as blocks:sweeps_per_block (0:2: the defaults): the chain's time alone;
#   2. evd_bench JOBZ = V, SBR-back next to bulge chasing, at each n of PART_EVD_N (default
#      PART_N), once per entry of PART_SPLITS (evd_bench --bc-split: blocks:sweeps_per_block:
#      exclusive, exclusive = the chase's SMs kept to themselves), with PIPEVD_VERBOSE=1;
#   3. gpu_panel_qr with each PIPEVD_GPU_PANEL_QR_THREADS of PART_QR_THREADS (default 256 512
#      1024), then the panel QR alone (dbbr_bench --qr-sweep PART_QR_M) with each, and with at most
#      each of PART_QR_BLOCKS blocks (PIPEVD_GPU_PANEL_QR_BLOCKS; 0 = one per SM).
# BUDGET_S (default 300). Logs go to $OUT/partition/.
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
budget=${BUDGET_S:-300}
out=$OUT/partition
mkdir -p "$out"
n=${PART_N:-16384}
rc=0
for c in ${PART_BC-}; do
  blocks=${c%%:*} spb=${c##*:}
  echo "== bc_bench n=$n blocks<=$blocks sweeps_per_block=$spb"
  PIPEVD_GPU_BC_BLOCKS=$blocks PIPEVD_GPU_BC_SWEEPS_PER_BLOCK=$spb timeout 60 \
    "$build/bench/bc_bench" --stage on --step registers --reps 3 --n "$n" --b 32 \
    --lapack-seconds 0 2>&1 | tee -a "$out/bc_bench.log" | grep -E "^ *$n" | tail -2 || rc=1
done
if [ -n "${PART_SPLITS-0:2:0,66:4:1}" ]; then
  left=$((budget - SECONDS - ${PART_QR_S:-60}))
  echo "== evd_bench V+o n=${PART_EVD_N:-$n} --bc-split ${PART_SPLITS-0:2:0,66:4:1} (${left} s)"
  PIPEVD_VERBOSE=1 timeout "$left" "$build/bench/evd_bench" --n "${PART_EVD_N:-$n}" --jobz V \
    --overlap-sbr 1 --bc-split "${PART_SPLITS-0:2:0,66:4:1}" --seconds $((left - 30)) 2>&1 |
    grep -v "pmix\|dlopen\|Perhaps" | tee -a "$out/evd_bench.log" | grep -E "^ +[0-9]+ +V" || rc=1
fi
for thr in ${PART_QR_THREADS-256 512 1024}; do
  left=$((budget - SECONDS - 5))
  [ "$left" -gt 20 ] || { echo "no time left for the panel QR with $thr threads"; break; }
  echo "== gpu_panel_qr and the qr sweep, $thr threads per block"
  PIPEVD_GPU_PANEL_QR_THREADS=$thr PIPEVD_REQUIRE_GPU=1 timeout 60 \
    "$build/tests/test_gpu_panel_qr" >"$out/panel_qr_$thr.log" 2>&1 ||
    { echo "test_gpu_panel_qr FAILED with $thr threads"; rc=1; }
  grep -E "PASSED|FAILED" "$out/panel_qr_$thr.log" | head -5
  for nblk in ${PART_QR_BLOCKS-0}; do
    env PIPEVD_GPU_PANEL_QR_THREADS=$thr $([ "$nblk" != 0 ] && echo PIPEVD_GPU_PANEL_QR_BLOCKS=$nblk) \
      timeout 30 "$build/bench/dbbr_bench" --qr-sweep "${PART_QR_M:-8192,16384,32768,49152}" \
      --qr-b 32 2>&1 | sed -e "s/^panel_qr /panel_qr threads=$thr blocks<=$nblk /" -e 's/; TSQR.*//' |
      tee -a "$out/qr_sweep.log" | grep "^panel_qr" || rc=1
  done
done
exit $rc
