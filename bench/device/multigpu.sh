#!/usr/bin/env bash
# Device session for the multi-GPU engine (issue 8), for a machine of 2 (or more) GPUs, e.g.
# nvidia-h200-x2, run by bench/device/round.sh (TOPICS="multigpu:400"): $BUILD_DIR (default
# build-gpu) configured and fully built by that master script (configure_gpu_build
# enables the cuSOLVERMp adapter where .deps/wheels holds its wheel). Steps, within $BUDGET_S
# (default 400 s) of wall clock:
#   1 the multi-GPU gpu tests (a skip for lack of any GPU is a failure: PIPEVD_REQUIRE_GPU=1; the
#     4-GPU cases skip on 2 GPUs) and the timeline's CPU tests;
#   2 a smoke run of cuSOLVERMp and pipevd at n = 77, 1000 on 1 and 2 ranks (accuracy against
#     ScaLAPACK), then strong scaling through pipevd-bench over MULTIGPU_SIZES (16384 32768): pipevd
#     on 2 GPUs (PIPEVD_VERBOSE=2 timeline, drawn as a PNG) and on 1 GPU at every size, each after
#     one warm-up run (and, with MULTIGPU_CALLERS, that many caller ranks on one GPU); then
#     cuSOLVERMg (one process) and cuSOLVERMp (one rank per GPU) on 2 GPUs and on 1, each run
#     capped at PEER_CAP (120) seconds. Residual and orthogonality of every run are checked (by
#     cuBLAS on the root from n = 4096).
# Logs under $OUT/multigpu/ in a few files (the device tool brings back at most 8): session.log,
# ctest.log, bench.log, runs.jsonl, timeline_2gpu_n<n>.{json,png}; prints a summary (test
# verdicts, one line per run).
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
budget=${BUDGET_S:-400}
out=$OUT/multigpu
mkdir -p "$out"
log_file=$out/session.log
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}  # NCCL's own warnings into the logs
export OMPI_MCA_rmaps_base_oversubscribe=1
[ -d .deps/cusolvermp/lib ] && export LD_LIBRARY_PATH=$PWD/.deps/cusolvermp/lib:${LD_LIBRARY_PATH:-}
ngpu=$( (nvidia-smi -L 2>/dev/null || true) | grep -c "^GPU" || true)
cores=$(nproc)
log "multigpu session: ${ngpu} GPUs, ${cores} cores, budget ${budget} s, build $build, $(git rev-parse --short HEAD 2>/dev/null)"
nvidia-smi topo -m >>"$out/session.log" 2>&1 || true
rc=0

# 1 Tests (MULTIGPU_SKIP_TESTS=1: straight to the bench).
[ "${MULTIGPU_SKIP_TESTS:-0}" = 1 ] || {
log "ctest: gpu_multigpu* and bench.gpu_peers* (cuSOLVERMp at 2 ranks) (label gpu), timeline*"
PIPEVD_REQUIRE_GPU=1 timeout $((budget * 55 / 100)) ctest --test-dir "$build" -L gpu -R "gpu_multigpu|gpu_peers" \
  --timeout 200 --output-on-failure -V >"$out/ctest.log" 2>&1 || { log "multigpu tests FAILED"; rc=1; }
timeout 60 ctest --test-dir "$build" -R "^timeline" --output-on-failure >>"$out/ctest.log" 2>&1 ||
  { log "timeline tests FAILED"; rc=1; }
grep -E "Test +#[0-9]+: .*(Passed|Failed|Skipped|Timeout|Not Run)|tests passed" "$out/ctest.log" |
  grep -v "^[0-9]*: " | tee -a "$out/session.log"
grep -E "\[  FAILED  \]|Failure|Which is|Expected|pipevd: .*error|NCCL (WARN|error)" "$out/ctest.log" |
  head -40 | tee -a "$out/session.log"
grep -E "gpu engine rank=0/[0-9]+" "$out/ctest.log" | head -3 | tee -a "$out/session.log"
grep -E "load balance over" "$out/ctest.log" | head -3 | tee -a "$out/session.log"
}

# MULTIGPU_TESTS_ONLY=1: stop after the tests.
if [ "${MULTIGPU_TESTS_ONLY:-0}" = 1 ]; then
  log "tests only (MULTIGPU_TESTS_ONLY=1), rc=$rc"
  exit $rc
fi

# 2 Strong scaling.
bench=$build/bench/pipevd-bench
if [ ! -x "$bench" ]; then
  log "no $bench: the bench step is skipped"
  exit 1
