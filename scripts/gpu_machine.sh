#!/bin/bash
# tests/gpu_check.sh on a GPU machine that has CUDA but no MPI and no
# network (the device machines some sessions are lent): Debian's Open MPI
# packages, carried as .deb files, are unpacked into a folder of their own
# (never over /), and the build carried beside them runs with them.
#
#   bash scripts/gpu_machine.sh DEBDIR [OUTDIR [COMMAND...]]
#
# With COMMAND, that runs in the same environment instead (MPIRUN set).
#
# DEBDIR, made on a Debian 12 machine (the list is Open MPI's run-time
# closure beyond what a CUDA image has, and PAPI, which the library links):
#   apt-get download openmpi-bin openmpi-common libopenmpi3 libpmix2 libhwloc15 \
#     libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1 \
#     ibverbs-providers librdmacm1 libpsm2-2 libpsm-infinipath1 libnl-3-200 \
#     libnl-route-3-200 libnuma1 libmunge2 libpciaccess0 libxnvctrl0 libpapi7.0 \
#     libpfm4 libltdl7 libgfortran5
# Debian's Open MPI looks for its plugins and help files where Debian puts
# them: those folders are linked to the unpacked ones where the machine has
# none, and OPAL_PREFIX names them in any case.  OUTDIR gets the log.
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
debs=${1:?usage: gpu_machine.sh DEBDIR [OUTDIR [COMMAND...]]}
out=${2:-${TMPDIR:-/tmp}}
root=${STARCOLL_MPI_ROOT:-/tmp/starcoll-mpi}
mkdir -p "$root" "$out"
for f in "$debs"/*.deb; do
    dpkg -x "$f" "$root" || { echo "gpu_machine: cannot unpack $f"; exit 1; }
done
for d in usr/lib/x86_64-linux-gnu/openmpi usr/lib/x86_64-linux-gnu/pmix2 usr/share/openmpi etc/openmpi; do
    [ -e "/$d" ] || ln -s "$root/$d" "/$d" || echo "gpu_machine: cannot link /$d; OPAL_PREFIX alone must do"
done
# Without PMIx's own plugins (pcompress) some jobs hung at start-up in a
# rehearsal.  On the H200 image a PMIx of another version has that folder:
# its plugin fails to load with a warning per job, and the jobs run.
export OPAL_PREFIX=$root/usr PMIX_INSTALL_PREFIX=$root/usr/lib/x86_64-linux-gnu/pmix2 \
    PMIX_MCA_mca_base_component_path=$root/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix
export PATH=$root/usr/bin:$PATH MPIRUN=$root/usr/bin/mpirun.openmpi
# Only mpirun's own node: no ssh needed (a CUDA image has none).  Debian's
# defaults (etc/openmpi/openmpi-mca-params.conf), also where /etc/openmpi
# could not be linked: without them Open MPI takes UCX, and jobs here hung.
export OMPI_MCA_plm=isolated OMPI_MCA_pml=ob1 OMPI_MCA_mtl=^ofi OMPI_MCA_osc=^ucx,pt2pt \
    OMPI_MCA_btl=^uct,openib,ofi OMPI_MCA_btl_base_warn_component_unused=0
libs=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu/pmix2/lib
# The CUDA runtime and NCCL wherever the image keeps them (a toolkit, or
# Python's nvidia-* packages).
for name in libcudart.so libnccl.so.2; do
    found=$(find -H /usr/local/cuda/lib64 /usr/local/cuda/targets /usr/lib/x86_64-linux-gnu /opt /usr/local/lib \
        -name "$name*" \( -type f -o -type l \) 2>/dev/null | head -n 1)
    if [ -n "$found" ]; then libs=$libs:$(dirname "$found"); echo "gpu_machine: $name from $found"
    else echo "gpu_machine: no $name found"; fi
done
export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

nvidia-smi -L 2>&1 | head -n 4
"$MPIRUN" --version 2>&1 | head -n 1
hello=$("$MPIRUN" --oversubscribe --bind-to none -np 2 "$top/_build/plugin/starcoll-info" 2>&1)
if [ $? -ne 0 ]; then
    echo "gpu_machine: Open MPI cannot start two processes here:"
    echo "$hello" | head -n 30
    ldd "$root/usr/bin/orterun" | grep 'not found'
    exit 1
fi
echo "gpu_machine: mpirun starts processes"
if [ $# -gt 2 ]; then
    shift 2
    "$@"
    exit
fi
set -o pipefail
top_builddir=$top/_build srcdir=$top/tests bash "$top/tests/gpu_check.sh" 2>&1 | tee "$out/gpu_check.log"
