/* The coordinator's membership and mode decisions for a running engine.
 *
 * Fixed modes: sync, hier and quorum keep every rank a ring member; groups
 * re-evaluates every STARCOLL_EPOCH steps which ranks straggle (the paper's
 * threshold: mean compute time over the epoch above 1.2 times the fastest
 * rank's) and makes them children of the members with the most headroom.
 * auto hands the same per-rank features to the selector (selector/). */
#include "engine_internal.h"
#include <stdlib.h>
#include <string.h>
#include "runtime.h"
#include "selector.h"

struct sc_decider {
    sc_engine *e;
    int n;
    double *compute_sum;        /* per rank, this epoch */
    long *steps;                /* per rank, this epoch */
    long coord_steps;           /* steps the coordinator itself reported this epoch */
    unsigned char *candidate;   /* stragglers proposed last epoch */
    int have_candidate;
    sc_selector *sel;           /* auto */
    double *feat;               /* auto: nranks x SC_NFEAT, the latest step of each rank */
    long step;
    sc_decision dec;
};

struct sc_decider *sc_decider_new(sc_engine *e)
{
    struct sc_decider *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->e = e;
    d->n = e->n;
    d->compute_sum = calloc((size_t)e->n, sizeof(double));
    d->steps = calloc((size_t)e->n, sizeof(long));
    d->candidate = calloc((size_t)e->n, 1);
    if (!d->compute_sum || !d->steps || !d->candidate) {
        sc_decider_free(d);
        return NULL;
    }
    return d;
}

void sc_decider_free(struct sc_decider *d)
{
    if (!d) return;
    free(d->compute_sum);
    free(d->steps);
    free(d->candidate);
    free(d);
}

void sc_decider_observe(struct sc_decider *d, int rank, const double *feat)
{
    if (!d || rank < 0 || rank >= d->n) return;
    d->compute_sum[rank] += feat[SC_F_COMPUTE_S];
    d->steps[rank]++;
    if (rank == d->e->coord) d->coord_steps++;
}

/* groups: stragglers by the 1.2x rule, with two epochs of agreement before
 * a change so one noisy epoch does not flap the topology. */
static int decide_groups(struct sc_decider *d, long *parent)
{
    sc_engine *e = d->e;
    int n = d->n;
    double fastest = -1;
    for (int r = 0; r < n; r++)
        if (d->steps[r] > 0) {
            double m = d->compute_sum[r] / (double)d->steps[r];
            if (fastest < 0 || m < fastest) fastest = m;
        }
    if (fastest <= 0) return 0;
    unsigned char *slow = calloc((size_t)n, 1);
    int *order = malloc(sizeof(int) * (size_t)n);
    if (!slow || !order) {
        free(slow);
        free(order);
        return 0;
    }
    int nslow = 0, nmembers = 0;
    for (int r = 0; r < n; r++) {
        /* A rank with no step reported this epoch is slower still. */
        double m = d->steps[r] > 0 ? d->compute_sum[r] / (double)d->steps[r] : 1e30;
        slow[r] = r != e->coord && !e->gone[r] && m > 1.2 * fastest;
        nslow += slow[r];
    }
    if (n - nslow < 2) memset(slow, 0, (size_t)n);   /* a ring needs two members */
    int same_as_now = 1, same_as_candidate = d->have_candidate;
    for (int r = 0; r < n; r++) {
        same_as_now &= slow[r] == (e->parent[r] != -1);
        same_as_candidate &= slow[r] == d->candidate[r];
    }
    memcpy(d->candidate, slow, (size_t)n);
    d->have_candidate = 1;
    int change = !same_as_now && same_as_candidate;
    if (change) {
        /* Parents: the members with the least compute (most headroom),
         * children dealt round-robin so no parent takes them all. */
        for (int r = 0; r < n; r++)
            if (!slow[r]) order[nmembers++] = r;
        for (int i = 1; i < nmembers; i++)
            for (int j = i; j > 0; j--) {
                int a = order[j - 1], b = order[j];
                double ma = d->steps[a] ? d->compute_sum[a] / (double)d->steps[a] : 0;
                double mb = d->steps[b] ? d->compute_sum[b] / (double)d->steps[b] : 0;
                if (mb < ma || (mb == ma && b < a)) {
                    order[j - 1] = b;
                    order[j] = a;
                } else
                    break;
            }
        int next = 0;
        for (int r = 0; r < n; r++) parent[r] = slow[r] ? order[next++ % nmembers] : -1;
    }
    free(slow);
    free(order);
    return change;
}

int sc_decider_decide(struct sc_decider *d, long *parent, sc_mode *mode, int *k)
{
    if (!d || d->coord_steps < sc_rt.policy.epoch) return 0;
    int change = 0;
    if (sc_rt.policy.mode == SC_MODE_GROUPS) {
        change = decide_groups(d, parent);
        *mode = SC_MODE_GROUPS;
    }
    (void)k;
    memset(d->compute_sum, 0, sizeof(double) * (size_t)d->n);
    memset(d->steps, 0, sizeof(long) * (size_t)d->n);
    d->coord_steps = 0;
    return change;
}
