#!/bin/sh
# compare_relinked_runs.sh relink|preload <workdir> <scalapack-binary> <pipevd-binary|libpipevd.so>
#                          <n> <nb> -- <launcher...>
# Runs an application twice on the same input: as linked against ScaLAPACK only, and either
# relinked with -lpipevd ahead of ScaLAPACK (relink) or the same binary with LD_PRELOAD of
# libpipevd.so (preload). Passes when both runs pass their own residual checks (exit 0), only the
# second one went through pipevd (PIPEVD_VERBOSE line), and their eigenvalues agree to 1e-12
# relative to the largest in magnitude. ROUTINE (default pdsyevd): the routine the application
# calls, as pipevd's verbose line names it (pdsyevd, pzheevd).
set -u
routine=${ROUTINE:-pdsyevd}
mode=$1 work=$2 reference=$3 candidate=$4 n=$5 nb=$6
shift 6
[ "$1" = "--" ] && shift
mkdir -p "$work"
rm -f "$work"/reference.txt "$work"/candidate.txt

PIPEVD_VERBOSE=1 "$@" "$reference" "$n" "$nb" "$work/reference.txt" >"$work/reference.out" 2>&1
rc_ref=$?
case $mode in
  relink) PIPEVD_VERBOSE=1 "$@" "$candidate" "$n" "$nb" "$work/candidate.txt" >"$work/candidate.out" 2>&1 ;;
  # env sets LD_PRELOAD in the ranks only, not in mpiexec itself.
  preload) PIPEVD_VERBOSE=1 "$@" env LD_PRELOAD="$candidate" "$reference" "$n" "$nb" "$work/candidate.txt" \
             >"$work/candidate.out" 2>&1 ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
rc_cand=$?
echo "--- ScaLAPACK only:"; cat "$work/reference.out"
echo "--- through pipevd ($mode):"; cat "$work/candidate.out"

status=0
[ $rc_ref -eq 0 ] || { echo "FAIL: the ScaLAPACK-only run exited with $rc_ref"; status=1; }
[ $rc_cand -eq 0 ] || { echo "FAIL: the $mode run exited with $rc_cand"; status=1; }
if grep -q "pipevd: $routine route=" "$work/reference.out"; then
  echo "FAIL: the ScaLAPACK-only binary went through pipevd"; status=1
fi
if [ "$(grep -c "pipevd: $routine route=" "$work/candidate.out")" -ne 1 ]; then
  echo "FAIL: the $mode run did not make exactly one call through pipevd"; status=1
fi
if [ -s "$work/reference.txt" ] && [ -s "$work/candidate.txt" ]; then
  paste "$work/reference.txt" "$work/candidate.txt" | awk -v n="$n" '
    { if (NF != 2) bad = 1; a[NR] = $1 + 0; b[NR] = $2 + 0
      m = (a[NR] < 0 ? -a[NR] : a[NR]); if (m > scale) scale = m }
    END {
      if (bad || NR != n) { print "FAIL: eigenvalue files differ in length"; exit 1 }
      for (i = 1; i <= NR; ++i) { d = a[i] - b[i]; if (d < 0) d = -d; if (d > worst) worst = d }
      rel = (scale > 0 ? worst / scale : worst)
      printf "eigenvalues: %d, max |difference| / max |lambda| = %.3g\n", NR, rel
      if (rel > 1e-12) { print "FAIL: eigenvalues disagree beyond 1e-12"; exit 1 }
    }' || status=1
else
  echo "FAIL: an eigenvalue file is missing"; status=1
fi
[ $status -eq 0 ] && echo "PASS: $mode run agrees with ScaLAPACK and went through pipevd"
exit $status
