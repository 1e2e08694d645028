! mpi_fortran_loop: a Fortran training loop, written as Fortran codes are,
! run by mpi_fortran.sh under the starcoll preload in tolerant modes.
! Built twice from this file, as mpi_fortran.f90 (`use mpi`, and with
! -cpp -DSC_USE_MPI_F08 `use mpi_f08`).
!
! Each step: compute (a sleep of 20 ms; rank 1 sleeps 40), fresh arrays,
! one MPI_IALLREDUCE per gradient array in backward order, completed in
! turn by MPI_WAITALL, MPI_WAIT, MPI_WAITANY, MPI_WAITSOME or MPI_TESTALL
! polling; then (every EXACT steps; never when 0) a loss MPI_ALLREDUCE
! and, in turn, one of MPI_BARRIER, MPI_BCAST, MPI_REDUCE, MPI_ALLGATHER,
! MPI_GATHER, MPI_SCATTER, MPI_ALLTOALL, MPI_ALLGATHERV, MPI_GATHERV,
! MPI_SCATTERV, MPI_ALLTOALLV, MPI_REDUCE_SCATTER,
! MPI_REDUCE_SCATTER_BLOCK, MPI_SCAN, MPI_EXSCAN.  Every 10 steps, exact
! calls or not, a figure passed on, in turn: an MPI_SENDRECV ring, rank 0
! receiving each rank's by MPI_RECV (the others MPI_SEND) or by MPI_PROBE
! and MPI_RECV (the others MPI_SSEND), an MPI_COMM_SPLIT into halves, a
! checkpoint (MPI_FILE_OPEN, MPI_FILE_WRITE_AT_ALL, MPI_FILE_SYNC, a
! barrier, MPI_FILE_READ_AT_ALL of the next rank's number, MPI_FILE_CLOSE),
! a put between MPI_WIN_FENCEs, or a halo exchange by active-target
! epochs (MPI_WIN_POST, _START, a put to each neighbour, _COMPLETE,
! _WAIT), on a window made before the steps, or a gossip step
! (MPI_NEIGHBOR_ALLTOALL and MPI_NEIGHBOR_ALLGATHER on a ring made by
! MPI_DIST_GRAPH_CREATE_ADJACENT before the steps), or an
! MPI_SENDRECV_REPLACE ring, or a master's exchange: each rank posts an
! MPI_IRECV for its answer and sends rank 0 its number; rank 0 polls
! MPI_IPROBE then takes it by MPI_MPROBE and MPI_MRECV, or polls
! MPI_IMPROBE and takes it by MPI_MRECV, in turn, and answers by
! MPI_RSEND; each rank polls MPI_REQUEST_GET_STATUS for the answer; or
! a ring made by MPI_CART_CREATE (then MPI_CART_SHIFT, MPI_CART_SUB) or by
! MPI_DIST_GRAPH_CREATE (then MPI_GRAPH_CREATE); or a helper started by
! MPI_COMM_SPAWN (this program, which finds its parent by
! MPI_COMM_GET_PARENT, takes a number by MPI_BCAST, answers rank 0 one
! more, and parts by MPI_COMM_DISCONNECT); or a checkpoint behind the
! compute, by split collectives on a file opened before the steps
! (MPI_FILE_WRITE_AT_ALL_BEGIN and _END, MPI_FILE_SYNC,
! MPI_FILE_READ_AT_ALL_BEGIN and _END of the next rank's number).  `use mpi_f08` reaches
! the probes, MPI_REQUEST_GET_STATUS and the topology makers through
! mpif.h's pmpi_X_ names, not ompi_X_f.
! Open MPI's Fortran bindings call PMPI_ directly, so the waits,
! collectives and point-to-point calls reach starcoll only through its
! Fortran entry points (plugin/fortran_blocking.c); the script checks, in
! the trace, that time blocked in waits and collectives counted as
! waiting, not as compute, and that no call waited for a rank blocked in
! them (no stall line).
!
! After the steps, each rank's loop time goes to rank 0 by MPI_REDUCE
! (MPI_MAX), before any flush: the fast ranks block there while the
! straggler's last rounds are still open.
!
! Checks (rank 0 prints "ok   - " or "FAIL - " lines, "N passed, N failed"):
! every MPI call returned MPI_SUCCESS; the loss, every collective's result
! and every wait's indices are right; and after a flush (MPI_PCONTROL(2)
! and a step of zeros) each rank's results of each array sum to what all
! ranks sent (conservation), equal on every rank (replicas).  Inputs are
! integer valued, so those sums are exact.
!
! usage: mpi_fortran_loop [STEPS [EXACT]]   (140 and 1 by default: 14 figures passed on)
program mpi_fortran_loop
#include "mpi_fortran_binding.h"
  use iso_c_binding, only: c_int
  implicit none
  interface
    function usleep(us) bind(C, name='usleep')
      import c_int
      integer(c_int), value :: us
      integer(c_int) :: usleep
    end function usleep
    function c_getpid() bind(C, name='getpid')
      import c_int
      integer(c_int) :: c_getpid
    end function c_getpid
  end interface
  type grad
    real, allocatable :: s(:), r(:)
  end type grad
  integer, parameter :: nt = 6, compute_us = 20000, ncollectives = 15
  integer, parameter :: counts(nt) = [1000, 64, 50000, 128, 20000, 256]
  type(grad) :: g(nt)
#ifdef SC_USE_MPI_F08
  type(MPI_Request) :: req(nt)
#else
  integer :: req(nt)
#endif
  integer :: ierr, rank, nproc, step, steps, exact, passed, failed, mpierrs, badwaits, badcolls, badloss, badp2p, rc
  double precision :: sent(nt), got(nt), allsent(nt), gotmax(nt), gotmin(nt), loss, lsum, t0, elapsed, slowest
  character(len=32) :: arg
  ! the window of the fences and the halo exchange: slot 1 for the
  ! previous rank's number, slot 2 for the next one's
  integer, asynchronous :: halo(2)
  integer :: pid
  character(len=300) :: ckpt
  integer, asynchronous :: split_out, split_in   ! the split collectives' buffers
#ifdef SC_USE_MPI_F08
  type(MPI_File) :: split_fh
  type(MPI_Win) :: win
  type(MPI_Group) :: world_group, halo_group
  type(MPI_Comm) :: ring, parent
#else
  integer :: win, world_group, halo_group, ring, parent, split_fh
#endif

  steps = 140
  exact = 1
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) steps
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) exact
  end if
  mpierrs = 0; badwaits = 0; badcolls = 0; badloss = 0; badp2p = 0; passed = 0; failed = 0
  sent = 0; got = 0
  call MPI_INIT(ierr)
  if (ierr /= MPI_SUCCESS) stop 1
  call MPI_COMM_GET_PARENT(parent, ierr)
  if (ierr /= MPI_SUCCESS) stop 1
  if (parent /= MPI_COMM_NULL) then   ! pass_on's spawned helper
    call spawned_helper()
    stop
  end if
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call mpi_ok(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call mpi_ok(ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nproc, ierr)
  call mpi_ok(ierr)
  call make_window()
  if (rank == 0) write (*, '(a,a,a,i0,a,i0,a,i0)') 'mpi_fortran_loop (', BINDING, '): ', nproc, ' ranks, ', steps, &
                                                     ' steps, exact calls every ', exact

  t0 = MPI_WTIME()
  do step = 1, steps
    rc = usleep(int(merge(2 * compute_us, compute_us, rank == 1), c_int))
    call start_step(1.0)
    call complete(mod(step, 5))
    call end_step()
    if (mod(step, 10) == 0) call pass_on(mod(step / 10 - 1, 14))
    if (exact <= 0) cycle
    if (mod(step, exact) /= 0) cycle
    loss = dble(rank + 1)
    call MPI_ALLREDUCE(loss, lsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call mpi_ok(ierr)
    if (lsum /= dble(nproc * (nproc + 1) / 2)) badloss = badloss + 1
    call collective(mod(step / exact, ncollectives), step)
  end do
  ! The loop's time, to rank 0, as codes print it: a rank that ends its
  ! steps first blocks here while the others' last rounds still need it.
  elapsed = MPI_WTIME() - t0
  call MPI_REDUCE(elapsed, slowest, 1, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  call mpi_ok(ierr)
  if (rank == 0 .and. slowest < elapsed) badcolls = badcolls + 1
  ! The flush: the next call on each array brings every round left.
  call MPI_PCONTROL(2)
  call start_step(0.0)
  call complete(0)
  call end_step()

  call MPI_ALLREDUCE(sent, allsent, nt, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call mpi_ok(ierr)
  call MPI_ALLREDUCE(got, gotmax, nt, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  call mpi_ok(ierr)
  call MPI_ALLREDUCE(got, gotmin, nt, MPI_DOUBLE_PRECISION, MPI_MIN, MPI_COMM_WORLD, ierr)
  call mpi_ok(ierr)
  if (exact > 0) then   ! made in this run
    call verdict('the loss was exact at every step', badloss == 0)
    call verdict('every blocking collective''s result exact (MPI_BCAST to MPI_EXSCAN)', badcolls == 0)
  else
    call verdict('MPI_REDUCE of the loop''s time after the steps exact', badcolls == 0)
  end if
  call verdict('MPI_WAITANY and MPI_WAITSOME gave each request once, at a valid index', badwaits == 0)
  call verdict('the figures passed on by MPI_SENDRECV, MPI_RECV after MPI_SEND or MPI_PROBE, MPI_COMM_SPLIT, ' // &
               'a checkpoint''s collective MPI-IO, MPI_WIN_FENCE, MPI_WIN_START to MPI_WIN_WAIT, ' // &
               'the neighbourhood collectives, MPI_SENDRECV_REPLACE and the master''s exchange (MPI_IPROBE, ' // &
               'MPI_IMPROBE, MPI_MPROBE, MPI_MRECV, MPI_RSEND, MPI_REQUEST_GET_STATUS) and the rings of ' // &
               'MPI_CART_CREATE, MPI_CART_SUB, MPI_DIST_GRAPH_CREATE and MPI_GRAPH_CREATE and MPI_COMM_SPAWN''s ' // &
               'helper and the split collectives'' checkpoint right', badp2p == 0)
  call verdict('conservation: each array''s results summed over the steps equal what every rank sent', &
               all(got == allsent))
  call verdict('replicas: those sums are the same on every rank', all(gotmax == gotmin))
  call verdict('every MPI call returned MPI_SUCCESS', mpierrs == 0)
  call MPI_FILE_CLOSE(split_fh, ierr)
  call mpi_ok(ierr)
  call MPI_WIN_FREE(win, ierr)
  call mpi_ok(ierr)
  call MPI_GROUP_FREE(halo_group, ierr)
  call mpi_ok(ierr)
  call MPI_COMM_FREE(ring, ierr)
  call mpi_ok(ierr)
  if (rank == 0) write (*, '(i0,a,i0,a)') passed, ' passed, ', failed, ' failed'
  call MPI_FINALIZE(ierr)
  if (failed /= 0 .or. ierr /= MPI_SUCCESS) stop 1

contains

  ! MPI_COMM_SPAWN's helper: takes the number, answers one more, parts.
  subroutine spawned_helper()
    integer :: got, e, me
    got = -1
    call MPI_COMM_RANK(MPI_COMM_WORLD, me, e)
    call MPI_BCAST(got, 1, MPI_INTEGER, 0, parent, e)
    if (me == 0) call MPI_SEND(got + 1, 1, MPI_INTEGER, 0, 12, parent, e)
    call MPI_COMM_DISCONNECT(parent, e)
    call MPI_FINALIZE(e)
  end subroutine spawned_helper

  ! Fresh arrays, rank r's array t holding (r + 1) * t * scale, each
  ! started by an MPI_IALLREDUCE, the last array first (backward order).
  subroutine start_step(scale)
    real, intent(in) :: scale
    integer :: t, e
    do t = nt, 1, -1
      allocate (g(t)%s(counts(t)), g(t)%r(counts(t)))
      g(t)%s = real((rank + 1) * t) * scale
      g(t)%r = -1.0
      sent(t) = sent(t) + sum(dble(g(t)%s))
      call MPI_IALLREDUCE(g(t)%s, g(t)%r, counts(t), MPI_REAL, MPI_SUM, MPI_COMM_WORLD, req(t), e)
      call mpi_ok(e)
    end do
  end subroutine start_step

  subroutine end_step()
    integer :: t
    do t = 1, nt
      got(t) = got(t) + sum(dble(g(t)%r))
      deallocate (g(t)%s, g(t)%r)
    end do
  end subroutine end_step

  ! The step's requests completed one of five ways.
  subroutine complete(how)
    integer, intent(in) :: how
    integer :: e, t, idx, outcount, done, indices(nt), k
    logical :: seen(nt), flag
    seen = .false.
    select case (how)
    case (0)
      call MPI_WAITALL(nt, req, MPI_STATUSES_IGNORE, e)
      call mpi_ok(e)
    case (1)
      do t = nt, 1, -1
        call MPI_WAIT(req(t), MPI_STATUS_IGNORE, e)
        call mpi_ok(e)
      end do
    case (2)
      do done = 1, nt
        call MPI_WAITANY(nt, req, idx, MPI_STATUS_IGNORE, e)
        call mpi_ok(e)
        call mark(idx, seen)
      end do
      call MPI_WAITANY(nt, req, idx, MPI_STATUS_IGNORE, e)   ! none active now
      call mpi_ok(e)
      if (idx /= MPI_UNDEFINED) badwaits = badwaits + 1
    case (3)
      done = 0
      do while (done < nt)
        call MPI_WAITSOME(nt, req, outcount, indices, MPI_STATUSES_IGNORE, e)
        call mpi_ok(e)
        if (e /= MPI_SUCCESS .or. outcount < 1 .or. outcount > nt - done) then
          badwaits = badwaits + 1
          exit
        end if
        do k = 1, outcount
          call mark(indices(k), seen)
        end do
        done = done + outcount
      end do
    case default
      flag = .false.
      do while (.not. flag)
        call MPI_TESTALL(nt, req, flag, MPI_STATUSES_IGNORE, e)
        call mpi_ok(e)
        if (e /= MPI_SUCCESS) exit
        if (.not. flag) rc = usleep(200_c_int)
      end do
    end select
  end subroutine complete

  ! A wait gave request idx (1-based): a valid index, not given before.
  subroutine mark(idx, seen)
    integer, intent(in) :: idx
    logical, intent(inout) :: seen(nt)
    if (idx < 1 .or. idx > nt) then
      badwaits = badwaits + 1
    else
      if (seen(idx)) badwaits = badwaits + 1
      seen(idx) = .true.
    end if
  end subroutine mark

  ! One blocking collective, its result checked.
  subroutine collective(which, step)
    integer, intent(in) :: which, step
    integer :: e, v, one(1), vals(nproc), back(nproc), ones(nproc), at(nproc), r
    ones = 1
    at = [(r, r = 0, nproc - 1)]
    select case (which)
    case (0)
      call MPI_BARRIER(MPI_COMM_WORLD, e)
      call mpi_ok(e)
    case (1)
      v = merge(step, -1, rank == 0)
      call MPI_BCAST(v, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, e)
      call mpi_ok(e)
      if (v /= step) badcolls = badcolls + 1
    case (2)
      one(1) = rank + 1
      v = 0
      call MPI_REDUCE(one, v, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, e)
      call mpi_ok(e)
      if (rank == 0 .and. v /= nproc * (nproc + 1) / 2) badcolls = badcolls + 1
    case (3)
      call MPI_ALLGATHER(rank, 1, MPI_INTEGER, vals, 1, MPI_INTEGER, MPI_COMM_WORLD, e)
      call mpi_ok(e)
      if (any(vals /= [(r, r = 0, nproc - 1)])) badcolls = badcolls + 1
    case (4)
      vals = -1
      call MPI_GATHER(rank, 1, MPI_INTEGER, vals, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, e)
      call mpi_ok(e)
      if (rank == 0 .and. any(vals /= [(r, r = 0, nproc - 1)])) badcolls = badcolls + 1
    case (5)
      vals = [(10 * r + step, r = 0, nproc - 1)]
      call MPI_SCATTER(vals, 1, MPI_INTEGER, v, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, e)
      call mpi_ok(e)
      if (v /= 10 * rank + step) badcolls = badcolls + 1
    case (6)
      vals = [(100 * rank + r, r = 0, nproc - 1)]
      call MPI_ALLTOALL(vals, 1, MPI_INTEGER, back, 1, MPI_INTEGER, MPI_COMM_WORLD, e)
      call mpi_ok(e)
      if (any(back /= [(100 * r + rank, r = 0, nproc - 1)])) badcolls = badcolls + 1
    case (7)
      call MPI_ALLGATHERV(rank, 1, MPI_INTEGER, vals, ones, at, MPI_INTEGER, MPI_COMM_WORLD, e)
      call mpi_ok(e)
      if (any(vals /= [(r, r = 0, nproc - 1)])) badcolls = badcolls + 1
    case (8)
      vals = -1
      call MPI_GATHERV(rank, 1, MPI_INTEGER, vals, ones, at, MPI_INTEGER, 0, MPI_COMM_WORLD, e)
      call mpi_ok(e)
      if (rank == 0 .and. any(vals /= [(r, r = 0, nproc - 1)])) badcolls = badcolls + 1
    case (9)
      vals = [(10 * r + step, r = 0, nproc - 1)]
      call MPI_SCATTERV(vals, ones, at, MPI_INTEGER, v, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, e)
      call mpi_ok(e)
      if (v /= 10 * rank + step) badcolls = badcolls + 1
    case (10)
      vals = [(100 * rank + r, r = 0, nproc - 1)]
      call MPI_ALLTOALLV(vals, ones, at, MPI_INTEGER, back, ones, at, MPI_INTEGER, MPI_COMM_WORLD, e)
      call mpi_ok(e)
      if (any(back /= [(100 * r + rank, r = 0, nproc - 1)])) badcolls = badcolls + 1
    case (11, 12)
      vals = rank + 1
      if (which == 11) then
        call MPI_REDUCE_SCATTER(vals, v, ones, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, e)
      else
        call MPI_REDUCE_SCATTER_BLOCK(vals, v, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, e)
      end if
      call mpi_ok(e)
      if (v /= nproc * (nproc + 1) / 2) badcolls = badcolls + 1
    case (13)
      call MPI_SCAN(rank + 1, v, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, e)
      call mpi_ok(e)
      if (v /= (rank + 1) * (rank + 2) / 2) badcolls = badcolls + 1
    case default
      v = -1
      call MPI_EXSCAN(rank + 1, v, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, e)
      call mpi_ok(e)
      if (rank > 0 .and. v /= rank * (rank + 1) / 2) badcolls = badcolls + 1   ! rank 0's is undefined
    end select
  end subroutine collective

  ! The window and the neighbours' group, made once as stencil codes do;
  ! rank 0's pid names the checkpoint file for all.
  subroutine make_window()
    integer :: e, nb(2)
    integer(kind=MPI_ADDRESS_KIND) :: bytes
    bytes = 8
    halo = -1
    call MPI_WIN_CREATE(halo, bytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, e)
    call mpi_ok(e)
    nb = [mod(rank + nproc - 1, nproc), mod(rank + 1, nproc)]
    call MPI_COMM_GROUP(MPI_COMM_WORLD, world_group, e)
    call mpi_ok(e)
    call MPI_GROUP_INCL(world_group, merge(1, 2, nb(1) == nb(2)), nb, halo_group, e)
    call mpi_ok(e)
    call MPI_GROUP_FREE(world_group, e)
    call mpi_ok(e)
    call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 2, nb, [1, 1], 2, nb, [1, 1], MPI_INFO_NULL, .false., ring, e)
    call mpi_ok(e)
    pid = c_getpid()
    call MPI_BCAST(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, e)
    call mpi_ok(e)
    call get_environment_variable('TMPDIR', ckpt)
    if (len_trim(ckpt) == 0) ckpt = '/tmp'
    write (ckpt, '(a,a,i0)') trim(ckpt), '/mpi_fortran_loop.', pid
    call MPI_FILE_OPEN(MPI_COMM_WORLD, trim(ckpt) // '.split', MPI_MODE_CREATE + MPI_MODE_RDWR + &
                       MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, split_fh, e)
    call mpi_ok(e)
  end subroutine make_window

  ! A figure passed on, as codes do between their collectives.
  subroutine pass_on(which)
    integer, intent(in) :: which
    integer :: e, got, q, src, hsize, prev, next, two(2), nbs(2)
    integer(kind=MPI_OFFSET_KIND) :: at
    integer(kind=MPI_ADDRESS_KIND) :: disp
    logical :: flag
    integer, asynchronous :: reply   ! filled by an MPI_IRECV
#ifdef SC_USE_MPI_F08
    type(MPI_Status) :: st
    type(MPI_Comm) :: half
    type(MPI_File) :: fh
    type(MPI_Message) :: msg
    type(MPI_Request) :: answer
    type(MPI_Comm) :: topo, sub
#else
    integer :: st(MPI_STATUS_SIZE), half, fh, msg, answer, topo, sub
#endif
    integer :: indeg, outdeg, ring_index(nproc), ring_edges(2 * nproc)
    character(len=1000) :: self
    logical :: weighted
    prev = mod(rank + nproc - 1, nproc)
    next = mod(rank + 1, nproc)
    select case (which)
    case (0)
      got = -1
      call MPI_SENDRECV(rank + 1, 1, MPI_INTEGER, mod(rank + 1, nproc), 7, got, 1, MPI_INTEGER, &
                        mod(rank + nproc - 1, nproc), 7, MPI_COMM_WORLD, st, e)
      call mpi_ok(e)
      if (got /= mod(rank + nproc - 1, nproc) + 1) badp2p = badp2p + 1
    case (1, 2)
      if (rank == 0) then
        do q = 1, nproc - 1
          src = q
          if (which == 2) then
            call MPI_PROBE(MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, st, e)
            call mpi_ok(e)
#ifdef SC_USE_MPI_F08
            src = st%MPI_SOURCE
#else
            src = st(MPI_SOURCE)
#endif
          end if
          got = -1
          call MPI_RECV(got, 1, MPI_INTEGER, src, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE, e)
          call mpi_ok(e)
          if (got /= src + 1) badp2p = badp2p + 1
        end do
      else if (which == 1) then
        call MPI_SEND(rank + 1, 1, MPI_INTEGER, 0, 8, MPI_COMM_WORLD, e)
        call mpi_ok(e)
      else
        call MPI_SSEND(rank + 1, 1, MPI_INTEGER, 0, 8, MPI_COMM_WORLD, e)
        call mpi_ok(e)
      end if
    case (3)
      call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), rank, half, e)
      call mpi_ok(e)
      call MPI_COMM_SIZE(half, hsize, e)
      call mpi_ok(e)
      if (hsize /= (nproc + 1 - mod(rank, 2)) / 2) badp2p = badp2p + 1
      call MPI_COMM_FREE(half, e)
      call mpi_ok(e)
    case (4)
      call MPI_FILE_OPEN(MPI_COMM_WORLD, trim(ckpt), MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, &
                         MPI_INFO_NULL, fh, e)
      call mpi_ok(e)
      if (e /= MPI_SUCCESS) then
        badp2p = badp2p + 1
        return
      end if
      at = 4 * rank
      call MPI_FILE_WRITE_AT_ALL(fh, at, rank + 1, 1, MPI_INTEGER, MPI_STATUS_IGNORE, e)
      call mpi_ok(e)
      call MPI_FILE_SYNC(fh, e)
      call mpi_ok(e)
      call MPI_BARRIER(MPI_COMM_WORLD, e)
      call mpi_ok(e)
      at = 4 * next
      got = -1
      call MPI_FILE_READ_AT_ALL(fh, at, got, 1, MPI_INTEGER, MPI_STATUS_IGNORE, e)
      call mpi_ok(e)
      if (got /= next + 1) badp2p = badp2p + 1
      call MPI_FILE_CLOSE(fh, e)
      call mpi_ok(e)
    case (5)
      halo = -1
      disp = 0
      call MPI_WIN_FENCE(0, win, e)
      call mpi_ok(e)
      call MPI_PUT(rank + 1, 1, MPI_INTEGER, next, disp, 1, MPI_INTEGER, win, e)
      call mpi_ok(e)
      call MPI_WIN_FENCE(0, win, e)
      call mpi_ok(e)
      if (halo(1) /= prev + 1) badp2p = badp2p + 1
    case (7)
      two = -1
      call MPI_NEIGHBOR_ALLTOALL([rank + 1, rank + 1], 1, MPI_INTEGER, two, 1, MPI_INTEGER, ring, e)
      call mpi_ok(e)
      nbs = -1
      call MPI_NEIGHBOR_ALLGATHER(rank + 1, 1, MPI_INTEGER, nbs, 1, MPI_INTEGER, ring, e)
      call mpi_ok(e)
      if (any(two /= [prev + 1, next + 1]) .or. any(nbs /= [prev + 1, next + 1])) badp2p = badp2p + 1
    case (8)
      got = rank + 1
      call MPI_SENDRECV_REPLACE(got, 1, MPI_INTEGER, next, 11, prev, 11, MPI_COMM_WORLD, st, e)
      call mpi_ok(e)
      if (got /= prev + 1) badp2p = badp2p + 1
    case (9)
      if (rank == 0) then
        do q = 1, nproc - 1
          flag = .false.
          do while (.not. flag)
            if (mod(q, 2) == 1) then
              call MPI_IPROBE(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, flag, st, e)
            else
              call MPI_IMPROBE(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, flag, msg, st, e)
            end if
            call mpi_ok(e)
            if (e /= MPI_SUCCESS) exit
          end do
#ifdef SC_USE_MPI_F08
          src = st%MPI_SOURCE
#else
          src = st(MPI_SOURCE)
#endif
          if (mod(q, 2) == 1) then
            call MPI_MPROBE(src, 9, MPI_COMM_WORLD, msg, st, e)
            call mpi_ok(e)
          end if
          got = -1
          call MPI_MRECV(got, 1, MPI_INTEGER, msg, st, e)
          call mpi_ok(e)
          if (got /= src + 1) badp2p = badp2p + 1
          call MPI_RSEND(10 * got, 1, MPI_INTEGER, src, 10, MPI_COMM_WORLD, e)
          call mpi_ok(e)
        end do
      else
        reply = -1
        call MPI_IRECV(reply, 1, MPI_INTEGER, 0, 10, MPI_COMM_WORLD, answer, e)
        call mpi_ok(e)
        call MPI_SEND(rank + 1, 1, MPI_INTEGER, 0, 9, MPI_COMM_WORLD, e)
        call mpi_ok(e)
        flag = .false.
        do while (.not. flag)
          call MPI_REQUEST_GET_STATUS(answer, flag, st, e)
          call mpi_ok(e)
          if (e /= MPI_SUCCESS) exit
        end do
        call MPI_WAIT(answer, st, e)
        call mpi_ok(e)
        if (reply /= 10 * (rank + 1)) badp2p = badp2p + 1
      end if
    case (10)
      call MPI_CART_CREATE(MPI_COMM_WORLD, 1, [nproc], [.true.], .false., topo, e)
      call mpi_ok(e)
      call MPI_CART_SHIFT(topo, 0, 1, src, q, e)
      call mpi_ok(e)
      if (src /= prev .or. q /= next) badp2p = badp2p + 1
      call MPI_CART_SUB(topo, [.false.], sub, e)
      call mpi_ok(e)
      call MPI_COMM_SIZE(sub, hsize, e)
      call mpi_ok(e)
      if (hsize /= 1) badp2p = badp2p + 1
      call MPI_COMM_FREE(sub, e)
      call mpi_ok(e)
      call MPI_COMM_FREE(topo, e)
      call mpi_ok(e)
    case (11)
      call MPI_DIST_GRAPH_CREATE(MPI_COMM_WORLD, 1, [rank], [1], [next], MPI_UNWEIGHTED, MPI_INFO_NULL, .false., &
                                 topo, e)
      call mpi_ok(e)
      call MPI_DIST_GRAPH_NEIGHBORS_COUNT(topo, indeg, outdeg, weighted, e)
      call mpi_ok(e)
      if (indeg /= 1 .or. outdeg /= 1) badp2p = badp2p + 1
      call MPI_COMM_FREE(topo, e)
      call mpi_ok(e)
      do q = 1, nproc   ! node q - 1's edges: its previous and next ranks
        ring_index(q) = 2 * q
        ring_edges(2 * q - 1) = mod(q - 2 + nproc, nproc)
        ring_edges(2 * q) = mod(q, nproc)
      end do
      call MPI_GRAPH_CREATE(MPI_COMM_WORLD, nproc, ring_index, ring_edges, .false., topo, e)
      call mpi_ok(e)
      call MPI_GRAPH_NEIGHBORS_COUNT(topo, rank, q, e)
      call mpi_ok(e)
      if (q /= 2) badp2p = badp2p + 1
      call MPI_COMM_FREE(topo, e)
      call mpi_ok(e)
    case (12)
      call get_command_argument(0, self)
      call MPI_COMM_SPAWN(trim(self), MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, topo, &
                          MPI_ERRCODES_IGNORE, e)
      call mpi_ok(e)
      if (e /= MPI_SUCCESS) then
        badp2p = badp2p + 1
        return
      end if
      got = 1000 + nproc
      call MPI_BCAST(got, 1, MPI_INTEGER, merge(MPI_ROOT, MPI_PROC_NULL, rank == 0), topo, e)
      call mpi_ok(e)
      if (rank == 0) then
        got = -1
        call MPI_RECV(got, 1, MPI_INTEGER, 0, 12, topo, MPI_STATUS_IGNORE, e)
        call mpi_ok(e)
        if (got /= 1000 + nproc + 1) badp2p = badp2p + 1
      end if
      call MPI_COMM_DISCONNECT(topo, e)
      call mpi_ok(e)
    case (13)
      at = 4 * rank
      split_out = rank + 1
      call MPI_FILE_WRITE_AT_ALL_BEGIN(split_fh, at, split_out, 1, MPI_INTEGER, e)
      call mpi_ok(e)
      call MPI_FILE_WRITE_AT_ALL_END(split_fh, split_out, st, e)
      call mpi_ok(e)
      call MPI_FILE_SYNC(split_fh, e)
      call mpi_ok(e)
      at = 4 * next
      split_in = -1
      call MPI_FILE_READ_AT_ALL_BEGIN(split_fh, at, split_in, 1, MPI_INTEGER, e)
      call mpi_ok(e)
      call MPI_FILE_READ_AT_ALL_END(split_fh, split_in, st, e)
      call mpi_ok(e)
      if (split_in /= next + 1) badp2p = badp2p + 1
    case default
      halo = -1
      call MPI_WIN_POST(halo_group, 0, win, e)
      call mpi_ok(e)
      call MPI_WIN_START(halo_group, 0, win, e)
      call mpi_ok(e)
      disp = 0
      call MPI_PUT(rank + 1, 1, MPI_INTEGER, next, disp, 1, MPI_INTEGER, win, e)
      call mpi_ok(e)
      disp = 1
      call MPI_PUT(rank + 1, 1, MPI_INTEGER, prev, disp, 1, MPI_INTEGER, win, e)
      call mpi_ok(e)
      call MPI_WIN_COMPLETE(win, e)
      call mpi_ok(e)
      call MPI_WIN_WAIT(win, e)
      call mpi_ok(e)
      if (halo(1) /= prev + 1 .or. halo(2) /= next + 1) badp2p = badp2p + 1
    end select
  end subroutine pass_on

  subroutine mpi_ok(e)
    integer, intent(in) :: e
    if (e /= MPI_SUCCESS) mpierrs = mpierrs + 1
  end subroutine mpi_ok

  ! A check passes when it passed on every rank.
  subroutine verdict(what, good)
    character(len=*), intent(in) :: what
    logical, intent(in) :: good
    integer :: bad, anybad, e
    bad = merge(0, 1, good)
    call MPI_ALLREDUCE(bad, anybad, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, e)
    if (e /= MPI_SUCCESS) anybad = 1
    if (anybad == 0) then
      passed = passed + 1
      if (rank == 0) write (*, '(a,a)') 'ok   - ', what
    else
      failed = failed + 1
      if (rank == 0) write (*, '(a,a)') 'FAIL - ', what
    end if
  end subroutine verdict
end program mpi_fortran_loop
