/* The agreement collectives (agree.h). */
#include "agree.h"
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "eligibility.h"
#include "polled_coll.h"

/* The shape most ranks call with (ties: the lowest rank's among the most
 * common); *others gets how many ranks call another.  Only after a vote
 * found the shapes unequal, so its Allgather costs nothing on good paths. */
static int plurality(MPI_Comm agree, uint64_t mine, uint64_t *winner, int *others, int polled)
{
    int n;
    int rc = PMPI_Comm_size(agree, &n);
    if (rc != MPI_SUCCESS) return rc;
    unsigned long long *all = malloc(sizeof *all * (size_t)n), m = mine;
    if (!all) return MPI_ERR_NO_MEM;
    rc = sc_polled_allgather(&m, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, agree, polled);
    if (rc == MPI_SUCCESS) {
        int best = 0, best_n = 0;
        for (int r = 0; r < n; r++) {
            int c = 0;
            for (int q = 0; q < n; q++) c += all[q] == all[r];
            if (c > best_n) {
                best_n = c;
                best = r;
            }
        }
        *winner = all[best];
        *others = n - best_n;
    }
    free(all);
    return rc;
}

int sc_agree_learning(sc_identity *id, MPI_Comm agree, const sc_call_key *k, sc_learn_outcome *outcome, int *others,
                      int polled)
{
    long vote[SC_VOTE_LEN], agreed[SC_VOTE_LEN];
    *others = 0;
    for (;;) {
        sc_identity_vote(id, k, vote);
        int rc = sc_polled_allreduce(vote, agreed, SC_VOTE_LEN, MPI_LONG, MPI_MAX, agree, polled);
        if (rc != MPI_SUCCESS) {
            agreed[SC_VOTE_SHAPE] = 1;   /* unequal: the call leaves the history */
            agreed[SC_VOTE_NSHAPE] = 0;
            sc_identity_decide(id, agreed);
            return rc;
        }
        *outcome = sc_identity_decide(id, agreed);
        if (*outcome != SC_LEARN_DISAGREE) return MPI_SUCCESS;
        uint64_t winner = 0;
        rc = plurality(agree, k->shape, &winner, others, polled);
        if (rc != MPI_SUCCESS) return rc;
        /* Not the call most ranks make: it fails and does not count.  The
         * others keep their call and vote again with this rank's next. */
        if (winner != k->shape) return MPI_SUCCESS;
    }
}

static int first_is_nan(const void *buf, int dkind)
{
    if (dkind == SC_DK_FLOAT) return isnan(((const float *)buf)[0]);
    if (dkind == SC_DK_DOUBLE) return isnan(((const double *)buf)[0]);
    return 0;
}

/* The second vote: [off, -off, shape, -shape, rank] reduced with MAX; ranks
 * on the pattern vote LONG_MIN for the shape fields. */
static int vote_off(MPI_Comm vote_comm, int off, uint64_t shape, sc_ls_outcome *out, int *first_off, int polled)
{
    int me;
    int rc = PMPI_Comm_rank(vote_comm, &me);
    if (rc != MPI_SUCCESS) return rc;
    long v[5] = {off, -off, off ? (long)shape : LONG_MIN, off ? -(long)shape : LONG_MIN, off ? me : -1}, r[5];
    rc = sc_polled_allreduce(v, r, 5, MPI_LONG, MPI_MAX, vote_comm, polled);
    if (rc != MPI_SUCCESS) return rc;
    *first_off = (int)r[4];
    if (r[0] == 0) *out = SC_LS_DONE;                                /* a NaN of the data itself */
    else if (-r[1] == 1 && r[2] == -r[3]) *out = SC_LS_STRAY;        /* every rank off, one shape */
    else *out = SC_LS_REJECT;
    return MPI_SUCCESS;
}

int sc_lockstep_on(sc_reduce_fn reduce, void *ctx, MPI_Comm vote_comm, const void *sendbuf, void *recvbuf,
                   int count, MPI_Datatype dt, int dkind, sc_ls_outcome *out, int *first_off, int polled)
{
    *out = SC_LS_DONE;
    *first_off = -1;
    int rc = reduce(ctx, sendbuf, recvbuf, count, dt);
    if (rc != MPI_SUCCESS || !first_is_nan(recvbuf, dkind)) return rc;
    return vote_off(vote_comm, 0, 0, out, first_off, polled);
}

int sc_lockstep_off(sc_reduce_fn reduce, void *ctx, MPI_Comm vote_comm, void *scratch, int exp_count, int exp_dkind,
                    uint64_t shape, sc_ls_outcome *out, int *first_off, int polled)
{
    *out = SC_LS_REJECT;
    *first_off = -1;
    /* No eligible call expected here (a step of none): no rank on the
     * pattern makes a collective to match, so the vote alone. */
    if (exp_count <= 0) return vote_off(vote_comm, 1, shape, out, first_off, polled);
    size_t es = sc_dkind_size((sc_dkind)exp_dkind);
    memset(scratch, 0, es * (size_t)exp_count);
    if (exp_dkind == SC_DK_FLOAT) ((float *)scratch)[0] = NAN;
    else ((double *)scratch)[0] = NAN;
    MPI_Datatype dt = exp_dkind == SC_DK_FLOAT ? MPI_FLOAT : MPI_DOUBLE;
    int rc = reduce(ctx, MPI_IN_PLACE, scratch, exp_count, dt);
    if (rc != MPI_SUCCESS) return rc;
    return vote_off(vote_comm, 1, shape, out, first_off, polled);
}
