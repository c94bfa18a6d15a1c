#!/usr/bin/env bash
# Device-machine session for the redistribution (issue 3; CPU only, the GPU is not used): the
# redistribute tests, then redistribute_bench at n = 16384 on 4 ranks, the settings before this
# branch (typed1: datatypes, one thread) next to the new ones (threads, packed), with PDGEMR2D and
# a plain MPI_Alltoall of the same bytes in the same run. From the repository root, after
# `source bench/gpu_node_setup.sh` and the lead's build of $BUILD_DIR:
#   bash bench/gpu_redist_session.sh
# REDIST_BUDGET_S (default 120): wall-clock budget of the whole script. REDIST_N (16384),
# REDIST_REPS (5), REDIST_VARIANTS (typed1,typed,packed1,packed,packedc4,packedc8; syntax in
# bench/redistribute_bench.cpp). Logs: $OUT/redist/.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu_node_setup.sh
build=${BUILD_DIR:-build-gpu}
budget=${REDIST_BUDGET_S:-${BUDGET_S:-120}}
n=${REDIST_N:-16384}
reps=${REDIST_REPS:-5}
variants=${REDIST_VARIANTS:-typed1,typed,packed1,packed,packedc4,packedc8}
out=$OUT/redist
mkdir -p "$out"
log() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "$out/session.log"; }
left() { echo $((budget - SECONDS)); }

export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)  # (nproc obeys OMP_NUM_THREADS)
pe=$((cores / 4))
bind=(--map-by "slot:PE=$pe" --bind-to core --report-bindings)
one_core=(--bind-to core --map-by core)
if ((pe < 1)); then  # fewer than 4 cores (a test of this script on a small machine)
  pe=0 bind=(--oversubscribe --bind-to none) one_core=(--oversubscribe --bind-to none)
fi
log "host $(hostname), $cores cores, $(lscpu | grep 'Model name' | sed 's/  */ /g'); $(git rev-parse --short HEAD 2>/dev/null)"
log "btl=${OMPI_MCA_btl:-} single_copy=${OMPI_MCA_btl_vader_single_copy_mechanism:-default}"

bench=$build/bench/redistribute_bench
if [ ! -x "$bench" ]; then  # the lead's master script builds everything; this is a fallback
  log "build redistribute_bench test_redistribute"
  timeout "$(left)" cmake --build "$build" -j"$cores" --target redistribute_bench test_redistribute \
    >"$out/build.log" 2>&1 || log "cmake build FAILED (see build.log)"
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
if [ -x "$build/tests/test_redistribute" ] && (($(left) > 60)); then
  log "ctest -R redistribute (threads on and off must agree; rounds path; PDGEMR2D equality)"
  PIPEVD_THREADS=4 timeout 50 ctest --test-dir "$build" -R '^redistribute' --output-on-failure \
    >"$out/ctest.log" 2>&1 || { log "redistribute tests FAILED"; rc=1; }
  tail -4 "$out/ctest.log"
fi

# Main run: 4 ranks with cores/4 cores each (the new default takes its thread count from that mask).
if (($(left) > 20)); then
  log "mpirun -np 4 ${bind[*]}: $bench $n 64 $reps 0 1 $variants"
  timeout "$(($(left) - 5))" mpirun -np 4 "${bind[@]}" \
    -x OPENBLAS_NUM_THREADS -x OMP_NUM_THREADS -x LD_LIBRARY_PATH \
    "$bench" "$n" 64 "$reps" 0 1 "$variants" >"$out/bench_pe$pe.log" 2>&1 || {
    log "bench (PE=$pe) exit $?"
    rc=1
  }
  grep -v "MCW rank" "$out/bench_pe$pe.log"
  grep "MCW rank" "$out/bench_pe$pe.log" | head -4
  if ! grep -q "MPI_Alltoall, same bytes" "$out/bench_pe$pe.log" && (($(left) > 40)); then
    # The binding was refused: unbound, where the default threads are cores / ranks per node.
    log "retry unbound: mpirun -np 4 --bind-to none"
    timeout "$(($(left) - 5))" mpirun -np 4 --bind-to none \
      -x OPENBLAS_NUM_THREADS -x OMP_NUM_THREADS -x LD_LIBRARY_PATH \
      "$bench" "$n" 64 "$reps" 0 1 "$variants" 2>&1 | tee "$out/bench_unbound.log"
  fi
fi
# The binding of the earlier node run (one core per rank): what the settings before gave there.
if (($(left) > 35)); then
  log "mpirun -np 4 ${one_core[*]}: typed1,packed1,packed1c4 (1 core per rank), no PDGEMR2D"
  timeout "$(($(left) - 5))" mpirun -np 4 "${one_core[@]}" \
    -x OPENBLAS_NUM_THREADS -x OMP_NUM_THREADS -x LD_LIBRARY_PATH \
    "$bench" "$n" 64 3 0 0 typed1,packed1,packed1c4 >"$out/bench_core1.log" 2>&1 || log "bench (1 core) exit $?"
  cat "$out/bench_core1.log"
fi
log "done rc=$rc. Look at: 'in/out <variant>' rows, columns 'vs alltoall b/m' (target <= 1.5x) and"
log "'vs PDGEMR2D b/m' (target < 1x); the 'phases' lines say where the time goes."
exit $rc
