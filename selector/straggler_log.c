#include "straggler_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order_stats.h"

/* Steps a classification made before the change-point test held the rank
 * slow still counts for the episode that opens. */
#define SC_SLOG_PENDING_STEPS 20

/* What the classifications found about one rank: how many found each
 * cause, the one most found, and the signal of the latest that found it. */
typedef struct finding {
    int votes[4];
    sc_cause cause;
    char signal[96];
    long step;          /* pending findings: the log's step count at the latest */
} finding;

typedef struct episode {
    sc_straggler_row row;   /* cause and signal: from why, in sc_straggler_log_rows */
    finding why;            /* the classifications while it was open */
    double ratio_sum;       /* own / median, summed over the slow steps */
    long link_steps;        /* slow steps behind a far slower link */
    int used;
} episode;

struct sc_straggler_log {
    int n;
    long steps;
    episode ep[SC_SLOG_MAX_ROWS];
    int *open;          /* per rank: its open episode, -1 none */
    int *last;          /* per rank: its latest episode, -1 none */
    double *vals, *scratch;
    double *link;       /* per rank: its link probe's time per byte over the median's (0: no probes) */
    double link_med;    /* that median, seconds per byte */
    /* per rank, what classifications found while no episode was open (a
     * decision may find the cause before the change-point test holds it) */
    finding *pending;
    /* per rank, what a decision without a classification found (children
     * from the start), kept until the rank stops being a child: each of
     * its episodes meanwhile starts from it */
    finding *start;
    unsigned char *child;   /* per rank: a child at the latest step */
    int dropped;
};

sc_straggler_log *sc_straggler_log_new(int nranks)
{
    if (nranks < 1) return NULL;
    sc_straggler_log *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->n = nranks;
    l->open = malloc(sizeof(int) * (size_t)nranks);
    l->last = malloc(sizeof(int) * (size_t)nranks);
    l->vals = malloc(sizeof(double) * (size_t)nranks);
    l->scratch = malloc(sizeof(double) * (size_t)nranks);
    l->link = calloc((size_t)nranks, sizeof(double));
    l->pending = calloc((size_t)nranks, sizeof *l->pending);
    l->start = calloc((size_t)nranks, sizeof *l->start);
    l->child = calloc((size_t)nranks, 1);
    if (!l->open || !l->last || !l->vals || !l->scratch || !l->link || !l->pending || !l->start || !l->child) {
        sc_straggler_log_free(l);
        return NULL;
    }
    for (int i = 0; i < nranks; i++) l->open[i] = l->last[i] = -1;
    return l;
}

void sc_straggler_log_free(sc_straggler_log *l)
{
    if (!l) return;
    free(l->open);
    free(l->last);
    free(l->vals);
    free(l->scratch);
    free(l->link);
    free(l->pending);
    free(l->start);
    free(l->child);
    free(l);
}

static int listed(const episode *e)
{
    return e->used && e->row.slow_steps >= SC_SLOG_MIN_STEPS &&
           (e->row.slowdown >= SC_STRAGGLER_RATIO || e->link_steps >= SC_SLOG_MIN_STEPS);
}

/* A free slot, or a closed false alarm's; -1 when every slot holds a row
 * worth keeping. */
static int new_episode(sc_straggler_log *l)
{
    for (int j = 0; j < SC_SLOG_MAX_ROWS; j++)
        if (!l->ep[j].used) return j;
    for (int j = 0; j < SC_SLOG_MAX_ROWS; j++) {
        const episode *e = &l->ep[j];
        if (l->open[e->row.rank] != j && !listed(e)) {
            if (l->last[e->row.rank] == j) l->last[e->row.rank] = -1;
            return j;
        }
    }
    return -1;
}

