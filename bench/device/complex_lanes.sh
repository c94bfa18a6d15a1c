#!/usr/bin/env bash
# The complex tensor BC-back's group lanes (issue 28) on a 4-GPU host, one call:
#   1. the build (scaling.sh STEPS=build);
#   2. side by side, one GPU each: the BC-back tests (gpu_bc_back on GPU 1, gpu_bc_back_complex on
#      GPU 2, gpu_backend_complex and the one-rank PZHEEVD two-stage test on GPU 3) and, on GPU 0,
#      bc_back_complex_bench --tensor with one lane against the automatic count at m = 8192 of
#      n = 32768 (a 4-GPU rank's rows) and at m = n = 16384, with OLD_BENCH (a bc_back_complex_bench
#      built from the code before the change, if given) at m = n = 16384;
#   3. PZHEEVD at n = 32768 on the 4 GPUs, first and repeated call (scaling.sh, no peers).
#   OLD_BENCH=.deps/old/bc_back_complex_bench bash bench/device/complex_lanes.sh
# Writes $OUT/lanes/ and $OUT/lanes.tgz (the device returns at most 8 files). WHOLE_S: the whole
# call's budget (180 s).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/preamble.sh"
dir=$OUT/lanes
mkdir -p "$dir"
log_file=$dir/session.log

log "build"
env OUT="$dir/build" STEPS=build bash "$here/scaling.sh" >"$dir/build.log" 2>&1 ||
  { log "build FAILED"; tail -40 "$dir/build.log"; }

log "tests and kernel bench, one GPU each"
run_test() {  # run_test <gpu> <name> <ctest regex>: ctest's own settings, one GPU visible
  CUDA_VISIBLE_DEVICES=$1 PIPEVD_REQUIRE_GPU=1 timeout 200 ctest --test-dir "$build" -L gpu -R "$3" \
    --timeout 190 --output-on-failure >"$dir/test_$2.log" 2>&1
  echo "$2 rc=$?" >>"$dir/tests_rc.txt"
}
run_test 1 bc_back '^gpu_bc_back$' &
run_test 2 bc_back_complex '^gpu_bc_back_complex$' &
run_test 3 complex_engine '^gpu_backend_complex$|^gpu_pzheevd_e2e_two_stage.np1$' &
(
  export CUDA_VISIBLE_DEVICES=0
  for bin in "$build/bench/bc_back_complex_bench" ${OLD_BENCH:+"$OLD_BENCH"}; do
    [ -x "$bin" ] || { echo "missing $bin"; continue; }
    echo "== $bin"
    if [ "$bin" = "$build/bench/bc_back_complex_bench" ]; then
      timeout 120 "$bin" --n 32768 --m 8192 --only-tensor --lanes 1,0
      timeout 120 "$bin" --n 16384 --m 16384 --only-tensor --lanes 0
    else
      timeout 120 "$bin" --n 16384 --m 16384 --tensor  # its BLAS2 variants first: one size
    fi
  done
) >"$dir/bench.log" 2>&1 &
wait
cat "$dir/tests_rc.txt"
grep -hE "Test +#|tests passed|Failure|FAILED" "$dir"/test_*.log | head -20
grep -E "tensor|==" "$dir/bench.log"

log "PZHEEVD n = 32768 on 4 GPUs"
env OUT="$dir/whole" BENCH_SCALAR=complex STEPS=bench SIZES=32768 GPU_COUNTS=4 CALLS=2 PEERS= \
  BUDGET_S="${WHOLE_S:-180}" bash "$here/scaling.sh" >"$dir/whole.log" 2>&1
grep -A6 "summary" "$dir/whole.log"
grep -h "gpu engine rank=0" "$dir/whole/scaling/bench.log" 2>/dev/null | cut -c1-330
log "done"
tar -C "$OUT" -czf "$OUT/lanes.tgz" lanes
