#!/usr/bin/env bash
# Prepares .gpu-node for the GPU machine: the shared bundle (MPI, ScaLAPACK, OpenBLAS) plus what
# pipevd's tests need there and the bundle lacks (GoogleTest). Carry .gpu-node in device calls.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ../shared/gpu-node/bundle.sh
if ! ls .gpu-node/debs/libgtest-dev_*.deb >/dev/null 2>&1; then
  (cd .gpu-node/debs && apt-get download libgtest-dev >/dev/null 2>&1) ||
    { apt-get update -qq >/dev/null; (cd .gpu-node/debs && apt-get download libgtest-dev >/dev/null); }
fi
echo "gpu-node: $(ls .gpu-node/debs | wc -l) packages"
