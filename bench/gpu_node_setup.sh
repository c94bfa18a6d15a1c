# Sourced by the device-machine session scripts (bench/gpu_*session.sh): the environment of a GPU
# machine that has CUDA but no MPI, ScaLAPACK or GoogleTest. .gpu-node/env.sh brings the first two
# (scripts/gpu-node-bundle.sh prepares it); a libgtest-dev .deb (Debian's static libgtest.a with
# its CMake config) in .deps/ or .gpu-node/debs/ brings the third. Sets OUT (default ./gpu-out).
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
if [ -z "${OPAL_PREFIX:-}" ]; then
  for d in .gpu-node ../.gpu-node; do
    if [ -f "$d/env.sh" ]; then source "$d/env.sh"; break; fi
  done
fi
for deb in .deps/libgtest-dev_*.deb .gpu-node/debs/libgtest-dev_*.deb ../.gpu-node/debs/libgtest-dev_*.deb; do
  if [ -f "$deb" ]; then
    mkdir -p /tmp/gtest && dpkg -x "$deb" /tmp/gtest
    export CMAKE_PREFIX_PATH=/tmp/gtest/usr:${CMAKE_PREFIX_PATH:-}
    break
  fi
done
export PATH=/usr/local/cuda/bin:$PATH
# NVLink multicast stays off on the multi-GPU machines (a program using it can take the host's
# shared GPUs out of service): NCCL, PyTorch and NVSHMEM.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

# The machine, the GPU's state and the compiler, into the session log.
session_header() {
  echo "host $(hostname), $(nproc) cores; $(git rev-parse --short HEAD 2>/dev/null || echo 'no git')" |
    tee -a "$OUT/session.log"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv 2>&1 | tee -a "$OUT/session.log"
  nvcc --version | tail -1 | tee -a "$OUT/session.log"
}

# Configures the build folder $1 for the device (Release, sm_90 only to keep the build short, no
# examples; further arguments go to cmake); the log goes to $OUT/configure.log, its tail to the
# terminal on failure.
configure_gpu_build() {
  local dir=$1 gen=() mp=()
  shift
  command -v ninja >/dev/null && gen=(-G Ninja)
  # cuSOLVERMp's adapter (the comparisons) where its wheel was carried in .deps/wheels.
  if [ ! -f .deps/cusolvermp/include/cusolverMp.h ] &&
    ls .deps/wheels/nvidia_cusolvermp_cu13-*.whl >/dev/null 2>&1; then
    scripts/fetch-cusolvermp.sh --unpack >>"$OUT/configure.log" 2>&1 || echo "cuSOLVERMp wheel not unpacked"
  fi
  if [ -f .deps/cusolvermp/include/cusolverMp.h ]; then
    mp=(-DPIPEVD_CUSOLVERMP_ROOT="$PWD/.deps/cusolvermp")
    export LD_LIBRARY_PATH=$PWD/.deps/cusolvermp/lib:${LD_LIBRARY_PATH:-}
  fi
  cmake -S . -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DPIPEVD_BUILD_EXAMPLES=OFF "${mp[@]}" "$@" >>"$OUT/configure.log" 2>&1 ||
    { echo "configure FAILED"; tail -30 "$OUT/configure.log"; return 1; }
}
