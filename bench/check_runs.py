#!/usr/bin/env python3
"""Runs a pipevd-bench command and checks its JSON run lines (the bench ctests).

  check_runs.py --lines 4 --scalar complex --status ok --measured residual,orthogonality
                [--path pipevd=two_stage] [--expect reference=exact] [--skip-code 77]
                -- mpiexec ... pipevd-bench ...

Every line starting with {"solver" must carry the scalar and status asked for and a number in each
measured field (a null means the check did not run); there must be exactly --lines of them, so a
run that never printed cannot pass. --path SOLVER=PATH: that solver's lines name that path;
--expect FIELD=VALUE: every line's FIELD is that string. The command's exit code must be nonzero
where the status asked for is a failure (accuracy-failed, solver-failed), and 0 otherwise; where
it is --skip-code (a GPU peer or device absent) this script exits with it too, for ctest's SKIP.
"""
import argparse
import json
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, required=True)
    ap.add_argument("--scalar", default="real")
    ap.add_argument("--status", default="ok")
    ap.add_argument("--measured", default="")
    ap.add_argument("--path", action="append", default=[])
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--skip-code", type=int, default=None)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("no command after --")
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(proc.stdout)
    if a.skip_code is not None and proc.returncode == a.skip_code:
        print("check_runs: skipped (exit %d)" % proc.returncode)
        return a.skip_code
    runs = [json.loads(l) for l in proc.stdout.splitlines() if l.startswith('{"solver"')]
    paths = dict(p.split("=", 1) for p in a.path)
    expect = dict(e.split("=", 1) for e in a.expect)
    errors = []
    if len(runs) != a.lines:
        errors.append("%d run lines, expected %d" % (len(runs), a.lines))
    for r in runs:
        who = "%s n=%s repeat=%s" % (r.get("solver"), r.get("n"), r.get("repeat"))
        if r.get("scalar") != a.scalar:
            errors.append("%s: scalar %r, expected %r" % (who, r.get("scalar"), a.scalar))
        if r.get("status") != a.status:
            errors.append("%s: status %r, expected %r" % (who, r.get("status"), a.status))
        for field in filter(None, a.measured.split(",")):
            if not isinstance(r.get(field), (int, float)):
                errors.append("%s: %s is %r, not measured" % (who, field, r.get(field)))
        for field, value in expect.items():
            if r.get(field) != value:
                errors.append("%s: %s %r, expected %r" % (who, field, r.get(field), value))
        want = paths.get(r.get("solver"))
        if want is not None and r.get("path") != want:
            errors.append("%s: path %r, expected %r" % (who, r.get("path"), want))
    # pipevd-bench exits 1 for a failed run; an unsupported peer alone is no failure.
    expect_zero = a.status not in ("accuracy-failed", "solver-failed")
    if (proc.returncode == 0) != expect_zero:
        errors.append("exit code %d with status %s asked for" % (proc.returncode, a.status))
    for e in errors:
        print("check_runs: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
