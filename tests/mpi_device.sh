#!/bin/bash
# MPI_Allreduce on CUDA device buffers (issue 12), without a GPU:
# tests/fakecuda/libcuda.so.1 stands in for the driver, its "device
# memory" pages the CPU cannot touch, so a device pointer that reached MPI
# unstaged would fault.  mpi_tolerant --device reduces its gradients from
# and into such buffers, and beside them a loss, an int MPI_MAX and an
# MPI_2INT MPI_MAXLOC on device buffers, checked exactly every step: in
# sync and hier (exact: its conservation and replica checks hold step by
# step) and in quorum, groups and auto with and without a persistent
# straggler (conservation, replicas bitwise equal after a flush, every
# return code), in place, on two communicators, from a communication
# thread without a CUDA context.  The report's device calls must add up
# (eligible by mode, the rest exact), and with the stand-in every call
# stages in pinned memory, copied on starcoll's stream.  Then mpi_exact -d
# (every result against PMPI on host copies) and a CUDA-aware training
# loop; NCCL, last.  First, without starcoll, the same job must fault: the
# test can fail.
# With SC_DEVICE_REAL=1 (tests/gpu_check.sh, on a machine with a GPU) the
# buffers are cudaMalloc's, the ranks share the GPU, and the checks that
# need the stand-in's counters are left out.
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

# report_device_calls NAME: the report's count of calls on device buffers
report_device_calls() { sed -nE 's/^@ Device    : ([0-9]+) calls on CUDA.*/\1/p' "$SC_WORK/$1.report" | head -n 1; }

# device_job NAME MODE [mpi_tolerant options]: 4 ranks (DEVICE_LIBS:
# where the driver's and NCCL's stand-ins are, default the driver's only).  The report's
# count of calls on device buffers is checked: the gradients (eligible, by
# mode) and the loss, flag and argmax beside them (exact through MPI).
device_job() {
    local name=$1 mode=$2
    shift 2
    sc_job "$name" 4 -x "STARCOLL_MODE=$mode" -x "LD_LIBRARY_PATH=${DEVICE_LIBS:-$libpath}" -x STARCOLL_QUORUM=3 \
        ${DEVICE_ENV:+-x "$DEVICE_ENV"} "$prog" --device --steps 30 "$@"
    sc_adopt "$name" $? "$name"
    local rep="$SC_WORK/$name.report" line total modes exact pinned eligible
    line=$(grep -m1 '^@ Device    : [0-9]* calls on CUDA device buffers' "$rep")
    total=$(report_device_calls "$name")
    modes=$(sed -nE 's/.*eligible ones (.*); [0-9]+ not eligible.*/\1/p' <<<"$line")
    exact=$(sed -nE 's/.*; ([0-9]+) not eligible, exact through MPI.*/\1/p' <<<"$line")
    pinned=$(sed -nE 's/^@ Device    : staged through host memory \(([0-9]+) calls in pinned memory.*/\1/p' "$rep")
    eligible=$(tr ',' '\n' <<<"$modes" | awk '{s += $1} END {print s + 0}')
    if [ "${total:-0}" -gt 0 ] && [ "${exact:-0}" -gt 0 ] && [ $((eligible + exact)) -eq "$total" ]; then
        ok "$name: the report counts $total calls on device buffers: $modes; $exact exact through MPI"
    else
        fail "$name: the report's device calls do not add up (total ${total:-none}, eligible '$modes', exact ${exact:-none})"
        sc_show "$name"
    fi
    if grep -q '^@ Device    : NCCL' "$rep"; then ok "$name: the report says whether NCCL was used: $(sed -n 's/^@ Device    : NCCL//p' "$rep" | cut -c1-100)"
    else fail "$name: the report has no NCCL line"; fi
    if [ "${SC_DEVICE_REAL:-0}" != 1 ]; then   # the stand-in pins and has streams: every staged call uses them
        local asyncs nccl
        asyncs=$(sed -n 's/^device: async_copies //p' "$SC_WORK/$name.out")
        nccl=$(sed -nE 's/^@ Device    : NCCL: ([0-9]+) eligible calls.*/\1/p' "$rep")
        local staged=$total   # with NCCL, only the calls not eligible stage
        [ -n "$nccl" ] && staged=$exact
        if [ "${pinned:-0}" -eq "${staged:-x}" ] && [ "${asyncs:-0}" -gt 0 ]; then
            ok "$name: every staged call in pinned memory, copied on starcoll's stream ($asyncs copies on rank 0)"
        else fail "$name: pinned ${pinned:-none} of ${total:-none} calls (${nccl:-none} through NCCL), ${asyncs:-no} copies on a stream"; fi
    fi
}
for mode in sync hier quorum groups auto; do
    device_job "device-$mode-none" "$mode" --pattern none
    device_job "device-$mode-persistent" "$mode" --pattern persistent
