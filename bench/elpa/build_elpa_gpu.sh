#!/usr/bin/env bash
# ELPA with NVIDIA GPU support (issue 27), built here for the device machines (sm_90: H100/H200),
# into .deps/elpa-gpu/ (git-ignored). What the device needs is .deps/elpa-gpu/install (about 4.3
# MiB: the stripped libelpa.so and ELPA's C headers); pipevd's build takes it with
#   cmake ... -DPIPEVD_ELPA_GPU_DIR=$PWD/.deps/elpa-gpu/install
# which adds the peers elpa1-gpu / elpa2-gpu (and serves elpa1 / elpa2 from the same library).
#
#   bench/elpa/build_elpa_gpu.sh            # fetch-tool mirror of marekandreas/elpa, default tag
#   ELPA_GIT=/path/to/elpa.git ELPA_TAG=new_release_2026_02_001 bench/elpa/build_elpa_gpu.sh
#   ELPA_SRC=/path/to/unpacked/elpa bench/elpa/build_elpa_gpu.sh    # a release tree or tarball's
#   ELPA_OPENMP=1 bench/elpa/build_elpa_gpu.sh   # OpenMP instead of NCCL, into .deps/elpa-gpu-omp
#
# The two builds differ in one choice, which ELPA's configure makes exclusive
# ("--enable-gpu-ccl=nccl currently not supported in combination with --enable-openmp",
# configure.ac): NCCL between the ranks' GPUs, or OpenMP threads in ELPA's CPU steps. The one that matters most for 2-stage is
# band -> tridiagonal, which has no GPU version in 2026.02 (elpa2_template.F90: "not yet ported")
# and is threaded only with OpenMP (elpa2_tridiag_band_template.F90); without OpenMP it runs on
# one core per rank. The device scripts take the OpenMP build with
# ELPA_INSTALL=.deps/elpa-gpu-omp/install (carry that folder); the adapter sets ELPA's omp_threads
# to each rank's OMP_NUM_THREADS (cores / ranks there).
#
# Steps: src/ (the tag's tree, from git archive) -> autogen (only where no configure) -> build/
# (configure, make libelpa.la) -> install/ (library and headers only, stripped). Each step's log is
# in .deps/elpa-gpu/*.log. Needs: the CUDA toolkit (nvcc, cuBLAS, cuSOLVER, NCCL under
# $CUDA_HOME/lib), Debian's openmpi (mpicc/mpif90), libscalapack-openmpi-dev, OpenBLAS or
# reference BLAS/LAPACK (-llapack -lblas), gfortran, autoconf/automake/libtool (libtool is only for
# autogen.sh: `apt-get install libtool`, its libtoolize was missing here at first).
# Every compile runs under `nice -n 19` (the machine is shared); MAKE_JOBS (default 2). Here (2
# shared cores) the whole script took 4 minutes: autogen 12 s, configure 12 s, make 3.5 min.
#
# On the device: carry .deps/elpa-gpu/install (not src/ or build/, 80 MiB), then
#   source .gpu-node/env.sh
#   cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
#     -DPIPEVD_BUILD_EXAMPLES=OFF -DPIPEVD_ELPA_GPU_DIR=$PWD/.deps/elpa-gpu/install
#   cmake --build build-gpu -j --target pipevd-bench
#   mpirun -n 2 build-gpu/bench/pipevd-bench --solver elpa1-gpu,elpa2-gpu --n 16384 --nb 16
# libelpa.so's own needs (Open MPI's libmpi_mpifh, ScaLAPACK, BLAS/LAPACK, gfortran, cuBLAS,
# cuSOLVER, NCCL) come from env.sh's LD_LIBRARY_PATH and the CUDA toolkit; the build tree's
# RUNPATH finds libelpa.so itself.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
openmp=${ELPA_OPENMP:-0}
if [ "$openmp" = 1 ]; then
  dest=${ELPA_GPU_DEST:-$root/.deps/elpa-gpu-omp}
  parallel=(--enable-openmp)
else
  dest=${ELPA_GPU_DEST:-$root/.deps/elpa-gpu}
  parallel=(--enable-gpu-ccl=nccl --with-nccl-path="$cuda")
fi
tag=${ELPA_TAG:-new_release_2026_02_001}
git_dir=${ELPA_GIT:-/work/.mirror/marekandreas+elpa/repo}
jobs=${MAKE_JOBS:-2}
export PATH=$cuda/bin:$PATH
mkdir -p "$dest"
log() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*"; }

# 1. Source: the release tag's tree. The mirror lacks one blob of the tag,
# utils/matrix_plotter/gpu_example/data.tgz (a plotting example's data), and `git archive` stops
# there ("error: invalid object ... for 'utils/matrix_plotter/gpu_example/data.tgz'"), leaving the
# tree incomplete: that path is excluded.
src=${ELPA_SRC:-$dest/src}
if [ -z "${ELPA_SRC:-}" ] && [ ! -f "$src/configure.ac" ]; then
  log "source: $tag from $git_dir"
  rm -rf "$src" && mkdir -p "$src"
  # git still prints "error: invalid object ..." for the excluded path (and exits 0): its stderr
  # goes to archive.log, shown only where the archive fails.
  git --git-dir="$git_dir" archive "$tag" -- . ':(exclude)utils/matrix_plotter/gpu_example/data.tgz' \
    2>"$dest/archive.log" | tar -x -C "$src" || { cat "$dest/archive.log"; exit 1; }
fi

