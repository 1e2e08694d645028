#!/bin/bash
# Sets up starcoll on a fresh Debian machine: installs the Debian packages
# that are missing (as root; otherwise prints the apt-get line to run),
# then builds out of tree in ./_build.  Sourced by demo.sh and check.sh;
# runs on its own too.
set -e
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PACKAGES="make gcc gfortran autoconf automake libtool pkg-config openmpi-bin libopenmpi-dev
  libpapi-dev papi-tools libcunit1-dev zlib1g-dev python3-mpi4py python3-numpy python3-sklearn
  gnuplot-nox stress-ng iproute2 procps mpich libmpich-dev"
missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "setup: installing$missing"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q >/dev/null
        apt-get install -y -q --no-install-recommends $missing >/dev/null
    else
        echo "setup: missing Debian packages; run as root:"
        echo "  apt-get update && apt-get install -y --no-install-recommends$missing"
        exit 1
    fi
fi
build="${STARCOLL_BUILD:-$top/_build}"
if [ ! -x "$top/configure" ]; then (cd "$top" && ./autogen.sh >/dev/null 2>&1); fi
mkdir -p "$build"
cd "$build"
# Open MPI's wrapper and launcher by name: installing MPICH (for
# scripts/check_mpich.sh) must not change which MPI this build uses.
mpi=()
[ -x /usr/bin/mpicc.openmpi ] && [ -x /usr/bin/mpirun.openmpi ] && mpi=(MPICC=mpicc.openmpi MPIRUN=mpirun.openmpi)
if [ ! -f Makefile ]; then "$top/configure" -q "${mpi[@]}"; fi
make -j"$(nproc)" >/dev/null
echo "setup: built in $build"
