# Sourced by the mpirun test scripts: how to launch ranks here, with or
# without the starcoll preload.  Root needs --allow-run-as-root; more ranks
# than cores need --oversubscribe.  Never busy-poll on this shared machine.
#
# The scripts speak Open MPI's mpirun.  Under MPICH's launcher (Hydra:
# MPIRUN=mpirun.mpich) run_mpi and run_sc translate: -x NAME=VALUE becomes
# -genv NAME VALUE, -x NAME -genvlist NAME, and Open MPI's own options
# (--oversubscribe, --bind-to, --mca, --allow-run-as-root) are dropped.
: "${MPIRUN:=mpirun}"
: "${top_builddir:=..}"
SC_LIB="${SC_LIB:-$(cd "$top_builddir" && pwd)/plugin/.libs/libstarcoll.so}"
if [ -z "${SC_MPI_LAUNCHER:-}" ]; then
    if "$MPIRUN" --version 2>&1 | grep -qi hydra; then SC_MPI_LAUNCHER=hydra; else SC_MPI_LAUNCHER=openmpi; fi
fi
SC_MPIRUN_FLAGS="--oversubscribe --bind-to none --mca btl self,vader,tcp"
[ "$(id -u)" = 0 ] && SC_MPIRUN_FLAGS="$SC_MPIRUN_FLAGS --allow-run-as-root"
[ "$SC_MPI_LAUNCHER" = hydra ] && SC_MPIRUN_FLAGS=""

# sc_launch ARGS...: runs $MPIRUN with ARGS, translated for Hydra up to
# the program (the first word that is not an option or an option's value).
sc_launch() {
    if [ "$SC_MPI_LAUNCHER" != hydra ]; then "$MPIRUN" "$@"; return; fi
    local out=()
    while [ $# -gt 0 ]; do
        case $1 in
            -x) if [[ $2 == *=* ]]; then out+=(-genv "${2%%=*}" "${2#*=}"); else out+=(-genvlist "$2"); fi; shift 2 ;;
            --oversubscribe|--allow-run-as-root) shift ;;
            --bind-to) shift 2 ;;
            --mca) shift 3 ;;
            -np|-n) out+=("$1" "$2"); shift 2 ;;
            -*) out+=("$1"); shift ;;
            *) break ;;
        esac
    done
    "$MPIRUN" "${out[@]}" "$@"
}
# run_mpi NP [mpirun options...] -- program args : without the preload
# shellcheck disable=SC2086  # the flags are words
run_mpi() { local np=$1; shift; sc_launch $SC_MPIRUN_FLAGS -np "$np" "$@"; }
# run_sc NP [mpirun options...] program args : with libstarcoll.so preloaded
# shellcheck disable=SC2086
run_sc() { local np=$1; shift; sc_launch $SC_MPIRUN_FLAGS -x LD_PRELOAD="$SC_LIB" -np "$np" "$@"; }