static void open_episode(sc_straggler_log *l, int i, long step, const sc_rank_status *st)
{
    long from = st->straggler && st->onset_step >= 0 && st->onset_step <= step ? st->onset_step : step;
    int fresh = l->steps - l->pending[i].step <= SC_SLOG_PENDING_STEPS && l->pending[i].signal[0];
    int j = l->last[i];
    if (j >= 0 && l->ep[j].used && l->ep[j].row.rank == i && l->ep[j].row.to_step >= 0 &&
        from - l->ep[j].row.to_step <= SC_SLOG_MERGE_GAP) {
        l->open[i] = j;   /* slow again soon after: the same episode */
        /* What a decision found between its two parts (a rank under a CPU
         * quota, slow at steps 1-3 and again from 6, classified cpu at step
         * 5 and made a child there; lost, its child's exchange with its
         * parent later read "network"). */
        if (fresh && l->ep[j].why.cause == SC_CAUSE_NONE) l->ep[j].why = l->pending[i];
        if (l->ep[j].why.cause == SC_CAUSE_NONE) l->ep[j].why = l->start[i];
        memset(&l->pending[i], 0, sizeof l->pending[i]);
        return;
    }
    j = new_episode(l);
    if (j < 0) {
        l->dropped++;
        return;
    }
    episode *e = &l->ep[j];
    memset(e, 0, sizeof *e);
    e->used = 1;
    e->row.rank = i;
    e->row.from_step = from;
    e->row.to_step = -1;
    if (fresh) e->why = l->pending[i];   /* what decisions just before found */
    else e->why = l->start[i];            /* or the start, while still its child */
    memset(&l->pending[i], 0, sizeof l->pending[i]);
    l->open[i] = l->last[i] = j;
}

/* Per rank, its link probe's time per byte over the median of the ranks
 * that have probed, or 0 without probes. */
static void link_ratios(sc_straggler_log *l, const double *feat)
{
    int m = 0;
    for (int i = 0; i < l->n; i++) {
        double spb = feat ? feat[(size_t)i * SC_NFEAT + SC_F_LINK_SPB] : 0.0;
        if (spb > 0.0) l->vals[m++] = spb;
    }
    double med = m >= 2 ? sc_median_of(l->vals, m, l->scratch) : 0.0;   /* of the ranks that have probed */
    for (int i = 0; i < l->n; i++) {
        double spb = feat ? feat[(size_t)i * SC_NFEAT + SC_F_LINK_SPB] : 0.0;
        l->link[i] = med > 0.0 && spb > 0.0 ? spb / med : 0.0;
    }
    l->link_med = med;
}

void sc_straggler_log_step(sc_straggler_log *l, long step, sc_mode mode, int k, const int *parent,
                           const double *own, const double *feat, const sc_rank_status *st)
{
    if (!l || !own || !st) return;
    l->steps++;
    link_ratios(l, feat);
    for (int i = 0; i < l->n; i++) {
        unsigned char child = mode == SC_MODE_GROUPS && parent && parent[i] >= 0;
        if (l->child[i] && !child) memset(&l->start[i], 0, sizeof l->start[i]);   /* released */
        l->child[i] = child;
    }
    /* The median of the ranks the test does not hold slow (all of them
     * when it holds every rank slow). */
    int m = 0;
    for (int i = 0; i < l->n; i++)
        if (!st[i].straggler) l->vals[m++] = own[i];
    if (m == 0)
        for (int i = 0; i < l->n; i++) l->vals[m++] = own[i];
    double median = sc_median_of(l->vals, m, l->scratch);
    int partial_quorum = mode == SC_MODE_QUORUM && k > 0 && k < l->n;
    for (int i = 0; i < l->n; i++) {
        /* Slow by arrival (the test holds it, and it is), or behind a link
         * its probe finds far slower than its peers' (in an exact
         * collective everyone waits alike for a slow link, so arrival
         * does not show it). */
        double ratio = median > 0.0 ? own[i] / median : 1.0;
        int link_far = l->link[i] >= SC_SLOG_LINK_FAR;
        int slow = (st[i].straggler && ratio >= SC_STRAGGLER_RATIO) || link_far;
        if ((st[i].straggler || link_far) && l->open[i] < 0) open_episode(l, i, step, &st[i]);
        int j = l->open[i];
        if (j < 0) continue;
        episode *e = &l->ep[j];
        if (!st[i].straggler && !link_far) {   /* ended */
            l->open[i] = -1;
            continue;
        }
        if (!slow) continue;
        e->row.slow_steps++;
        e->link_steps += link_far;
        e->row.to_step = step;   /* the last slow step so far */
        e->ratio_sum += ratio;
        e->row.slowdown = e->ratio_sum / (double)e->row.slow_steps;
        /* What the others wait for it in sync: its late arrival, or its
         * link's extra time for the step's bytes. */
        double late = own[i] > median ? own[i] - median : 0.0;
        double bytes = feat ? feat[(size_t)i * SC_NFEAT + SC_F_BYTES] : 0.0;
        double link_extra = link_far ? bytes * l->link_med * (l->link[i] - 1.0) : 0.0;
        e->row.sync_cost_s += late > link_extra ? late : link_extra;
        if (mode == SC_MODE_GROUPS && parent && parent[i] >= 0) e->row.child_steps++;
        if (partial_quorum) e->row.quorum_out_steps++;
    }
}

