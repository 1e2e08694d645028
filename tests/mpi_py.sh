#!/bin/bash
# mpi4py under the preload: mpi_allreduce.py calls comm.Allreduce on NumPy
# float32/float64 buffers (eligible at the default STARCOLL_MIN_BYTES) and
# a few calls that pass through, at 4 ranks in sync and in hier (group 2).
# Checks: every result exact, and the library's totals count the script's
# eligible and pass-through calls, all eligible ones in the mode asked,
# which shows that the preload catches calls made from Python (mpi4py
# loads libmpi itself).  Run with /usr/bin/python3 (PYTHON_MPI).
. "$(dirname "$0")/mpi_testlib.sh"

py=${PYTHON_MPI:-/usr/bin/python3}
script="$(cd "$(dirname "$0")" && pwd)/mpi_allreduce.py"
if ! "$py" -c 'import mpi4py, numpy' >/dev/null 2>&1; then
    echo "mpi4py absent: skipped ($py cannot import mpi4py and numpy)"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
sc_need_library || finish

for setting in "sync -" "hier 2"; do
    set -- $setting
    mode=$1 group=$2 name="py-$1" label="mpi4py np=4 mode=$1"
    opts=(-x "STARCOLL_MODE=$mode")
    [ "$group" != - ] && opts+=(-x "STARCOLL_GROUP=$group") && label="$label group=$group"
    sc_job "$name" 4 "${opts[@]}" "$py" "$script"
    sc_adopt "$name" $? "$label"
    sc_check_totals "$name" "$label" "$mode"
done
finish
