#!/bin/sh
# run_xdsep.sh <mpiexec> <tester> <SEP.dat> <libpipevd.so> <backend> [routine]
# One of ScaLAPACK's own eigensolver testers (Debian's scalapack-mpi-test: xdsep for the real
# symmetric PDSYEVD, routine pdsyevd, the default; xzsep for the Hermitian PZHEEVD, routine
# pzheevd) on 4 ranks with pipevd preloaded and PIPEVD_BACKEND=<backend> (host: its host engine;
# scalapack: its forward to the real routine): passes when no test of the routine failed and every
# one (xdsep's "EVD" lines, xzsep's "EEVD") was a call through pipevd on that route (one
# "pipevd: <routine> route=<backend>" line each, PIPEVD_VERBOSE=1). A failed test of ScaLAPACK's
# own routines, which pipevd never takes, is reported and not counted: PDSYEVX, the first of each
# case (its FAILED line names no routine, and the case's EV and EVD are then skipped), fails now and
# then on the stock SEP.dat without pipevd loaded at all (n = 27 on 3 x 1, type 10: QTQ above the
# threshold in a few runs of many). Exits 77 (ctest: skipped) where the tester is not installed.
mpiexec=$1 tester=$2 dat=$3 lib=$4 backend=$5 routine=${6:-pdsyevd}
case $routine in
  pdsyevd) label=EVD ;;
  pzheevd) label=EEVD ;;
  *) echo "run_xdsep: unknown routine $routine"; exit 1 ;;
esac
[ -x "$tester" ] || { echo "run_xdsep: $tester not installed (scalapack-mpi-test)"; exit 77; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
cp "$dat" "$dir/SEP.dat" && cd "$dir" || exit 1
# PIPEVD_PREPARE_AT_GRID from the test's environment to every rank (the tester's grids then agree
# on their preparation; without a GPU engine they begin nothing).
grid=""
[ -n "$PIPEVD_PREPARE_AT_GRID" ] && grid="-x PIPEVD_PREPARE_AT_GRID=$PIPEVD_PREPARE_AT_GRID"
# shellcheck disable=SC2086  # $grid: no argument, or two
"$mpiexec" -n 4 --oversubscribe --bind-to none -x LD_PRELOAD="$lib" -x PIPEVD_BACKEND="$backend" \
  -x PIPEVD_VERBOSE=1 $grid "$tester" >out.txt 2>err.txt
rc=$?
grep -E "tests|FAILED" out.txt
[ "$rc" -eq 0 ] || { echo "run_xdsep: $tester exited with $rc"; tail -20 err.txt; exit 1; }
grep -q "tests completed and failed" out.txt || { echo "run_xdsep: no summary"; exit 1; }
failed=$(grep -cE "FAILED +$label *\$" out.txt)
[ "$failed" -eq 0 ] || { echo "run_xdsep: $failed $routine tests failed"; exit 1; }
others=$(grep "FAILED" out.txt | grep -cvE "FAILED +$label *\$")
[ "$others" -eq 0 ] || echo "run_xdsep: $others failed tests of ScaLAPACK's own routines (not pipevd's)"
# N = 0 is a quick return (nothing to route); the tester's first column is N.
tests=$(grep -E "(PASSED|FAILED) +$label *\$" out.txt | awk '$1 > 0' | wc -l)
routed=$(grep -c "pipevd: $routine route=$backend" err.txt)
[ "$tests" -gt 0 ] || { echo "run_xdsep: no $routine test ran"; exit 1; }
[ "$routed" -eq "$tests" ] || { echo "run_xdsep: $tests $routine tests, $routed on pipevd's route"; exit 1; }
echo "run_xdsep: all $tests $routine tests passed on pipevd's $backend route"
