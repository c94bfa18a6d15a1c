#!/usr/bin/env bash
# Device-machine session for the redistribution (issue 3; CPU only, the GPU is not used): the
# redistribute tests, then redistribute_bench at n = 16384 on 4 ranks x 4 cores: both ways through
# a node window (pull, push: redistribute/*_on_node.hpp) next to the best settings before (packed,
# packedc4) and a plain MPI_Alltoall of the same bytes, in the same run. After the lead's build of
# $BUILD_DIR (or alone: it builds what it needs), from anywhere:
#   bash bench/device/redist.sh
# REDIST_BUDGET_S (default: BUDGET_S, else 150): wall-clock budget of the whole script. REDIST_N
# (16384), REDIST_REPS (7), REDIST_VARIANTS (packed,packedc4,push,pull,pullplain; syntax in
# bench/redistribute_bench.cpp; pullplain: pull without non-temporal stores). Logs: $OUT/redist/.
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
budget=${REDIST_BUDGET_S:-${BUDGET_S:-150}}
n=${REDIST_N:-16384}
reps=${REDIST_REPS:-7}
variants=${REDIST_VARIANTS:-packed,packedc4,push,pull,pullplain}
out=$OUT/redist
mkdir -p "$out"
log_file=$out/session.log

export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
cores=$(host_cores)
pe=$((cores / 4))
bind=(--map-by "slot:PE=$pe" --bind-to core --report-bindings)
one_core=(--bind-to core --map-by core)
if ((pe < 1)); then  # fewer than 4 cores (a test of this script on a small machine)
  pe=0 bind=(--oversubscribe --bind-to none) one_core=(--oversubscribe --bind-to none)
fi
log "host $(hostname), $cores cores, $(lscpu | grep 'Model name' | sed 's/  */ /g'); $(git rev-parse --short HEAD 2>/dev/null)"
log "btl=${OMPI_MCA_btl:-} single_copy=${OMPI_MCA_btl_vader_single_copy_mechanism:-default}" \
  "thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)" \
  "shmem_thp=$(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null)" \
  "/dev/shm: $(df -h /dev/shm 2>/dev/null | tail -1 | awk '{print $4}') free"

bench=$build/bench/redistribute_bench
if [ ! -x "$bench" ]; then  # the lead's master script builds everything; this is a fallback
  log "build redistribute_bench test_redistribute"
  timeout "$(left)" cmake --build "$build" -j"$cores" --target redistribute_bench test_redistribute \
    test_redistribute_comm >"$out/build.log" 2>&1 || log "cmake build FAILED (see build.log)"
fi
if [ ! -x "$bench" ]; then
  # Fallback as in the first node run: plain mpicxx against the bundle's ScaLAPACK.
  bench=/tmp/redistribute_bench
  log "mpicxx fallback build"
  mpicxx -O2 -g -std=c++17 -pthread -I. redistribute/*.cpp bench/redistribute_bench.cpp \
    -o "$bench" -lscalapack -lopenblas -lgfortran >>"$out/build.log" 2>&1 ||
    { log "build FAILED"; tail -20 "$out/build.log"; exit 1; }
fi

rc=0
if [ -x "$build/tests/test_redistribute" ] && (($(left) > 90)); then
  log "ctest -R redistribut (push and pull equal the packed exchange; threads; rounds; PDGEMR2D)"
  timeout 60 ctest --test-dir "$build" -R redistribut --output-on-failure \
    >"$out/ctest.log" 2>&1 || { log "redistribute tests FAILED"; rc=1; }
  tail -4 "$out/ctest.log"
fi

# bench_run LOG BINDING... -- ARGS...: redistribute_bench ARGS on 4 ranks with that binding,
# within the budget; its output in $out/LOG, printed without mpirun's noise. Fails as the bench.
bench_run() {
  local logf=$1 binding=()
  shift
  while [ "$1" != -- ]; do
    binding+=("$1")
    shift
  done
  shift
  log "mpirun -np 4 ${binding[*]}: $bench $*"
  timeout "$(($(left) - 5))" mpirun -np 4 "${binding[@]}" \
    -x OPENBLAS_NUM_THREADS -x OMP_NUM_THREADS -x LD_LIBRARY_PATH "$bench" "$@" >"$out/$logf" 2>&1
  local r=$?
  ((r == 0)) || log "bench ($logf) exit $r"
  grep -v -E "MCW rank|pmix|dlopen|Perhaps" "$out/$logf"
  return $r
}

# Main run: 4 ranks with cores/4 cores each (the default threads come from that mask), with
# PDGEMR2D between the same layouts (the issue's "faster than PDGEMR2D", same run).
if (($(left) > 25)); then
  bench_run "bench_pe$pe.log" "${bind[@]}" -- "$n" 64 "$reps" 0 1 "$variants" || rc=1
  grep "MCW rank" "$out/bench_pe$pe.log" | head -4
  if ! grep -q "MPI_Alltoall, same bytes" "$out/bench_pe$pe.log" && (($(left) > 40)); then
    # The binding was refused: unbound, where the default threads are cores / ranks per node.
    bench_run bench_unbound.log --bind-to none -- "$n" 64 "$reps" 0 0 "$variants"
  fi
fi
# One engine rank for the 4 caller ranks (pdsyevd_ on one GPU under a 2 x 2 grid): pull leaves
# the engine's reads to that one rank's threads, push spreads the writes over all ranks.
if (($(left) > 60)); then
  bench_run bench_one_engine.log "${bind[@]}" -- "$n" 64 3 1 0 packed,packedc4,push,pull
fi
# The same variants in the other order (pull first: it then pays the window's fresh pages, the
# packed ones reuse nothing of it), to see that the order does not decide the best times.
if (($(left) > 35)); then
  bench_run bench_reversed.log "${bind[@]}" -- "$n" 64 5 0 0 pullplain,pull,push,packedc4,packed
fi
# One core per rank (the binding of the first node run): does the window win there too?
if (($(left) > 25)); then
  bench_run bench_core1.log "${one_core[@]}" -- "$n" 64 3 0 0 packed1,push1,pull1,pullplain1
fi
log "done rc=$rc. Look at: 'in pull'/'in push' against 'in packed' rows (and 'out pull' against"
log "'out packedc4'), column 'vs alltoall b/m' (target <= 1.5x); 'phases' lines (pull: pack = copy"
log "into the window, unpack = copy out of it) and 'first call' lines (fresh window pages, once)."
exit $rc
