/* Ring all-reduce over a member list: see ring_allreduce.h. */
#include "ring_allreduce.h"
#include <string.h>
#include "kernels.h"
#include "polite_wait.h"

/* One hop: receive from the left while sending to the right, waiting
 * politely (polite_wait.h).  A blocking MPI_Sendrecv polls: with the
 * members' engine threads, application threads and other engines sharing
 * few cores, every member spinning in its hop took the CPU the member it
 * waited for needed, and single calls of a loaded soak took seconds. */
static int hop(const void *sbuf, long sn, void *rbuf, long rn, MPI_Datatype dt, int right, int left, int tag,
               MPI_Comm comm)
{
    MPI_Request req[2];
    MPI_Status st[2];
    int rc = PMPI_Irecv(rbuf, (int)rn, dt, left, tag, comm, &req[0]);
    if (rc != MPI_SUCCESS) return rc;
    rc = PMPI_Isend(sbuf, (int)sn, dt, right, tag, comm, &req[1]);
    if (rc != MPI_SUCCESS) {
        PMPI_Cancel(&req[0]);
        PMPI_Wait(&req[0], &st[0]);
        return rc;
    }
    return sc_polite_waitall(2, req, st);
}

/* Chunk c of m: elements [first, first + n). */
static void chunk(long count, int m, int c, long *first, long *n)
{
    long base = count / m, extra = count % m;
    *first = (long)c * base + (c < extra ? c : extra);
    *n = base + (c < extra ? 1 : 0);
}

int sc_ring_allreduce(const void *sendbuf, void *recvbuf, long count, MPI_Datatype dt, sc_dkind dk,
                      const int *members, int m, int me, MPI_Comm comm, int tag, void *tmp)
{
    size_t el = dk == SC_DK_DOUBLE ? sizeof(double) : sizeof(float);
    char *buf = recvbuf;
    if (sendbuf != MPI_IN_PLACE && sendbuf != recvbuf) memcpy(buf, sendbuf, (size_t)count * el);
    if (m <= 1) return MPI_SUCCESS;
    int right = members[(me + 1) % m], left = members[(me + m - 1) % m];
    /* Reduce-scatter: after m-1 steps member me holds chunk me+1 summed. */
    for (int step = 0; step < m - 1; step++) {
        long sf, sn, rf, rn;
        chunk(count, m, (me - step + m) % m, &sf, &sn);
        chunk(count, m, (me - step - 1 + 2 * m) % m, &rf, &rn);
        int rc = hop(buf + sf * el, sn, tmp, rn, dt, right, left, tag, comm);
        if (rc != MPI_SUCCESS) return rc;
        sc_sum_into(buf + rf * el, tmp, (size_t)rn, dk);
    }
    /* All-gather: pass the summed chunks on around the ring. */
    for (int step = 0; step < m - 1; step++) {
        long sf, sn, rf, rn;
        chunk(count, m, (me + 1 - step + m) % m, &sf, &sn);
        chunk(count, m, (me - step + m) % m, &rf, &rn);
        int rc = hop(buf + sf * el, sn, buf + rf * el, rn, dt, right, left, tag, comm);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}
