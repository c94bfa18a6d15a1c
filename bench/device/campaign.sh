#!/usr/bin/env bash
# A comparison campaign on the GPU machine, in one device call: builds pipevd-bench, runs pipevd and
# its peers on the same matrices at growing n (1 GPU, all GPUs, and the CPU baseline on every
# core), writes the JSON lines, and regenerates the tables (and plots, where matplotlib is
# importable) of bench/RESULTS.md's gpu-campaign section.
#
# On the GPU machine (from the checkout; carry .gpu-node and .deps/wheels):
#   bash ../shared/gpu-node/bundle.sh && scripts/fetch-cusolvermp.sh     # here, once
#   bench/device/campaign.sh                                               # there
# It writes to ${OUT:-bench/results}/campaign-<stamp>/: runs.jsonl, RESULTS.md, plots/*.png, log.
# Back here, where Debian's python3-matplotlib is, regenerate bench/RESULTS.md and its plots:
#   bench/device/campaign.sh --report <that campaign directory>
# As the topic "campaign" of bench/device/round.sh (campaign.sh --topic): that call's build folder
# (BUILD_DIR, default build-gpu) without configuring again, BUDGET_S less 20 s, output under
# $OUT/campaign.
#
# Settings (environment): SIZES ("2000 4000 8000 16000"), CPU_SIZES ("2000 4000 8000"),
# NB (128), REPEAT (2), SPECTRUM (random; or a Table 2 spectrum where tests/support/spectra is),
# REF_MAX_N (8000: reference eigenvalues from ScaLAPACK up to this n; exact for Table 2 spectra),
# BUDGET_S (500: no new run starts after this many seconds), GPUS (all visible).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

pick_python() {  # one that has matplotlib if any does
  for py in /usr/bin/python3 python3; do
    if command -v "$py" >/dev/null && "$py" -c 'import matplotlib' 2>/dev/null; then echo "$py"; return; fi
  done
  command -v python3 || true
}

report() {  # report <campaign dir> <RESULTS.md> <plots dir>
  local dir=$1 results=$2 plots=$3 py
  py=$(pick_python)
  [ -n "$py" ] || { echo "no python3: tables not generated" >&2; return 0; }
  "$py" bench/report.py --jsonl "$dir/runs.jsonl" --section gpu-campaign --results "$results" \
    --plots "$plots" --title "Spectrum ${SPECTRUM:-random}" --device "$(cat "$dir/device.txt" 2>/dev/null)" \
    --date "$(cat "$dir/date.txt" 2>/dev/null || date -u '+%Y-%m-%d %H:%M UTC')" \
    --command "$(cat "$dir/command.txt" 2>/dev/null || echo bench/device/campaign.sh)"
  "$py" -c 'import matplotlib' 2>/dev/null ||
    echo "matplotlib missing: tables only; run 'bench/device/campaign.sh --report $dir' where it is" >&2
}

if [ "${1:-}" = --report ]; then
  report "$2" bench/RESULTS.md bench/plots
  exit 0
fi
if [ "${1:-}" = --topic ]; then
  export BUILD_DIR=${BUILD_DIR:-build-gpu} SKIP_CONFIGURE=1 BUDGET_S=$(( ${BUDGET_S:-300} - 20 ))
  export OUT=${OUT:-$root/gpu-out}/campaign
fi
results_dir=${OUT:-$root/bench/results}
# The device machine's environment (MPI, ScaLAPACK and BLAS from the carried Debian packages, CUDA,
# NVLink multicast off); it sets OUT for itself, so the campaign's own default is kept above.
source bench/device/preamble.sh

start=$(date +%s)
budget=${BUDGET_S:-500}
sizes=${SIZES:-"2000 4000 8000 16000"}
cpu_sizes=${CPU_SIZES:-"2000 4000 8000"}
nb=${NB:-128}
repeat=${REPEAT:-2}
ref_max=${REF_MAX_N:-8000}
stamp=$(date -u +%Y%m%d-%H%M%S)
out=$results_dir/campaign-$stamp
mkdir -p "$out"
log=$out/log
exec > >(tee -a "$log") 2>&1

# cuSOLVERMp from the carried wheel.
mp_root=
if ls .deps/wheels/nvidia_cusolvermp_cu13-*.whl >/dev/null 2>&1; then
  scripts/fetch-cusolvermp.sh --unpack >/dev/null && mp_root=$root/.deps/cusolvermp
  export LD_LIBRARY_PATH=$mp_root/lib:${LD_LIBRARY_PATH:-}
