/* Ring all-reduce over a member list: see ring_allreduce.h. */
#include "ring_allreduce.h"
#include <string.h>
#include "kernels.h"
#include "polled_coll.h"

/* Chunk c of m: elements [first, first + n). */
static void chunk(long count, int m, int c, long *first, long *n)
{
    long base = count / m, extra = count % m;
    *first = (long)c * base + (c < extra ? c : extra);
    *n = base + (c < extra ? 1 : 0);
}

int sc_ring_allreduce(const void *sendbuf, void *recvbuf, long count, MPI_Datatype dt, sc_dkind dk,
                      const int *members, int m, int me, MPI_Comm comm, int tag, void *tmp, int polled)
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
        int rc = sc_polled_sendrecv(buf + sf * el, (int)sn, dt, right, tag, tmp, (int)rn, dt, left, tag, comm,
                                    polled);
        if (rc != MPI_SUCCESS) return rc;
        sc_sum_into(buf + rf * el, tmp, (size_t)rn, dk);
    }
    /* All-gather: pass the summed chunks on around the ring. */
    for (int step = 0; step < m - 1; step++) {
        long sf, sn, rf, rn;
        chunk(count, m, (me + 1 - step + m) % m, &sf, &sn);
        chunk(count, m, (me - step + m) % m, &rf, &rn);
        int rc = sc_polled_sendrecv(buf + sf * el, (int)sn, dt, right, tag, buf + rf * el, (int)rn, dt, left, tag,
                                    comm, polled);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}
