#!/usr/bin/env bash
# The 4-GPU campaign of issues 23, 27 and 28 in named parts, each one scaling.sh run with its own
# budget and folder, so that a device call takes the parts its time allows, most important first,
# and brings everything back in one archive (the device returns at most 8 files).
#   PARTS="build real complex tests" bash bench/device/four_gpus.sh
#   (carry .gpu-node, the gtest .deb and .deps/wheels (cuSOLVERMp, unpacked at the build); also
#   .deps/elpa-gpu/install for the elpa part)
# Parts (PARTS, in the order given):
#   build    configure and build build-gpu
#   real     n = 32768: pipevd on 4 and 1 GPUs and cuSOLVERMp on the 4 GPUs, each a first and a
#            repeated call, one run, the caller's nb 512 (cuSOLVERMp's best: part mp_nb) (issue
#            23's ratios, repeated against repeated; issue 27's 4-GPU row)
#   real4    n = 32768: pipevd on the 4 GPUs alone, CALLS (3) calls (its timelines and DBBR's
#            per-block lines without the 1-GPU run and the peer); an exported PIPEVD_* setting
#            reaches its ranks (preamble.sh's pipevd_bench_run), LABEL_SUFFIX tells an A/B's runs
#            apart
#   complex  n = 32768 complex Hermitian: pipevd on 4 GPUs and cuSOLVERMp's complex syevd, each a
#            first and a repeated call, the caller's nb 512 (issue 28)
#   complex1 n = COMPLEX1_SIZES ("16384 32768") complex Hermitian on one GPU against cuSOLVER (issue
#            28's 1-GPU target; runs on any machine), COMPLEX1_S (260)
#   mp_real, mp_complex  cuSOLVERMp alone at n = 32768 on the 4 GPUs, real and complex (the real
#            and complex parts run it after pipevd, where their budgets may leave it no time)
#   mp_nb    cuSOLVERMp alone at n = 32768 on the 4 GPUs at each caller nb of MP_NBS ("128 256 512
#            1024"), a first and a repeated call each (issues 23, 27 compare with its best NB), one
#            folder mp_nb<nb> and MP_NB_S (110) each
#   elpa     n = 32768: ELPA1-GPU on the 4 GPUs, one rank each (issue 27)
#   elpa2    n = 32768: ELPA2-GPU on the 4 GPUs, one rank each (issue 27), ELPA2_S (330)
#   big      n = 49152: pipevd on 4 GPUs and cuSOLVERMp (issue 23)
#   big1     n = 49152: pipevd on 1 GPU, first and repeated call (the big part's ratio), BIG1_S (150)
#   weak     weak scaling, equal work per GPU: n = 32768 on 1 GPU, 41285 on 2, 52016 on 4, each
#            its own run (WEAK_S each) and folder weak_<g>gpu
#   sweep    n in SWEEP_SIZES ("2000 4000 8000 16000") on SWEEP_GPUS ("1 4") GPUs: pipevd (first and
#            repeated calls) and cuSOLVER (1 GPU), cuSOLVERMp, cuSOLVERMg, ELPA1-GPU, each first and
#            repeated (issues 26, 27), SWEEP_S (330)
#   sweep_n  the sweep with JOBZ = N (uniform spectrum; its exact eigenvalues the check) against
#            cuSOLVER, cuSOLVERMp and cuSOLVERMg (issue 26), SWEEP_S (330)
#   clustered n = 16000 and 32768 on the 4 GPUs with the cluster0 spectrum (issue 27's second
#            spectrum): pipevd, cuSOLVERMp, ELPA1-GPU, CLUSTERED_S (330)
#   dc_early n = 32768 on 1 GPU with PIPEVD_DC_EARLY=on (the D&C started at SBR-back), against
#            the real part's 1-GPU run on the same machine
#   tests    the gpu tests that need 4 GPUs (every np4 and 4gpus test, own_gpu, pretend_nodes,
#            concurrent_grids, rank_without_gpu), or those TESTS_REGEX matches
# Budgets (seconds, each part's scaling.sh BUDGET_S): REAL_S (215), COMPLEX_S (250), ELPA_S (230),
# BIG_S (240), REAL4_S (80), MP_REAL_S (100), MP_COMPLEX_S (170), MP_NB_S (110 each nb), WEAK_S
# (150 each), DC_EARLY_S (80), SWEEP_S (330, also sweep_n), CLUSTERED_S (330), TESTS_S (150). Writes
# $OUT/four_gpus/<part>/ and $OUT/four_gpus.tgz (all of it), and $OUT/four_gpus_summary.txt (each
# part's summary table and engine lines).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/preamble.sh"
base=$OUT/four_gpus
mkdir -p "$base"
summary=$OUT/four_gpus_summary.txt
S=$here/scaling.sh
run_part() {  # run_part <name> <settings...>: one scaling.sh run in its own folder
  local name=$1
  shift
  echo "=== $name $(date -u +%H:%M:%S)" | tee -a "$summary"
  env OUT="$base/$name" "$@" bash "$S" >"$base/$name.log" 2>&1
  grep -A20 "summary" "$base/$name.log" | tail -n +2 >>"$summary"
  grep -h "gpu engine rank=0" "$base/$name"/scaling/bench.log 2>/dev/null | cut -c1-330 >>"$summary"
}
for part in ${PARTS:-build real complex tests}; do
  case $part in
    build) run_part build STEPS=build ;;
    real)
      run_part real STEPS=bench SIZES=32768 GPU_COUNTS="4 1" CALLS=2 PEERS=cusolvermp \
        PEER_SIZES=32768 PEER_GPU_COUNTS=4 PEER_CALLS=2 BENCH_NB=512 PEER_CAP=85 \
        BUDGET_S="${REAL_S:-215}" ;;
    real4)
      run_part real4 STEPS=bench SIZES=32768 GPU_COUNTS=4 CALLS="${CALLS:-3}" PEERS= \
        BUDGET_S="${REAL4_S:-80}" ;;
    complex)
      run_part complex BENCH_SCALAR=complex STEPS=bench SIZES=32768 GPU_COUNTS=4 CALLS=2 \
        PEERS=cusolvermp PEER_SIZES=32768 PEER_GPU_COUNTS=4 PEER_CALLS=2 BENCH_NB=512 \
        PEER_CAP=130 BUDGET_S="${COMPLEX_S:-250}" ;;
    complex1)  # issue 28's one-GPU target: n = 16384 and 32768 against cusolverDnXsyevd (CUDA_C_64F)
      run_part complex1 BENCH_SCALAR=complex STEPS=bench SIZES="${COMPLEX1_SIZES:-16384 32768}" \
        GPU_COUNTS=1 CALLS=2 PEERS=cusolver PEER_SIZES="${COMPLEX1_SIZES:-16384 32768}" \
        PEER_GPU_COUNTS=1 PEER_CAP=90 \
        BUDGET_S="${COMPLEX1_S:-260}" ;;
    mp_real)
      run_part mp_real STEPS=bench SIZES= PEERS=cusolvermp PEER_SIZES=32768 PEER_GPU_COUNTS=4 \
        PEER_CAP=90 BUDGET_S="${MP_REAL_S:-100}" ;;
    mp_complex)
      run_part mp_complex BENCH_SCALAR=complex STEPS=bench SIZES= PEERS=cusolvermp PEER_SIZES=32768 \
        PEER_GPU_COUNTS=4 PEER_CAP=160 BUDGET_S="${MP_COMPLEX_S:-170}" ;;
    mp_nb)
      for nb in ${MP_NBS:-128 256 512 1024}; do
        run_part "mp_nb$nb" STEPS=bench SIZES= PEERS=cusolvermp PEER_SIZES=32768 PEER_GPU_COUNTS=4 \
          BENCH_NB="$nb" PEER_CALLS=2 PEER_CAP=$((${MP_NB_S:-110} - 10)) LABEL_SUFFIX="_nb$nb" \
          BUDGET_S="${MP_NB_S:-110}"
      done ;;
    elpa)
      run_part elpa STEPS=bench SIZES= PEERS=elpa1-gpu PEER_SIZES=32768 PEER_GPU_COUNTS=4 \
        PEER_CAP=200 BUDGET_S="${ELPA_S:-230}" ;;
    elpa2)  # ELPA2-GPU at 32768: a part of its own, as it outlasts the elpa part's budget (RESULTS.md)
      run_part elpa2 STEPS=bench SIZES= PEERS=elpa2-gpu PEER_SIZES=32768 PEER_GPU_COUNTS=4 \
        PEER_CAP=$((${ELPA2_S:-330} - 20)) BUDGET_S="${ELPA2_S:-330}" ;;
    big)
      run_part big STEPS=bench SIZES=49152 GPU_COUNTS=4 CALLS=2 PEERS=cusolvermp PEER_SIZES=49152 \
        PEER_GPU_COUNTS=4 PEER_CAP=120 BUDGET_S="${BIG_S:-240}" ;;
    big1)  # issue 23's 49152 ratio needs one GPU's time on the same machine
      run_part big1 STEPS=bench SIZES=49152 GPU_COUNTS=1 CALLS=2 PEERS= BUDGET_S="${BIG1_S:-150}" ;;
    weak)  # equal work per GPU: n = 32768 on 1 GPU, 41285 on 2, 52016 on 4 (issue 23)
      for ng in "1 32768" "2 41285" "4 52016"; do
        set -- $ng
        run_part "weak_$1gpu" STEPS=bench SIZES="$2" GPU_COUNTS="$1" CALLS=2 PEERS= \
          BUDGET_S="${WEAK_S:-150}"
      done ;;
    sweep)
      run_part sweep STEPS=bench SIZES="${SWEEP_SIZES:-2000 4000 8000 16000}" \
        GPU_COUNTS="${SWEEP_GPUS:-1 4}" CALLS=4 PEERS="cusolver cusolvermp cusolvermg elpa1-gpu" \
        PEER_SIZES="${SWEEP_SIZES:-2000 4000 8000 16000}" PEER_GPU_COUNTS="${SWEEP_GPUS:-1 4}" \
        PEER_CALLS=3 PEER_CAP=60 BUDGET_S="${SWEEP_S:-330}" ;;
    sweep_n)  # the sweep without eigenvectors (issue 26's JOBZ = N rows; uniform spectrum, exact)
      run_part sweep_n BENCH_JOBZ=N STEPS=bench SIZES="${SWEEP_SIZES:-2000 4000 8000 16000}" \
        GPU_COUNTS="${SWEEP_GPUS:-1 4}" CALLS=4 PEERS="cusolver cusolvermp cusolvermg" \
        PEER_SIZES="${SWEEP_SIZES:-2000 4000 8000 16000}" PEER_GPU_COUNTS="${SWEEP_GPUS:-1 4}" \
        PEER_CALLS=3 PEER_CAP=60 LABEL_SUFFIX=_jobz_n BUDGET_S="${SWEEP_S:-330}" ;;
    clustered)  # cluster0 (one eigenvalue at the top, n - 1 clustered: heavy deflation, as DFT's)
      run_part clustered BENCH_SPECTRUM=cluster0 STEPS=bench SIZES="16000 32768" GPU_COUNTS=4 \
        CALLS=2 PEERS="cusolvermp elpa1-gpu" PEER_SIZES="16000 32768" PEER_GPU_COUNTS=4 \
        PEER_CAP=120 LABEL_SUFFIX=_cluster0 BUDGET_S="${CLUSTERED_S:-330}" ;;
    dc_early)
      run_part dc_early PIPEVD_DC_EARLY=on STEPS=bench SIZES=32768 GPU_COUNTS=1 CALLS=2 PEERS= \
        LABEL_SUFFIX=_dc_early BUDGET_S="${DC_EARLY_S:-80}" ;;
    tests)
      run_part tests STEPS=test PIPEVD_TEST_MAX_N=1100 TEST_BUDGET_S="${TESTS_S:-150}" \
        TEST_REGEX="${TESTS_REGEX:-4gpus|np4|own_gpu|pretend_nodes|concurrent_grids|rank_without_gpu}"
      grep -E "Test +#|tests passed" "$base/tests/scaling/build_ctest.log" >>"$summary" 2>/dev/null ;;
    *) echo "four_gpus.sh: unknown part '$part'" | tee -a "$summary" ;;
  esac
done
tar -C "$OUT" -czf "$OUT/four_gpus.tgz" four_gpus
cat "$summary"
