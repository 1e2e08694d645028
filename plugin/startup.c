/* What every rank checks with the others at MPI_Init, before starcoll
 * does anything collective: that every rank has the library, that all
 * hold the same policy, and how many hosts there are. */
#include "startup.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "runtime.h"

/* A tag an application is unlikely to use on MPI_COMM_WORLD. */
enum { TAG_HELLO = 32731, TAG_HELLO_OK = 32732 };
enum { HELLO_OK = 1, HELLO_PARTIAL = 2 };
#define HELLO_TIMEOUT_S 10.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void nap(void)
{
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
}

/* libstarcoll.so preloaded on some ranks only: the ranks without it would
 * make none of starcoll's collectives, which would then pair with the
 * application's own (memory corruption, MPI_ERR_TRUNCATE).  So before any
 * collective, every rank with the library says so to rank 0 point to
 * point, and rank 0 answers each: all here, or (after HELLO_TIMEOUT_S)
 * not.  A rank that hears no answer (rank 0 lacks the library) gives up
 * after the same time.  1 when every rank has the library. */
static int everyone_has_the_library(void)
{
    int n = sc_rt.world_size, me = sc_rt.world_rank, hello = 1, answer = 0, flag = 0;
    if (n < 2) return 1;
    if (me != 0) {
        MPI_Request req;
        if (PMPI_Isend(&hello, 1, MPI_INT, 0, TAG_HELLO, MPI_COMM_WORLD, &req) != MPI_SUCCESS) return 0;
        double until = now_s() + HELLO_TIMEOUT_S + 5;   /* longer than rank 0 waits: hear its verdict */
        while (!flag && now_s() < until) {
            if (PMPI_Iprobe(0, TAG_HELLO_OK, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) break;
            if (!flag) nap();
        }
        if (flag) PMPI_Recv(&answer, 1, MPI_INT, 0, TAG_HELLO_OK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int done = 0;
        if (flag) PMPI_Wait(&req, MPI_STATUS_IGNORE);
        else if (PMPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) PMPI_Request_free(&req);
        if (!flag && (me == 1 || me == n - 1))   /* two lines at most, whoever has the library */
            fprintf(stderr, "starcoll: rank %d: rank 0 did not answer starcoll's start-up handshake in %.0f s: "
                    "libstarcoll.so seems preloaded on some ranks only (LD_PRELOAD must reach every rank: mpirun -x "
                    "LD_PRELOAD=..., or starcoll-run); the ranks with it pass every call through untouched\n",
                    me, HELLO_TIMEOUT_S + 5);
        return flag && answer == HELLO_OK;
    }
    unsigned char *seen = calloc((size_t)n, 1);
    if (!seen) return 0;
    int got = 1;
    double until = now_s() + HELLO_TIMEOUT_S;
    while (got < n && now_s() < until) {
        MPI_Status st;
        if (PMPI_Iprobe(MPI_ANY_SOURCE, TAG_HELLO, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS) break;
        if (!flag) {
            nap();
            continue;
        }
        if (PMPI_Recv(&hello, 1, MPI_INT, st.MPI_SOURCE, TAG_HELLO, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) break;
        if (!seen[st.MPI_SOURCE]) got++;
        seen[st.MPI_SOURCE] = 1;
    }
    answer = got == n ? HELLO_OK : HELLO_PARTIAL;
    for (int r = 1; r < n; r++)
        if (seen[r]) PMPI_Send(&answer, 1, MPI_INT, r, TAG_HELLO_OK, MPI_COMM_WORLD);
    if (answer != HELLO_OK) {
        char missing[200] = "";
        size_t at = 0;
        int listed = 0;
        for (int r = 1; r < n && at + 16 < sizeof missing; r++)
            if (!seen[r]) at += (size_t)snprintf(missing + at, sizeof missing - at, "%s%d", listed++ ? "," : "", r);
        fprintf(stderr, "starcoll: libstarcoll.so is loaded on %d of %d ranks (not on rank(s) %s%s): LD_PRELOAD must "
                "reach every rank (mpirun -x LD_PRELOAD=..., or starcoll-run); every call passes through untouched\n",
                got, n, missing, listed < n - got ? ",..." : "");
    }
    free(seen);
    return answer == HELLO_OK;
}

static void count_hosts(void)
{
    MPI_Comm node;
    sc_rt.nhosts = 1;
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return;
    int node_rank, leaders = 0;
    PMPI_Comm_rank(node, &node_rank);
    int one = node_rank == 0;
    if (PMPI_Allreduce(&one, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS) sc_rt.nhosts = leaders;
    PMPI_Comm_free(&node);
}

/* All ranks must hold the same policy: differences that change what is
 * reduced make every rank run sync.  Settings that change no sum must
 * still be the same everywhere (a rank skipping the report's collectives
 * would hang MPI_Finalize; a schedule known to one rank only decides or
 * not by who coordinates): where they differ, every rank takes rank 0's,
 * and rank 0 says which.  One reduction compares them all: each hash with
 * MPI_MAX, and its complement, so equal everywhere means max == ~max(~h). */
static void agree_on_settings(void)
{
    sc_policy *p = &sc_rt.policy;
    char stall[32], verbose[16], report[SC_PATH_LEN + 8];
    snprintf(stall, sizeof stall, "%.17g", p->stall_s);
    snprintf(verbose, sizeof verbose, "%d", p->verbose);
    snprintf(report, sizeof report, "%d:%s", (int)p->report, p->report_path);
    const char *name[] = {"STARCOLL_REPORT", "STARCOLL_TRACE", "STARCOLL_SCHEDULE", "STARCOLL_STALL", "STARCOLL_VERBOSE",
                          "STARCOLL_PAPI_EVENTS", "STARCOLL_NIC"};
    const char *value[] = {report, p->trace, p->schedule, stall, verbose, p->papi_events, p->nic};
    enum { NV = sizeof name / sizeof name[0] };
    unsigned long long v[2 * (NV + 1)], r[2 * (NV + 1)];
    v[0] = sc_policy_hash(p);
    for (int i = 0; i < NV; i++) v[2 * (i + 1)] = sc_hash_bytes(SC_HASH_SEED, value[i], strlen(value[i]));
    for (int i = 0; i <= NV; i++) v[2 * i + 1] = ~v[2 * i];
    if (PMPI_Allreduce(v, r, 2 * (NV + 1), MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) return;
    if (r[0] != ~r[1]) {
        if (sc_rt.world_rank == 0)
            fprintf(stderr, "starcoll: ranks disagree on the policy (STARCOLL_* differ between ranks); using sync everywhere\n");
        p->mode = SC_MODE_SYNC;
        p->inject.enabled = 0;
        p->cuda_off = 0;   /* a rank not looking would hand MPI a device buffer: every rank looks */
        p->coll_wait = SC_WAIT_BLOCKING;   /* blocking or not must match on every rank */
        sc_rt.policy_disagreed = 1;   /* STARCOLL_MIN_BYTES or STARCOLL_EXACT may differ too: no collective may hang on eligibility */
    }
    char differ[200] = "";
    size_t at = 0;
    int ndiffer = 0;
    for (int i = 0; i < NV; i++)
        if (r[2 * (i + 1)] != ~r[2 * (i + 1) + 1]) {
            at += (size_t)snprintf(differ + at, sizeof differ - at, "%s%s", at ? ", " : "", name[i]);
            ndiffer++;
        }
    if (!ndiffer) return;
    int kind = (int)p->report;
    PMPI_Bcast(&kind, 1, MPI_INT, 0, MPI_COMM_WORLD);
    p->report = (sc_report_kind)kind;
    PMPI_Bcast(p->report_path, sizeof p->report_path, MPI_CHAR, 0, MPI_COMM_WORLD);
    PMPI_Bcast(p->trace, sizeof p->trace, MPI_CHAR, 0, MPI_COMM_WORLD);
    PMPI_Bcast(p->schedule, sizeof p->schedule, MPI_CHAR, 0, MPI_COMM_WORLD);
    PMPI_Bcast(&p->stall_s, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    PMPI_Bcast(&p->verbose, 1, MPI_INT, 0, MPI_COMM_WORLD);
    PMPI_Bcast(p->papi_events, sizeof p->papi_events, MPI_CHAR, 0, MPI_COMM_WORLD);
    PMPI_Bcast(p->nic, sizeof p->nic, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (sc_rt.world_rank == 0)
        fprintf(stderr, "starcoll: %s %s between ranks; every rank uses rank 0's\n", differ, ndiffer > 1 ? "differ" : "differs");
}

/* Values checked against the job's size. */
static void check_against_size(void)
{
    sc_inject *in = &sc_rt.policy.inject;
    for (int i = 0; in->enabled && i < in->nranks; i++)
        if (in->ranks[i] >= sc_rt.world_size) {
            if (sc_rt.world_rank == 0)
                fprintf(stderr, "starcoll: STARCOLL_INJECT names rank %d, but the job has %d ranks (0 to %d); no injection\n",
                        in->ranks[i], sc_rt.world_size, sc_rt.world_size - 1);
            in->enabled = 0;
        }
}

int sc_startup_agree(void)
{
    if (!everyone_has_the_library()) return 0;
    count_hosts();
    agree_on_settings();
    check_against_size();
    return 1;
}
