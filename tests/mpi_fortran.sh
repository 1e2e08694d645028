#!/bin/bash
# Fortran codes are caught too: mpi_fortran.f90, built here with mpifort
# twice (use mpi; use mpi_f08 where the compiler has that module), calls
# MPI_ALLREDUCE on REAL and DOUBLE PRECISION arrays under the preload, at
# 4 ranks in hier (group 2) at the default STARCOLL_MIN_BYTES.  Checks:
# results exact, and the library's totals count the calls (eligible and
# pass-through), all eligible ones in hier: Open MPI's Fortran bindings
# bypass the C MPI_Allreduce, so this shows the Fortran entry points work.
#
# Then mpi_fortran_loop.f90, a training loop (fresh arrays, MPI_IALLREDUCE
# per array completed by each of Fortran's waits and tests, a loss, a
# blocking collective a step, every 10 steps a figure passed on point to
# point, a communicator split, a checkpoint by collective MPI-IO, a put
# between fences, a halo exchange by MPI_WIN_START to MPI_WIN_WAIT, a
# gossip step by neighbourhood collectives, an MPI_SENDRECV_REPLACE ring, or
# a master polling MPI_IPROBE and MPI_IMPROBE, taking by MPI_MPROBE and
# MPI_MRECV, answering by MPI_RSEND to ranks polling
# MPI_REQUEST_GET_STATUS, or a ring made by MPI_CART_CREATE or
# MPI_DIST_GRAPH_CREATE, a helper started by MPI_COMM_SPAWN, or a
# checkpoint by split collectives (MPI_FILE_WRITE_AT_ALL_BEGIN ...); 140 steps),
# both bindings, 4 ranks in quorum and
# in groups, rank 1 sleeping twice as long: its own checks (exact loss,
# collectives and figures, waits' indices, conservation and replicas after
# a flush), in its trace the fast ranks' compute under 0.75x rank 1's,
# and no stall line (Fortran's MPI_RECV and the rest bypass the C calls
# too: a rank blocked in one was not known to be away).  Once
# more in quorum with no exact call in the steps (nothing but the arrays
# and the waits; an MPI_REDUCE of the loop's time after them), bound to
# 60 s.  The bindings' waits and collectives call PMPI_ directly; without
# starcoll's Fortran entry points for them, the time a fast rank waited
# in them counted as compute, and read as long as the straggler's or
# longer, and that MPI_REDUCE held the straggler's last quorum rounds,
# which needed the ranks blocked in it: the job did not end (the stall
# rule fired after 10 s and did not free it).  Without the entry points of
# fortran_setup_io.c, the checkpoint, the fences and the halo exchange
# each cost that job a 10 s stall (33.5 s against 3.5 s at 70 steps);
# the neighbourhood collectives, another; before fortran_p2p.c had them,
# the MPI_SENDRECV_REPLACE ring and the master's exchange, two more.
# `use mpi_f08` reaches the probes, the tests and the topology makers
# through mpif.h's pmpi_X_ names; unanswered (stop 39's library), its
# master's exchange stalled.
. "$(dirname "$0")/mpi_testlib.sh"
. "$(dirname "$0")/decisions_lib.sh"

fc=${MPIFORT:-mpifort}
here="$(cd "$(dirname "$0")" && pwd)"
src="$here/mpi_fortran.f90"
if ! command -v "$fc" >/dev/null 2>&1; then
    echo "no Fortran MPI compiler ($fc): skipped"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
sc_need_library || finish

# build_fortran SOURCE EXE BINDING LABEL [mpifort flags]: EXE built from
# SOURCE unless there already; on failure a skip (mpi_f08: a compiler
# without the module) or a failure, and status 1.
build_fortran() {
    local source=$1 exe=$2 binding=$3 label=$4
    shift 4
    [ -x "$exe" ] && return 0
    "$fc" -cpp "$@" -o "$exe" "$source" >"$SC_WORK/build.log" 2>&1 && return 0
    if [ "$binding" = "use mpi_f08" ]; then
        skip "$label: $fc cannot build with $binding here"
    else
        fail "$label: $fc cannot build $source:"
        sed 's/^/    /' "$SC_WORK/build.log" | head -n 20
    fi
    return 1
}

# fortran_job BINDING [mpifort flags]: build one variant, run it, check it.
fortran_job() {
    local binding=$1
    shift
    local exe="$SC_WORK/mpi_fortran-${binding// /_}" label="Fortran ($binding) np=4 hier group=2"
    build_fortran "$src" "$exe" "$binding" "$label" "$@" || return
    local name="fortran-${binding// /_}"
    sc_job "$name" 4 -x STARCOLL_MODE=hier -x STARCOLL_GROUP=2 "$exe"
    sc_adopt "$name" $? "$label"
    sc_check_totals "$name" "$label" hier
}

# median_compute TRACE: the median of a trace's compute_s column.
median_compute() {
    res_trace_column "$1" compute_s | awk '{ print $2 }' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# loop_job BINDING MODE EXACT [mpifort flags]: the training loop, exact
# calls every EXACT steps (0: none), built and run.
loop_job() {
    local binding=$1 mode=$2 exact=$3
    shift 3
    local exe="$SC_WORK/mpi_fortran_loop-${binding// /_}" label="Fortran loop ($binding) np=4 $mode, rank 1 2x slow"
    if [ "$exact" = 0 ]; then label="$label, no exact call"; fi
    build_fortran "$here/mpi_fortran_loop.f90" "$exe" "$binding" "$label" "$@" || return
    local name="fortran-loop-${binding// /_}-$mode-$exact"
    SC_RUN_TIMEOUT=60 sc_job "$name" 4 -x STARCOLL_MODE="$mode" -x "STARCOLL_TRACE=$SC_WORK/$name.trace" "$exe" 140 "$exact"
    sc_adopt "$name" $? "$label"
    sc_preloading || return 0
    local slow r c worst=0 all=""
    slow=$(median_compute "$SC_WORK/$name.trace.1")
    if [ -z "$slow" ]; then
        fail "$label: no trace from rank 1 ($SC_WORK/$name.trace.1)"
        return
    fi
    for r in 0 2 3; do
        c=$(median_compute "$SC_WORK/$name.trace.$r")
        all="$all rank $r ${c:-none}"
        awk -v c="${c:-9}" -v s="$slow" 'BEGIN { exit !(c < 0.75 * s) }' || worst=1
    done
    if [ "$worst" = 0 ]; then
        ok "$label: time blocked in Fortran waits and collectives is waiting: median compute per step$all s, rank 1 $slow s"
    else
        fail "$label: fast ranks' median compute per step$all s is not under 0.75x rank 1's $slow s: their time blocked in Fortran waits or collectives counted as compute"
    fi
    local said
    said=$(grep -c "made no progress" "$SC_WORK/$name.err")
    if [ "$said" = 0 ]; then
        ok "$label: no round waited for a rank blocked in a Fortran call (no stall line)"
    else
        fail "$label: $said stall line(s): a round waited for a rank blocked in a Fortran call starcoll did not see"
        sc_show "$name"
    fi
}

fortran_job "use mpi"
fortran_job "use mpi_f08" -DSC_USE_MPI_F08
for mode in quorum groups; do
    loop_job "use mpi" "$mode" 1
    loop_job "use mpi_f08" "$mode" 1 -DSC_USE_MPI_F08
done
loop_job "use mpi" quorum 0
loop_job "use mpi_f08" quorum 0 -DSC_USE_MPI_F08
finish
