/* mpi_ring: the groups ring's point-to-point all-reduce (plugin/
 * ring_allreduce.c) on its own, without the preload, over member lists of
 * every shape the engine makes: all ranks, every rank but one, two ranks,
 * one rank, unsorted gaps.  Counts below the member count (empty chunks),
 * odd counts and a large one; float and double; in place and not.
 *   - integer-valued inputs: the sum is exact, compared element by element;
 *   - fractional inputs: every member holds the same bits (compared by an
 *     all-gather of a checksum among all ranks), and the sum is within
 *     rounding of a double-precision reference;
 *   - non-members' buffers are untouched.
 * Then the polled collectives the ring and the engines wait with (plugin/
 * polled_coll.h): integer-valued sums exact (also with some ranks in
 * place and others not), a reduction's at its root
 * only, a large broadcast's bits everywhere, a barrier, and a bad root
 * answered with an error code rather than a hang; and the ring again, its
 * exchanges tested (what STARCOLL_COLL_WAIT=polled, or auto with two
 * engines in a process, makes).
 * Prints one line per case and closes with "N passed, N failed". */
#include <mpi.h>
#include "mpi_check.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "polled_coll.h"
#include "ring_allreduce.h"

static int passed, failed;
static int polled;   /* the ring's exchanges tested: after polled_cases */

