#!/bin/bash
# The library built against MPICH (configure MPICC=mpicc.mpich
# MPIRUN=mpirun.mpich; scripts/check_mpich.sh), under MPICH's launcher:
# exactness (mpi_exact against PMPI_Allreduce) in sync and hier at 2 and 4
# ranks, pass-through exactness in quorum, groups and auto; the tolerant
# modes at 4 ranks with and without a persistent straggler (conservation,
# replicas bitwise equal after a flush, every return code: mpi_tolerant's
# own checks, and the staleness bound).  MPICH busy-polls while it waits,
# so on 2 cores the rank counts stay at 4, and the straggler table is not
# checked here: 4 ranks polling on 2 cores spend 50-100 ms a step inside the
# library, and a rank 10 ms slower is not a straggler beside that.  Fortran and mpi4py are Open MPI's only on Debian: not run here.
. "$(dirname "$0")/mpi_testlib.sh"
sc_need_library || finish
exact="$top_builddir/tests/mpi_exact"
tolerant="$top_builddir/tests/mpi_tolerant"
sc_need_program "$exact" || finish
sc_need_program "$tolerant" || finish
if [ "$SC_MPI_LAUNCHER" != hydra ]; then
    skip "mpi_mpich: MPIRUN=$MPIRUN is not MPICH's launcher (run through scripts/check_mpich.sh)"
    finish
fi
if ! strings "$SC_LIB" 2>/dev/null | grep -q '^MPICH' && ! grep -q 'SC_MPI_IMPL "MPICH' "$top_builddir/config.h" 2>/dev/null; then
    fail "mpi_mpich: $SC_LIB was not built against MPICH (see $top_builddir/config.h)"
    finish
fi

# Exactness: every call equal to PMPI_Allreduce, and the totals right.
for np in 2 4; do
    for mode in sync hier; do
        name="exact-$np-$mode"
        args=(-m 65537)
        [ "$mode" = hier ] && args+=(-t)
        sc_job "$name" "$np" -x "STARCOLL_MODE=$mode" -x STARCOLL_MIN_BYTES=0 "$exact" "${args[@]}"
        rc=$? c=$(sc_closing "$name")
        if sc_program_passed "$name" "$rc"; then ok "$name: ${c% *} calls equal to PMPI_Allreduce"
        else fail "$name: exit status $rc, mpi_exact says ${c:-nothing}"; sc_show "$name"; fi
        [ "$rc" -eq 0 ] && sc_check_totals "$name" "np=$np mode=$mode" "$mode"
    done
done
for mode in quorum groups auto; do
    name="exact-4-$mode-passthrough"
    sc_job "$name" 4 -x "STARCOLL_MODE=$mode" "$exact" -p -m 4097
    rc=$? c=$(sc_closing "$name")
    if sc_program_passed "$name" "$rc"; then ok "$name: ${c% *} pass-through calls equal to PMPI_Allreduce"
    else fail "$name: exit status $rc, mpi_exact says ${c:-nothing}"; sc_show "$name"; fi
done

# The tolerant modes at 4 ranks.
for mode in quorum groups auto; do
    for p in none persistent; do
        name="$mode-$p"
        k=()
        [ "$mode" = quorum ] && k=(-x STARCOLL_QUORUM=3)
        sc_job "$name" 4 -x "STARCOLL_MODE=$mode" "${k[@]}" "$tolerant" --pattern "$p" --steps 60
        sc_adopt "$name" $? "$name"
        stale=$(sc_totals "$name" max_staleness)
        if [ -n "$stale" ] && [ "$stale" -le 4 ]; then ok "$name: staleness $stale <= bound 4"
        else fail "$name: staleness '$stale' over the bound 4"; fi
        if [ "$mode" != auto ]; then
            calls=$(sc_totals "$name" "$mode")
            if [ "${calls:-0}" -gt 0 ]; then ok "$name: $calls calls ran in $mode"
            else fail "$name: no call ran in $mode"; fi
        fi
    done
done
finish