void sc_straggler_signal(const sc_rank_status *st, double median_compute_s, char *buf, size_t len)
{
    if (!buf || len == 0) return;
    switch (st->cause) {
    case SC_CAUSE_CPU:
        if (st->throttled_share >= 0.05)
            snprintf(buf, len, "throttled %.0f%% of wall by its CPU quota", 100.0 * st->throttled_share);
        else if (sc_rank_short_by_share(st))   /* every rank queues: its share of the CPU tells */
            snprintf(buf, len, "given %.0f%% of the CPU while runnable, run-queue delay %.0f%% of wall",
                     100.0 * st->cpu_given, 100.0 * st->runq_all_share);
        else if (st->runq_share >= 0.05)
            snprintf(buf, len, "run-queue delay %.0f%% of wall", 100.0 * st->runq_share);
        else if (st->runq_far)   /* its compute sleeps: only the engine's and MPI's threads show it */
            snprintf(buf, len, "run-queue delay %.0f%% of wall, all threads", 100.0 * st->runq_all_share);
        else
            snprintf(buf, len, "%.2f CPU s per wall s, %.0f involuntary switches/s", st->cpu_per_wall, st->nvcsw_rate);
        break;
    case SC_CAUSE_NETWORK:
        if (st->link_ratio > 0.0)
            snprintf(buf, len, "link probe %.1fx its peers' time per byte", st->link_ratio);
        else if (st->ib_wait_ps > 0.0)
            snprintf(buf, len, "InfiniBand waits %.3g/s", st->ib_wait_ps);
        else if (st->link_util > 0.0)
            snprintf(buf, len, "link at %.0f%% of its speed", 100.0 * st->link_util);
        else
            snprintf(buf, len, "own transfer %.1f ms a step, compute unchanged", 1e3 * st->xfer_s);
        break;
    case SC_CAUSE_WORK:
        if (median_compute_s > 0.0)
            snprintf(buf, len, "compute %.2fx the median, CPU fully used", st->compute_s / median_compute_s);
        else
            snprintf(buf, len, "more compute, CPU fully used");
        break;
    default:
        snprintf(buf, len, "no resource signal (sleeping, I/O, or a call starcoll cannot see)");
        break;
    }
}