static void verdict(int rank, int good, const char *what)
{
    int all = 0;
    MPI_CHECK(MPI_Allreduce(&good, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (all) passed++; else failed++;
    if (rank == 0) printf("%s - %s\n", all ? "ok  " : "FAIL", what);
}

static double input(int rank, long i, int fractional)
{
    return fractional ? (double)(rank + 1) * 0.1 + (double)i * 1e-3 : (double)((rank * 7 + i) % 13);
}

static uint64_t checksum(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void one_case(int rank, int size, const int *members, int m, long count, int dbl, int fractional, int inplace)
{
    int me = -1;
    for (int i = 0; i < m; i++) if (members[i] == rank) me = i;
    size_t el = dbl ? sizeof(double) : sizeof(float);
    char *send = malloc((size_t)count * el + 1), *recv = malloc((size_t)count * el + 1), *tmp = malloc(((size_t)count / (size_t)m + 1) * el);
    for (long i = 0; i < count; i++) {
        double v = input(rank, i, fractional);
        if (dbl) ((double *)send)[i] = v; else ((float *)send)[i] = (float)v;
    }
    memset(recv, 0x5a, (size_t)count * el + 1);
    int good = 1;
    if (me >= 0) {
        if (inplace) memcpy(recv, send, (size_t)count * el);
        int rc = sc_ring_allreduce(inplace ? MPI_IN_PLACE : send, recv, count, dbl ? MPI_DOUBLE : MPI_FLOAT,
                                   dbl ? SC_DK_DOUBLE : SC_DK_FLOAT, members, m, me, MPI_COMM_WORLD, 99, tmp,
                                   polled);
        good = rc == MPI_SUCCESS;
        for (long i = 0; good && i < count; i++) {
            double want = 0;
            for (int j = 0; j < m; j++) want += dbl ? input(members[j], i, fractional) : (double)(float)input(members[j], i, fractional);
            double got = dbl ? ((double *)recv)[i] : ((float *)recv)[i];
            double tol = fractional ? (dbl ? 1e-12 : 1e-5) * (fabs(want) + 1) : 0;
            if (fabs(got - want) > tol) good = 0;
        }
    } else {
        for (long i = 0; i < count * (long)el; i++) good &= (unsigned char)recv[i] == 0x5a;
    }
    good &= (unsigned char)recv[(size_t)count * el] == 0x5a;   /* nothing written past the end */
    uint64_t mine = me >= 0 ? checksum((unsigned char *)recv, (size_t)count * el) : 0;
    uint64_t *all = malloc(sizeof(uint64_t) * (size_t)size);
    MPI_CHECK(MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD));
    uint64_t first = all[members[0]];
    for (int j = 0; j < m; j++) good &= all[members[j]] == first;
    char what[160];
    snprintf(what, sizeof what, "%d of %d ranks, count %ld, %s, %s, %s: sum and identical replicas", m, size, count,
             dbl ? "double" : "float", fractional ? "fractional" : "integer", inplace ? "in place" : "apart");
    verdict(rank, good, what);
    free(all);
    free(send);
    free(recv);
    free(tmp);
}

static void polled_cases(int rank, int size)
{
    enum { N = 1001, BIG = 1 << 18 };
    double in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = rank + i, out[i] = -1;
    int good = MPI_CHECK(sc_polled_allreduce(in, out, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, 1)) == MPI_SUCCESS;
    for (int i = 0; i < N; i++) good &= out[i] == (double)size * i + size * (size - 1) / 2.0;
    verdict(rank, good, "polled all-reduce: the exact sum on every rank");

    /* odd ranks in place, even ones not: Open MPI 4.1.4's own
     * MPI_Iallreduce fails that (polled_coll.c) */
    enum { MIXED = 1 << 16 };
    float *mixed_in = malloc(sizeof(float) * MIXED), *mixed = malloc(sizeof(float) * MIXED);
    good = mixed_in && mixed;
    if (good) {
        for (int i = 0; i < MIXED; i++) mixed_in[i] = mixed[i] = (float)(rank + i % 7);
        good = MPI_CHECK(sc_polled_allreduce(rank % 2 ? MPI_IN_PLACE : mixed_in, mixed, MIXED, MPI_FLOAT, MPI_SUM,
                                             MPI_COMM_WORLD, 1)) == MPI_SUCCESS;
        for (int i = 0; i < MIXED; i++) good &= mixed[i] == (float)(size * (i % 7)) + size * (size - 1) / 2.0f;
    }
    free(mixed_in);
    free(mixed);
    verdict(rank, good, "polled all-reduce, odd ranks in place: the exact sum on every rank");

    int root = size - 1;
    for (int i = 0; i < N; i++) out[i] = -1;
    good = MPI_CHECK(sc_polled_reduce(in, out, N, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD, 1)) == MPI_SUCCESS;
    for (int i = 0; i < N; i++) good &= rank == root ? out[i] == (double)size * i + size * (size - 1) / 2.0 : out[i] == -1;
    verdict(rank, good, "polled reduce: the exact sum at the root, nothing written elsewhere");

    float *big = malloc(sizeof(float) * BIG);
    good = big != NULL;
    if (big) {
        for (int i = 0; i < BIG; i++) big[i] = rank == root ? (float)i * 0.25f : -1.0f;
        good = MPI_CHECK(sc_polled_bcast(big, BIG, MPI_FLOAT, root, MPI_COMM_WORLD, 1)) == MPI_SUCCESS;
        for (int i = 0; i < BIG; i++) good &= big[i] == (float)i * 0.25f;
    }
    free(big);
    verdict(rank, good, "polled broadcast of 1 MiB: the root's bits on every rank");

    verdict(rank, MPI_CHECK(sc_polled_barrier(MPI_COMM_WORLD, 1)) == MPI_SUCCESS, "polled barrier returns");

    /* MPI_ERRORS_RETURN: the bad root is refused at the start, every rank alike */
    int x = 0;
    verdict(rank, sc_polled_bcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD, 1) != MPI_SUCCESS,
            "polled broadcast from a root past the last rank: an error code, no hang");
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int lists[5][64], lens[5] = {0};
    for (int r = 0; r < size && r < 64; r++) lists[0][lens[0]++] = r;               /* everybody */
    for (int r = 1; r < size && r < 64; r++) lists[1][lens[1]++] = r;               /* all but rank 0 */
    lists[2][lens[2]++] = 0;                                                         /* two, far apart */
    if (size > 1) lists[2][lens[2]++] = size - 1;
    lists[3][lens[3]++] = size / 2;                                                  /* one */
    for (int r = 0; r < size && r < 64; r += 2) lists[4][lens[4]++] = r;            /* gaps */
    const long counts[] = {1, 2, 5, 1001, 1 << 18};
    for (int l = 0; l < 5; l++)
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
            for (int v = 0; v < 4; v++)
                one_case(rank, size, lists[l], lens[l], counts[c], v & 1, (v >> 1) & 1, (int)(c + (size_t)v) % 2);
    polled_cases(rank, size);
    polled = 1;
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)   /* the ring's point-to-point, tested */
        one_case(rank, size, lists[1], lens[1], counts[c], (int)c % 2, 1, (int)(c / 2) % 2);
    if (rank == 0) printf("%d passed, %d failed\n", passed, failed);
    MPI_CHECK(MPI_Finalize());
    return failed ? 1 : 0;
}
