#!/usr/bin/env bash
# Device session for small and mid-sized problems (issue 26): whole pdsyevd calls from host memory
# at each n of SIZES, one process per solver and setting that runs every n in turn (calls 0 ..
# REPEAT-1 at each n; call 0 at the process's first n is its first call, at later n a first call
# at that n in a warm process), on each of GPU_COUNTS GPUs (the first g of the machine): pipevd
# with the engine path forced both ways (PIPEVD_ENGINE_PATH=one_stage, two_stage) and as `auto`
# chooses, with each of CALLERS caller ranks (oversubscribed, all sharing the g GPUs), and the
# peers of PEERS on the same GPUs, one rank per GPU (cuSOLVER and cuSOLVERMg: one process), and
# the peer scalapack on the host's cores (below). Every call's residual and orthogonality are
# checked.
#   source .gpu-node/env.sh && BUDGET_S=300 bash bench/device/sizes.sh
#   CALLERS="1 8" PATHS=auto OVERHEAD=1 SIZES="2000 4000" bash bench/device/sizes.sh  # 1 GPU
#   GPU_COUNTS=4 CALLERS="16 64" PATHS=auto PEERS= SIZES="2000 4000 8000" bash bench/device/sizes.sh
# Issue 26's comparison with ScaLAPACK's pdsyevd on all the host's cores (pipevd faster at every n
# from 1000, else PIPEVD_MIN_N's default from where it is not), beside cuSOLVER on 1 and 4 GPUs:
#   GPU_COUNTS="1 4" PATHS=auto PEERS="cusolver scalapack" SIZES="1000 2000 4000 8000" \
#     bash bench/device/sizes.sh
# Settings: SIZES ("1000 2000 4000 8000 12000 16000 24000"), JOBZ ("V N"), GPU_COUNTS ("1"),
# CALLERS (pipevd's caller ranks, a list; default one per GPU; a count other than g is named in the
# label, e.g. pipevd_auto_1gpu_8callers_V), PATHS ("one_stage two_stage auto"), PEERS
# ("cusolver"; cusolvermp, cusolvermg and scalapack as well where asked; cusolver runs on 1 GPU
# only), REPEAT (6), CAP (the cap of one process, 150), BUDGET_S (300), FIRST (0; 1: every setting
# also as one process of a single call per n, label ..._first_<JOBZ>: a process's first call at
# every n), OVERHEAD (0; 1: per-call overhead runs, below), OVERHEAD_SIZES ("2000 4000"), BACKEND
# (gpu: pipevd's PIPEVD_BACKEND; host runs the host engine, a check of this script on a machine
# without a GPU). Expects $BUILD_DIR (default build-gpu) built.
# PEERS with scalapack: ScaLAPACK's pdsyevd (the library's own, past pipevd's interposition) on
# every core of the host, whatever the GPU count: run once per JOBZ (at the first of GPU_COUNTS),
# label scalapack_host<cores>c_<JOBZ>, its table rows standing beside every GPU count's
# (bench/sizes_report.py). SCALAPACK_RANKS (a list; default the core count): each a process of
# that many ranks of cores / ranks OpenBLAS threads, on pipevd-bench's squarest grid, a count
# other than the cores named in the label (scalapack_host64c_16ranks_V: 16 ranks x 4 threads);
# SCALAPACK_NB (the sweep's nb, 64); SCALAPACK_BIND (none; core: each rank bound to cores of its
# own, mpirun --map-by slot:PE=<threads> --bind-to core). Same matrices, JOBZ, REPEAT, FIRST, CAP
# and accuracy checks as the other rows; ScaLAPACK uses no GPU, its process sees the first one
# only, where pipevd-bench's accuracy check runs from n = 4096 as for the other rows.
# OVERHEAD=1: for each GPU count, JOBZ and caller count, pipevd's auto path once more at each n of
# OVERHEAD_SIZES, one process per n (REPEAT calls) with PIPEVD_VERBOSE=2, whose timeline file is
# the process's last call (a repeated one where REPEAT > 1): label <the run's label>_timeline, its
# lines in overhead.jsonl (kept out of runs.jsonl: the timeline's own cost is in their times), its
# timeline in timeline_<label>_n<n>.json; bench/sizes_report.py --overhead takes both.
# Writes $OUT/sizes/runs.jsonl (pipevd-bench's lines with the label, the card and first/repeated),
# bench.log, report.md (bench/sizes_report.py's tables: the median repeated and the first call per
# n and solver, pipevd's auto path over the fastest GPU peer and over ScaLAPACK on the host's
# cores; the overhead table with OVERHEAD=1), sizes.png (time against n) and speedup.png (pipevd's
# speed-up over each peer), the plots where matplotlib is installed.
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

