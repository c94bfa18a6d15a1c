#!/usr/bin/env bash
# Fetches NVIDIA's cuSOLVERMp (not a Debian package) as its Python wheel into .deps/wheels/
# (git-ignored) and unpacks it to .deps/cusolvermp/{include,lib}; configure with
#   -DPIPEVD_CUSOLVERMP_ROOT=$PWD/.deps/cusolvermp
# Run here (with the registry) to download; on the GPU machine (no registry) run it with --unpack
# to unpack the carried wheel. Carry .deps/wheels (23 MB), not the unpacked 74 MB library.
#
# Version: nvidia-cusolvermp-cu13 0.8.0.3126. Its METADATA requires nvidia-nccl-cu13 2.*,
# nvidia-cuda-runtime 13.*, nvidia-cublas 13.*, nvidia-cusolver 12.*: all in the CUDA 13 toolkit
# and NCCL 2.28 the GPU machines have (every symbol it imports resolves against them; it also
# needs libcusparse and libnvJitLink from the toolkit). The newer 0.9.x wheels additionally need
# nvidia-cublasmp-cu13 0.10, which needs NCCL >= 2.29.2 (ncclPutSignal, ncclCommQueryProperties,
# ...) and NCCL's own wheel is ~200 MB, so 0.9 is not used.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${CUSOLVERMP_VERSION:-0.8.0.3126}
wheels=.deps/wheels dest=.deps/cusolvermp
mkdir -p "$wheels"
wheel=$(ls "$wheels"/nvidia_cusolvermp_cu13-"$version"-*.whl 2>/dev/null | head -1 || true)
if [ -z "$wheel" ]; then
  if [ "${1:-}" = --unpack ]; then
    echo "no wheel in $wheels (run scripts/fetch-cusolvermp.sh where pip can reach the registry)" >&2
    exit 1
  fi
  pip download --quiet --no-deps --dest "$wheels" "nvidia-cusolvermp-cu13==$version"
  wheel=$(ls "$wheels"/nvidia_cusolvermp_cu13-"$version"-*.whl | head -1)
fi
rm -rf "$dest" .deps/unpacked
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" .deps/unpacked
grep '^Requires-Dist' .deps/unpacked/*.dist-info/METADATA | sed 's/^/  /'
mkdir -p "$dest"
mv .deps/unpacked/nvidia/cu13/include .deps/unpacked/nvidia/cu13/lib "$dest/"
ln -sf libcusolverMp.so.0 "$dest/lib/libcusolverMp.so"
rm -rf .deps/unpacked
echo "cuSOLVERMp $version in $dest: configure with -DPIPEVD_CUSOLVERMP_ROOT=$PWD/$dest"
