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
#include "schedule.h"
#include "report.h"
#include "arrival.h"
#include "straggler_log.h"
#include "report_stragglers.h"
#include "placement.h"

/* auto: steps before the first decision, at most (the selector's
 * persistence span at the default epoch). */
#define SC_FIRST_EPOCH 10

struct sc_decider {
    sc_engine *e;
    int n;
    /* auto: one feature row per rank and coordinator step for the selector */
    double *acc;                /* n x SC_NFEAT: rows received since the last step */
    long *nacc;
    double *row;                /* n x SC_NFEAT: each rank's latest step, as the selector sees it */
    double *last_t;             /* when each rank last reported */
    sc_arrival *arrival;        /* the ranks' arrival stamps, for SC_F_LAG_S */
    double *lag;                /* n: scratch for sc_arrival_lags */
    long last_decide;
    int decided;                /* auto: the first decision was taken */
    int started;                /* auto: the children from the start were considered */
    int observed;               /* a step was fed since the last decide */
    int *dec_parent;
    double *compute_sum;        /* per rank, this epoch */
    long *steps;                /* per rank, this epoch */
    long coord_steps;           /* steps the coordinator itself reported this epoch */
    unsigned char *candidate;   /* stragglers proposed last epoch */
    int have_candidate;
    sc_selector *sel;           /* auto */
    sc_schedule *schedule;      /* auto with STARCOLL_SCHEDULE: its decisions, not the selector's */
    sc_straggler_log *slog;     /* auto: who straggled, for the report's straggler table */
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
    sc_report_coordinator(e->comm_label, e->rank);
    if (sc_rt.policy.mode == SC_MODE_AUTO) {
        size_t cells = (size_t)e->n * SC_NFEAT;
        d->acc = calloc(cells, sizeof(double));
        d->row = calloc(cells, sizeof(double));
        d->nacc = calloc((size_t)e->n, sizeof(long));
        d->last_t = calloc((size_t)e->n, sizeof(double));
        d->dec_parent = malloc(sizeof(int) * (size_t)e->n);
        d->arrival = sc_arrival_new(e->n);
        d->lag = calloc((size_t)e->n, sizeof(double));
        d->slog = sc_straggler_log_new(e->n);   /* none when out of memory: the table says so */
        sc_selector_config cfg = {
            .kind = sc_rt.policy.selector == SC_SELECTOR_LEARNED ? SC_KIND_LEARNED : SC_KIND_HEURISTIC,
            .nranks = e->n,
            .epoch_steps = sc_rt.policy.epoch,
            .quorum_fixed = sc_rt.policy.quorum >= 1 ? (int)sc_rt.policy.quorum
                            : sc_rt.policy.quorum > 0 ? (int)(sc_rt.policy.quorum * e->n + 0.999999) : 0,
            .staleness = sc_rt.policy.staleness,
            .allowed_modes_mask = 0,
            .model_path = sc_rt.policy.model[0] ? sc_rt.policy.model : NULL,
            .coordinator_fixed = 1,   /* placed at engine start (engine.c), never moved */
            .coordinator = e->coord,
        };
        char msg[256] = "";
        if (d->acc && d->row && d->nacc && d->last_t && d->dec_parent && d->arrival && d->lag)
            d->sel = sc_selector_new(&cfg, msg, sizeof msg);
        if (msg[0]) {
            sc_say(SC_SAY_SELECTOR, 1, "%s%s", strncmp(msg, "starcoll:", 9) ? "starcoll: " : "", msg);
            sc_report_note(e->comm_label, msg);   /* the report says the selector fell back */
        }
        if (!d->sel) {
            sc_say(SC_SAY_SELECTOR, 1, "starcoll: the selector could not start; auto stays sync");
            sc_report_note(e->comm_label, "the selector could not start; auto stays sync");
        }
        d->dec.parent = d->dec_parent;
        if (d->sel && sc_rt.policy.schedule[0]) {
            d->schedule = sc_schedule_parse(sc_rt.policy.schedule, e->n, msg, sizeof msg);
            if (msg[0]) sc_say(SC_SAY_SCHEDULE, 1, "%s%s", strncmp(msg, "starcoll:", 9) ? "starcoll: " : "", msg);
        }
    }
    return d;
}

