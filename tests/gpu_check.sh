#!/bin/bash
# The device-buffer checks on a machine with a GPU (issue 12), one prepared
# command, at most a few minutes: mpi_device.sh with cudaMalloc'ed buffers
# (mpi_tolerant --device through the CUDA runtime), 4 ranks sharing the GPU,
# every mode: conservation, replicas bitwise equal, return codes, the calls
# counted as staged.  Needs the build (./_build), Open MPI's mpirun (on PATH,
# or unpacked from Debian's packages with OPAL_PREFIX set) and the CUDA
# runtime on LD_LIBRARY_PATH (default /usr/local/cuda/lib64).  Prints
# "N passed, N failed"; says "skip" and stops when no device is usable.
#
#   top_builddir=_build srcdir=tests bash tests/gpu_check.sh
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../_build}" "${srcdir:=$here}"
export top_builddir srcdir
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
info=$("$top_builddir/plugin/starcoll-info" 2>&1 | sed -n 's/^ *CUDA driver: //p')
echo "CUDA driver: ${info:-starcoll-info did not run}"
case $info in
    *"device(s) usable"*) ;;
    *) echo "skip - no usable CUDA device here"; echo "0 passed, 0 failed, 1 skipped"; exit 0 ;;
esac
SC_DEVICE_REAL=1 exec bash "$here/mpi_device.sh"