backend=${BACKEND:-gpu}
overhead_runs=$out/overhead.jsonl
cores=$(host_cores)
host_done=" "  # the JOBZ whose host peers have run

# pipevd_label PATH G CALLERS JOBZ: the run's label; a caller count other than one rank per GPU is
# named in it.
pipevd_label() {
  local tag=
  (($3 != $2)) && tag=_$3caller && (($3 > 1)) && tag+=s
  echo "pipevd_${1}_${2}gpu${tag}_$4"
}

# run_setting LABEL RANKS SOLVER [env...]: one process over every n of SIZES; with FIRST=1 also
# one process of a single call per n (label <LABEL less _JOBZ>_first_JOBZ), since the first
# process's later n are warm.
run_setting() {
  local label=$1 ranks=$2 solver=$3 n
  shift 3
  BENCH_JOBZ=$jobz pipevd_bench_run "$label" "$ranks" "$gpus" "$solver" "$sizes" "$repeat" "$@"
  [ "${FIRST:-0}" = 1 ] || return 0
  for n in ${sizes//,/ }; do
    BENCH_JOBZ=$jobz pipevd_bench_run "${label%_"$jobz"}_first_$jobz" "$ranks" "$gpus" "$solver" \
      "$n" 1 "$@"
  done
}

# scalapack_host: ScaLAPACK's pdsyevd on all the host's cores at $jobz, a process per count of
# SCALAPACK_RANKS. Only the first GPU is visible: pipevd-bench's accuracy check (from n = 4096) is
# the one GPU work of the run, as in the other rows; no GPU takes part in the timed call.
scalapack_host() {
  # shellcheck disable=SC2034  # BENCH_BIND: pipevd_bench_run's
  local r label gpus=0 BENCH_NB=${SCALAPACK_NB:-$BENCH_NB} BENCH_BIND=${SCALAPACK_BIND:-none}
  for r in ${SCALAPACK_RANKS:-$cores}; do
    label=scalapack_host${cores}c
    ((r != cores)) && label+=_${r}rank && ((r > 1)) && label+=s
    run_setting "${label}_$jobz" "$r" scalapack
  done
}

for g in ${GPU_COUNTS:-1}; do
  gpus=$(seq -s, 0 $((g - 1)))
  for jobz in ${JOBZ:-V N}; do
    for callers in ${CALLERS:-$g}; do
      for path in ${PATHS-one_stage two_stage auto}; do
        setting=$path
        [ "$path" = auto ] && setting=
        run_setting "$(pipevd_label "$path" "$g" "$callers" "$jobz")" "$callers" pipevd \
          PIPEVD_ENGINE_PATH="$setting" PIPEVD_BACKEND="$backend"
      done
      [ "${OVERHEAD:-0}" = 1 ] || continue
      # One process per n: the timeline file holds a process's last call.
      label=$(pipevd_label auto "$g" "$callers" "$jobz")_timeline
      main_runs=$runs runs=$overhead_runs
      for n in ${OVERHEAD_SIZES:-2000 4000}; do
        BENCH_JOBZ=$jobz pipevd_bench_run "$label" "$callers" "$gpus" pipevd "$n" "$repeat" \
          PIPEVD_BACKEND="$backend" PIPEVD_VERBOSE=2 PIPEVD_TIMELINE="$out/timeline_${label}_n$n.json"
      done
      runs=$main_runs
    done
    for peer in ${PEERS-cusolver}; do
      if [ "$peer" = scalapack ]; then
        # The host's cores are the same at every GPU count: once per JOBZ.
        [[ $host_done == *" $jobz "* ]] || scalapack_host
        host_done+="$jobz "
        continue
      fi
      ranks=$g
      [[ $peer == cusolver || $peer == cusolvermg ]] && ranks=1
      [[ $peer == cusolver && $g -gt 1 ]] && continue
      run_setting "${peer}_${g}gpu_$jobz" "$ranks" "$peer"
    done
  done
done

log "median repeated call (s) per n (first call), pipevd's auto path over the fastest GPU peer" \
  "and over ScaLAPACK on the host's cores"
inputs=()
[ -f "$runs" ] && inputs+=("$runs")
[ -f "$overhead_runs" ] && inputs+=(--overhead "$overhead_runs" "$out"/timeline_*_timeline_n*.json)
((${#inputs[@]} > 0)) && python3 bench/sizes_report.py --plot "$out/sizes.png" \
  --speedup "$out/speedup.png" "${inputs[@]}" | tee "$out/report.md" | tee -a "$log_file"
log "done"
