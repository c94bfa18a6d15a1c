#!/bin/sh
# expect_routed_solves.sh <launcher and program...>
# Runs the program with PIPEVD_VERBOSE=1 and passes when it exits 0, prints "solves=K", and pipevd
# reported exactly K calls ("pipevd: pdsyevd route=" or "pipevd: pzheevd route=" on rank 0), i.e.
# every solve went through it.
out=$(PIPEVD_VERBOSE=1 "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || { echo "expect_routed_solves: program exited with $rc"; exit 1; }
solves=$(printf '%s\n' "$out" | sed -n 's/.*solves=\([0-9][0-9]*\).*/\1/p' | head -n 1)
routed=$(printf '%s\n' "$out" | grep -cE 'pipevd: (pdsyevd|pzheevd) route=')
[ -n "$solves" ] || { echo "expect_routed_solves: no solves=K line"; exit 1; }
if [ "$routed" -ne "$solves" ]; then
  echo "expect_routed_solves: $solves solves but $routed went through pipevd"
  exit 1
fi
echo "expect_routed_solves: all $solves solves went through pipevd"
