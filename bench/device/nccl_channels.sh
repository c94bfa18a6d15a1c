#!/usr/bin/env bash
# The first call's NCCL set-up against NCCL's channel count (issue 23: a first call at most 1.25x a
# repeated one). One pipevd-bench process per variant on all GPUs, timing its first call alone
# (CALLS=1) with a timeline (the `nccl_setup` interval of the device's preparation) and NCCL's own
# init timings (NCCL_DEBUG_SUBSYS=INIT); then, per variant, a repeated call (CALLS=2) where
# REPEATED=1, to see what fewer channels cost the engine's messages.
#   source .gpu-node/env.sh && bash bench/device/nccl_channels.sh
# Settings: SIZES (8192), VARIANTS ("default ch16 ch8 ch4": default is NCCL's own channel count,
# chN sets PIPEVD_NCCL_CHANNELS=N, eager NCCL's own count with NCCL_RUNTIME_CONNECT=0), REPEATED
# (0), BUDGET_S (240), CAP (60).
# Logs under $OUT/nccl/: session.log, summary.txt (per variant: the first call's time, the
# preparation's parts on rank 0, NCCL's init timings of rank 0) and each variant's scaling/ folder.
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
budget=${BUDGET_S:-240}
base=$OUT/nccl
mkdir -p "$base"
log_file=$base/session.log
summary=$base/summary.txt
: >"$summary"

variant_env() {
  case $1 in
    default) echo "PIPEVD_NCCL_CHANNELS=0" ;;
    ch*) echo "PIPEVD_NCCL_CHANNELS=${1#ch}" ;;
    eager) echo "PIPEVD_NCCL_CHANNELS=0 NCCL_RUNTIME_CONNECT=0" ;;
    *) log "unknown variant $1"; return 1 ;;
  esac
}

for n in ${SIZES:-8192}; do
  for v in ${VARIANTS:-default ch16 ch8 ch4}; do
    settings=$(variant_env "$v") || continue
    left_s=$(left)
    ((left_s < 30)) && { log "budget spent: $v skipped"; continue; }
    for calls in 1 $([ "${REPEATED:-0}" = 1 ] && echo 2); do
      dir=$base/${v}_n${n}_calls$calls
      # shellcheck disable=SC2086
      env $settings NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT OUT="$dir" STEPS=bench SIZES="$n" \
        GPU_COUNTS="${GPU_COUNTS:-4}" PEERS= CALLS=$calls LABEL_SUFFIX="_$v" CAP="${CAP:-60}" \
        BUDGET_S=$((left_s - 5)) bash "$(dirname "$0")/scaling.sh" >>"$log_file" 2>&1
      {
        echo "== $v ($settings) n=$n calls=$calls"
        python3 - "$dir"/scaling/runs.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]) if len(sys.argv) > 1 else []:
    if l.strip():
        r = json.loads(l)
        print(f"  {r['call']:9} {r.get('time_s')}")
PY
        tl=$(ls "$dir"/scaling/timeline_*.json 2>/dev/null | head -1)
        [ -n "$tl" ] && python3 - "$tl" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
for i in t["intervals"]:
    if i["rank"] == 0 and i["stage"] in ("plan", "redistribute_in", "device_context", "nccl_setup",
                                         "device_pool", "dbbr", "bulge_chasing", "gemm"):
        print(f"  rank0 {i['stage']:16} {i['start']:8.3f} {i['end']:8.3f} {i['end'] - i['start']:7.3f}")
PY
        grep -h "Init timings" "$dir"/scaling/bench.log 2>/dev/null | grep "rank 0 " | head -2 |
          sed 's/.*Init timings/  Init timings/' | cut -c1-300
      } >>"$summary"
    done
  done
done
cat "$summary"
