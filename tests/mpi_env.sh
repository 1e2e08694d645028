# Sourced by the mpirun test scripts: how to launch ranks here, with or
# without the starcoll preload.  Root needs --allow-run-as-root; more ranks
# than cores need --oversubscribe.  Never busy-poll on this shared machine.
: "${MPIRUN:=mpirun}"
: "${top_builddir:=..}"
SC_LIB="${SC_LIB:-$(cd "$top_builddir" && pwd)/plugin/.libs/libstarcoll.so}"
SC_MPIRUN_FLAGS="--oversubscribe --bind-to none --mca btl self,vader,tcp"
[ "$(id -u)" = 0 ] && SC_MPIRUN_FLAGS="$SC_MPIRUN_FLAGS --allow-run-as-root"
# run_mpi NP [mpirun options...] -- program args : without the preload
run_mpi() { local np=$1; shift; "$MPIRUN" $SC_MPIRUN_FLAGS -np "$np" "$@"; }
# run_sc NP [mpirun options...] program args : with libstarcoll.so preloaded
run_sc() { local np=$1; shift; "$MPIRUN" $SC_MPIRUN_FLAGS -x LD_PRELOAD="$SC_LIB" -np "$np" "$@"; }
