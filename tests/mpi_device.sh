#!/bin/bash
# MPI_Allreduce on CUDA device buffers (issue 12, first part), without a
# GPU: tests/fakecuda/libcuda.so.1 stands in for the driver, its "device
# memory" pages the CPU cannot touch, so a device pointer that reached MPI
# unstaged would fault.  mpi_tolerant --device reduces its gradients from
# and into such buffers: in sync and hier (exact: its conservation and
# replica checks hold step by step) and in quorum, groups and auto with and
# without a persistent straggler (conservation, replicas bitwise equal after
# a flush, every return code), in place too; the report counts the staged
# calls.  First, without starcoll, the same job must fault: the test can fail.
# With SC_DEVICE_REAL=1 (tests/gpu_check.sh, on a machine with a GPU) the
# buffers are cudaMalloc's, the ranks share the GPU, and that first check
# is left out.
. "$(dirname "$0")/mpi_testlib.sh"
sc_need_library || finish
prog="$top_builddir/tests/mpi_tolerant"
sc_need_program "$prog" || finish
if [ "${SC_DEVICE_REAL:-0}" = 1 ]; then
    libpath=${LD_LIBRARY_PATH:-}
else
    fake=$(cd "$top_builddir/tests" && pwd)/fakecuda
    libpath=$fake
    if [ ! -f "$fake/libcuda.so.1" ]; then
        fail "the CUDA driver's stand-in is not built ($fake/libcuda.so.1: make check builds it)"
        finish
    fi
fi
if ! sc_preloading; then
    skip "device buffers: SC_NO_PRELOAD=1, and without starcoll they fault by design"
    finish
fi

if [ "${SC_DEVICE_REAL:-0}" != 1 ]; then
    sc_job_plain device-no-starcoll 2 -x "LD_LIBRARY_PATH=$libpath" "$prog" --device --steps 2
    rc=$?
    if [ "$rc" -ne 0 ]; then ok "without starcoll, device buffers handed to MPI fault (exit $rc): the stand-in's memory is not host memory"
    else fail "without starcoll the device-buffer job succeeded: the stand-in does not guard its memory, so the checks below prove nothing"; fi
fi

# device_job NAME MODE [mpi_tolerant options]: 4 ranks.
device_job() {
    local name=$1 mode=$2
    shift 2
    sc_job "$name" 4 -x "STARCOLL_MODE=$mode" -x "LD_LIBRARY_PATH=$libpath" -x STARCOLL_QUORUM=3 \
        "$prog" --device --steps 30 "$@"
    sc_adopt "$name" $? "$name"
    local staged
    staged=$(sed -nE 's/^@ Device    : ([0-9]+) eligible calls on CUDA device buffers.*/\1/p' "$SC_WORK/$name.report")
    if [ "${staged:-0}" -gt 0 ]; then ok "$name: the report counts $staged calls staged from device buffers"
    else fail "$name: the report counts no call on device buffers"; sc_show "$name"; fi
}
for mode in sync hier quorum groups auto; do
    device_job "device-$mode-none" "$mode" --pattern none
    device_job "device-$mode-persistent" "$mode" --pattern persistent
done
device_job device-sync-in-place sync --pattern none --in-place
device_job device-quorum-in-place quorum --pattern persistent --in-place --double
device_job device-auto-two-comms auto --pattern persistent --two-comms
finish
