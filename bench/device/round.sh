#!/usr/bin/env bash
# One device call for several topics: configure and build everything once (sm_90, cuSOLVERMp when
# its wheel was carried in .deps/wheels: configure_gpu_build unpacks it), then each topic's script
# with its own wall-clock budget, logs under $OUT/<topic>/. From the repository root:
#   source .gpu-node/env.sh && TOPICS="dc2:200 bcback:150" bash bench/device/round.sh
# TOPICS: space-separated topic:budget_seconds, run in that order. A topic is a script of
# bench/device/ (tests, evd, bcback, route, partition, redist, multigpu, ...) or one of these,
# a script with its argument: bcstage (bc.sh stage), dbbr, panelqr, aw (dbbr.sh dbbr|panelqr|aw),
# dc, dc2, evals (tridiagonal.sh lapack|dc|evals), qrncu, symmncu (ncu.sh qr|symm), campaign
# (campaign.sh --topic). BUILD_DIR (default build-gpu). BUILD_TARGETS: build only these (default:
# everything); BUILD_BUDGET_S (300): the build's cap.
set -uo pipefail
source "$(dirname "$0")/preamble.sh"
export BUILD_DIR=$build
session_header

log "configure"
configure_gpu_build "$build" || exit 1
log "build"
build_timeout=${BUILD_BUDGET_S:-300} build_gpu "$OUT/build.log" ${BUILD_TARGETS:-}
log "built"

# topic_command TOPIC: the script of bench/device/ and its argument that run TOPIC.
topic_command() {
  case $1 in
    bcstage) echo "bc.sh stage" ;;
    dbbr | panelqr | aw) echo "dbbr.sh $1" ;;
    dc) echo "tridiagonal.sh lapack" ;;
    dc2) echo "tridiagonal.sh dc" ;;
    evals) echo "tridiagonal.sh evals" ;;
    qrncu) echo "ncu.sh qr" ;;
    symmncu) echo "ncu.sh symm" ;;
    campaign) echo "campaign.sh --topic" ;;
    *) echo "$1.sh" ;;
  esac
}

status=0
for item in ${TOPICS:-}; do
  topic=${item%%:*} budget=${item##*:}
  read -r script args <<<"$(topic_command "$topic")"
  script=bench/device/$script
  [ -f "$script" ] || { log "$topic: no $script"; status=1; continue; }
  mkdir -p "$OUT/$topic"
  log "$topic (budget ${budget}s)"
  BUDGET_S=$budget timeout $((budget + 20)) bash "$script" $args 2>&1 | tee "$OUT/$topic/console.log" | tail -40
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
