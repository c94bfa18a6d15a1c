# shellcheck shell=bash
# The one preamble of the device-machine scripts (bench/device/*.sh): every script sources it
# first, `source "$(dirname "$0")/preamble.sh"`, and keeps only what is its own. It
# - moves to the repository root (the scripts run from anywhere);
# - brings the environment of a GPU machine that has CUDA but no MPI, ScaLAPACK or GoogleTest:
#   .gpu-node/env.sh the first two (scripts/gpu-node-bundle.sh prepares it), a libgtest-dev .deb
#   (Debian's static libgtest.a with its CMake config) in .deps/ or .gpu-node/debs/ the third;
# - keeps NVLink multicast off (NCCL, PyTorch, NVSHMEM): on the multi-GPU machines a program using
#   it can take the host's shared GPUs out of service;
# - sets OUT (default ./gpu-out, exported: the topics of round.sh write under it) and build
#   (BUILD_DIR, default build-gpu);
# - defines log, left (seconds of $budget left), session_header, configure_gpu_build, build_gpu,
#   ncu_one_launch and scaling_run.
# A script sets `budget` (its wall-clock seconds) and, to log elsewhere than $OUT/session.log,
# `log_file`.
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || return 1
export OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
build=${BUILD_DIR:-build-gpu}
if [ -z "${OPAL_PREFIX:-}" ]; then
  for d in .gpu-node ../.gpu-node; do
    if [ -f "$d/env.sh" ]; then source "$d/env.sh"; break; fi
  done
fi
if [[ ":${CMAKE_PREFIX_PATH:-}:" != *":/tmp/gtest/usr:"* ]]; then
  for deb in .deps/libgtest-dev_*.deb .gpu-node/debs/libgtest-dev_*.deb ../.gpu-node/debs/libgtest-dev_*.deb; do
    if [ -f "$deb" ] && mkdir -p /tmp/gtest && dpkg -x "$deb" /tmp/gtest; then
      export CMAKE_PREFIX_PATH=/tmp/gtest/usr:${CMAKE_PREFIX_PATH:-}
      break
    fi
  done
fi
export PATH=/usr/local/cuda/bin:$PATH
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# log MESSAGE...: the time, the script's seconds so far and the message, to the console and the log.
log() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "${log_file:-$OUT/session.log}"; }
# left: seconds of the script's budget left.
left() { echo $((budget - SECONDS)); }
# runs_folder NAME SECONDS: a script of scaling_run runs sets its budget (BUDGET_S, else SECONDS)
# and its folder $OUT/NAME (dir).
runs_folder() {
  budget=${BUDGET_S:-$2}
  dir=$OUT/$1
  mkdir -p "$dir"
}

# host_cores: the host's cores (nproc alone obeys an exported OMP_NUM_THREADS).
host_cores() { env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc; }

# The machine, the GPU's state and the compiler, into the session log.
session_header() {
  echo "host $(hostname), $(nproc) cores; $(git rev-parse --short HEAD 2>/dev/null || echo 'no git')" |
    tee -a "$OUT/session.log"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv 2>&1 | tee -a "$OUT/session.log"
  nvcc --version | tail -1 | tee -a "$OUT/session.log"
  # First calls fault in fresh host pages: whether huge pages can back them decides their cost.
  echo "THP enabled: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null), defrag:" \
    "$(cat /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null), shmem:" \
    "$(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null); kernel $(uname -r)" |
    tee -a "$OUT/session.log"
}

