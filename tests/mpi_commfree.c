/* mpi_commfree: user communicators created, used for eligible calls and
 * freed, a few hundred times over.  starcoll caches per-communicator state
 * (hier sub-communicators) on an attribute, so this checks that:
 *   - every result still equals PMPI_Allreduce, although each new
 *     communicator has a different grouping from the one freed before it
 *     and may well reuse its handle (stale state would give wrong sums);
 *   - a dup of a used communicator stays exact after its parent is freed
 *     (the cached state must not be shared and freed under it);
 *   - the process does not grow: resident memory after the rounds stays
 *     within a bound of what it was after a warm-up.
 * Inputs are integer-valued, so results must be bitwise equal in any mode.
 * Communicator management goes through MPI_ as an application would; only
 * the reference reductions and the bookkeeping use PMPI_.
 *
 * Rank 0 prints "expect: eligible=N passthrough=N" (summed over ranks,
 * valid when STARCOLL_MIN_BYTES=0) for the driving script.
 *
 * Usage: mpi_commfree [-n ROUNDS] [-w WARMUP] [-b BOUND_KIB] */
#define _POSIX_C_SOURCE 200809L   /* getopt */
#include <mpi.h>
#include "mpi_check.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { NPATTERNS = 6, MAX_COUNT = 1000, MAX_DETAILS = 5 };

typedef struct commfree_state {
    int world_rank, world_size;
    unsigned long long eligible_calls, passthrough_calls;
    unsigned long calls_checked, calls_failed;
    int details_printed;
    float fsend[MAX_COUNT], frecv[MAX_COUNT], fref[MAX_COUNT];
    double dbuf[MAX_COUNT], dref[MAX_COUNT];
} commfree_state;

/* Resident set size in KiB, from /proc/self/statm; -1 when unreadable. */
static long resident_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    long size, resident;
    int n = fscanf(f, "%ld %ld", &size, &resident);
    fclose(f);
    if (n != 2) return -1;
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* A different grouping per pattern, so a communicator that reuses a freed
 * one's handle rarely has its membership or rank order.  Sets *comm to
 * MPI_COMM_NULL on a rank left out. */
static int make_comm(int pattern, int round, int rank, int size, MPI_Comm *comm)
{
    switch (pattern) {
    case 0: return MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, comm);
    case 1: return MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, -rank, comm);
    case 2: return MPI_Comm_dup(MPI_COMM_WORLD, comm);
    case 3: return MPI_Comm_split(MPI_COMM_WORLD, rank % 3, rank, comm);
    case 4: return MPI_Comm_split(MPI_COMM_WORLD, 0, (rank + round) % size, comm);
    default: /* one rank, changing every round, left out */
        return MPI_Comm_split(MPI_COMM_WORLD, rank == round % size ? MPI_UNDEFINED : 0, rank, comm);
    }
}

static void note_failure(commfree_state *st, int round, const char *what, int count)
{
    st->calls_failed++;
    if (st->details_printed++ < MAX_DETAILS)
        printf("rank %d: FAIL round %d: %s, count %d, differs from PMPI_Allreduce\n", st->world_rank, round, what,
               count);
}

/* Eligible calls on comm, each compared bitwise with PMPI_Allreduce. */
static void exact_calls(commfree_state *st, MPI_Comm comm, int round)
{
    int size;
    MPI_CHECK(PMPI_Comm_size(comm, &size));
    static const int counts[] = {1000, 1};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int n = counts[k];
        for (int i = 0; i < n; i++) st->fsend[i] = (float)((st->world_rank * 31 + i * 7 + round) % 101 - 50);
        MPI_CHECK(MPI_Allreduce(st->fsend, st->frecv, n, MPI_FLOAT, MPI_SUM, comm));
        MPI_CHECK(PMPI_Allreduce(st->fsend, st->fref, n, MPI_FLOAT, MPI_SUM, comm));
        st->calls_checked++;
        if (memcmp(st->frecv, st->fref, (size_t)n * sizeof(float))) note_failure(st, round, "float SUM", n);
        size >= 2 ? st->eligible_calls++ : st->passthrough_calls++;
    }
    /* In place, double. */
    int n = 7;
    for (int i = 0; i < n; i++) st->dbuf[i] = st->dref[i] = (double)(st->world_rank * 1000 + i - round);
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, st->dbuf, n, MPI_DOUBLE, MPI_SUM, comm));
    MPI_CHECK(PMPI_Allreduce(MPI_IN_PLACE, st->dref, n, MPI_DOUBLE, MPI_SUM, comm));
    st->calls_checked++;
    if (memcmp(st->dbuf, st->dref, (size_t)n * sizeof(double))) note_failure(st, round, "double SUM in place", n);
    size >= 2 ? st->eligible_calls++ : st->passthrough_calls++;
}

/* Two communicators alive at once, freed in creation order (not LIFO);
 * then a dup of a used communicator that outlives its parent. */
