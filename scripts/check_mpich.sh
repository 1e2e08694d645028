#!/bin/bash
# The library built a second time, against MPICH (Debian's mpich and
# libmpich-dev), in ./_build_mpich, and its exactness and tolerant-mode
# tests run under mpirun.mpich (make check-mpich; about 2 minutes here).
# The Open MPI build in ./_build is not touched: it is configured with
# mpicc.openmpi, whatever the mpicc alternative points to.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
build="${STARCOLL_MPICH_BUILD:-$top/_build_mpich}"
mkdir -p "$build"
cd "$build"
if [ ! -f Makefile ]; then "$top/configure" -q MPICC=mpicc.mpich MPIRUN=mpirun.mpich; fi
make -j"$(nproc)" >/dev/null
echo "check_mpich: built against $(sed -n 's/^#define SC_MPI_IMPL "\(.*\)"/\1/p' config.h) in $build"
exec make -s check-mpich