void sc_decider_free(struct sc_decider *d)
{
    if (!d) return;
    free(d->compute_sum);
    free(d->steps);
    free(d->candidate);
    free(d->acc);
    free(d->row);
    free(d->nacc);
    free(d->last_t);
    free(d->dec_parent);
    sc_arrival_free(d->arrival);
    free(d->lag);
    if (d->sel) sc_report_stragglers(d->e->comm_label, d->slog, d->e->world_rank);
    sc_straggler_log_free(d->slog);
    if (d->sel) sc_selector_free(d->sel);
    sc_schedule_free(d->schedule);
    free(d);
}

/* auto: at each of the coordinator's steps, one row per rank: the mean of
 * the rows a rank reported since, or, for a rank that reported nothing, its
 * last row; in a tolerant mode with the step time stretched to the time it
 * has been silent (a straggler that just appeared shows at once, though
 * the rounds no longer wait for it).  In an exact mode every rank's step
 * waited for the slowest, whose lateness its arrival lag measures: a row
 * missing there is only late in the mail (one stretched row of a healthy
 * rank, its feature message behind the coordinator's step, read as a 2x
 * straggler and sent auto to quorum for 6 steps, over and over). */
static void feed_selector(struct sc_decider *d)
{
    double now = sc_now();
    int tolerant = d->e->mode == SC_MODE_QUORUM || d->e->mode == SC_MODE_GROUPS;
    for (int r = 0; r < d->n; r++) {
        double *row = d->row + (size_t)r * SC_NFEAT, *acc = d->acc + (size_t)r * SC_NFEAT;
        if (d->nacc[r] > 0) {
            for (int f = 0; f < SC_NFEAT; f++) row[f] = acc[f] / (double)d->nacc[r];
            memset(acc, 0, sizeof(double) * SC_NFEAT);
            d->nacc[r] = 0;
        } else if (tolerant && d->last_t[r] > 0 && now - d->last_t[r] > row[SC_F_STEP_S]) {
            double silent = now - d->last_t[r];
            row[SC_F_COMPUTE_S] += silent - row[SC_F_STEP_S];
            row[SC_F_STEP_S] = silent;
        }
    }
    int lags = sc_arrival_lags(d->arrival, d->lag) >= 0;
    for (int r = 0; r < d->n; r++) d->row[(size_t)r * SC_NFEAT + SC_F_LAG_S] = lags ? d->lag[r] : 0.0;
    sc_engine *e = d->e;
    sc_selector_observe(d->sel, d->step, e->mode, d->row);
    sc_straggler_log_step(d->slog, d->step, e->mode, e->k, e->parent, sc_selector_own_times(d->sel), d->row,
                          sc_selector_ranks(d->sel));
    d->step++;
    d->observed = 1;
}

void sc_decider_observe(struct sc_decider *d, int rank, const double *feat)
{
    if (!d || rank < 0 || rank >= d->n) return;
    d->compute_sum[rank] += feat[SC_F_COMPUTE_S];
    d->steps[rank]++;
    if (rank == d->e->coord) d->coord_steps++;
    if (!d->sel) return;
    double *acc = d->acc + (size_t)rank * SC_NFEAT;
    for (int f = 0; f < SC_NFEAT; f++) acc[f] += feat[f];
    d->nacc[rank]++;
    d->last_t[rank] = sc_now();
    sc_arrival_add(d->arrival, rank, feat[SC_F_ARRIVE_S], d->last_t[rank] - d->e->born);
    if (rank == d->e->coord) feed_selector(d);
}

/* auto: d->dec, the decision now in force, as the engine takes it; the
 * report gives the selector's signals behind it (none yet at the start). */
static int take_decision(struct sc_decider *d, long *parent, sc_mode *mode, int *k, int at_start)
{
    sc_mode m = d->dec.mode;
    if (m == SC_MODE_AUTO || m >= SC_NMODES) m = SC_MODE_SYNC;
    int children = 0;
    for (int r = 0; r < d->n; r++) {
        /* the coordinator opens the rounds: it stays a ring member */
        int p = m == SC_MODE_GROUPS && r != d->e->coord ? d->dec_parent[r] : -1;
        if (p >= 0 && (p >= d->n || d->dec_parent[p] != -1)) p = -1;
        parent[r] = p;
        children += p >= 0;
    }
    *mode = m;
    *k = d->dec.quorum_k > 0 ? d->dec.quorum_k : d->n;
    char signals[256] = "";
    if (!at_start) sc_selector_signals(d->sel, signals, sizeof signals);
    sc_report_decision(d->e->comm_label, d->step, m, *k, children, d->dec.reason, signals);
    return 1;
}

