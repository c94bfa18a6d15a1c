#!/bin/sh
# check_install.sh <build-dir> <source-dir> <work-dir> <ON|OFF fortran> -- <launcher...>
# Installs the build into <work-dir>/prefix and builds tests/consumer against it twice: with CMake
# (find_package(pipevd)) and with pkg-config (mpicc/mpif90 $(pkg-config --cflags --libs pipevd)).
# Each consumer is run under the launcher with PIPEVD_VERBOSE=1 and must pass its own check and
# have gone through pipevd.
set -u
build=$1 src=$2 work=$3 fortran=$4
shift 4
[ "$1" = "--" ] && shift
prefix=$work/prefix
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "install"; }
[ -f "$prefix/include/pipevd.h" ] || fail "pipevd.h not installed"
if [ "$fortran" = ON ]; then [ -f "$prefix/include/pipevd.mod" ] || fail "pipevd.mod not installed"; fi

run() {  # run <name> <program>: passes when it exits 0 and pipevd reported its call(s)
  out=$(PIPEVD_VERBOSE=1 "$@" 2>&1); rc=$?
  printf '%s\n' "$out"
  [ $rc -eq 0 ] || fail "$1 exited with $rc"
  printf '%s\n' "$out" | grep -q 'pipevd: pdsyevd route=' || fail "$1 did not go through pipevd"
}

# CMake: find_package(pipevd) from the installed prefix only.
cmake -S "$src/tests/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCONSUMER_FORTRAN="$fortran" -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 &&
  cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "CMake consumer"; }
grep 'pipevd Fortran module' "$work/cmake.log"
run "$@" "$work/cmake/consumer_c"
[ "$fortran" = ON ] && run "$@" "$work/cmake/consumer_f"

# pkg-config: the compile and link line of a Make-based code (where pkg-config and the MPI
# compiler wrappers exist; the CMake part above has run regardless).
pc=${PKG_CONFIG:-pkg-config}
mpicc=${MPICC:-mpicc}
pcfile=$(find "$prefix" -name pipevd.pc | head -n 1)
[ -n "$pcfile" ] || fail "pipevd.pc not installed"
if ! command -v "$pc" >/dev/null 2>&1 || ! command -v "$mpicc" >/dev/null 2>&1; then
  echo "PASS (CMake consumers only: no pkg-config or mpicc on this machine)"
  exit 0
fi
export PKG_CONFIG_PATH="$(dirname "$pcfile")"
flags=$("$pc" --cflags --libs pipevd) || fail "pkg-config --cflags --libs pipevd"
libdir=$("$pc" --variable=libdir pipevd)
echo "pkg-config: $flags"
"$mpicc" -o "$work/consumer_c_pc" "$src/tests/consumer/consumer.c" $flags -Wl,-rpath,"$libdir" -lm ||
  fail "mpicc with pkg-config"
run "$@" "$work/consumer_c_pc"
if [ "$fortran" = ON ]; then
  (cd "$work" && ${MPIFC:-mpif90} -o consumer_f_pc "$src/tests/consumer/consumer.f90" $flags \
     -Wl,-rpath,"$libdir") || fail "mpif90 with pkg-config"
  run "$@" "$work/consumer_f_pc"
fi
echo "PASS: installed pipevd consumed through find_package(pipevd) and pkg-config"