# 2. A git tag has no configure (release tarballs do): ELPA's autogen.sh (autoreconf --install)
# makes it; it needs libtoolize (Debian package libtool), autoconf >= 2.71, automake.
if [ ! -x "$src/configure" ]; then
  log "autogen.sh"
  (cd "$src" && nice -n 19 ./autogen.sh) >"$dest/autogen.log" 2>&1 ||
    { tail -20 "$dest/autogen.log"; exit 1; }
fi

# 3. configure, out of tree. Why each setting:
# - CC/CXX/FC: Open MPI's wrappers (ELPA's GPU build wants GNU C for the C part; gfortran 12).
# - CFLAGS/FCFLAGS -O3 -march=x86-64-v3: AVX2 + FMA, which the device hosts' CPUs have; not
#   -march=native (this machine is not the one that runs it).
# - SCALAPACK_LDFLAGS: Debian's libscalapack-openmpi (it holds BLACS too, configure checks that),
#   with the system LAPACK/BLAS (OpenBLAS through Debian's alternatives).
# - --enable-nvidia-gpu-kernels: the CUDA code paths and the 2-stage real/complex NVIDIA kernels;
#   --enable-nvidia-sm80-gpu-kernels: the tensor-core (sm_80+) 2-stage kernel, the one ELPA picks
#   itself for a GPU run on such a build; --with-NVIDIA-GPU-compute-capability=sm_90: H100/H200
#   only (one -arch sm_90, the shortest build); --with-cuda-path: the toolkit.
# - --enable-gpu-streams=nvidia: the default with NVIDIA GPUs, said explicitly because NCCL needs it.
# - --enable-gpu-ccl=nccl --with-nccl-path: NCCL between the ranks' GPUs (ELPA uses it only with
#   one rank per GPU; use_ccl = 0 turns it off at run time). CUDA 13's toolkit here has
#   libnccl.so under $cuda/lib, which is where configure looks (-L$NCCL/lib). ELPA_OPENMP=1:
#   --enable-openmp in their place (see the top).
# - --disable-avx512-kernels: no AVX-512 kernel as the CPU default (a device host without it would
#   fault); the GPU runs use the GPU kernel anyway. configure warns that this CPU has AVX-512.
# - --disable-single-precision: pipevd compares double only (halves the Fortran templates).
# - --disable-static: one shared library, the smallest thing to carry (libtool builds each object
#   once instead of twice).
# - --enable-c-tests=no --enable-cpp-tests=no --with-test-programs=no: no test programs.
build=$dest/build
install=$dest/install
if [ ! -f "$build/Makefile" ]; then
  log "configure"
  rm -rf "$build" && mkdir -p "$build"
  (cd "$build" && nice -n 19 "$src/configure" --prefix="$install" \
    CC=mpicc CXX=mpicxx FC=mpif90 CPP="gcc -E" \
    CFLAGS="-O3 -march=x86-64-v3" CXXFLAGS="-O3 -march=x86-64-v3" FCFLAGS="-O3 -march=x86-64-v3" \
    SCALAPACK_LDFLAGS="-lscalapack-openmpi -llapack -lblas" \
    --enable-nvidia-gpu-kernels --enable-nvidia-sm80-gpu-kernels \
    --with-NVIDIA-GPU-compute-capability=sm_90 --with-cuda-path="$cuda" \
    --enable-gpu-streams=nvidia "${parallel[@]}" \
    --disable-avx512-kernels --disable-single-precision --disable-static \
    --enable-c-tests=no --enable-cpp-tests=no --with-test-programs=no) >"$dest/configure.log" 2>&1 ||
    { rm -f "$build/Makefile"; tail -30 "$dest/configure.log"; exit 1; }
fi
grep -E "real_nvidia" "$dest/configure.log" | sed 's/^/  kernel: /'
grep -E "whether --enable-openmp is specified" "$dest/configure.log" | sed 's/^/  /'

# 4. make libelpa.la, not `make` (all): `all` also builds libelpatest (the test programs' helper
# library, built whatever --with-test-programs says), whose
# test/shared/GPU/test_gpu_vendor_agnostic_layer.F90 uses the module cuda_functions of
# libelpa_private without a dependency on it, so `make -j2` failed with
#   Fatal Error: Cannot open module file 'cuda_functions.mod' for reading
#   make[1]: *** [Makefile:110893: test/shared/GPU/libelpatest_la-test_gpu_vendor_agnostic_layer.lo] Error 1
# The library alone needs none of it. Its name is the Makefile's: libelpa_openmp.la with OpenMP.
lib=$(sed -n 's/^lib_LTLIBRARIES = //p' "$build/Makefile")
log "make -j$jobs $lib"
(cd "$build" && nice -n 19 make -j"$jobs" "$lib") >"$dest/make.log" 2>&1 ||
  { grep -E -B5 "Error|error:" "$dest/make.log" | tail -40; exit 1; }

# 5. Install the library and the C headers only (`make install` would build `all`, see above),
# then keep what pipevd's adapter needs: lib/libelpa.so* and include/elpa-*/elpa/*.h (with OpenMP
# libelpa_openmp.so* and include/elpa_openmp-*; no Fortran modules, no libtool archive), the
# library stripped.
log "install into $install"
rm -rf "$install"
(cd "$build" && nice -n 19 make install-libLTLIBRARIES install-nobase_elpa_includeHEADERS \
  install-nobase_nodist_elpa_includeHEADERS install-pkgconfigDATA) >"$dest/install.log" 2>&1 ||
  { tail -20 "$dest/install.log"; exit 1; }
rm -rf "$install"/include/elpa*-*/modules "$install"/include/elpa*-*/src "$install"/lib/"$lib"
strip --strip-unneeded "$install"/lib/"${lib%.la}".so.*.*
log "done: $(du -sh "$install" | cut -f1) in $install"
ls -l "$install/lib"