# Configures the build folder $1 for the device (Release, sm_90 only to keep the build short, no
# examples; further arguments go to cmake); the log goes to $OUT/configure.log, its tail to the
# terminal on failure.
configure_gpu_build() {
  local dir=$1 gen=() mp=()
  shift
  command -v ninja >/dev/null && gen=(-G Ninja)
  # cuSOLVERMp's adapter (the comparisons) where its wheel was carried in .deps/wheels.
  if [ ! -f .deps/cusolvermp/include/cusolverMp.h ] &&
    ls .deps/wheels/nvidia_cusolvermp_cu13-*.whl >/dev/null 2>&1; then
    scripts/fetch-cusolvermp.sh --unpack >>"$OUT/configure.log" 2>&1 || echo "cuSOLVERMp wheel not unpacked"
  fi
  if [ -f .deps/cusolvermp/include/cusolverMp.h ]; then
    mp=(-DPIPEVD_CUSOLVERMP_ROOT="$PWD/.deps/cusolvermp")
    export LD_LIBRARY_PATH=$PWD/.deps/cusolvermp/lib:${LD_LIBRARY_PATH:-}
  fi
  # ELPA's GPU build (bench/elpa/build_elpa_gpu.sh) where its install was carried (its symbolic
  # links made again where the carrying dropped them); ELPA_INSTALL picks another one, e.g. its
  # OpenMP build .deps/elpa-gpu-omp/install.
  local elpa=${ELPA_INSTALL:-.deps/elpa-gpu/install}
  local elpa_lib=$elpa/lib
  local f
  for f in $elpa_lib/libelpa.so.*.*.* $elpa_lib/libelpa_openmp.so.*.*.*; do
    if [ -f "$f" ] && [ ! -e "${f%.so.*}.so" ]; then
      (cd $elpa_lib && f=${f##*/} && ln -sf "$f" "${f%.*.*}" && ln -sf "$f" "${f%.so.*}.so")
    fi
  done
  if [ -f $elpa_lib/libelpa.so ] || [ -f $elpa_lib/libelpa_openmp.so ]; then
    mp+=(-DPIPEVD_ELPA_GPU_DIR="$(cd "$elpa" && pwd)")
    export LD_LIBRARY_PATH=$(cd "$elpa_lib" && pwd):${LD_LIBRARY_PATH:-}
  fi
  cmake -S . -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DPIPEVD_BUILD_EXAMPLES=OFF "${mp[@]}" "$@" >>"$OUT/configure.log" 2>&1 ||
    { echo "configure FAILED"; tail -30 "$OUT/configure.log"; return 1; }
}

# build_gpu LOG [TARGET...]: the build step. Builds $build (everything, or the targets) on every
# core, the output to LOG; on failure logs it, shows the errors and returns 1. build_timeout
# (seconds; unset: none) caps it.
build_gpu() {
  local logf=$1 targets=() cap=()
  shift
  for t in "$@"; do targets+=(--target "$t"); done
  [ -n "${build_timeout:-}" ] && cap=(timeout "$build_timeout")
  "${cap[@]}" cmake --build "$build" -j "$(nproc)" "${targets[@]}" >"$logf" 2>&1 && return 0
  log "build FAILED"
  grep -E -B2 -A6 "error|Error" "$logf" | head -60
  return 1
}

# ncu_one_launch NAME REGEX SKIP BUDGET SECTIONS -- COMMAND...: Nsight Compute on launch SKIP + 1
# of the kernels matching REGEX in COMMAND (the SECTIONS, a space-separated list, plus source
# counters), clocks left alone, within BUDGET - 10 seconds; then writes $out/ncu_details.log and
# $out/ncu_source.csv (SASS lines with their warp samples) and deletes the report. NCU_NAME_BASE
# (function): what REGEX matches, "mangled" to tell template instantiations apart.
ncu_one_launch() {
  local name=$1 regex=$2 skip=$3 budget=$4 sections=$5
  shift 6
  local args=()
  for s in $sections SourceCounters; do args+=(--section "$s"); done
  timeout $((budget - 10)) ncu --clock-control none --kernel-name-base "${NCU_NAME_BASE:-function}" \
    -k "regex:$regex" --launch-skip "$skip" \
    --launch-count 1 "${args[@]}" -o "$out/$name" -f "$@" >"$out/ncu.log" 2>&1 ||
    echo "ncu failed or cut"
  ncu -i "$out/$name.ncu-rep" --page details >"$out/ncu_details.log" 2>&1
  ncu -i "$out/$name.ncu-rep" --page source --csv --print-source sass >"$out/ncu_source.csv" 2>&1
  rm -f "$out/$name.ncu-rep"
}

# pipevd_bench_run <label> <ranks> <visible GPUs> <solver> <n> <calls> [env assignments...]: one
# pipevd-bench process (one rank per GPU of the list, or as many as asked), `calls` timed calls
# after WARM (default 0) warm-up calls at each n (a comma list), within the budget (CAP seconds
# at most); BENCH_NB (256) and BENCH_JOBZ (V) its nb and JOBZ, BENCH_SPECTRUM its matrix (random;
# with JOBZ = N uniform, whose exact eigenvalues are the reference: without eigenvectors there is
# no residual to check, and pipevd-bench vouches for no unchecked run), BENCH_SCALAR (real) its
# --scalar: complex runs complex Hermitian matrices (pipevd through pzheevd_, the peers' complex
# calls; a peer without one reports "unsupported"), BENCH_LEAD the seconds before the process's
# first call (pipevd-bench --lead; none where unset), BENCH_GENERATE where its matrix is formed
# (pipevd-bench --generate auto, gpu or host; its own default, auto, where unset), BENCH_BIND the
# ranks' binding (none, the default: unbound; core: each rank on cores of its own, as many as its
# threads). Rank 0's phase line (--phase-times) goes to the log. Each rank runs
# cores / ranks OpenBLAS and OpenMP threads (at least one). Its JSON lines go
# to $runs with the label, the card and whether the call was the process's first or a repeated
# one; its log to $out/bench.log. Needs $bench, $runs and $out. Every variable named in the env
# assignments, and every exported PIPEVD_* (pipevd's settings, e.g. an A/B's PIPEVD_POOL_GROWTH, and
# the ELPA adapter's PIPEVD_ELPA_*), ELPA_DEFAULT_* and ELPA_FORCE_* (ELPA's own overrides of its
# keys' defaults), goes to the ranks by -x.
pipevd_bench_run() {
  local label=$1 ranks=$2 gpus=$3 solver=$4 n=$5 calls=$6 warm=${WARM:-0}
  local spectrum=${BENCH_SPECTRUM:-random}
  [ "${BENCH_JOBZ:-V}" = N ] && spectrum=${BENCH_SPECTRUM:-uniform}
  shift 6
  local t=$(($(left) - 5))
  ((${CAP:-0} > 0 && CAP < t)) && t=$CAP
  if ((t < 20)); then
    log "budget spent: skipped $label"
    return 0
  fi
  local threads=$(($(host_cores) / ranks))
  ((threads > 0)) || threads=1  # more ranks than cores (oversubscribed callers)
  local bind=(--bind-to none)
  [ "${BENCH_BIND:-none}" = core ] && bind=(--map-by "slot:PE=$threads" --bind-to core)
  local card
  card=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr -d ',')
  local fwd=() v
  for v in "${@%%=*}" $(compgen -e); do
    case $v in
      CUDA_VISIBLE_DEVICES | OPENBLAS_NUM_THREADS | OMP_NUM_THREADS | LD_LIBRARY_PATH | NCCL_NVLS_ENABLE | \
        NCCL_DEBUG | PIPEVD_BACKEND | PIPEVD_VERBOSE | PIPEVD_TIMELINE | PIPEVD_ENGINE_PATH) ;;
      *) [[ $v =~ ^(PIPEVD_|ELPA_DEFAULT_|ELPA_FORCE_) || " $* " == *" $v="* ]] &&
        [[ " ${fwd[*]} " != *" $v "* ]] && fwd+=(-x "$v") ;;
    esac
  done
  log "$label: $ranks ranks x $threads threads, GPUs [$gpus], $solver, ${BENCH_SCALAR:-real}, n = $n, nb = ${BENCH_NB:-256}, $warm + $calls calls (${t} s left)${fwd[*]:+; ${fwd[*]}}"
  echo "=== $label" >>"$out/bench.log"
  # Every variable that -x names is set (empty where unused), then the run's own settings.
  env CUDA_VISIBLE_DEVICES="$gpus" OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads \
    PIPEVD_BACKEND=gpu PIPEVD_VERBOSE=1 PIPEVD_TIMELINE= PIPEVD_ENGINE_PATH= "$@" \
    timeout "$t" mpirun "${bind[@]}" -n "$ranks" -x CUDA_VISIBLE_DEVICES -x OPENBLAS_NUM_THREADS \
    -x OMP_NUM_THREADS -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x NCCL_DEBUG -x PIPEVD_BACKEND \
    -x PIPEVD_VERBOSE -x PIPEVD_TIMELINE -x PIPEVD_ENGINE_PATH "${fwd[@]}" "$bench" --solver "$solver" \
    --n "$n" --nb "${BENCH_NB:-256}" --jobz "${BENCH_JOBZ:-V}" --scalar "${BENCH_SCALAR:-real}" --spectrum "$spectrum" --repeat "$calls" --warmup "$warm" ${BENCH_LEAD:+--lead "$BENCH_LEAD"} ${BENCH_GENERATE:+--generate "$BENCH_GENERATE"} \
    --reference none --phase-times >"$out/run.tmp" 2>&1
  local r=$? first=first
  ((warm > 0)) && first=repeated
  cat "$out/run.tmp" >>"$out/bench.log"
  grep -h '^{"solver"' "$out/run.tmp" |
    sed "s/^{/{\"label\":\"$label\",\"card\":\"$card\",\"call\":\"$first\",/; s/\"call\":\"first\",\(.*\"repeat\":[1-9]\)/\"call\":\"repeated\",\1/" |
    tee -a "$runs" | cut -c1-220
  grep -E "engine rank=0/|redistribution rank=0/|load balance over" "$out/run.tmp" | head -8
  rm -f "$out/run.tmp"
  ((r == 0)) || log "$label: exit $r (124: out of time)"
}

# scaling_run DIR NAME [settings...]: one scaling.sh run of pipevd (STEPS=bench, no peers unless
# the settings name them) in DIR/NAME, its log DIR/NAME.log, within what is left of the budget
# (RUN_S seconds at most, where set); prints its summary rows and rank 0's engine and D&C lines.
scaling_run() {
  local dir=$1 name=$2 t
  shift 2
  t=$(left)
  ((t > 20)) || { echo "skipped $name (budget)"; return; }
  [ -n "${RUN_S:-}" ] && ((t > RUN_S)) && t=$RUN_S
  env OUT="$dir/$name" STEPS=bench PEERS= BUDGET_S="$t" "$@" bash bench/device/scaling.sh \
    >"$dir/$name.log" 2>&1
  echo "== $name"
  grep -A16 "summary" "$dir/$name.log" | tail -n +3
  grep -h "gpu engine rank=0\|D&C n=" "$dir/$name/scaling/bench.log" 2>/dev/null | cut -c1-300
}