fi
export OMPI_MCA_rmaps_base_oversubscribe=1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}

build=${BUILD_DIR:-build-campaign}
# SKIP_CONFIGURE=1 reuses a build folder configured elsewhere (bench/device/round.sh).
if [ "${SKIP_CONFIGURE:-0}" != 1 ]; then
  cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DPIPEVD_BUILD_TESTS=OFF -DPIPEVD_BUILD_EXAMPLES=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DPIPEVD_CUSOLVERMP_ROOT="$mp_root" | grep -E "pipevd:" || true
fi
cmake --build $build -j "$(nproc)" --target pipevd-bench >/dev/null
bench=$root/$build/bench/pipevd-bench

ngpu=${GPUS:-$( (nvidia-smi -L 2>/dev/null || true) | grep -c "^GPU" || true)}
cores=$(nproc)
gpu_name=$( (nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || true) | head -1)
cpu_name=$( (lscpu 2>/dev/null || true) | sed -n 's/^Model name: *//p' | head -1)
echo "${ngpu} x ${gpu_name:-no GPU}; ${cores} cores ${cpu_name}; $(hostname)" >"$out/device.txt"
date -u '+%Y-%m-%d %H:%M UTC' >"$out/date.txt"
echo "SIZES='$sizes' CPU_SIZES='$cpu_sizes' NB=$nb REPEAT=$repeat SPECTRUM=${SPECTRUM:-random} REF_MAX_N=$ref_max bench/device/campaign.sh" >"$out/command.txt"
"$bench" --list | tee "$out/solvers.jsonl" || echo "pipevd-bench does not start (exit $?)"

common=(--nb "$nb" --spectrum "${SPECTRUM:-random}" --reference scalapack --reference-max-n "$ref_max")
# One pipevd-bench call per configuration and n, smallest n first, so that the budget cuts the
# largest sizes, never a whole configuration.
run() {  # run <ranks> <threads per rank> <visible GPUs> <solvers> <n> <repeat> <warmup>
  local left=$((budget - ($(date +%s) - start)))
  if ((left < 10)); then
    echo "budget spent: skipped ranks=$1 solvers=$4 n=$5"
    return 0
  fi
  echo "== ranks=$1 devices=[$3] solvers=$4 n=$5 (${left}s left)"
  # PIPEVD_VERBOSE=1: pipevd's one line per call (its decision: engine or ScaLAPACK) goes to the log.
  CUDA_VISIBLE_DEVICES=$3 OPENBLAS_NUM_THREADS=$2 OMP_NUM_THREADS=$2 PIPEVD_VERBOSE=1 \
    timeout "$left" mpirun --bind-to none -n "$1" -x CUDA_VISIBLE_DEVICES -x OPENBLAS_NUM_THREADS \
    -x OMP_NUM_THREADS -x LD_LIBRARY_PATH -x PIPEVD_VERBOSE "$bench" --solver "$4" --n "$5" --repeat "$6" \
    --warmup "$7" "${common[@]}" | tee -a "$out/runs.jsonl" || echo "(exit $? for ranks=$1 solvers=$4 n=$5)"
}

all=$(seq -s, 0 $((ngpu - 1)))
threads_1=$cores
threads_g=$((cores / (ngpu > 0 ? ngpu : 1)))
for n in $sizes; do
  # 1 GPU: the one-GPU peers and pipevd on one rank (the D&C thread gets the cores).
  run 1 "$threads_1" 0 pipevd,cusolver,cusolvermg,cusolvermp "$n" "$repeat" 1
  if ((ngpu > 1)); then
    # All GPUs: one rank per GPU for pipevd and cuSOLVERMp; one process for cuSOLVERMg.
    run "$ngpu" "$threads_g" "$all" pipevd,cusolvermp "$n" "$repeat" 1
    run 1 "$threads_1" "$all" cusolvermg "$n" "$repeat" 1
  fi
  # CPU baseline: every core a rank (ELPA where built).
  if [[ " $cpu_sizes " == *" $n "* ]]; then
    run "$cores" 1 "" scalapack,elpa1,elpa2 "$n" 1 0
  fi
done

cp bench/RESULTS.md "$out/RESULTS.md"
report "$out" "$out/RESULTS.md" "$out/plots"
echo "campaign in $out ($(( $(date +%s) - start ))s)"
