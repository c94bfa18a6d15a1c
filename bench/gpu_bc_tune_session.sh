#!/usr/bin/env bash
# One device-machine session tuning GPU bulge chasing at large n (issue 6): the bulge chasing
# session in its tuning mode (see bench/gpu_bc_session.sh). From the repository root:
#   source .gpu-node/env.sh && bash bench/gpu_bc_tune_session.sh
BC_MODE=tune exec bash "$(dirname "$0")/gpu_bc_session.sh" "$@"
