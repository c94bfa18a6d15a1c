#!/usr/bin/env bash
# BC-back's SM fill and SBR-back's exposed tail at n = 49152 on 4 GPUs (issue 23). Two parts, each
# skipped where its setting is 0:
#   1. KERNEL (1): bc_back_bench, the default tensor shape (128-row blocks, one per SM) alone, at
#      n = N (49152) on every GPU at once, GPU i taking the i-th entry of ROWS (a comma list each;
#      default "10446 12902 12288 12672": the engine's rank 0 and ranks 1-3 heights, the equal
#      share, 99 row blocks = 3 x 33), each with every group-lane count of LANES (1,2,3,4,5,6,8;
#      K0 in the log is the automatic count). Then one line per (m, K): row blocks R, the time over
#      K = 1's, and the rounds model ceil(R / floor(slots / K)) / K (slots = the SMs: one block per
#      SM; gpu/group_lanes_choice.hpp), the ideal R / slots beside it.
#   2. ENGINE (1): pipevd on GPUS (4) GPUs at n = N, one process per entry of CHASE (default
#      "default b44s6"; bXsY sets PIPEVD_GPU_BC_BLOCKS=X PIPEVD_GPU_BC_SWEEPS_PER_BLOCK=Y, the chase's
#      SMs beside SBR-back's GEMMs; at b = 32 at most 6 staged sweeps fit a block; "lanesK" and the
#      prefix "lanesK_" add PIPEVD_GPU_BC_LANES=K, BC-back's lanes fixed), a first and a
#      repeated call (CALLS=2); per rank of the repeated call's timeline the chase, SBR-back's
#      tail and BC-back.
#   source .gpu-node/env.sh && CHASE="default lanes1 b44s6" bash bench/device/bcback_fill.sh
# Needs $BUILD_DIR (build-gpu) with bc_back_bench and pipevd-bench built. BUDGET_S (170). Logs
# under $OUT/bcback_fill/: session.log, kernel_gpu<i>.log, summary.txt and each engine variant's
# scaling/ folder; all of it in $OUT/bcback_fill.tgz.
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
budget=${BUDGET_S:-170}
base=$OUT/bcback_fill
mkdir -p "$base"
log_file=$base/session.log
summary=$base/summary.txt
: >"$summary"
n=${N:-49152}
rc=0

if [ "${KERNEL:-1}" = 1 ]; then
  read -r -a rows <<<"${ROWS:-10446 12902 12288 12672}"
  ngpu=$( (nvidia-smi -L 2>/dev/null || true) | grep -c "^GPU" || true)
  t=${KERNEL_S:-70}
  log "kernel: bc_back_bench n=$n, rows per GPU: ${rows[*]}, lanes ${LANES:-1,2,3,4,5,6,8} (${t} s)"
  pids=()
  for i in "${!rows[@]}"; do
    ((i < ngpu)) || { log "no GPU $i: rows ${rows[$i]} skipped"; continue; }
    # --only matches no compiled variant: the default tensor shape and its lane counts only.
    CUDA_VISIBLE_DEVICES=$i timeout "$t" "$build/bench/bc_back_bench" --n 0 --tune-n "$n" \
      --m "${rows[$i]}" --only "(none)" --group-lanes "${LANES:-1,2,3,4,5,6,8}" --no-blas3 \
      --seconds $((t - 12)) >"$base/kernel_gpu$i.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  python3 - "$base"/kernel_gpu*.log <<'PY' | tee -a "$summary"
import math, re, sys
print("m       R   K  time_s   /K1   model  ideal   (model: ceil(R / floor(SMs / K)) / K rounds of T1/K)")
for path in sys.argv[1:]:
    sms, rows = 132, {}
    for line in open(path):
        d = re.match(r"device .*, (\d+) SMs", line)
        if d:
            sms = int(d.group(1))
        t = re.match(r"tune\s+n=\s*(\d+)\s+m=\s*(\d+).* K(\d+)\s+([\d.]+) s", line)
        if t:
            rows.setdefault(int(t.group(2)), []).append((int(t.group(3)), float(t.group(4))))
    for m, runs in rows.items():
        r = math.ceil(m / 128)
        t1 = min((s for k, s in runs if k == 1), default=None)
        for k, s in runs:
            kk = k if k > 0 else 0
            model = math.ceil(r / max(1, sms // kk)) / kk if kk else float("nan")
            rel = f"{s / t1:5.3f}" if t1 else "  -  "
            print(f"{m:6d} {r:4d} {k if k else 'auto':>4} {s:7.3f} {rel}  {model:5.3f}  {r / sms:5.3f}")
PY
fi

if [ "${ENGINE:-1}" = 1 ]; then
  for v in ${CHASE:-default b44s6}; do
    settings=
    chase=$v
    if [[ $v =~ ^lanes([0-9])(_(.*))?$ ]]; then
      settings="PIPEVD_GPU_BC_LANES=${BASH_REMATCH[1]}"
      chase=${BASH_REMATCH[3]:-default}
    fi
    if [[ $chase =~ ^b([0-9]+)s([0-9]+)$ ]]; then
      settings="$settings PIPEVD_GPU_BC_BLOCKS=${BASH_REMATCH[1]} PIPEVD_GPU_BC_SWEEPS_PER_BLOCK=${BASH_REMATCH[2]}"
    elif [ "$chase" != default ]; then
      log "unknown chase variant $v"
      continue
    fi
    left_s=$(left)
    ((left_s < 45)) && { log "budget spent: $v skipped"; continue; }
    dir=$base/engine_$v
    log "engine: n=$n on ${GPUS:-4} GPUs, chase $v (${settings:-defaults}), ${left_s} s left"
    # shellcheck disable=SC2086
    env $settings OUT="$dir" STEPS=bench SIZES="$n" GPU_COUNTS="${GPUS:-4}" PEERS= CALLS=2 \
      LABEL_SUFFIX="_$v" BUDGET_S=$((left_s - 5)) bash "$(dirname "$0")/scaling.sh" >>"$log_file" 2>&1 ||
      rc=1
    {
      echo "== chase $v (${settings:-defaults})"
      grep -h '^{"' "$dir"/scaling/runs.jsonl 2>/dev/null | python3 -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    print("  %-9s %s" % (r.get("call", "?"), r.get("time_s")))'
      tl=$(ls "$dir"/scaling/timeline_*_call2.json 2>/dev/null | head -1)
      [ -n "$tl" ] && python3 - "$tl" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
for i in t["intervals"]:
    if i["stage"] in ("bulge_chasing", "sbr_back", "bc_back", "dc"):
        print(f"  rank {i['rank']} {i['stage']:14} {i['start']:8.3f} {i['end']:8.3f} {i['end'] - i['start']:7.3f}")
PY
    } | tee -a "$summary"
  done
fi
log "done, rc=$rc"
tar -C "$OUT" -czf "$OUT/bcback_fill.tgz" bcback_fill  # the device returns files two folders deep at most
exit $rc
