/* starcoll's own collectives where another thread may be in one too:
 * with polled = 1, started nonblocking and tested to completion with naps
 * between the tests, never left in MPI's blocking wait; with polled = 0,
 * MPI's blocking calls themselves.
 *
 * Open MPI 4.1 (Debian 12's) holds a call for seconds to minutes when two
 * threads of a process are in collectives on two communicators at once
 * while other threads poll MPI_Iprobe; benchmarks/thread_stall shows it
 * with plain MPI and no starcoll (README, "Limits").  starcoll makes that
 * layout when a process runs two communicators' engines: one's rounds on
 * its engine thread while the application thread is in the other's step.
 * In that program, with both collectives started nonblocking and tested
 * with naps between the tests (--wait polled), no call was held; left
 * blocking, or tested back to back (--wait spin), calls were.  Polling
 * costs: Open MPI's nonblocking collectives and the naps made exact steps
 * 20 to 45% slower here, so STARCOLL_COLL_WAIT=auto polls an engine's
 * collectives only while one of its ranks runs another engine
 * (engine_crowd.c).
 *
 * Every rank of a communicator must pass the same `polled` to a
 * collective (a blocking collective does not match a nonblocking one).
 * Not for calls whose result must be bitwise MPI's blocking call's
 * (pass-through calls; sync and hier as the fixed policy): a nonblocking
 * collective may sum in another order.  Contiguous datatypes only
 * (starcoll's eligible calls' and its own). */
#ifndef STARCOLL_POLLED_COLL_H
#define STARCOLL_POLLED_COLL_H
#include <mpi.h>

int sc_polled_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                        int polled);
int sc_polled_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                     MPI_Comm comm, int polled);
int sc_polled_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, int polled);
int sc_polled_allgather(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                        MPI_Datatype rdt, MPI_Comm comm, int polled);
int sc_polled_barrier(MPI_Comm comm, int polled);
/* MPI_Sendrecv as a receive and a send started together. */
int sc_polled_sendrecv(const void *sendbuf, int scount, MPI_Datatype sdt, int dest, int stag, void *recvbuf,
                       int rcount, MPI_Datatype rdt, int source, int rtag, MPI_Comm comm, int polled);
#endif
