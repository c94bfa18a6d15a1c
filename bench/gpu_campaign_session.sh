#!/usr/bin/env bash
# The comparison campaign (bench/campaign.sh) as a topic of bench/gpu_round_session.sh: it reuses
# that session's build folder. BUDGET_S (default 300), SIZES as campaign.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-gpu} SKIP_CONFIGURE=1 BUDGET_S=$(( ${BUDGET_S:-300} - 20 )) \
  OUT=$OUT/campaign bench/campaign.sh
