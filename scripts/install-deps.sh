#!/usr/bin/env bash
# Installs what pipevd needs on a Debian machine (as root): compilers, CMake, OpenMPI, ScaLAPACK
# (OpenMPI flavour), OpenBLAS/LAPACK, GoogleTest, ELPA (a comparison peer in bench/), ScaLAPACK's
# own testers (scalapack-mpi-test: xdsep runs through pipevd in the tests). Only what is
# missing; no network but Debian's.
set -euo pipefail
pkgs=(build-essential gfortran cmake pkg-config openmpi-bin libopenmpi-dev libscalapack-openmpi-dev
      libopenblas-dev liblapack-dev libgtest-dev libelpa-dev scalapack-mpi-test)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
