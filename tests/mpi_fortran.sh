#!/bin/bash
# Fortran codes are caught too: mpi_fortran.f90, built here with mpifort
# twice (use mpi; use mpi_f08 where the compiler has that module), calls
# MPI_ALLREDUCE on REAL and DOUBLE PRECISION arrays under the preload, at
# 4 ranks in hier (group 2) at the default STARCOLL_MIN_BYTES.  Checks:
# results exact, and the library's totals count the calls (eligible and
# pass-through), all eligible ones in hier: Open MPI's Fortran bindings
# bypass the C MPI_Allreduce, so this shows the Fortran entry points work.
. "$(dirname "$0")/mpi_testlib.sh"

fc=${MPIFORT:-mpifort}
src="$(cd "$(dirname "$0")" && pwd)/mpi_fortran.f90"
if ! command -v "$fc" >/dev/null 2>&1; then
    echo "no Fortran MPI compiler ($fc): skipped"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
sc_need_library || finish

# fortran_job BINDING [mpifort flags]: build one variant, run it, check it.
fortran_job() {
    local binding=$1
    shift
    local exe="$SC_WORK/mpi_fortran-${binding// /_}" label="Fortran ($binding) np=4 hier group=2"
    if ! "$fc" -cpp "$@" -o "$exe" "$src" >"$SC_WORK/build.log" 2>&1; then
        if [ "$binding" = "use mpi_f08" ]; then
            skip "$label: $fc cannot build with $binding here"
        else
            fail "$label: $fc cannot build $src:"
            sed 's/^/    /' "$SC_WORK/build.log" | head -n 20
        fi
        return
    fi
    local name="fortran-${binding// /_}"
    sc_job "$name" 4 -x STARCOLL_MODE=hier -x STARCOLL_GROUP=2 "$exe"
    sc_adopt "$name" $? "$label"
    sc_check_totals "$name" "$label" hier
}

fortran_job "use mpi"
fortran_job "use mpi_f08" -DSC_USE_MPI_F08
finish
