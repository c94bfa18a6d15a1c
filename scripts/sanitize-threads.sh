#!/usr/bin/env bash
# Builds pipevd's host code (no CUDA, Debug) with ThreadSanitizer into ${BUILD_DIR:-build-tsan},
# only the tests whose code runs on several threads (the D&C beside the back transformation, the
# release thread, the page population, the redistribution's and the D&C's worker pools, the
# staging chunks' pipeline, concurrent callers, the grid's preparation), and runs those of their
# ctest tests that take one or two ranks. Passes when no test failed and no ThreadSanitizer report
# was left. Over an hour on two cores; not for CI.
#
# - scripts/tsan-suppressions.txt holds what Open MPI reports inside itself; any other report fails
#   the run, its file named (one per process and try, under $build/tsan-logs).
# - OpenBLAS runs on one thread, as in every test (PIPEVD_TEST_ENV): its own workers hand buffers
#   back through synchronisation ThreadSanitizer cannot see, so with more every later access to
#   those buffers is reported (race:libopenblas.so would hide those, and with them a real race
#   between two of pipevd's threads that meets inside a BLAS call).
# - A process that dies inside another library is no report of pipevd's. OpenBLAS's ZGEMV reads
#   one stride past the end of its X (OpenMathLib/OpenBLAS#4013): test_pzheevd_e2e's reference
#   runs on a padded copy of A for that reason (bench/peers/scalapack/scalapack_reference.cpp),
#   but LAPACK's ZHEEVD in pipevd's engine meets the same read. Each test gets up to three tries;
#   one whose every try died inside another library is listed, not failed.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-tsan}
jobs=${JOBS:-$(nproc)}
san="-fsanitize=thread"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DPIPEVD_WITH_CUDA=OFF -DPIPEVD_BUILD_BENCH=OFF \
  -DCMAKE_C_FLAGS="$san -O1 -g" -DCMAKE_CXX_FLAGS="$san -O1 -g" \
  -DCMAKE_EXE_LINKER_FLAGS="$san" -DCMAKE_SHARED_LINKER_FLAGS="$san" >/dev/null
targets=(test_worker_pool test_threads test_release test_release_memory test_host_engine_e2e
         test_pzheevd_e2e test_engine_stages test_engine_scalars test_engine_faults
         test_engine_faults_in_stages test_tridiagonal_dc test_tridiagonal_bisection
         test_kept_buffer test_destination_population test_window_rounds test_redistribute
         test_redistribute_comm test_upload_triangle test_timeline test_grid_preparation
         test_non_finite test_load_balance_report test_info_codes test_memory_plan)
cmake --build "$build" --target "${targets[@]}" -j "$jobs"

logs=$(realpath -m "$build/tsan-logs")
rm -rf "$logs" && mkdir -p "$logs"
suppressions=$PWD/scripts/tsan-suppressions.txt
export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 suppressions=$suppressions"

# Those tests of the built targets that run on one or two ranks (their PROCESSORS), not gpu's, as
# ctest describes them, one after the other: each try's reports go to files of its own
# ($logs/TEST.tryN.PID, its output in $logs/TEST.tryN.out), so that every report names its test.
ctest --test-dir "$build" --show-only=json-v1 | python3 -c '
import glob, json, os, re, signal, subprocess, sys
logs, tree, targets = sys.argv[1], sys.argv[2], set(sys.argv[3:])

def selected(t, props):
    return ("gpu" not in props.get("LABELS", []) and props.get("PROCESSORS", 1) <= 2
            and any(os.path.basename(a) in targets for a in t.get("command", [])))

def passed(rc, output, props):  # as ctest judges it: its "." matches a newline too
    if any(re.search(rx, output, re.S) for rx in props.get("FAIL_REGULAR_EXPRESSION", [])):
        return False
    if "PASS_REGULAR_EXPRESSION" in props:
        return any(re.search(rx, output, re.S) for rx in props["PASS_REGULAR_EXPRESSION"])
    return rc == 0

def run(command, env, cwd, out, timeout):  # on a timeout the launcher and its ranks all go
    p = subprocess.Popen(command, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        return "timeout"

def crashed_elsewhere(files):  # every process that left a file died in another library
    if not files:
        return False
    for f in files:
        text = open(f).read()
        first = re.search(r"^ +#0 .*$", text, re.M)
        if "ERROR: ThreadSanitizer: SEGV" not in text or not first or tree in first.group(0):
            return False
    return True

reports, failed, elsewhere = [], [], []
for t in json.load(sys.stdin)["tests"]:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    if not selected(t, props):
        continue
    env = dict(os.environ, **dict(e.split("=", 1) for e in props.get("ENVIRONMENT", [])))
    verdict = "FAILED"
    for attempt in range(3):
        prefix = os.path.join(logs, "%s.try%d" % (t["name"], attempt))
        env["TSAN_OPTIONS"] = os.environ["TSAN_OPTIONS"] + " log_path=" + prefix
        with open(prefix + ".out", "w") as out:
            rc = run(t["command"], env, props.get("WORKING_DIRECTORY"), out,
                     props.get("TIMEOUT", 1500))
        files = [f for f in glob.glob(prefix + ".*") if re.search(r"\.[0-9]+$", f)]
        reports += [f for f in files if "WARNING: ThreadSanitizer" in open(f).read()]
        if rc == props.get("SKIP_RETURN_CODE"):
            verdict = "skipped"
            break
        if passed(rc, open(prefix + ".out").read(), props):
            verdict = "passed"
            break
        verdict = "crashed in another library" if crashed_elsewhere(files) else "FAILED"
    print(t["name"], verdict, flush=True)
    if verdict == "FAILED":
        failed.append(t["name"])
    elif verdict.startswith("crashed"):
        elsewhere.append(t["name"])
for f in reports:
    print("report:", f)
    for line in open(f):
        if re.match(r"(WARNING|SUMMARY): ThreadSanitizer", line):
            print("  " + line.rstrip())
print("%d failed, %d files of ThreadSanitizer reports, %d crashed in another library every try"
      " (%s)" % (len(failed), len(reports), len(elsewhere), " ".join(elsewhere)))
sys.exit(1 if failed or reports else 0)
' "$logs" "$PWD/" "${targets[@]}"
echo "sanitize-threads: no failed test, no ThreadSanitizer report"
