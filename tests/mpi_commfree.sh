#!/bin/bash
# Communicators created, used for eligible calls in hier mode and freed,
# hundreds of times (mpi_commfree): results exact on every new grouping,
# dups outlive their parents, resident memory stays flat; and the
# library's totals count every call, all of them in hier.
. "$(dirname "$0")/mpi_testlib.sh"

prog="$top_builddir/tests/mpi_commfree"
sc_need_program "$prog" || finish
sc_need_library || finish

for setting in "8 3" "4 2"; do
    set -- $setting
    np=$1 group=$2 name="commfree-$1-$2" label="np=$1 hier group=$2"
    sc_job "$name" "$np" -x STARCOLL_MODE=hier -x "STARCOLL_GROUP=$group" -x STARCOLL_MIN_BYTES=0 "$prog" -n 300
    sc_adopt "$name" $? "$label"
    sc_check_totals "$name" "$label" hier
done
finish
