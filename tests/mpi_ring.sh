#!/bin/bash
# The groups ring's point-to-point all-reduce (mpi_ring), without the
# preload, at 5 ranks (chunks of unequal size) and 2.
. "$(dirname "$0")/mpi_testlib.sh"

prog="$top_builddir/tests/mpi_ring"
sc_need_program "$prog" || finish
for np in 5 2; do
    sc_job_plain "ring-$np" "$np" "$prog"
    sc_adopt "ring-$np" $? "np=$np"
done
finish
