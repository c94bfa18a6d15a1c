#!/usr/bin/env bash
# Device session for the 4-GPU scaling issue, on a machine of 4 GPUs (nvidia-h100-x4/h200-x4):
# build, the multi-GPU gpu tests, then whole pipevd calls from host memory (first and repeated call
# apart, one process each, every run's residual and orthogonality checked) on 4, 2 and 1 GPUs and
# the peers (cuSOLVERMp one rank per GPU, cuSOLVERMg) on the same GPUs, in one run.
#   source .gpu-node/env.sh && bash bench/device/scaling.sh
# Settings (an empty SIZES or PEERS runs none of them): STEPS ("build test bench"), SIZES ("32768 49152"), GPU_COUNTS ("4 1"), PEERS
# ("cusolvermp cusolvermg"; cusolver runs as one rank on GPU 0, cusolvermg as one rank on all), PEER_SIZES (32768), TEST_REGEX,
# TEST_EXCLUDE, BUDGET_S (560), PEER_CAP (100), PEER_CALLS (1: each peer's timed calls per process;
# 2 or more report its first call and its repeated ones apart, as pipevd's),
# LABEL_SUFFIX (appended to pipevd's run labels and timeline names: runs of one call told apart),
# CALLS (2: pipevd's timed calls per process, each call's timeline its own file, _call1 the first;
# 1 times a first call alone),
# ENGINE_PATHS ("auto": pipevd's PIPEVD_ENGINE_PATH per run, e.g. "two_stage auto"; a path other
# than auto is named in the label), BENCH_SCALAR (real; complex: complex Hermitian matrices, pipevd
# through pzheevd_ and the peers' complex calls, "_complex" in every label; cuSOLVERMg has no
# complex path and reports "unsupported").
# Peers run on each of PEER_GPU_COUNTS (all GPUs) GPUs, one rank per GPU (cuSOLVERMg: one process;
# cuSOLVER: one rank on the first GPU).
# The ELPA peers (elpa1-gpu, elpa2-gpu) run with ELPA_RANKS_PER_GPU ranks on every GPU (a list,
# "1": one run per entry; ELPA's PERFORMANCE_TUNING.md allows the same number on each GPU, and
# its 2-stage band-to-tridiagonal step runs on the ranks' CPU cores, one each) at the caller's
# nb ELPA_NB (16: ELPA's own nblk, so the adapter takes the arrays as they are; another nb is
# moved to 16 and back by PDGEMR2D, timed apart); MPS=1 runs those of more than one rank per GPU
# under an NVIDIA MPS daemon of this script's own (private pipe folder, stopped at the end), as
# that guide recommends. PIPEVD_ELPA_* and ELPA_DEFAULT_* set in the environment reach the ranks
# (bench/peers/elpa/elpa_solver.cpp lists the adapter's).
# Logs under $OUT/scaling/ (at most 8 files come back): session.log, build_ctest.log, bench.log,
# runs.jsonl, timeline_<g>gpu_n<n>.json, report.md, scaling.png and speedup.png
# (bench/sizes_report.py over runs.jsonl); prints a summary table last.
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
          PIPEVD_VERBOSE=2 PIPEVD_TIMELINE="$out/timeline${name#pipevd}_${g}gpu_n$n${LABEL_SUFFIX:-}_call%c.json" \
          PIPEVD_ENGINE_PATH=$setting
      done
    done
  done
  mps_env=()
  if [ "${MPS:-0}" = 1 ] && [[ " ${ELPA_RANKS_PER_GPU:-1} " =~ \ ([2-9]|[1-9][0-9]+)\  ]]; then
    mps_pipe=/tmp/pipevd-mps-$$
    mkdir -p "$mps_pipe/log"
    if CUDA_MPS_PIPE_DIRECTORY=$mps_pipe CUDA_MPS_LOG_DIRECTORY=$mps_pipe/log \
      nvidia-cuda-mps-control -d >>"$out/session.log" 2>&1; then
      mps_env=(CUDA_MPS_PIPE_DIRECTORY="$mps_pipe" CUDA_MPS_LOG_DIRECTORY="$mps_pipe/log")
      trap 'echo quit | CUDA_MPS_PIPE_DIRECTORY=$mps_pipe nvidia-cuda-mps-control >/dev/null 2>&1' EXIT
      log "MPS daemon started ($mps_pipe)"
    else
      log "MPS daemon did not start: ELPA's runs of several ranks per GPU go without it"
    fi
  fi
  for n in ${PEER_SIZES-32768}; do
    for g in ${PEER_GPU_COUNTS:-$ngpu}; do
      ((g > ngpu)) && continue
      for peer in ${PEERS-cusolvermp cusolvermg}; do
        per_gpu=1 nb=${BENCH_NB:-256} gp=$g
        [[ $peer == elpa* ]] && per_gpu=${ELPA_RANKS_PER_GPU:-1} nb=${ELPA_NB:-16}
        if [ "$peer" = cusolver ]; then  # one GPU whatever the count: once per n
          [[ " ${cusolver_done:-} " == *" $n "* ]] && continue
          cusolver_done+=" $n" gp=1
        fi
        for r in $per_gpu; do
          ranks=$((gp * r)) label=${peer}${tag}_${gp}gpu_n$n env_run=()
          [ "$peer" = cusolvermg ] && ranks=1
          ((r > 1)) && label+=_${r}pergpu env_run=("${mps_env[@]}")
          [[ $peer == elpa* && $nb != "${BENCH_NB:-256}" ]] && label+=_nb$nb
          BENCH_NB=$nb CAP=${PEER_CAP:-100} pipevd_bench_run "$label${LABEL_SUFFIX:-}" "$ranks" \
            "$(gpu_list "$gp")" "$peer" "$n" "${PEER_CALLS:-1}" "${env_run[@]}"
        done
      done
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
# Per GPU count: the median repeated and the first call per n and solver, pipevd over the fastest
# peer (repeated, and first call against first call), time against n (scaling.png), pipevd's
# speed-up over each peer (speedup.png).
[ -f "$runs" ] && python3 bench/sizes_report.py --plot "$out/scaling.png" --speedup "$out/speedup.png" "$runs" >"$out/report.md" 2>>"$log_file"
log "done, rc=$rc"
exit $rc