/* auto: the selector's decision, at its epoch or at once on an onset; or
 * the schedule's entry when its step has come.  Before any step is
 * watched, the children the selector makes from the figures of the
 * pattern's learning (sc_selector_start), unless a schedule decides. */
static int decide_auto(struct sc_decider *d, long *parent, sc_mode *mode, int *k)
{
    if (!d->started) {
        d->started = 1;
        if (!d->schedule && sc_selector_start(d->sel, d->e->learn_load, d->e->learn_given, &d->dec)) {
            for (int r = 0; r < d->n; r++) {
                if (d->dec_parent[r] < 0) continue;
                char signal[96];
                snprintf(signal, sizeof signal, "given %.0f%% of the CPU while the step was learned",
                         100 * d->e->learn_given[r]);
                sc_straggler_log_found(d->slog, r, SC_CAUSE_CPU, signal);
            }
            return take_decision(d, parent, mode, k, 1);
        }
    }
    if (!d->observed) return 0;
    d->observed = 0;
    if (d->schedule) {
        if (!sc_schedule_due(d->schedule, d->step, &d->dec)) return 0;
    } else {
        /* The first decision comes after a short first epoch (at most
         * SC_FIRST_EPOCH steps, or from SC_EARLY_STEPS on when the steps
         * seen already make a clear case), and an onset before it waits for it: a
         * straggler present from the start is then already persistent, and
         * is made a child at once rather than first dropped from quorums.
         * A straggler that appears later is acted on as the onset test sees
         * it. */
        long first = sc_rt.policy.epoch < SC_FIRST_EPOCH ? sc_rt.policy.epoch : SC_FIRST_EPOCH;
        if (!d->decided ? d->step < first && !sc_selector_early_case(d->sel)
                        : d->step - d->last_decide < sc_rt.policy.epoch && !sc_selector_urgent(d->sel)) return 0;
        d->decided = 1;
        d->last_decide = d->step;
        int changed = sc_selector_decide(d->sel, d->step, &d->dec);
        sc_straggler_log_classified(d->slog, sc_selector_ranks(d->sel));
        if (!changed) return 0;
    }
    return take_decision(d, parent, mode, k, 0);
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
    int *order = malloc(2 * sizeof(int) * (size_t)n), *dealt = order ? order + n : NULL;
    double *load = malloc(sizeof(double) * (size_t)n);
    if (!slow || !order || !load) {
        free(slow);
        free(order);
        free(load);
        return 0;
    }
    int nslow = 0;
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
        /* Parents: the members with the least compute (most headroom; a
         * rank with no step this epoch counts none), children dealt
         * round-robin so no parent takes them all. */
        for (int r = 0; r < n; r++) load[r] = d->steps[r] ? d->compute_sum[r] / (double)d->steps[r] : 0;
        sc_deal_children(n, slow, load, order, dealt);
        for (int r = 0; r < n; r++) parent[r] = dealt[r];
    }
    free(slow);
    free(order);
    free(load);
    return change;
}

int sc_decider_decide(struct sc_decider *d, long *parent, sc_mode *mode, int *k)
{
    if (!d) return 0;
    if (d->sel) return decide_auto(d, parent, mode, k);
    if (d->coord_steps < sc_rt.policy.epoch) return 0;
    int change = 0;
    if (sc_rt.policy.mode == SC_MODE_GROUPS) {
        change = decide_groups(d, parent);
        *mode = SC_MODE_GROUPS;
        if (change) {
            int children = 0;
            char reason[160], *at = reason;
            at += snprintf(reason, sizeof reason, "ranks over 1.2x the fastest compute become children");
            for (int r = 0; r < d->n; r++) {
                if (parent[r] < 0) continue;
                if (at < reason + sizeof reason - 24)
                    at += snprintf(at, (size_t)(reason + sizeof reason - at), "%s%d", children ? "," : ": rank ", r);
                children++;
            }
            sc_report_decision(d->e->comm_label, d->coord_steps, SC_MODE_GROUPS, *k, children, reason, "");
        }
    }
    (void)k;
    memset(d->compute_sum, 0, sizeof(double) * (size_t)d->n);
    memset(d->steps, 0, sizeof(long) * (size_t)d->n);
    d->coord_steps = 0;
    return change;
}
