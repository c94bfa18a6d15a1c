#!/usr/bin/env bash
# Device session for the 4-GPU scaling issue, on a machine of 4 GPUs (nvidia-h100-x4/h200-x4):
# build, the multi-GPU gpu tests, then whole pipevd calls from host memory (first and repeated call
# apart, one process each, every run's residual and orthogonality checked) on 4, 2 and 1 GPUs and
# the peers (cuSOLVERMp one rank per GPU, cuSOLVERMg) on the same GPUs, in one run.
#   source .gpu-node/env.sh && bash bench/device/scaling.sh
# Settings (an empty SIZES or PEERS runs none of them): STEPS ("build test bench"), SIZES ("32768 49152"), GPU_COUNTS ("4 1"), PEERS
# ("cusolvermp cusolvermg"; cusolver runs as one rank on GPU 0, cusolvermg as one rank on all), PEER_SIZES (32768), TEST_REGEX,
# TEST_EXCLUDE, BUDGET_S (560), PEER_CAP (100),
# LABEL_SUFFIX (appended to pipevd's run labels and timeline names: runs of one call told apart),
# CALLS (2: pipevd's timed calls per process; 1 times a first call alone, and its timeline),
# ENGINE_PATHS ("auto": pipevd's PIPEVD_ENGINE_PATH per run, e.g. "two_stage auto"; a path other
# than auto is named in the label), BENCH_SCALAR (real; complex: complex Hermitian matrices, pipevd
# through pzheevd_ and the peers' complex calls, "_complex" in every label; cuSOLVERMg has no
# complex path and reports "unsupported").
# Logs under $OUT/scaling/ (at most 8 files come back): session.log, build_ctest.log, bench.log,
# runs.jsonl, timeline_<g>gpu_n<n>.json; prints a summary table last.
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
budget=${BUDGET_S:-560}
out=$OUT/scaling
mkdir -p "$out"
log_file=$out/session.log
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export OMPI_MCA_rmaps_base_oversubscribe=1
ngpu=$( (nvidia-smi -L 2>/dev/null || true) | grep -c "^GPU" || true)
cores=$(nproc)
session_header >>"$out/session.log" 2>&1 || true
log "scaling session: $ngpu GPUs, $cores cores, budget $budget s"
nvidia-smi topo -m >>"$out/session.log" 2>&1 || true
rc=0
steps=" ${STEPS:-build test bench} "

if [[ $steps == *" build "* ]]; then
  configure_gpu_build "$build" || exit 1
  cmake --build "$build" -j "$cores" >"$out/build_ctest.log" 2>&1 ||
    { log "build FAILED"; grep -E -B2 -A6 "error" "$out/build_ctest.log" | head -60; exit 1; }
  log "built"
fi
[ -d .deps/cusolvermp/lib ] && export LD_LIBRARY_PATH=$PWD/.deps/cusolvermp/lib:${LD_LIBRARY_PATH:-}

if [[ $steps == *" test "* ]]; then
  PIPEVD_REQUIRE_GPU=1 timeout "${TEST_BUDGET_S:-200}" ctest --test-dir "$build" -L gpu \
    -R "${TEST_REGEX:-gpu_multigpu|gpu_peers}" ${TEST_EXCLUDE:+-E "$TEST_EXCLUDE"} --timeout 150 --output-on-failure \
    >>"$out/build_ctest.log" 2>&1 || { log "gpu tests FAILED"; rc=1; }
  grep -E "^ *[0-9]+/[0-9]+ Test +#|tests passed" "$out/build_ctest.log" | tee -a "$out/session.log"
fi

bench=$build/bench/pipevd-bench
runs=$out/runs.jsonl
gpu_list() { seq -s, 0 $(($1 - 1)); }
tag=
[ "${BENCH_SCALAR:-real}" = complex ] && tag=_complex

if [[ $steps == *" bench "* && -x $bench ]]; then
  for n in ${SIZES-32768 49152}; do
    for g in ${GPU_COUNTS:-4 1}; do
      ((g > ngpu)) && continue
      for path in ${ENGINE_PATHS:-auto}; do
        setting=$path name=pipevd$tag
        [ "$path" = auto ] && setting= || name=pipevd${tag}_$path
        pipevd_bench_run "${name}_${g}gpu_n$n${LABEL_SUFFIX:-}" "$g" "$(gpu_list "$g")" pipevd "$n" "${CALLS:-2}" \
          PIPEVD_VERBOSE=2 PIPEVD_TIMELINE="$out/timeline${name#pipevd}_${g}gpu_n$n${LABEL_SUFFIX:-}.json" \
          PIPEVD_ENGINE_PATH=$setting
      done
    done
  done
  for n in ${PEER_SIZES-32768}; do
    for peer in ${PEERS-cusolvermp cusolvermg}; do
      ranks=$ngpu g=$ngpu
      [ "$peer" = cusolvermg ] && ranks=1
      [ "$peer" = cusolver ] && ranks=1 g=1
      CAP=${PEER_CAP:-100} pipevd_bench_run "${peer}${tag}_${g}gpu_n$n" "$ranks" "$(gpu_list "$g")" "$peer" "$n" 1
    done
  done
fi

log "summary (time_s null: not ok)"
[ -f "$runs" ] && python3 - "$runs" <<'PY' | tee -a "$out/session.log"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{'label':38} {'call':9} {'status':14} {'time_s':>8} {'resid':>7} {'orth':>7}")
for r in rows:
    f = lambda v: "-" if v is None else f"{v:.3g}"
    print(f"{r['label']:38} {r['call']:9} {r['status']:14} {f(r.get('time_s')):>8} "
          f"{f(r.get('residual')):>7} {f(r.get('orthogonality')):>7}")
PY
log "done, rc=$rc"
exit $rc
