#!/bin/bash
# The device-buffer checks on a machine with a GPU (issue 12), one prepared
# command, at most a few minutes.  Ranks share the one GPU, buffers are
# cudaMalloc's (benchmarks/device_memory.c, the CUDA runtime loaded at run
# time):
#  - mpi_device.sh with real buffers: mpi_tolerant --device in every mode,
#    with and without a persistent straggler (conservation, replicas
#    bitwise equal, return codes, the report's device calls); mpi_exact -d
#    in sync and hier (every result against PMPI_Allreduce on host copies,
#    float and double, counts 1 to 16M, in place, host/device mixed);
#    starcoll_train --device (a CUDA-aware training loop) at 2 and 4 ranks
#    in sync and auto with one rank 2x slow; NCCL refused for ranks that
#    share a GPU, and the report saying so;
#  - starcoll_allreduce --device against host buffers, validated: the
#    latency ratios at 4 KiB, 1 MiB and 64 MiB (sync, 2 ranks); host
#    buffers in a process that loaded CUDA over one that did not, heap
#    buffers (known without asking the driver) and mmap'ed ones (asked,
#    or not under STARCOLL_CUDA=off), and the report's figure for the
#    driver's answers;
#  - one rank persistently 2x slow: the fast ranks' step in each mode over
#    sync's without a straggler (starcoll_loop, as benchmarks/tolerance),
#    device buffers beside host buffers, and the training loop's time to
#    accuracy, auto over sync.
# Needs the build (./_build), Open MPI's mpirun (MPIRUN, default mpirun;
# scripts/gpu_machine.sh unpacks Debian's packages where it is missing) and
# the CUDA runtime on LD_LIBRARY_PATH (default /usr/local/cuda/lib64).
# Prints "N passed, N failed"; says "skip" and stops when no device is
# usable.
#
#   top_builddir=_build srcdir=tests bash tests/gpu_check.sh
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../_build}" "${srcdir:=$here}" "${MPIRUN:=mpirun}"
export top_builddir srcdir MPIRUN
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
. "$here/mpi_env.sh"   # run_sc: mpirun as the suite runs it, starcoll preloaded
info=$("$top_builddir/plugin/starcoll-info" 2>&1)
grep -E 'CUDA|NCCL' <<<"$info" | sed 's/^ */starcoll-info: /'
case $(sed -n 's/^ *CUDA driver: //p' <<<"$info") in
    *"device(s) usable"*) ;;
    *) echo "skip - no usable CUDA device here"; echo "0 passed, 0 failed, 1 skipped"; exit 0 ;;