done
device_job device-sync-in-place sync --pattern none --in-place
device_job device-quorum-in-place quorum --pattern persistent --in-place --double
device_job device-auto-two-comms auto --pattern persistent --two-comms
# A communication thread that never called CUDA has no current context:
# starcoll makes the buffers' own current for its copies.
device_job device-quorum-comm-thread quorum --pattern persistent --threads comm
if [ "${SC_DEVICE_REAL:-0}" != 1 ]; then
    pushes=$(sed -n 's/^device: pushes //p' "$SC_WORK/device-quorum-comm-thread.out")
    if [ "${pushes:-0}" -gt 0 ]; then ok "device-quorum-comm-thread: the copies ran in the buffers' context, pushed $pushes times on rank 0"
    else fail "device-quorum-comm-thread: no context was pushed for the communication thread's copies"; fi
fi
# Exactness in sync and hier against PMPI_Allreduce on host copies
# (mpi_exact -d): float and double sums, an int MAX and a MAXLOC, on world
# and a split, both buffers on the device, in place, send on the host and
# receive on the device, and the reverse; counts 1 to 1M with the stand-in,
# to 16M on a GPU; blocking, and nonblocking in sync.  The report counts
# every call as made on device buffers.
exact="$top_builddir/tests/mpi_exact"
exact_device_job() {   # exact_device_job NAME MODE [mpi_exact options]
    local name=$1 mode=$2 rc c calls
    shift 2
    local args=(-d "$@")
    [ "$mode" = hier ] && args+=(-t)   # hier rounds random-valued sums its own way (mpi_exact.sh)
    [ "${SC_DEVICE_REAL:-0}" = 1 ] || args+=(-m 1M)
    sc_job "$name" 4 -x "STARCOLL_MODE=$mode" -x "LD_LIBRARY_PATH=$libpath" "$exact" "${args[@]}"
    rc=$?
    c=$(sc_closing "$name")
    calls=$(report_device_calls "$name")
    if sc_program_passed "$name" "$rc" && [ "${calls:-0}" -eq $(($(sc_expect "$name" eligible) + $(sc_expect "$name" passthrough))) ]; then
        ok "$name: ${c% *} device-buffer results equal to PMPI_Allreduce on host copies (mpi_exact ${args[*]}), all $calls calls counted as on device buffers"
    else
        fail "$name: exit status $rc, mpi_exact says ${c:-nothing}, the report counts ${calls:-no} calls on device buffers"
        sc_show "$name"
    fi
}
if sc_need_program "$exact"; then
    exact_device_job device-exact-sync sync
    exact_device_job device-exact-hier hier
    exact_device_job device-exact-sync-nonblocking sync -n
fi
# A CUDA-aware training loop: starcoll_train --device hands MPI each
# layer's gradient in device memory, in sync and auto, one rank 2x slow.
# It must train (0.85 held-out accuracy), every rank stop (in sync at the
# same step; auto's ranks see the stop vote at their own steps), and every
# gradient call count as on device buffers.  TRAIN_RANKS and TRAIN_ARGS
# widen it (gpu_check.sh).
trainer="$top_builddir/benchmarks/starcoll_train"
train_device_job() {   # train_device_job NP MODE
    local np=$1 mode=$2 name="device-train-$1-$2" rc last calls steps ranks total same
    sc_job "$name" "$np" -x "STARCOLL_MODE=$mode" -x "LD_LIBRARY_PATH=$libpath" "$trainer" --device \
        --straggler persistent,factor=2 --target 0.85 --max-steps 1500 --max-seconds 100 ${TRAIN_ARGS:---compute-ms 2} --verbose
    rc=$?
    last=$(tail -n 1 "$SC_WORK/$name.out")
    calls=$(report_device_calls "$name")
    steps=$(sed -nE 's/^train: rank [0-9]+ stopped after ([0-9]+) steps.*/\1/p' "$SC_WORK/$name.err")
    ranks=$(grep -c . <<<"$steps") total=$(awk '{s += $1} END {print s + 0}' <<<"$steps")
    same=$(sort -u <<<"$steps" | grep -c .)
    if [ "$rc" -eq 0 ] && [[ $last =~ tta_s=[0-9] ]] && [ "$ranks" -eq "$np" ] && { [ "$mode" != sync ] || [ "$same" -eq 1 ]; } &&
        [ "${calls:-0}" -eq $((2 * total)) ]; then   # two layers a step, every rank
        ok "$name: trained on device-buffer gradients ($last), steps by rank $(echo $steps), $calls calls on device buffers"
    else
        fail "$name: exit $rc, '$last', steps by rank '$(echo $steps)', ${calls:-no} calls on device buffers"
        sc_show "$name"
    fi
}
if sc_need_program "$trainer"; then
    for np in ${TRAIN_RANKS:-4}; do
        train_device_job "$np" sync
        train_device_job "$np" auto
    done
