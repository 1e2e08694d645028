#!/bin/bash
# The device-buffer checks on a machine with a GPU (issue 12), one prepared
# command, at most a few minutes: mpi_device.sh with cudaMalloc'ed buffers
# (mpi_tolerant --device through the CUDA runtime), 4 ranks sharing the GPU,
# every mode: conservation, replicas bitwise equal, return codes, the calls
# counted as staged; then starcoll_allreduce --device against host buffers,
# validated, with the latency ratios at 4 KiB, 1 MiB and 64 MiB.  Needs the build (./_build), Open MPI's mpirun (on PATH,
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
SC_DEVICE_REAL=1 bash "$here/mpi_device.sh" | tee "${TMPDIR:-/tmp}/gpu_check.device.out"
read -r dev_passed dev_failed < <(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed.*/\1 \2/p' "${TMPDIR:-/tmp}/gpu_check.device.out" | tail -n 1)

# Latency of MPI_Allreduce on device buffers over host buffers, sync, 2
# ranks sharing the GPU (staged: NCCL refuses two ranks on one GPU), every
# result validated: 4 KiB, 1 MiB and 64 MiB.
bench="$top_builddir/benchmarks/starcoll_allreduce"
lib="$top_builddir/plugin/.libs/libstarcoll.so"
lat_passed=0 lat_failed=0
declare -A lat
for where in host device; do
    out=$(mpirun --oversubscribe --bind-to none -np 2 -x LD_PRELOAD="$lib" -x LD_LIBRARY_PATH -x STARCOLL_MODE=sync \
        -x STARCOLL_REPORT=none "$bench" -c -m 4096:67108864 -i 50 -x 5 $([ $where = device ] && echo --device) 2>&1)
    rc=$?
    echo "$out" | sed "s/^/    $where: /"
    if [ $rc -eq 0 ] && ! grep -q Fail <<<"$out"; then lat_passed=$((lat_passed + 1)); echo "ok   - latency, $where buffers: every size valid"
    else lat_failed=$((lat_failed + 1)); echo "FAIL - latency, $where buffers: exit $rc or a result not valid"; fi
    for size in 4096 1048576 67108864; do lat[$where.$size]=$(awk -v s=$size '$1 == s {print $2}' <<<"$out"); done
done
echo "device-buffer latency over host-buffer latency (sync, 2 ranks):"
for size in 4096 1048576 67108864; do
    awk -v s=$size -v h="${lat[host.$size]}" -v d="${lat[device.$size]}" \
        'BEGIN { printf "    %9d B: host %s us, device %s us, ratio %s\n", s, h, d, (h > 0 && d > 0) ? sprintf("%.2f", d / h) : "?" }'
done
echo "$((${dev_passed:-0} + lat_passed)) passed, $((${dev_failed:-1} + lat_failed)) failed"
[ "$((${dev_failed:-1} + lat_failed))" -eq 0 ]