esac
out_dir=${TMPDIR:-/tmp}
# The trainer looks for the digits where Debian's python3-sklearn puts
# them; a GPU image's scikit-learn may sit in a virtual environment, and
# without the file the trainer falls back to synthetic data.
train_args="--compute-ms 10"
digits=/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz
[ -f "$digits" ] || digits=$(python3 -c 'import os, sklearn; print(os.path.join(os.path.dirname(sklearn.__file__), "datasets", "data", "digits.csv.gz"))' 2>/dev/null)
if [ -n "$digits" ] && [ -f "$digits" ]; then train_args="$train_args --data $digits"; echo "training data: $digits"
else echo "training data: synthetic (no digits.csv.gz of scikit-learn found)"; fi
SC_DEVICE_REAL=1 TRAIN_RANKS="2 4" TRAIN_ARGS="$train_args" bash "$here/mpi_device.sh" | tee "$out_dir/gpu_check.device.out"
read -r passed failed < <(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed.*/\1 \2/p' "$out_dir/gpu_check.device.out" | tail -n 1)
passed=${passed:-0} failed=${failed:-1}
ok()   { passed=$((passed + 1)); echo "ok   - $*"; }
fail() { failed=$((failed + 1)); echo "FAIL - $*"; }

# sc_run NP MODE WHERE(host|device) PROGRAM [options]: one benchmark job,
# its output on stdout; device buffers with PROGRAM's --device.  RUN_REPORT:
# where the report goes (default none); RUN_CUDA: STARCOLL_CUDA's value.
sc_run() {
    local np=$1 mode=$2 where=$3
    shift 3
    run_sc "$np" -x LD_LIBRARY_PATH -x STARCOLL_MODE="$mode" -x STARCOLL_REPORT="${RUN_REPORT:-none}" \
        ${RUN_CUDA:+-x STARCOLL_CUDA="$RUN_CUDA"} "$@" \
        $([ "$where" = device ] && echo --device) 2>&1
}
bench="$top_builddir/benchmarks/starcoll_allreduce"
bench_run() { local np=$1 mode=$2 where=$3; shift 3; sc_run "$np" "$mode" "$where" "$bench" "$@"; }

# Latency of MPI_Allreduce on device buffers over host buffers, sync, 2
# ranks sharing the GPU (staged: NCCL refuses two ranks on one GPU), every
# result validated: 4 KiB, 1 MiB and 64 MiB.
declare -A lat
for where in host device; do
    out=$(bench_run 2 sync $where -c -m 4096:67108864 -i 50 -x 5)
    rc=$?
    echo "$out" | sed "s/^/    $where: /"
    if [ $rc -eq 0 ] && ! grep -q Fail <<<"$out"; then ok "latency, $where buffers: every size valid"
    else fail "latency, $where buffers: exit $rc or a result not valid"; fi
    for size in 4096 1048576 67108864; do lat[$where.$size]=$(awk -v s=$size '$1 == s {print $2}' <<<"$out"); done
done
echo "device-buffer latency over host-buffer latency (sync, 2 ranks):"
for size in 4096 1048576 67108864; do
    awk -v s=$size -v h="${lat[host.$size]}" -v d="${lat[device.$size]}" \
        'BEGIN { printf "    %9d B: host %s us, device %s us, ratio %s\n", s, h, d, (h > 0 && d > 0) ? sprintf("%.2f", d / h) : "?" }'
done

# What telling device buffers apart costs on host buffers: host-buffer
# latency under starcoll in a process that has loaded CUDA and made a
# context over one that has not, sync, 2 ranks, interleaved 3 times,
# medians; 4 KiB and 1 MiB.  Heap buffers (malloc's) are known for host
# memory without asking the driver; buffers in pages of their own
# (--host-mapped, as large arrays are) are asked about, so their ratio is
# what the driver's answers cost, unless STARCOLL_CUDA=off (mapped.off).
declare -A lat_host
kinds="heap.plain heap.loaded mapped.plain mapped.loaded mapped.off"
for round in 1 2 3; do
    for kind in $kinds; do
        out=$(RUN_CUDA=$([ ${kind#*.} = off ] && echo off) bench_run 2 sync host -c -m 4096:1048576 -i 1000 -x 100 \
            $([ ${kind#*.} != plain ] && echo --cuda-loaded) $([ ${kind%.*} = mapped ] && echo --host-mapped))
        rc=$?
        if [ $rc -ne 0 ] || grep -q Fail <<<"$out"; then fail "host buffers ($kind): exit $rc or a result not valid"; fi
        for size in 4096 1048576; do
            lat_host[$kind.$size]="${lat_host[$kind.$size]} $(awk -v s=$size '$1 == s {print $2}' <<<"$out")"
        done
    done
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{v[NR] = $1} END {print NR ? v[int((NR + 1) / 2)] : ""}'; }
echo "host buffers under starcoll, CUDA loaded over not loaded (sync, 2 ranks, medians of 3):"
for kind in heap.loaded mapped.loaded mapped.off; do   # each over its buffers' plain kind
    case $kind in heap.*) m="heap, not asked" ;; *.loaded) m="mmap'ed, asked" ;; *) m="mmap'ed, off" ;; esac
    for size in 4096 1048576; do
        awk -v m="$m" -v s=$size -v p="$(median "${lat_host[${kind%.*}.plain.$size]}")" \
            -v l="$(median "${lat_host[$kind.$size]}")" \
            'BEGIN { printf "    %-15s %9d B: not loaded %s us, loaded %s us, ratio %s\n", m, s, p, l, (p > 0 && l > 0) ? sprintf("%.2f", l / p) : "?" }'
    done
done
# What the report says the driver's answers cost, one such job's worth.
rm -f "$out_dir/gpu_check.asked.report"
out=$(RUN_REPORT=$out_dir/gpu_check.asked.report bench_run 2 sync host -c -m 4096:4096 -i 1000 -x 100 --cuda-loaded \
    --host-mapped)
asked=$(grep '^@ Device    : the CUDA driver was asked about' "$out_dir/gpu_check.asked.report" 2>/dev/null)
if [ -n "$asked" ] && ! grep -q Fail <<<"$out"; then ok "mmap'ed host buffers, CUDA loaded: report: ${asked#@ Device    : }"
else fail "mmap'ed host buffers, CUDA loaded: the report has no line on host pointers asked of the driver"; fi

# One rank persistently 2x slow, 4 ranks, starcoll_loop (20 ms of compute
# a step, then 256K, 128K and 256K gradients, 100 steps), as
# benchmarks/tolerance measures it: the fast ranks' time per step over
# their time with no straggler under sync, device buffers beside host ones.
loop="$top_builddir/benchmarks/starcoll_loop"
declare -A fast
for where in host device; do
    for run in sync.none sync.persistent quorum.persistent groups.persistent auto.persistent; do
        mode=${run%.*} spec=${run#*.}
        [ "$spec" = persistent ] && spec=persistent,factor=2
        out=$(sc_run 4 "$mode" "$where" "$loop" --steps 100 --straggler "$spec")
        rc=$?
        fast[$where.$run]=$(sed -nE 's/^loop: .* fast_step_ms=([0-9.]+) .*/\1/p' <<<"$out")
        if [ $rc -eq 0 ] && [ -n "${fast[$where.$run]}" ]; then ok "straggler loop, $where buffers, $mode, $spec: $(grep '^loop:' <<<"$out")"
        else fail "straggler loop, $where buffers, $mode, $spec: exit $rc"; echo "$out" | tail -n 5 | sed 's/^/    /'; fi
    done
done
echo "one rank 2x slow (4 ranks): the fast ranks' step over sync's with no straggler"
for where in host device; do
    printf '    %-7s' "$where:"
    for mode in sync quorum groups auto; do
        awk -v m=$mode -v b="${fast[$where.sync.none]}" -v t="${fast[$where.$mode.persistent]}" \
            'BEGIN { printf " %s %s", m, (b > 0 && t > 0) ? sprintf("%.2f", t / b) : "?" }'
    done
    echo " (no straggler, sync: ${fast[$where.sync.none]:-?} ms a step)"
done
echo "time to 0.85 accuracy, device-buffer gradients, rank last 2x slow: auto over sync"
for np in 2 4; do
    sync_tta=$(sed -nE "s/^ok   - device-train-$np-sync: .* tta_s=([0-9.]+) .*/\1/p" "$out_dir/gpu_check.device.out")
    auto_tta=$(sed -nE "s/^ok   - device-train-$np-auto: .* tta_s=([0-9.]+) .*/\1/p" "$out_dir/gpu_check.device.out")
    awk -v n=$np -v s="$sync_tta" -v a="$auto_tta" \
        'BEGIN { printf "    %d ranks: sync %s s, auto %s s, ratio %s\n", n, s, a, (s > 0 && a > 0) ? sprintf("%.2f", a / s) : "?" }'
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
