#!/usr/bin/env bash
# A branch's GPU code beside main's in one device call: the branch's tree (a `git archive` tarball
# carried in .deps/) is built next to build-gpu, its tests run, and each bench line runs on the
# branch's build and on main's, one after the other on the same GPU, so that a kernel change is
# gated against the default it would replace in the same run.
#   git archive -o .deps/branch.tar <branch>   (here, before the call; carry .deps/branch.tar)
#   source .gpu-node/env.sh && TARGETS="test_gpu_bc_back_complex bc_back_complex_bench" \
#     TESTS_REGEX=gpu_bc_back_complex \
#     LINES="bc_back_complex_bench --n 32768 --m 8192 --only-tensor --lanes 1;..." \
#     bash bench/device/branch_ab.sh
# Settings: BRANCH_TAR (.deps/branch.tar), TARGETS (built in both trees; main's build-gpu must hold
# them already or is built for them), TESTS_REGEX (ctest -R in the branch's build; empty: none),
# LINES (";"-separated bench commands, a binary of build-gpu/bench and its arguments), MAIN_LINES
# (the lines, by number from 1, that also run on main's build: "all" (default), "none", or a list
# such as "1 3"), SANITIZE (a TOOLS value for
# sanitizer.sh on the branch's build, e.g. racecheck; empty: none), SANITIZE_SKIP (its SKIP: the
# jobs whose binaries TARGETS does not build), SANITIZE_S (240), BUDGET_S (540). Writes $OUT/branch_ab/{build.log,tests.log,lines.log} and the sanitizer's summary.
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
budget=${BUDGET_S:-540}
out=$OUT/branch_ab
mkdir -p "$out"
log_file=$out/session.log
tar_file=$(readlink -f "${BRANCH_TAR:-.deps/branch.tar}")
src=/tmp/branch_ab/src
[ -f "$tar_file" ] || { log "no $tar_file"; exit 1; }
rm -rf "$src" && mkdir -p "$src" && tar -xf "$tar_file" -C "$src"
ln -sfn "$PWD/.gpu-node" "$src/.gpu-node"
ln -sfn "$PWD/.deps" "$src/.deps"
session_header

# Both trees' targets built at once (the host has the cores for it).
build_tree() {  # build_tree <source dir> <build dir> <log>
  (cd "$1" && { [ -f "$2/build.ninja" ] || [ -f "$2/Makefile" ] || configure_gpu_build "$2"; } &&
    build=$2 build_gpu "$3" $TARGETS)
}
build_tree "$src" "$src/build-gpu" "$out/build.log" &
branch_build=$!
build_tree "$PWD" "$PWD/$build" "$out/build_main.log"
main_ok=$?
wait $branch_build
branch_ok=$?
log "builds: branch exit $branch_ok, main exit $main_ok"
((branch_ok == 0)) || exit 1

if [ -n "${TESTS_REGEX:-}" ]; then
  log "tests: ctest -R $TESTS_REGEX (branch)"
  timeout $(($(left) - 30)) ctest --test-dir "$src/build-gpu" -R "$TESTS_REGEX" \
    --output-on-failure >"$out/tests.log" 2>&1
  log "tests exit $?: $(grep -E 'tests passed|tests failed' "$out/tests.log")"
fi

on_main() {  # on_main <line number>: whether MAIN_LINES takes it
  case " ${MAIN_LINES:-all} " in *" all "*) return 0 ;; *" $1 "*) return 0 ;; *) return 1 ;; esac
}
IFS=';' read -r -a lines <<<"${LINES:-}"
number=0
for line in "${lines[@]}"; do
  [ -n "${line// /}" ] || continue
  number=$((number + 1))
  for tree in branch main; do
    [ "$tree" = main ] && { on_main $number && ((main_ok == 0)) || continue; }
    dir=$src/build-gpu
    [ "$tree" = main ] && dir=$PWD/$build
    (($(left) > 20)) || { log "budget: $tree '$line' not run"; continue; }
    read -r -a words <<<"$line"
    log "$tree: ${words[*]}"
    echo "=== $tree: ${words[*]}" >>"$out/lines.log"
    timeout $(($(left) - 10)) "$dir/bench/${words[0]}" "${words[@]:1}" >>"$out/lines.log" 2>&1
    echo "=== exit $?" >>"$out/lines.log"
  done
done

if [ -n "${SANITIZE:-}" ] && (($(left) > 40)); then
  s=$(($(left) - 10))
  ((s > ${SANITIZE_S:-240})) && s=${SANITIZE_S:-240}
  log "sanitizer: $SANITIZE on the branch's build, $s s"
  BUILD_DIR=$src/build-gpu TOOLS=$SANITIZE SKIP=${SANITIZE_SKIP:-} BUDGET_S=$s OUT=$out bash "$(dirname "$0")/sanitizer.sh" \
    >"$out/sanitizer.log" 2>&1
fi
log "done"
