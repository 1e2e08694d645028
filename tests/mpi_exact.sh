#!/bin/bash
# Exactness under the preload, at 4 and 8 ranks: mpi_exact compares every
# MPI_Allreduce (through starcoll) with PMPI_Allreduce on the same input,
# over its matrix of communicators, datatypes, ops, counts and in-place,
# in sync and in hier with STARCOLL_GROUP=node, 2, 3 and 4, with
# STARCOLL_MIN_BYTES=0 so that small calls are eligible too; then once at
# the default STARCOLL_MIN_BYTES.  For each job: the job succeeds with no
# mismatch, the library prints no notice, and its totals line counts
# exactly the eligible and pass-through calls the program made, every
# eligible one in the requested mode.  Then auto, quorum and groups, where
# sums need not be per-call: there the pass-through calls must still be
# bitwise identical to PMPI (mpi_exact -p) and the totals count right.
# MPI_Iallreduce + MPI_Wait (mpi_exact -n) in sync and hier, against
# PMPI_Iallreduce.
. "$(dirname "$0")/mpi_testlib.sh"

prog="$top_builddir/tests/mpi_exact"
sc_need_program "$prog" || finish
sc_need_library || finish

# exact_job NP MODE GROUP MIN_BYTES [mpi_exact options]; GROUP and
# MIN_BYTES may be "-" for unset.  Hier rounds differently, so there
# random-valued sums are compared within a tolerance (-t).
exact_job() {
    local np=$1 mode=$2 group=$3 min_bytes=$4
    shift 4
    local env=(-x "STARCOLL_MODE=$mode") label="np=$np mode=$mode"
    [ "$group" != - ] && env+=(-x "STARCOLL_GROUP=$group") && label="$label group=$group"
    if [ "$min_bytes" != - ]; then env+=(-x "STARCOLL_MIN_BYTES=$min_bytes"); label="$label min_bytes=$min_bytes"
    else label="$label min_bytes=default"; fi
    local args=("$@") passthrough_only=0 a tag=
    for a in "$@"; do [ "$a" = -p ] && passthrough_only=1; [ "$a" = -n ] && tag=-nonblocking; done
    [ "$mode" = hier ] && args+=(-t)
    local name="exact-$np-$mode-$group-$min_bytes$tag"
    sc_job "$name" "$np" "${env[@]}" "$prog" "${args[@]}"
    local rc=$? c
    c=$(sc_closing "$name")
    if sc_program_passed "$name" "$rc"; then
        ok "$label: ${c% *} calls equal to PMPI_Allreduce${args[*]:+ (mpi_exact ${args[*]})}"
    else
        fail "$label: exit status $rc, mpi_exact says ${c:-nothing}"
        sc_show "$name"
    fi
    [ "$rc" -eq 0 ] || return
    # Modes not built yet say so in a notice; their calls may run in any mode.
    if [ "$passthrough_only" = 1 ]; then
        sc_check_totals "$name" "$label" -
        return
    fi
    local notices
    notices=$(sc_notices "$name")
    if [ -z "$notices" ]; then ok "$label: no starcoll notice on stderr"
    else fail "$label: unexpected notices on stderr: $notices"; fi
    sc_check_totals "$name" "$label" "$mode"
}

# The largest counts (256K and 1M elements) on a few jobs only, to keep
# the test short on a loaded machine; the rest stop at 65537.
for np in 4 8; do
    full=(-m 65537)
    [ "$np" = 8 ] && full=()
    exact_job "$np" sync - 0 "${full[@]}"
    exact_job "$np" hier node 0 -m 65537
    exact_job "$np" hier 2 0 -m 65537
    exact_job "$np" hier 3 0 "${full[@]}"
    exact_job "$np" hier 4 0 -m 65537
done
exact_job 8 hier 3 - -m 65537
# MPI_Iallreduce + MPI_Wait: the same results, in sync and in hier
exact_job 4 sync - 0 -n -m 65537
exact_job 4 hier 2 0 -n -m 65537
for mode in auto quorum groups; do
    exact_job 4 "$mode" - 0 -p -m 65537
done
finish