fi
# What recognising device buffers costs host buffers, and STARCOLL_CUDA=off.
# Host buffers in pages of their own (starcoll_allreduce --host-mapped), in
# processes that loaded CUDA and made a context (--cuda-loaded), with each
# of the stand-in's answers made to cost 20 us (FAKE_CUDA_QUERY_NS): the
# report must count the pointers asked (both of every call's: 5 sizes, 22
# calls each, 2 ranks) and time them at no less than that.  With
# STARCOLL_CUDA=off none is asked, and NCCL is not used either (its
# stand-in is on the path: under sync a rank's host buffers would ride
# through it), so the report has no @ Device line; its policy line says
# cuda=off, and every result is still valid.
bench="$top_builddir/benchmarks/starcoll_allreduce"
host_asked_job() {   # host_asked_job NAME [mpirun options]
    local name=$1
    shift
    sc_job "$name" 2 -x STARCOLL_MODE=sync -x "LD_LIBRARY_PATH=${HOST_ASKED_LIBS:-$libpath}" -x FAKE_CUDA_QUERY_NS=20000 "$@" \
        "$bench" -c -m 4096:65536 -i 20 -x 2 --cuda-loaded --host-mapped
    local rc=$?
    if [ $rc -eq 0 ] && grep -q Pass "$SC_WORK/$name.out" && ! grep -q Fail "$SC_WORK/$name.out"; then
        ok "$name: every result valid on mmap'ed host buffers beside a CUDA context"
    else fail "$name: exit $rc, or a result not valid"; sc_show "$name"; fi
}
if [ "${SC_DEVICE_REAL:-0}" != 1 ] && sc_need_program "$bench"; then
    host_asked_job device-host-asked
    rep="$SC_WORK/device-host-asked.report"
    asked=$(sed -nE 's/^@ Device    : the CUDA driver was asked about ([0-9]+) host pointers.*/\1/p' "$rep")
    each=$(sed -nE 's/^@ Device    : the CUDA driver was asked about .*, ([0-9.]+) us each.*/\1/p' "$rep")
    if [ "${asked:-0}" -ge 440 ] && awk -v e="${each:-0}" 'BEGIN { exit !(e >= 20) }' &&
        grep -q 'STARCOLL_CUDA=off would not ask' "$rep"; then
        ok "device-host-asked: the report counts $asked host pointers asked of the driver, $each us each"
    else fail "device-host-asked: the report says: $(grep 'asked about' "$rep" || echo nothing of host pointers asked)"; fi
    HOST_ASKED_LIBS=$libpath:$(cd "$top_builddir/tests" && pwd)/fakenccl host_asked_job device-host-cuda-off \
        -x STARCOLL_CUDA=off
    rep="$SC_WORK/device-host-cuda-off.report"
    if grep -q '^@ Policy    : .* cuda=off' "$rep" && ! grep -q '^@ Device' "$rep"; then
        ok "device-host-cuda-off: with STARCOLL_CUDA=off no pointer was asked of the driver, NCCL was not used, and the policy line says so"
    else fail "device-host-cuda-off: the report says: $(grep -E '^@ (Policy|Device)' "$rep")"; sc_show device-host-cuda-off; fi
fi
# Ranks that disagree on STARCOLL_CUDA: rank 1 says off.  Every rank must
# look for device buffers (and run sync, as for any disagreement): a rank
# not looking would hand MPI its device gradients, and fault.
cuda_wrapper='[ "${OMPI_COMM_WORLD_RANK:-0}" = 1 ] && export STARCOLL_CUDA=off
export LD_PRELOAD="$SC_PRELOAD_LIB"; exec "$@"'
sc_job_plain device-cuda-off-rank1 4 -x STARCOLL_MODE=quorum -x "LD_LIBRARY_PATH=$libpath" -x "SC_PRELOAD_LIB=$SC_LIB" \
    -x "STARCOLL_REPORT=$SC_WORK/device-cuda-off-rank1.report" sh -c "$cuda_wrapper" sh "$prog" --device --steps 10 \
    --pattern none
sc_adopt device-cuda-off-rank1 $? "device-cuda-off-rank1"
if grep -q '^starcoll: ranks disagree on the policy' "$SC_WORK/device-cuda-off-rank1.err" &&
    grep -q '^@ Device    : [0-9]* calls on CUDA device buffers' "$SC_WORK/device-cuda-off-rank1.report"; then
    ok "device-cuda-off-rank1: one rank with STARCOLL_CUDA=off: the ranks disagree, and every rank still stages device buffers"
