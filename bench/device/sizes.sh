#!/usr/bin/env bash
# Device session for small and mid-sized problems (issue 26): whole pdsyevd calls from host memory
# at each n of SIZES, one process per solver and setting that runs every n in turn (calls 0 ..
# REPEAT-1 at each n; call 0 at the process's first n is its first call, at later n a first call
# at that n in a warm process), on one GPU (1x1 grid) and on GPU_COUNTS GPUs (one rank per GPU):
# pipevd with the engine path forced both ways (PIPEVD_ENGINE_PATH=one_stage, two_stage) and as
# `auto` chooses, and the peers of PEERS on the same GPUs. Every call's residual and orthogonality
# are checked.
#   source .gpu-node/env.sh && BUDGET_S=300 bash bench/device/sizes.sh
# Settings: SIZES ("1000 2000 4000 8000 12000 16000 24000"), JOBZ ("V N"), GPU_COUNTS ("1"),
# PATHS ("one_stage two_stage auto"), PEERS ("cusolver"; cusolvermp and cusolvermg as well where
# asked), REPEAT (6), CAP (the cap of one process, 150), BUDGET_S (300). Expects $BUILD_DIR
# (default build-gpu) built. Writes $OUT/sizes/runs.jsonl (pipevd-bench's lines with the label,
# the card and first/repeated) and bench.log; prints the median repeated time per n and solver.
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
budget=${BUDGET_S:-300}
out=$OUT/sizes
mkdir -p "$out"
log_file=$out/session.log
runs=$out/runs.jsonl
bench=$build/bench/pipevd-bench
[ -x "$bench" ] || { log "no $bench"; exit 1; }
[ -d .deps/cusolvermp/lib ] && export LD_LIBRARY_PATH=$PWD/.deps/cusolvermp/lib:${LD_LIBRARY_PATH:-}
export OMPI_MCA_rmaps_base_oversubscribe=1 BENCH_NB=64 CAP=${CAP:-150}
sizes=$(echo "${SIZES:-1000 2000 4000 8000 12000 16000 24000}" | tr ' ' ',')
repeat=${REPEAT:-6}
log "sizes: n = $sizes, $repeat calls each, budget $budget s"

for g in ${GPU_COUNTS:-1}; do
  gpus=$(seq -s, 0 $((g - 1)))
  for jobz in ${JOBZ:-V N}; do
    for path in ${PATHS-one_stage two_stage auto}; do
      setting=$path
      [ "$path" = auto ] && setting=
      BENCH_JOBZ=$jobz pipevd_bench_run "pipevd_${path}_${g}gpu_$jobz" "$g" "$gpus" pipevd "$sizes" \
        "$repeat" PIPEVD_ENGINE_PATH=$setting
    done
    for peer in ${PEERS-cusolver}; do
      ranks=$g
      [[ $peer == cusolver || $peer == cusolvermg ]] && ranks=1
      [[ $peer == cusolver && $g -gt 1 ]] && continue
      BENCH_JOBZ=$jobz pipevd_bench_run "${peer}_${g}gpu_$jobz" "$ranks" "$gpus" "$peer" "$sizes" \
        "$repeat"
    done
  done
done

log "median repeated call (s) per n"
[ -f "$runs" ] && python3 - "$runs" <<'PY' | tee -a "$log_file"
import json, sys, statistics
from collections import defaultdict
t = defaultdict(list)
first = {}
for line in open(sys.argv[1]):
    if not line.strip():
        continue
    r = json.loads(line)
    if r.get("status") != "ok" or r.get("time_s") is None:
        continue
    key = (r["label"], r["n"])
    if r["call"] == "repeated":
        t[key].append(r["time_s"])
    else:
        first[key] = r["time_s"]
labels = sorted({k[0] for k in list(t) + list(first)})
ns = sorted({k[1] for k in list(t) + list(first)})
print(f"{'label':28}" + "".join(f"{n:>9}" for n in ns))
for l in labels:
    print(f"{l:28}" + "".join(f"{statistics.median(t[(l, n)]):9.4f}" if t.get((l, n)) else f"{'-':>9}" for n in ns))
PY
log "done"