void sc_straggler_log_classified(sc_straggler_log *l, const sc_rank_status *st)
{
    if (!l || !st) return;
    for (int i = 0; i < l->n; i++) l->vals[i] = st[i].compute_s;
    double median_compute = sc_median_of(l->vals, l->n, l->scratch);
    for (int i = 0; i < l->n; i++) {
        int c = st[i].cause >= SC_CAUSE_NONE && st[i].cause <= SC_CAUSE_WORK ? (int)st[i].cause : SC_CAUSE_NONE;
        int j = l->open[i];
        finding *r = j >= 0 ? &l->ep[j].why : &l->pending[i];
        if (j < 0 && c == SC_CAUSE_NONE) continue;   /* not slow, or not yet explained */
        /* A child's window says little of why it was slow: nobody waits
         * for it, its exchange with its parent looks like a slow link, and
         * a rank under a CPU quota that keeps up as a child is throttled
         * less (its 40-step run then read "network" or "none" against the
         * "cpu" of the decision that made it a child).  Once a cause is
         * found, a child's classifications do not vote. */
        if (l->child[i] && ((r->cause != SC_CAUSE_NONE && r->signal[0]) || l->start[i].cause != SC_CAUSE_NONE))
            continue;   /* ... nor while it is the child the start made it */
        if (j < 0 && l->steps - r->step > SC_SLOG_PENDING_STEPS) memset(r, 0, sizeof *r);   /* old news */
        if (j < 0) r->step = l->steps;
        r->votes[c]++;
        /* The cause most classifications found while it was slow (one
         * window on a loaded machine can show anything; a child's own
         * exchange with its parent can look like a slow link); the signal
         * of the latest classification that found it. */
        /* A cause ties with "none" and wins: none is no explanation. */
        int over_none = r->cause == SC_CAUSE_NONE && c != SC_CAUSE_NONE && r->votes[c] >= r->votes[SC_CAUSE_NONE];
        if (c == (int)r->cause || r->votes[c] > r->votes[r->cause] || over_none || !r->signal[0]) {
            r->cause = (sc_cause)c;
            sc_straggler_signal(&st[i], median_compute, r->signal, sizeof r->signal);
        }
    }
}

void sc_straggler_log_found(sc_straggler_log *l, int rank, sc_cause cause, const char *signal)
{
    if (!l || rank < 0 || rank >= l->n || cause <= SC_CAUSE_NONE || cause > SC_CAUSE_WORK || !signal || !signal[0])
        return;
    finding *f = &l->start[rank];
    memset(f, 0, sizeof *f);
    f->cause = cause;
    f->votes[cause] = 1;
    snprintf(f->signal, sizeof f->signal, "%s", signal);
    int j = l->open[rank];
    if (j >= 0 && l->ep[j].why.cause == SC_CAUSE_NONE) l->ep[j].why = *f;   /* what classifications found stands */
}

long sc_straggler_log_steps(const sc_straggler_log *l) { return l ? l->steps : 0; }

int sc_straggler_log_rows(const sc_straggler_log *l, sc_straggler_row *rows, int max, int *dropped)
{
    if (dropped) *dropped = l ? l->dropped : 0;
    if (!l || !rows) return 0;
    int n = 0;
    for (int j = 0; j < SC_SLOG_MAX_ROWS; j++) {
        if (!listed(&l->ep[j])) continue;
        if (n == max) {
            if (dropped) (*dropped)++;
            continue;
        }
        /* insertion by onset, then rank */
        int at = n++;
        while (at > 0 && (rows[at - 1].from_step > l->ep[j].row.from_step ||
                          (rows[at - 1].from_step == l->ep[j].row.from_step && rows[at - 1].rank > l->ep[j].row.rank))) {
            rows[at] = rows[at - 1];
            at--;
        }
        rows[at] = l->ep[j].row;
        rows[at].cause = l->ep[j].why.cause;
        memcpy(rows[at].signal, l->ep[j].why.signal, sizeof rows[at].signal);
        /* Still slow at the end: open, or slow within the last steps, when
         * ranks leave one by one and their last rows say little. */
        if (l->open[rows[at].rank] == j || rows[at].to_step >= l->steps - 1 - SC_SLOG_END_STEPS) rows[at].to_step = -1;
        if (!rows[at].signal[0]) snprintf(rows[at].signal, sizeof rows[at].signal, "no decision while it was slow");
    }
    return n;
}
