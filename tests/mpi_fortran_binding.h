! The MPI module of a Fortran test program, included (cpp) at the top of
! its program unit: `use mpi`, or `use mpi_f08` built with
! -DSC_USE_MPI_F08; BINDING names the one used.
#ifdef SC_USE_MPI_F08
  use mpi_f08
#define BINDING 'use mpi_f08'
#else
  use mpi
#define BINDING 'use mpi'
#endif
