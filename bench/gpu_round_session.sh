#!/usr/bin/env bash
# One device call for several topics: configure and build everything once (sm_90, cuSOLVERMp when
# its wheel was carried in .deps/wheels: configure_gpu_build unpacks it), then each topic's script bench/gpu_<topic>_session.sh
# with its own wall-clock budget, logs under $OUT/<topic>/. From the repository root:
#   source .gpu-node/env.sh && TOPICS="dc:200 bcback:150" bash bench/gpu_round_session.sh
# TOPICS: space-separated topic:budget_seconds, run in that order. BUILD_DIR (default build-gpu).
# BUILD_TARGETS: build only these (default: everything).
set -uo pipefail
cd "$(dirname "$0")/.."
export BUILD_DIR=${BUILD_DIR:-build-gpu}
source bench/gpu_node_setup.sh
log() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "$OUT/session.log"; }
session_header

log "configure"
configure_gpu_build "$BUILD_DIR" || exit 1
log "build"
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
timeout "${BUILD_BUDGET_S:-300}" cmake --build "$BUILD_DIR" -j16 "${targets[@]}" >"$OUT/build.log" 2>&1 ||
  { log "build FAILED"; grep -E -B2 -A6 "error|Error" "$OUT/build.log" | head -60; }
log "built"

status=0
for item in ${TOPICS:-}; do
  topic=${item%%:*} budget=${item##*:}
  script=bench/gpu_${topic}_session.sh
  [ -f "$script" ] || { log "$topic: no $script"; status=1; continue; }
  mkdir -p "$OUT/$topic"
  log "$topic (budget ${budget}s)"
  BUDGET_S=$budget timeout $((budget + 20)) bash "$script" 2>&1 | tee "$OUT/$topic/console.log" | tail -40
  rc=${PIPESTATUS[0]}
  log "$topic rc=$rc"
  [ "$rc" = 0 ] || status=1
done
log "done, status=$status"
# Only a few files come back from $OUT: pack the topics' logs into one archive.
sleep 1
(cd "$OUT" && tar czf /tmp/pipevd-logs.tgz --exclude=./session.log . &&
  find . -mindepth 1 -maxdepth 1 -not -name session.log -exec rm -rf {} + &&
  mv /tmp/pipevd-logs.tgz logs.tgz)
exit $status