else fail "device-cuda-off-rank1: stderr: $(grep '^starcoll:' "$SC_WORK/device-cuda-off-rank1.err" | head -3)"; sc_show device-cuda-off-rank1; fi

# NCCL (plugin/nccl.h) for sync and hier: tests/fakenccl/libnccl.so.2
# stands in, reducing through shared memory from the driver stand-in's
# pages.  Every eligible call goes through it, counted by the report and by
# the stand-in; a rank whose gradients are on the host rides through
# device memory; ranks sharing one GPU, or NCCL that cannot start (here the
# real libnccl.so.2 without a GPU, where it is installed), stage instead
# and the report says why.  With a real GPU the ranks share it, which NCCL
# refuses: only that is checked there.
nccl_job() {   # nccl_job NAME MODE WANT(nccl|staged) WHY-PATTERN [mpi_tolerant options]
    local name=$1 mode=$2 want=$3 why=$4
    shift 4
    DEVICE_LIBS=${DEVICE_LIBS:-$libpath:$fakenccl} device_job "$name" "$mode" "$@"
    local rep="$SC_WORK/$name.report" calls fake eligible
    calls=$(sed -nE 's/^@ Device    : NCCL: ([0-9]+) eligible calls.*/\1/p' "$rep")
    fake=$(sed -n 's/^device: nccl_allreduces //p' "$SC_WORK/$name.out")
    eligible=$(sed -nE 's/.*eligible ones ([0-9]+) (sync|hier);.*/\1/p' "$rep")
    if [ "$want" = nccl ]; then
        # every eligible call, gradients and flush, on every rank: 4 x 31 x 3 (two communicators: more)
        if [ "${calls:-0}" -ge 372 ] && [ "${fake:-0}" -ge 93 ]; then
            ok "$name: $calls eligible calls through NCCL ($fake ncclAllReduce on rank 0)"
        else fail "$name: NCCL calls ${calls:-none} in the report, ${fake:-none} in the stand-in"; sc_show "$name"; fi
    elif grep -qE "^@ Device    : NCCL not used: .*$why" "$rep" && [ -z "$calls" ]; then
        ok "$name: staged through host memory, and the report says why: $(sed -n 's/^@ Device    : NCCL not used: //p' "$rep")"
    else fail "$name: want NCCL not used ($why); the report says: $(grep '^@ Device    : NCCL' "$rep")"; sc_show "$name"; fi
}
# What starcoll-info finds: NCCL built out, or a libnccl.so.2 it can load.
info=$("$top_builddir/plugin/starcoll-info" 2>/dev/null)
real_nccl=0
grep -q 'NCCL: libnccl.so.2 version' <<<"$info" && real_nccl=1
if grep -q -- '--without-nccl' <<<"$info"; then
    skip "NCCL: this build was configured --without-nccl, so it never loads NCCL"
elif [ "${SC_DEVICE_REAL:-0}" = 1 ]; then
    # Every rank on the one GPU: NCCL refuses that, so sync stages, and
    # the report says why.
    if [ $real_nccl = 1 ]; then
        DEVICE_LIBS=$libpath nccl_job device-real-nccl-shared-gpu sync staged "share one GPU" --pattern none
    else
        skip "NCCL: no libnccl.so.2 on LD_LIBRARY_PATH here"
    fi
else
    fakenccl=$(cd "$top_builddir/tests" && pwd)/fakenccl
    if [ ! -f "$fakenccl/libnccl.so.2" ]; then
        fail "NCCL's stand-in is not built ($fakenccl/libnccl.so.2: make check builds it)"
    else
        nccl_job device-nccl-sync-none sync nccl "" --pattern none
        nccl_job device-nccl-hier-persistent hier nccl "" --pattern persistent
        nccl_job device-nccl-sync-in-place sync nccl "" --pattern none --in-place --double
        nccl_job device-nccl-sync-host-rank sync nccl "" --pattern none --host-rank 2
        nccl_job device-nccl-sync-two-comms sync nccl "" --pattern persistent --two-comms
        nccl_job device-nccl-sync-comm-thread sync nccl "" --pattern none --threads comm
        DEVICE_ENV=FAKE_CUDA_SHARED_GPU=1 nccl_job device-nccl-shared-gpu sync staged "share one GPU" --pattern none
        nccl_job device-nccl-quorum quorum staged "the policy is tolerant" --pattern persistent
        # The real NCCL, without a GPU: it cannot start.  Where starcoll
        # can load it, not where the linker's cache lists it (a stale cache
        # names files that are gone).
        if [ $real_nccl = 1 ]; then
            DEVICE_LIBS=$libpath nccl_job device-real-nccl-no-gpu sync staged "ncclCommInitRank failed|ncclGetUniqueId failed" --pattern none
        else
            skip "the real NCCL without a GPU: starcoll cannot load libnccl.so.2 here"
        fi
    fi
fi
finish
