#!/bin/sh
# run_xdsep.sh <mpiexec> <xdsep> <SEP.dat> <libpipevd.so> <backend>
# ScaLAPACK's own symmetric eigensolver tester (Debian's scalapack-mpi-test) on 4 ranks with pipevd
# preloaded and PIPEVD_BACKEND=<backend> (host: its host engine; scalapack: its forward to the real
# PDSYEVD): passes when the tester reports no failed test, and every PDSYEVD test ("EVD" lines) was
# a call through pipevd on that route (one "pipevd: pdsyevd route=<backend>" line each,
# PIPEVD_VERBOSE=1). Exits 77 (ctest: skipped) where the tester is not installed.
mpiexec=$1 xdsep=$2 dat=$3 lib=$4 backend=$5
[ -x "$xdsep" ] || { echo "run_xdsep: $xdsep not installed (scalapack-mpi-test)"; exit 77; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
cp "$dat" "$dir/SEP.dat" && cd "$dir" || exit 1
"$mpiexec" -n 4 --oversubscribe --bind-to none -x LD_PRELOAD="$lib" -x PIPEVD_BACKEND="$backend" \
  -x PIPEVD_VERBOSE=1 "$xdsep" >out.txt 2>err.txt
rc=$?
grep -E "tests|FAILED" out.txt
[ "$rc" -eq 0 ] || { echo "run_xdsep: xdsep exited with $rc"; tail -20 err.txt; exit 1; }
grep -q " 0 tests completed and failed" out.txt || { echo "run_xdsep: failed tests"; exit 1; }
# N = 0 is a quick return (nothing to route); the tester's first column is N.
evd=$(grep -E "(PASSED|FAILED) +EVD" out.txt | awk '$1 > 0' | wc -l)
routed=$(grep -c "pipevd: pdsyevd route=$backend" err.txt)
[ "$evd" -gt 0 ] || { echo "run_xdsep: no PDSYEVD test ran"; exit 1; }
[ "$routed" -eq "$evd" ] || { echo "run_xdsep: $evd PDSYEVD tests, $routed on pipevd's route"; exit 1; }
echo "run_xdsep: all $evd PDSYEVD tests passed on pipevd's $backend route"
