! mpi_fortran: MPI_ALLREDUCE called from Fortran, run by mpi_fortran.sh
! under the starcoll preload.  Built twice from this file: with `use mpi`,
! and, preprocessed with -cpp -DSC_USE_MPI_F08, with `use mpi_f08`.  Open
! MPI's Fortran bindings call PMPI_Allreduce (PMPI_Iallreduce) directly, so only the
! library's Fortran entry points can catch these calls; the script checks
! that its totals count them.
!
! Four calls eligible at the default STARCOLL_MIN_BYTES (REAL and DOUBLE
! PRECISION sums of 80000 bytes, one of them MPI_IN_PLACE, one an
! MPI_IALLREDUCE completed by MPI_WAIT) and two that
! pass through (an INTEGER MAX, a 40-byte REAL sum).  Inputs are integer
! valued, so each result must equal the sum computed here exactly.
! Rank 0 prints one line per check, "expect: eligible=N passthrough=N"
! (summed over ranks) and "N passed, N failed".
program mpi_fortran
#include "mpi_fortran_binding.h"
  implicit none
  integer, parameter :: nr = 20000, nd = 10000, ns = 10
  real :: rsend(nr), rrecv(nr), rexp(nr)
  double precision :: dsend(nd), drecv(nd), dexp(nd)
  integer :: isend(ns), irecv(ns), iexp(ns)
  integer :: ierr, rank, nproc, i, r, passed, failed, mpierrs
#ifdef SC_USE_MPI_F08
  type(MPI_Request) :: req
#else
  integer :: req
#endif

  mpierrs = 0
  call MPI_INIT(ierr)
  if (ierr /= MPI_SUCCESS) stop 1
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call mpi_ok(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call mpi_ok(ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nproc, ierr)
  call mpi_ok(ierr)
  passed = 0
  failed = 0
  if (rank == 0) write (*, '(a,a,a,i0,a)') 'mpi_fortran (', BINDING, '): ', nproc, ' ranks'

  ! REAL sum, 80000 bytes: eligible.
  do i = 1, nr
    rsend(i) = real(input(rank, i))
    rexp(i) = 0.0
    do r = 0, nproc - 1
      rexp(i) = rexp(i) + real(input(r, i))
    end do
  end do
  call MPI_ALLREDUCE(rsend, rrecv, nr, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  call verdict('REAL SUM of 20000', ierr == MPI_SUCCESS .and. same(rrecv, rexp))

  ! DOUBLE PRECISION sum, 80000 bytes: eligible.
  do i = 1, nd
    dsend(i) = dble(input(rank, i + 7))
    dexp(i) = 0.0d0
    do r = 0, nproc - 1
      dexp(i) = dexp(i) + dble(input(r, i + 7))
    end do
  end do
  call MPI_ALLREDUCE(dsend, drecv, nd, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call verdict('DOUBLE PRECISION SUM of 10000', ierr == MPI_SUCCESS .and. same8(drecv, dexp))

  ! The same in place: eligible.
  drecv = dsend
  call MPI_ALLREDUCE(MPI_IN_PLACE, drecv, nd, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call verdict('DOUBLE PRECISION SUM of 10000, MPI_IN_PLACE', ierr == MPI_SUCCESS .and. same8(drecv, dexp))

  ! MPI_IALLREDUCE of the REAL sum, completed by MPI_WAIT: eligible.
  rrecv = 0.0
  call MPI_IALLREDUCE(rsend, rrecv, nr, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call mpi_ok(ierr)
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  call verdict('MPI_IALLREDUCE REAL SUM of 20000, MPI_WAIT', ierr == MPI_SUCCESS .and. same(rrecv, rexp))

  ! INTEGER MAX: passes through.
  do i = 1, ns
    isend(i) = input(rank, i)
    iexp(i) = input(0, i)
    do r = 1, nproc - 1
      iexp(i) = max(iexp(i), input(r, i))
    end do
  end do
  call MPI_ALLREDUCE(isend, irecv, ns, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call verdict('INTEGER MAX of 10 (passes through)', ierr == MPI_SUCCESS .and. all(irecv == iexp))

  ! A 40-byte REAL sum, below STARCOLL_MIN_BYTES: passes through.
  call MPI_ALLREDUCE(rsend, rrecv, ns, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  call verdict('REAL SUM of 10 (passes through)', ierr == MPI_SUCCESS .and. same(rrecv(1:ns), rexp(1:ns)))
  call verdict('every other MPI call returned MPI_SUCCESS', mpierrs == 0)

  if (rank == 0) then
    write (*, '(a,i0,a,i0)') 'expect: eligible=', 4 * nproc, ' passthrough=', 2 * nproc
    write (*, '(i0,a,i0,a)') passed, ' passed, ', failed, ' failed'
  end if
  call MPI_BCAST(failed, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) failed = 1
  call MPI_FINALIZE(ierr)
  if (failed /= 0 .or. ierr /= MPI_SUCCESS) stop 1

contains

  ! Rank r's value at index i: small integers, so sums are exact.
  integer function input(r, i)
    integer, intent(in) :: r, i
    input = mod(i * 7 + r * 13, 2001) - 1000
  end function input

  ! Bitwise equality (integer-valued sums are exact in any order).
  logical function same(a, b)
    real, intent(in) :: a(:), b(:)
    same = all(transfer(a, [0]) == transfer(b, [0]))
  end function same

  logical function same8(a, b)
    double precision, intent(in) :: a(:), b(:)
    same8 = all(transfer(a, [0_8]) == transfer(b, [0_8]))
  end function same8

  ! An MPI call's error code, counted: every call is checked.
  subroutine mpi_ok(e)
    integer, intent(in) :: e
    if (e /= MPI_SUCCESS) mpierrs = mpierrs + 1
  end subroutine mpi_ok

  ! A check passes when it passed on every rank (MPI_REDUCE: not under test).
  subroutine verdict(what, good)
    character(len=*), intent(in) :: what
    logical, intent(in) :: good
    integer :: bad, anybad, e
    bad = merge(0, 1, good)
    call MPI_REDUCE(bad, anybad, 1, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, e)
    if (e /= MPI_SUCCESS) anybad = 1
    if (rank /= 0) return
    if (anybad == 0) then
      passed = passed + 1
      write (*, '(a,a,a)') 'ok   - ', what, ': exact on every rank'
    else
      failed = failed + 1
      write (*, '(a,a,a)') 'FAIL - ', what, ': wrong on some rank'
    end if
  end subroutine verdict
end program mpi_fortran