static void one_round(commfree_state *st, int round, unsigned long *dup_checks, unsigned long *dup_failed)
{
    MPI_Comm a, b;
    MPI_CHECK(make_comm(round % NPATTERNS, round, st->world_rank, st->world_size, &a));
    MPI_CHECK(make_comm((round + 3) % NPATTERNS, round, st->world_rank, st->world_size, &b));
    if (a != MPI_COMM_NULL) exact_calls(st, a, round);
    if (b != MPI_COMM_NULL) exact_calls(st, b, round);
    if (a != MPI_COMM_NULL) exact_calls(st, a, round);
    if (a != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_free(&a));
    if (b != MPI_COMM_NULL) exact_calls(st, b, round);
    if (round % 10 == 0 && b != MPI_COMM_NULL) {
        MPI_Comm d;
        MPI_CHECK(MPI_Comm_dup(b, &d));
        MPI_CHECK(MPI_Comm_free(&b));
        unsigned long before = st->calls_failed;
        exact_calls(st, d, round);
        (*dup_checks)++;
        if (st->calls_failed != before) (*dup_failed)++;
        MPI_CHECK(MPI_Comm_free(&d));
    }
    if (b != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_free(&b));
}

int main(int argc, char **argv)
{
    static commfree_state st;   /* large buffers: not on the stack */
    int rounds = 300, warmup = 30;
    long bound_kib = 1024;   /* leaking one communicator (about 8 KiB) per round would exceed it */
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(PMPI_Comm_rank(MPI_COMM_WORLD, &st.world_rank));
    MPI_CHECK(PMPI_Comm_size(MPI_COMM_WORLD, &st.world_size));
    int opt, bad_args = 0;
    while ((opt = getopt(argc, argv, "n:w:b:")) != -1) {
        switch (opt) {
        case 'n': rounds = atoi(optarg); break;
        case 'w': warmup = atoi(optarg); break;
        case 'b': bound_kib = atol(optarg); break;
        default: bad_args = 1;
        }
    }
    if (bad_args || rounds <= warmup || warmup < 0 || bound_kib <= 0 || st.world_size < 2) {
        if (st.world_rank == 0)
            fprintf(stderr, "usage: mpi_commfree [-n ROUNDS] [-w WARMUP < ROUNDS] [-b BOUND_KIB], on 2 ranks or more\n");
        MPI_CHECK(MPI_Finalize());
        return 2;
    }

    unsigned long dup_checks = 0, dup_failed = 0;
    long rss_start = -1;
    for (int round = 0; round < rounds; round++) {
        if (round == warmup) rss_start = resident_kib();
        one_round(&st, round, &dup_checks, &dup_failed);
    }
    long rss_end = resident_kib();
    int rss_unreadable = rss_start < 0 || rss_end < 0;
    long growth = rss_unreadable ? 0 : rss_end - rss_start;

    unsigned long counts[4] = {st.calls_checked, st.calls_failed, dup_checks, dup_failed}, tot_counts[4];
    MPI_CHECK(PMPI_Reduce(counts, tot_counts, 4, MPI_UNSIGNED_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    long g[2] = {growth, rss_unreadable}, gmax[2];   /* largest growth; any rank unable to read it */
    MPI_CHECK(PMPI_Reduce(g, gmax, 2, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD));
    unsigned long long calls[2] = {st.eligible_calls, st.passthrough_calls}, tot_calls[2];
    MPI_CHECK(PMPI_Reduce(calls, tot_calls, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    int my_failures = sc_mpi_failures, mpi_failures = 0;
    MPI_CHECK(PMPI_Reduce(&my_failures, &mpi_failures, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));

    int failed = 0, passed = 0;
    if (st.world_rank == 0) {
        printf("mpi_commfree: %d ranks, %d rounds of two communicators created, used and freed "
               "(STARCOLL_MODE=%s STARCOLL_GROUP=%s)\n",
               st.world_size, rounds, getenv("STARCOLL_MODE") ? getenv("STARCOLL_MODE") : "(unset)",
               getenv("STARCOLL_GROUP") ? getenv("STARCOLL_GROUP") : "(unset)");
        if (tot_counts[1] == 0 && tot_counts[0] > 0) {
            printf("ok   - %lu calls on freshly grouped communicators equal PMPI_Allreduce\n", tot_counts[0]);
            passed++;
        } else {
            printf("FAIL - %lu of %lu calls differ from PMPI_Allreduce (stale or wrong state)\n", tot_counts[1],
                   tot_counts[0]);
            failed++;
        }
        if (tot_counts[3] == 0 && tot_counts[2] > 0) {
            printf("ok   - %lu dups of used communicators exact after their parents were freed\n", tot_counts[2]);
            passed++;
        } else {
            printf("FAIL - %lu of %lu dups of used communicators gave wrong results after their parents were freed\n",
                   tot_counts[3], tot_counts[2]);
            failed++;
        }
        if (gmax[1]) {
            printf("FAIL - cannot read /proc/self/statm to measure resident memory\n");
            failed++;
        } else if (gmax[0] <= bound_kib) {
            printf("ok   - resident memory grew by at most %ld KiB over rounds %d..%d (bound %ld KiB)\n", gmax[0],
                   warmup, rounds, bound_kib);
            passed++;
        } else {
            printf("FAIL - resident memory grew by %ld KiB over rounds %d..%d (bound %ld KiB)\n", gmax[0], warmup,
                   rounds, bound_kib);
            failed++;
        }
        if (mpi_failures == 0) {
            printf("ok   - every MPI call returned MPI_SUCCESS\n");
            passed++;
        } else {
            printf("FAIL - %d MPI calls returned an error\n", mpi_failures);
            failed++;
        }
        printf("expect: eligible=%llu passthrough=%llu\n", tot_calls[0], tot_calls[1]);
        printf("%d passed, %d failed\n", passed, failed);
        fflush(stdout);
    }
    MPI_CHECK(PMPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    return failed ? 1 : 0;
}