fi
"$bench" --list >>"$out/bench.log" 2>&1 || true
grep -q cusolvermp "$out/bench.log" || log "cuSOLVERMp adapter not built (carry .deps/wheels; configure_gpu_build unpacks it)"
runs=$out/runs.jsonl
# cuSOLVERMp and pipevd small at 1 and 2 ranks first (accuracy-checked; a failure shows early).
for np in 1 2; do
  ((np > ngpu)) && continue
  log "smoke: mpirun -n $np pipevd-bench --solver cusolvermp,pipevd --n 77,1000"
  echo "=== smoke np$np" >>"$out/bench.log"
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((np - 1))) PIPEVD_BACKEND=gpu PIPEVD_VERBOSE=1 NCCL_DEBUG=INFO \
    NCCL_DEBUG_SUBSYS=INIT,P2P,SHM timeout 90 \
    mpirun --bind-to none -n $np -x CUDA_VISIBLE_DEVICES -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS \
    -x PIPEVD_BACKEND -x PIPEVD_VERBOSE "$bench" --solver cusolvermp,pipevd --n 77,1000 --nb 32 \
    --reference scalapack >"$out/run.tmp" 2>&1 || log "smoke np$np: exit $?"
  cat "$out/run.tmp" >>"$out/bench.log"
  grep -h '^{"solver"' "$out/run.tmp" | sed "s/^{/{\"label\":\"smoke_np$np\",/" | tee -a "$runs"
  # NCCL's transport between the GPUs (P2P/IPC over NVLink, or SHM through host memory): with
  # NCCL_DEBUG=INFO its init lines say "via P2P/..." or "via SHM/...".
  grep -hE "NCCL INFO .* via |NCCL INFO Using network" "$out/run.tmp" | sort -u | head -8 |
    tee -a "$out/session.log"
done
two=$(seq -s, 0 $((ngpu > 1 ? 1 : 0)))
# Most telling first (the budget cuts the rest): pipevd on 2 GPUs with its timeline, on 1 GPU, then
# the peers on 2 GPUs, then on 1.
# pipevd first at every size (one warm-up run each: the first call's NCCL and handle set-up is
# once per job), then the peers, each capped so that a stalled one leaves the rest its time.
# plot <timeline json>: its PNG next to it (bench/timeline_plot.py).
plot() {
  [ -f "$1" ] || return 0
  local py=python3
  /usr/bin/python3 -c 'import matplotlib' 2>/dev/null && py=/usr/bin/python3
  "$py" bench/timeline_plot.py "$1" -o "${1%.json}.png" 2>&1 | tee -a "$out/session.log"
}
for n in ${MULTIGPU_SIZES:-16384 32768}; do
  if ((ngpu > 1)); then
    WARM=1 pipevd_bench_run "pipevd_2gpu_n$n" 2 "$two" pipevd "$n" 1 PIPEVD_BACKEND=gpu PIPEVD_VERBOSE=2 \
      PIPEVD_TIMELINE="$out/timeline_2gpu_n$n.json"
    plot "$out/timeline_2gpu_n$n.json"
  fi
  [ "${MULTIGPU_ONE_GPU:-1}" = 1 ] &&
    WARM=1 pipevd_bench_run "pipevd_1gpu_n$n" 1 0 pipevd "$n" 1 PIPEVD_BACKEND=gpu PIPEVD_VERBOSE=1 PIPEVD_TIMELINE=
  # MULTIGPU_CALLERS (e.g. "4 8"): that many caller ranks on GPU 0, one engine rank serving them
  # all through the redistribution (the many-ranks-per-GPU case), with the timeline.
  for r in ${MULTIGPU_CALLERS:-}; do
    WARM=1 pipevd_bench_run "pipevd_${r}callers_1gpu_n$n" "$r" 0 pipevd "$n" 1 PIPEVD_VERBOSE=2 \
      PIPEVD_TIMELINE="$out/timeline_${r}callers_n$n.json"
    plot "$out/timeline_${r}callers_n$n.json"
  done
done
# MULTIGPU_PEERS (default "cusolvermg cusolvermp"; empty: none); MULTIGPU_ONE_GPU=0 leaves out the 1-GPU runs.
for n in ${MULTIGPU_SIZES:-16384 32768}; do
  for peer in ${MULTIGPU_PEERS-cusolvermg cusolvermp}; do
    ranks=1
    [ "$peer" = cusolvermp ] && ranks=2
    ((ngpu > 1)) && CAP=${PEER_CAP:-120} pipevd_bench_run "${peer}_2gpu_n$n" $ranks "$two" "$peer" "$n" 1
    [ "${MULTIGPU_ONE_GPU:-1}" = 1 ] && CAP=${PEER_CAP:-120} pipevd_bench_run "${peer}_1gpu_n$n" 1 0 "$peer" "$n" 1
  done
done

log "summary (time_s null: not ok; see status)"
if [ -f "$runs" ]; then
  python3 - "$runs" <<'PY' | tee -a "$out/session.log"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{'label':28} {'status':16} {'time_s':>9} {'residual':>9} {'orthog':>9}")
for r in rows:
    t = r.get("time_s")
    f = lambda v: "-" if v is None else f"{v:.3g}"
    print(f"{r['label']:28} {r['status']:16} {f(t):>9} {f(r.get('residual')):>9} {f(r.get('orthogonality')):>9}")
PY
fi
log "done, rc=$rc"
exit $rc
