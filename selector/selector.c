/* The selector's front end: observe steps, decide modes. */
#include "selector.h"
#include "heuristic.h"
#include "child_hold.h"
#include "hysteresis.h"
#include "pay.h"
#include "learned.h"
#include "model_file.h"
#include "names.h"
#include "noise_scale.h"
#include "order_stats.h"
#include "placement.h"
#include "window.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SC_RATIO_KEEP 256   /* per-step ratios kept per mode for the median: longer epochs keep their last ones */

#define WINDOW_MIN 8
#define WINDOW_MAX 128
#define NOISE_ALPHA 0.1

/* Steps after entering an exact mode that are a catch-up (the ranks a
 * tolerant mode left behind catch up): the straggler detector skips them. */
#define SC_SETTLE_STEPS 3

/* Steps between looks for a shortage of CPU or link newly held between
 * decisions (observe). */
#define SC_HELD_CHECK 5

struct sc_selector {
    int kind, n, epoch;
    sc_limits pol;
    sc_detect *det;
    sc_window win;
    sc_noise_scale ns;
    sc_learned *model; /* learned selector only */
    sc_hysteresis hys;
    sc_child_hold hold;
    sc_detect_summary sum;
    sc_situation sit;

    /* Decision in force. */
    sc_candidate cur;
    int *parent;
    int coordinator;
    int coordinator_fixed;   /* placed by the caller: kept, never a child */
    char reason[160];
    int exploring; /* the decision in force is an exploration */

    sc_candidate cand; /* the last raw candidate */
    char note[200];

    /* Per-step data. */
    double *feat, *own, *xfer, *scratch, *vals;
    unsigned char *ring, *was_persistent;
    int *prev_parent;
    long last_step, last_decide_step;
    int have_steps;
    long latest_event; /* change-point estimate of the latest onset or end, -1 none */
    int urgent;
    int persist;       /* steps a straggler must last to be persistent (the detector's) */
    int seen_mode;     /* the mode of the previous observed step, -1 before the first */
    long mode_since;   /* the step from which the ranks' rows showed seen_mode: its spell's start */
    long settle_until; /* steps before this one, after entering an exact mode: not read by the detector */
    long pace_from;    /* steps before this one, after a mode change: not in the measured pace */
    int started;       /* sc_selector_start was called */
    int trial;         /* heuristic: a tolerant mode just entered (from any other): decide again
                          as soon as a quarter epoch of it is measured (tolerance must pay) */

    /* Measured update interval ratio per mode since the last decision:
     * the sum (the learned model's input), and the last SC_RATIO_KEEP
     * values (their median decides whether tolerance pays). */
    double ratio_sum[SC_LEARNED_MODES];
    long ratio_n[SC_LEARNED_MODES];
    double ratio_kept[SC_LEARNED_MODES][SC_RATIO_KEEP];
    sc_pay pay; /* heuristic: did quorum measure better than sync (pay.h) */

    /* Situation scratch. */
    double *mean_feat, *mean_own, *mean_xfer, *own_rows, *kth_mean;
};

static void set_msg(char *msg, size_t len, const char *text)
{
    if (msg && len)
        snprintf(msg, len, "%s", text);
}

static void initial_decision(sc_selector *s)
{
    s->cur.mode = SC_MODE_SYNC;
    s->cur.k = s->n;
    s->cur.nchildren = 0;
    memset(s->cur.child, 0, (size_t)s->n);
    memset(s->ring, 1, (size_t)s->n);
    for (int i = 0; i < s->n; i++)
        s->parent[i] = -1;
    s->coordinator = s->coordinator_fixed ? s->coordinator : 0;
    snprintf(s->reason, sizeof s->reason, "initial: sync until the first decision");
}

sc_selector *sc_selector_new(const sc_selector_config *cfg, char *msg, size_t msglen)
{
    set_msg(msg, msglen, "");
    if (!cfg || cfg->nranks < 1 || cfg->epoch_steps < 1) {
        char line[160];
        snprintf(line, sizeof line, "selector: invalid configuration (nranks %d, epoch %d): both must be >= 1",
                 cfg ? cfg->nranks : 0, cfg ? cfg->epoch_steps : 0);
        set_msg(msg, msglen, line);
        return NULL;
    }
    sc_selector *s = calloc(1, sizeof *s);
    if (!s) {
        set_msg(msg, msglen, "selector: out of memory");
        return NULL;
    }
    int n = cfg->nranks;
    size_t un = (size_t)n;
    s->n = n;
    s->epoch = cfg->epoch_steps;
    s->kind = cfg->kind == SC_KIND_LEARNED ? SC_KIND_LEARNED : SC_KIND_HEURISTIC;
    s->pol.allowed = cfg->allowed_modes_mask ? (unsigned)cfg->allowed_modes_mask : ~0u;
    s->pol.quorum_fixed = cfg->quorum_fixed > n ? n : (cfg->quorum_fixed > 0 ? cfg->quorum_fixed : 0);
    s->pol.staleness = cfg->staleness > 0 ? cfg->staleness : 0;
    s->coordinator_fixed = cfg->coordinator_fixed && cfg->coordinator >= 0 && cfg->coordinator < n;
    s->coordinator = s->coordinator_fixed ? cfg->coordinator : 0;
    /* Two epochs of steps: objectives estimated on 20 jittery steps swing by
     * several percent from one epoch to the next. */
    int span = 2 * cfg->epoch_steps;
    int cap = span < WINDOW_MIN ? WINDOW_MIN : span > WINDOW_MAX ? WINDOW_MAX : span;
    int persist = cfg->epoch_steps / 2 > 2 ? cfg->epoch_steps / 2 : 2;
    s->persist = persist;
    s->det = sc_detect_new(n, persist);
    int bad = !s->det || sc_window_init(&s->win, n, cap) != 0 || sc_hysteresis_init(&s->hys, n) != 0 ||
              sc_child_hold_init(&s->hold, n) != 0;
    s->cur.child = calloc(un, 1);
    s->cand.child = calloc(un, 1);
    s->ring = calloc(un, 1);
    s->was_persistent = calloc(un, 1);
    s->parent = calloc(un, sizeof(int));
    s->prev_parent = calloc(un, sizeof(int));
    s->feat = calloc(un * SC_NFEAT, sizeof(double));
    s->own = calloc(un, sizeof(double));
    s->xfer = calloc(un, sizeof(double));
    s->scratch = calloc(un, sizeof(double));
    s->vals = calloc(un, sizeof(double));
    s->mean_feat = calloc(un * SC_NFEAT, sizeof(double));
    s->mean_own = calloc(un, sizeof(double));
    s->mean_xfer = calloc(un, sizeof(double));
    s->own_rows = calloc(un * (size_t)cap, sizeof(double));
    s->kth_mean = calloc(un, sizeof(double));
    if (bad || !s->cur.child || !s->cand.child || !s->ring || !s->was_persistent || !s->parent ||
        !s->prev_parent || !s->feat || !s->own || !s->xfer || !s->scratch || !s->vals || !s->mean_feat ||
        !s->mean_own || !s->mean_xfer || !s->own_rows || !s->kth_mean) {
        sc_selector_free(s);
        set_msg(msg, msglen, "selector: out of memory");
        return NULL;
    }
    sc_noise_scale_init(&s->ns, NOISE_ALPHA);
    s->last_decide_step = -1;
    s->latest_event = -1;
    s->seen_mode = -1;
    initial_decision(s);

    const char *path = cfg->model_path && cfg->model_path[0] ? cfg->model_path : NULL;
    if (s->kind == SC_KIND_LEARNED) {
        s->model = calloc(1, sizeof *s->model);
        if (!s->model) {
            set_msg(msg, msglen, "selector: out of memory for the learned model; using the heuristic selector");
            s->kind = SC_KIND_HEURISTIC;
        } else {
            sc_learned_init(s->model);
            char err[256];
            if (path && sc_model_load(s->model, path, err, sizeof err) != 0) {
                char line[400];
                snprintf(line, sizeof line, "STARCOLL_MODEL=%s; using the heuristic selector", err);
                set_msg(msg, msglen, line);
                free(s->model);
                s->model = NULL;
                s->kind = SC_KIND_HEURISTIC;
            }
        }
    } else if (path) {
        char line[400];
        snprintf(line, sizeof line, "STARCOLL_MODEL=%s is ignored: the heuristic selector runs", path);
        set_msg(msg, msglen, line);
    }
    return s;
}

void sc_selector_free(sc_selector *s)
{
    if (!s)
        return;
    sc_detect_free(s->det);
    sc_window_free(&s->win);
    sc_hysteresis_free(&s->hys);
    sc_child_hold_free(&s->hold);
    free(s->model);
    free(s->cur.child);
    free(s->cand.child);
    free(s->ring);
    free(s->was_persistent);
    free(s->parent);
    free(s->prev_parent);
    free(s->feat);
    free(s->own);
    free(s->xfer);
    free(s->scratch);
    free(s->vals);
    free(s->mean_feat);
    free(s->mean_own);
    free(s->mean_xfer);
    free(s->own_rows);
    free(s->kth_mean);
    free(s);
}

/* Median over the ranks of one feature's positive values (0: none). */
static double feature_median(sc_selector *s, int idx)
{
    int m = 0;
    for (int i = 0; i < s->n; i++) {
        double v = s->feat[(size_t)i * SC_NFEAT + idx];
        if (v > 0.0)
            s->vals[m++] = v;
    }
    return sc_median_of(s->vals, m, s->scratch);
}

/* Slowdown by arrival.  In an exact step every rank leaves the collective
 * together, so a rank's arrival at the next step's first call, relative to
 * the median rank's, is its extra compute: the median compute plus its
 * lag over the median lag.  Where that is more than the compute measured
 * outside the library, the arrival counts: time a rank lost between its
 * calls that its phase times do not show.  (A slow link makes a rank
 * arrive late too; detect.c lets its probe name that.)  In tolerant modes
 * ranks do not leave together, and the lag is drift. */
static void compute_by_arrival(sc_selector *s, sc_mode current_mode)
{
    if (current_mode != SC_MODE_SYNC && current_mode != SC_MODE_HIER)
        return;
    int m = 0;
    for (int i = 0; i < s->n; i++)
        if (s->feat[(size_t)i * SC_NFEAT + SC_F_LAG_S] > 0.0)
            m++;
    if (m == 0)
        return; /* no lags (0 is the earliest rank's, and unknown) */
    for (int i = 0; i < s->n; i++)
        s->vals[i] = s->feat[(size_t)i * SC_NFEAT + SC_F_LAG_S];
    double med_lag = sc_median_of(s->vals, s->n, s->scratch);
    double med_c = feature_median(s, SC_F_COMPUTE_S);
    if (!(med_c > 0.0))
        return;
    for (int i = 0; i < s->n; i++) {
        double *f = s->feat + (size_t)i * SC_NFEAT;
        double by_arrival = med_c + f[SC_F_LAG_S] - med_lag;
        if (by_arrival <= f[SC_F_COMPUTE_S])
            continue;
        double more = by_arrival - f[SC_F_COMPUTE_S];
        f[SC_F_COMPUTE_S] = by_arrival;
        f[SC_F_WAIT_S] = f[SC_F_WAIT_S] > more ? f[SC_F_WAIT_S] - more : 0.0;
        if (f[SC_F_AWAY_S] > f[SC_F_WAIT_S])
            f[SC_F_AWAY_S] = f[SC_F_WAIT_S];
        if (f[SC_F_STEP_S] < by_arrival)
            f[SC_F_STEP_S] = by_arrival;
    }
}

static void build_situation(sc_selector *s, int look);
static void fill_out(const sc_selector *s, sc_decision *out);

void sc_selector_observe(sc_selector *s, long step, sc_mode current_mode, const double *feat)
{
    if (!s || !feat)
        return;
    size_t total = (size_t)s->n * SC_NFEAT;
    for (size_t j = 0; j < total; j++)
        s->feat[j] = isfinite(feat[j]) && feat[j] > 0.0 ? feat[j] : 0.0;
    compute_by_arrival(s, current_mode);

    /* The first steps after entering an exact mode are a catch-up, not a
     * rank's speed: the ranks a tolerant mode left behind catch up (a rank
     * 26 steps behind took 2.2x one step, and auto went back to quorum two
     * steps after leaving it).  The detector skips them.  (Entering a
     * tolerant mode, the straggler it was entered for is still measured:
     * skipping those steps put a throttled rank's table row 3 steps after
     * its first decision.)  The measured pace skips the first steps after
     * any change: the ranks' rows lag the coordinator's mode, so quorum's
     * first steps after an onset were sync's with the straggler (65 ms
     * against quorum's 37 ms), and its 5-step trial, 2.1x compute per step
     * against sync's 1.9x, sent auto back to sync in 4 runs of 6. */
    if ((int)current_mode != s->seen_mode) {
        if (s->seen_mode >= 0 && (current_mode == SC_MODE_SYNC || current_mode == SC_MODE_HIER))
            s->settle_until = step + SC_SETTLE_STEPS;
        if (s->seen_mode >= 0) {
            sc_detect_rebase(s->det);
            s->pace_from = step + SC_SETTLE_STEPS;
        }
        s->seen_mode = (int)current_mode;
        s->mode_since = step;
    }
    int catching_up = step < s->settle_until;

    /* Learned model input: the step's update interval relative to compute. */
    if ((int)current_mode >= 0 && current_mode < SC_LEARNED_MODES && step >= s->pace_from) {
        double interval = feature_median(s, SC_F_STEP_S);
        double compute = feature_median(s, SC_F_COMPUTE_S);
        if (interval > 0.0 && compute > 0.0) {
            s->ratio_sum[current_mode] += interval / compute;
            s->ratio_kept[current_mode][s->ratio_n[current_mode] % SC_RATIO_KEEP] = interval / compute;
            s->ratio_n[current_mode]++;
        }
    }
    /* A tolerant mode that does not pay costs its rounds until the next
     * epoch's decision finds so (quorum entered on a noisy machine's spread
     * alone, GPT-2's step, spent most of a 40-step run there; groups for two
     * ranks sharing their cores with a CPU hog, 20 steps): measure it for a
     * quarter epoch, then decide at once. */
    if (s->trial && current_mode == s->cur.mode &&
        s->ratio_n[current_mode] >= (s->epoch / 4 > 1 ? s->epoch / 4 : 1)) {
        s->trial = 0;
        s->urgent = 1;
    }
    /* Noise scale from exact steps only: a tolerant round's sum holds a
     * varying number of buffers. */
    if (current_mode == SC_MODE_SYNC || current_mode == SC_MODE_HIER) {
        double sum_sq = feature_median(s, SC_F_SUM_SQNORM);
        for (int i = 0; i < s->n; i++)
            s->vals[i] = s->feat[(size_t)i * SC_NFEAT + SC_F_GRAD_SQNORM];
        sc_noise_scale_add(&s->ns, s->vals, s->n, sum_sq);
    }

    const unsigned char *ring = current_mode == SC_MODE_GROUPS ? s->ring : NULL;
    int k = 0;
    if (current_mode == SC_MODE_QUORUM)
        k = s->cur.mode == SC_MODE_QUORUM ? s->cur.k : s->pol.quorum_fixed;
    sc_detect_own_times(s->feat, s->n, ring, k, s->scratch, s->own, s->xfer);
    if (!catching_up && sc_detect_step(s->det, step, s->own, s->ring) > 0) {
        const sc_rank_status *st = sc_detect_status(s->det);
        for (int i = 0; i < s->n; i++) {
            if (st[i].detect_step == step && st[i].onset_step > s->latest_event)
                s->latest_event = st[i].onset_step;
            if (st[i].end_detect_step == step && st[i].end_step > s->latest_event)
                s->latest_event = st[i].end_step;
        }
        s->urgent = 1;
    }
    /* A straggler that has just been slow long enough to be persistent is
     * news too: it may now become a child, and at the epoch's end that
     * could be up to an epoch later (a rank throttled from the start was
     * made a child only at the third decision, step 60). */
    const sc_rank_status *now_st = sc_detect_status(s->det);
    for (int i = 0; i < s->n; i++)
        if (now_st[i].straggler && step - now_st[i].onset_step + 1 == s->persist)
            s->urgent = 1;
    sc_window_add(&s->win, step, s->feat, s->own, s->xfer);
    s->last_step = step;
    s->have_steps = 1;
    /* A ring member's shortage of CPU or link is classified on the window's
     * means, at decisions only: one that becomes held between them (given
     * 0.53 of its peers' share of the CPU over a run, above 0.6 in the
     * first window) waited for the epoch's end, step 30.  Look every
     * SC_HELD_CHECK steps; each such rank is news once. */
    if (s->last_decide_step >= 0 && !s->urgent && !catching_up && (step - s->last_decide_step) % SC_HELD_CHECK == 0) {
        build_situation(s, 1);
        const sc_rank_status *st = sc_detect_status(s->det);
        for (int i = 0; i < s->n; i++)
            if (st[i].persistent && sc_rank_short_of_resource(&st[i]) && !s->cur.child[i] && !s->was_persistent[i])
                s->urgent = 1;
    }
}

int sc_selector_urgent(const sc_selector *s) { return s ? s->urgent : 0; }

int sc_selector_early_case(sc_selector *s)
{
    if (!s || !s->have_steps || s->last_decide_step >= 0 || s->win.count < SC_EARLY_STEPS)
        return 0;
    build_situation(s, 1);
    const sc_rank_status *st = sc_detect_status(s->det);
    for (int i = 0; i < s->n; i++)
        if (st[i].persistent && (sc_rank_short_of_resource(&st[i]) || st[i].slowdown >= SC_EARLY_SLOWDOWN))
            return 1;
    return 0;
}

int sc_selector_start(sc_selector *s, const double *load, const double *given, sc_decision *out)
{
    if (!s || s->started || s->have_steps || s->last_decide_step >= 0 || !load || !given || s->n < 4 ||
        !sc_limits_allow(&s->pol, SC_MODE_GROUPS))
        return 0;
    s->started = 1;
    int n = s->n;
    unsigned char *child = s->cand.child;   /* scratch until the first decision */
    int nshort = sc_short_while_learning(n, given, child);
    if (nshort > 0 && s->coordinator_fixed && child[s->coordinator]) {
        child[s->coordinator] = 0;   /* never the case (placement.h), but kept a member whatever */
        nshort--;
    }
    int *order = s->prev_parent;   /* scratch: the members by load, then rank */
    int members = nshort > 0 ? sc_deal_children(n, child, load, order, s->parent) : 0;
    if (nshort == 0 || members < 2) {
        memset(child, 0, (size_t)n);
        for (int r = 0; r < n; r++)
            s->parent[r] = -1;
        return 0;
    }
    double share = 0.0;
    int known = 0, listed = 0;
    for (int i = 0; i < members; i++)
        if (given[order[i]] > 0.0) {
            share += given[order[i]];
            known++;
        }
    char *at = s->reason, *end = s->reason + sizeof s->reason;
    for (int r = 0; r < n; r++) {
        s->ring[r] = !child[r];
        if (child[r] && at < end - 40)
            at += snprintf(at, (size_t)(end - at), "%srank %d (%.0f%%)", listed++ ? ", " : "groups: ", r, 100.0 * given[r]);
    }
    if (at < end)
        snprintf(at, (size_t)(end - at), " given far less of the CPU than the others (%.0f%%) while the step was learned",
                 known ? 100.0 * share / known : 0.0);
    if (!s->coordinator_fixed && child[s->coordinator])
        s->coordinator = order[0];   /* a ring member opens the rounds */
    s->cur.mode = SC_MODE_GROUPS;
    s->cur.k = members;
    s->cur.nchildren = nshort;
    memcpy(s->cur.child, child, (size_t)n);
    memset(child, 0, (size_t)n);
    s->trial = s->kind == SC_KIND_HEURISTIC;
    fill_out(s, out);
    return 1;
}

/* Builds s->sit from the window: the steps since the latest change point.
 * look: between decisions, leaving the detector's held conditions alone. */
static void build_situation(sc_selector *s, int look)
{
    int n = s->n;
    /* The first decision looks at every step since the start: a straggler
     * present from the start has its onset found a step or two in, and
     * cutting the window there would leave it a step short of persistent
     * (and its starvation a step short of held) at that decision. */
    int rows = s->latest_event >= 0 && s->last_decide_step >= 0 ? sc_window_count_since(&s->win, s->latest_event)
                                                                : s->win.count;
    if (rows <= 0)
        rows = s->win.count;
    sc_window_means(&s->win, rows, s->mean_feat, s->mean_own, s->mean_xfer);
    const unsigned char *ring = s->cur.mode == SC_MODE_GROUPS ? s->ring : NULL;
    /* Before the first decision every step seen counts: a rank slow (or
     * short of CPU) in all of them is persistent, whether 5 or 10 were
     * seen.  One step of slack, as the change-point test may place the
     * onset of a straggler present from the start a step in. */
    int span = s->persist;
    if (s->last_decide_step < 0) {
        int seen = rows - 1 > SC_EARLY_STEPS - 1 ? rows - 1 : SC_EARLY_STEPS - 1;
        if (seen < span)
            span = seen;
    }
    sc_detect_set_persist(s->det, span);
    sc_detect_peek(s->det, look);
    sc_detect_classify(s->det, s->last_step, rows, s->mean_feat, s->mean_own, s->mean_xfer, ring, &s->sum);
    sc_detect_peek(s->det, 0);
    sc_detect_set_persist(s->det, s->persist);

    memset(s->kth_mean, 0, (size_t)n * sizeof(double));
    /* The spread is the median over the rows, not the mean: one hiccup of a
     * shared machine must not keep a healthy job out of sync. */
    double spreads[256];
    int spread_rows = 0;
    for (int r = 0; r < rows; r++) {
        double *row = s->own_rows + (size_t)r * n;
        memcpy(row, sc_window_own(&s->win, rows, r), (size_t)n * sizeof(double));
        memcpy(s->scratch, row, (size_t)n * sizeof(double));
        sc_sort_doubles(s->scratch, n);
        for (int k = 0; k < n; k++)
            s->kth_mean[k] += s->scratch[k] / rows;
        double med = sc_median_sorted(s->scratch, n);
        if (med > 0.0 && spread_rows < (int)(sizeof spreads / sizeof spreads[0]))
            spreads[spread_rows++] = (s->scratch[n - 1] - med) / med;
    }
    sc_sort_doubles(spreads, spread_rows);
    double spread = spread_rows ? sc_median_sorted(spreads, spread_rows) : 0.0;
    const sc_rank_status *st = sc_detect_status(s->det);
    int onset = 0;
    for (int i = 0; i < n; i++) {
        if (st[i].straggler && st[i].detect_step > s->last_decide_step) onset |= SC_ONSET_NEW;
        if (st[i].persistent && !s->was_persistent[i]) onset |= SC_ONSET_PERSISTENT;
        /* A persistent straggler short of a measured resource (its CPU,
         * its link) and still in the ring counts as new until it is a
         * child: its case does not weaken with time, and two decisions in
         * a row can take long on a noisy node. */
        if (st[i].persistent && sc_rank_short_of_resource(&st[i]) && !s->cur.child[i])
            onset |= SC_ONSET_PERSISTENT;
    }
    s->sit = (sc_situation){
        .nranks = n,
        .step = s->last_step,
        .nrows = rows,
        .own_rows = s->own_rows,
        .kth_mean = s->kth_mean,
        .spread = spread,
        .rank = st,
        .sum = &s->sum,
        .noise_scale = sc_noise_scale_value(&s->ns, (double)n),
        .noise_measured = s->ns.samples > 0,
        .onset = onset,
        .prior_scale = 1.0,
        .keep_member = s->coordinator_fixed ? s->coordinator : -1,
    };
}

/* How far the heuristic's interval prediction is from the interval measured
 * in the mode in force since the last decision (clamped to [0.5, 2]). */
static double prior_scale(const sc_selector *s)
{
    sc_mode m = s->cur.mode;
    if ((int)m < 0 || m >= SC_LEARNED_MODES || s->ratio_n[m] < 1)
        return 1.0;
    double unit = s->sum.med_compute > 0.0 ? s->sum.med_compute : s->sum.med_own;
    double predicted = unit > 0.0 ? sc_predict_interval(&s->sit, m, s->cur.k, s->cur.child) / unit : 0.0;
    if (predicted <= 0.0)
        return 1.0;
    double scale = (s->ratio_sum[m] / (double)s->ratio_n[m]) / predicted;
    return scale < 0.5 ? 0.5 : scale > 2.0 ? 2.0 : scale;
}

/* Folds the measured interval ratios since the last call into the model. */
static void learn_window(sc_selector *s, int cls)
{
    long min_steps = s->epoch / 4 > 1 ? s->epoch / 4 : 1;
    for (int md = 0; md < SC_LEARNED_MODES; md++) {
        if (s->model && s->ratio_n[md] >= min_steps)
            sc_learned_add(s->model, cls, (sc_mode)md, s->ratio_sum[md] / (double)s->ratio_n[md]);
        s->ratio_sum[md] = 0.0;
        s->ratio_n[md] = 0;
    }
}

void sc_selector_learn(sc_selector *s, long step)
{
    (void)step;
    if (!s || !s->have_steps)
        return;
    build_situation(s, 0);
    learn_window(s, sc_learned_class(&s->sit));
}

static void fill_out(const sc_selector *s, sc_decision *out)
{
    if (!out)
        return;
    out->mode = s->cur.mode;
    out->quorum_k = s->cur.k;
    out->coordinator = s->coordinator;
    out->nranks = s->n;
    if (out->parent)
        memcpy(out->parent, s->parent, (size_t)s->n * sizeof(int));
    snprintf(out->reason, sizeof out->reason, "%s", s->reason);
}

/* The candidate becomes sync, or quorum at the heuristic's best k (sync
 * when no smaller quorum is allowed). */
static void candidate_instead(sc_selector *s, sc_mode mode)
{
    double objective = 0.0;
    int k = mode == SC_MODE_QUORUM && sc_limits_allow(&s->pol, SC_MODE_QUORUM)
                ? sc_best_quorum(&s->sit, &s->pol, &objective) : s->n;
    s->cand.mode = k < s->n ? SC_MODE_QUORUM : SC_MODE_SYNC;
    s->cand.k = k < s->n ? k : s->n;
    s->cand.nchildren = 0;
    memset(s->cand.child, 0, (size_t)s->n);
    s->cand.by_rule = 1;
}

/* The median of mode m's ratios since the last decision (ratio_n[m] > 0). */
static double ratio_median(const sc_selector *s, sc_mode m)
{
    int n = s->ratio_n[m] < SC_RATIO_KEEP ? (int)s->ratio_n[m] : SC_RATIO_KEEP;
    double scratch[SC_RATIO_KEEP];
    return sc_median_of(s->ratio_kept[m], n, scratch);
}

/* Heuristic: the epoch just measured goes into s->pay; a quorum candidate
 * that measured no better than sync becomes sync, and a groups candidate
 * that measured no better than sync or quorum becomes the better of them
 * (pay.h).  Returns 1 when that leaves the mode in force now (at once, as
 * a finished exploration does: waiting two decisions would pay the dearer
 * rounds twice more).  *groups_loses: groups is in force and clearly does
 * not pay, so held children do not keep it. */
static int tolerance_must_pay(sc_selector *s, int *groups_loses)
{
    long min_steps = s->epoch / 4 > 1 ? s->epoch / 4 : 1;
    sc_mode m = s->cur.mode;
    /* A median over the steps since the last decision reflects what came
     * in their second half only: measured "at" their middle (an onset two
     * steps before an urgent decision is not in sync's figure: quorum was
     * judged against a sync that never waited for it, and left). */
    if ((m == SC_MODE_SYNC || m == SC_MODE_QUORUM || m == SC_MODE_GROUPS) && s->ratio_n[m] >= min_steps) {
        long kept = s->ratio_n[m] < SC_RATIO_KEEP ? s->ratio_n[m] : SC_RATIO_KEEP;
        sc_pay_measured(&s->pay, m, ratio_median(s, m), s->last_step - kept / 2);
    }
    sc_pay_age(&s->pay, s->last_step, (long)SC_PAY_AGE_EPOCHS * s->epoch);
    const sc_rank_status *st = sc_detect_status(s->det);
    double sync_wait = 1.0;   /* the stragglers come since sync was measured (pay.h) */
    for (int i = 0; i < s->n; i++)
        if (st[i].straggler && st[i].onset_step > s->pay.sync_step && st[i].slowdown > sync_wait)
            sync_wait = st[i].slowdown;
    sc_mode was = s->cand.mode, instead = SC_MODE_SYNC;
    int loses;
    if (was == SC_MODE_QUORUM && sc_pay_quorum_loses(&s->pay, sync_wait, s->last_step, s->cand.reason, sizeof s->cand.reason)) {
        candidate_instead(s, SC_MODE_SYNC);
        loses = 1;
    } else if (was == SC_MODE_GROUPS &&
               sc_pay_groups_loses(&s->pay, sync_wait, s->last_step, &instead, s->cand.reason, sizeof s->cand.reason)) {
        candidate_instead(s, instead);
        loses = 1;
    } else {
        loses = 0;
    }
    /* a verdict on the mode in force: a spell lost (left, on whatever
     * figure), or won (measured anew, and not lost) */
    if (m == was && (loses || s->ratio_n[m] >= min_steps))
        sc_pay_spell(&s->pay, m, loses, s->mode_since, s->last_step, s->epoch);
    /* Held children keep groups unless it clearly does not pay: ranks
     * short of CPU on a noisy node held neural-fortran's trainer in a
     * groups that measured 4.1 to 4.9 times compute per step against
     * sync's 1.8 to 3, five epochs at a time. */
    *groups_loses = m == SC_MODE_GROUPS && sc_pay_groups_loses_clearly(&s->pay, sync_wait);
    return loses && m == was && s->cand.mode != was;
}

int sc_selector_decide(sc_selector *s, long step, sc_decision *out)
{
    if (!s)
        return 0;
    if (!s->have_steps) {
        fill_out(s, out);
        return 0;
    }
    int n = s->n;
    build_situation(s, 0);
    const sc_situation *sit = &s->sit;
    int cls = sc_learned_class(sit);

    int explore = 0, leave_now = 0, groups_loses = 0;
    if (s->kind == SC_KIND_LEARNED) {
        s->sit.prior_scale = prior_scale(s);
        sc_learned_choose(s->model, sit, &s->pol, s->cur.mode, &s->cand, &explore);
    } else {
        sc_heuristic_choose(sit, &s->pol, s->cur.mode, &s->cand);
        leave_now = tolerance_must_pay(s, &groups_loses);
        /* The first decision comes early for a straggler present from the
         * start; the steps just after learning are noisy, and a spread
         * alone there sent GPT-2's step into a quorum that cost half a
         * step more (then back after a quarter epoch, and the way back
         * costs too).  A spread alone waits for the next decision. */
        if (s->last_decide_step < 0 && s->cand.mode == SC_MODE_QUORUM && s->sum.nstragglers == 0 &&
            s->sum.nstarved == 0 && s->sum.nslow_links == 0) {
            double spread = s->sit.spread;
            candidate_instead(s, SC_MODE_SYNC);
            snprintf(s->cand.reason, sizeof s->cand.reason,
                     "sync: spread %.1f%% but no straggler held; the first decision leaves sync only for one",
                     100.0 * spread);
        }
    }
    if (!groups_loses)
        sc_child_hold_apply(&s->hold, step, &s->cur, &s->cand);

    int use_margin;
    if (s->kind == SC_KIND_LEARNED) {
        s->cur.objective = sc_learned_score(s->model, sit, cls, s->cur.mode, s->cur.k, s->cur.child);
        use_margin = 1;
    } else {
        s->cur.objective = sc_objective(sit, s->cur.mode, s->cur.k, s->cur.child);
        int cur_rule = s->cur.mode == SC_MODE_SYNC || s->cur.mode == SC_MODE_QUORUM;
        int cand_rule = s->cand.mode == SC_MODE_SYNC || s->cand.mode == SC_MODE_QUORUM;
        use_margin = cur_rule && cand_rule;
    }
    int accept;
    if (leave_now) {
        accept = 1;
        sc_hysteresis_restart(&s->hys);
        snprintf(s->note, sizeof s->note, "%s measured no better", sc_sel_mode_name(s->cur.mode));
    } else if (explore || s->exploring) {
        /* An exploration runs for one epoch, then the best choice returns at once. */
        accept = !sc_choice_same(n, &s->cur, &s->cand);
        sc_hysteresis_restart(&s->hys);
        snprintf(s->note, sizeof s->note, "%s", explore ? "exploration epoch" : "exploration over");
    } else {
        accept = sc_hysteresis_accept(&s->hys, &s->cur, &s->cand, sit->onset, use_margin, s->note,
                                      sizeof s->note);
    }
    s->exploring = explore;

    /* The decision in force before this call, to report a change. */
    sc_mode old_mode = s->cur.mode;
    int old_k = s->cur.k, old_coord = s->coordinator;
    memcpy(s->prev_parent, s->parent, (size_t)n * sizeof(int));

    if (accept) {
        s->cur.mode = s->cand.mode;
        s->cur.k = s->cand.k;
        s->cur.nchildren = s->cand.nchildren;
        memcpy(s->cur.child, s->cand.child, (size_t)n);
        s->cur.interval = s->cand.interval;
        s->cur.objective = s->cand.objective;
        snprintf(s->reason, sizeof s->reason, "%s", s->cand.reason);
    }
    /* A tolerant mode entered from any other mode is on trial, not only
     * from an exact one: quorum at one step and groups at the next (a
     * CPU-starved rank beside a hog) left groups untried for an epoch and
     * a half.  A change of k or children within the mode keeps a trial. */
    int tolerant_now = s->cur.mode == SC_MODE_QUORUM || s->cur.mode == SC_MODE_GROUPS;
    s->trial = s->kind == SC_KIND_HEURISTIC && tolerant_now &&
               ((accept && s->cur.mode != old_mode) || (s->trial && s->cur.mode == old_mode));
    const sc_rank_status *st = sc_detect_status(s->det);
    sc_child_hold_update(&s->hold, step, s->epoch, s->cur.child, st);
    int fits = sc_place_parents(n, st, s->cur.child, s->prev_parent, s->parent);
    if (fits == 0 && accept) {
        size_t len = strlen(s->reason);
        snprintf(s->reason + len, sizeof s->reason - len, "; parents' links near saturation");
    }
    for (int i = 0; i < n; i++)
        s->ring[i] = s->cur.child[i] ? 0 : 1;
    if (!s->coordinator_fixed)
        s->coordinator = sc_place_coordinator(n, st, s->cur.child, s->coordinator);

    learn_window(s, cls);
    for (int i = 0; i < n; i++)
        s->was_persistent[i] = (unsigned char)st[i].persistent;
    s->last_decide_step = step > s->last_step ? step : s->last_step;
    s->urgent = 0;

    int parents_moved = memcmp(s->prev_parent, s->parent, (size_t)n * sizeof(int)) != 0;
    int changed = old_mode != s->cur.mode || old_k != s->cur.k || old_coord != s->coordinator || parents_moved;
    if (changed && !accept)
        snprintf(s->reason, sizeof s->reason, "%s k=%d kept; %s for headroom (coordinator %d)",
                 sc_sel_mode_name(s->cur.mode), s->cur.k,
                 parents_moved ? "parents re-placed" : "coordinator moved", s->coordinator);
    fill_out(s, out);
    return changed;
}

int sc_selector_save_model(const sc_selector *s, const char *path, const char *comment, char *msg,
                           size_t msglen)
{
    if (!s || !s->model) {
        set_msg(msg, msglen, "no learned model to save (the selector is not the learned one)");
        return -1;
    }
    return sc_model_save(s->model, path, comment, msg, msglen);
}

int sc_selector_is_learned(const sc_selector *s) { return s && s->kind == SC_KIND_LEARNED; }

const sc_rank_status *sc_selector_ranks(const sc_selector *s) { return sc_detect_status(s->det); }

const double *sc_selector_own_times(const sc_selector *s) { return s->own; }

double sc_selector_noise_scale(const sc_selector *s, int *measured)
{
    if (measured)
        *measured = s->ns.samples > 0;
    return sc_noise_scale_value(&s->ns, (double)s->n);
}

void sc_selector_last_candidate(const sc_selector *s, sc_mode *mode, int *k)
{
    if (mode)
        *mode = s->cand.mode;
    if (k)
        *k = s->cand.k;
}

const char *sc_selector_note(const sc_selector *s) { return s->note; }

void sc_selector_signals(const sc_selector *s, char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    const sc_detect_summary *sum = &s->sum;
    int measured;
    double b = sc_selector_noise_scale(s, &measured);
    int used = snprintf(buf, len, "spread %.1f%%, noise %.1f%%, B=%.3g%s, transfer %.0f%%, links near speed %d/%d%s",
                        100.0 * s->sit.spread, 100.0 * sc_detect_noise(s->det), b, measured ? "" : " (prior)",
                        100.0 * sum->comm_share, sum->nlink_near, s->n, sum->ib_growing ? ", IB waits growing" : "");
    const sc_rank_status *st = sc_detect_status(s->det);
    int listed = 0;
    for (int i = 0; i < s->n && used > 0 && (size_t)used < len; i++) {
        if (!st[i].straggler && !st[i].slow_link && !st[i].starved)
            continue;
        if (listed == 4) {
            used += snprintf(buf + used, len - (size_t)used, ", ...");
            break;
        }
        char extra[64] = "";   /* the probe and the throttling, where measured */
        if (st[i].link_ratio > 0.0)
            snprintf(extra, sizeof extra, ", probe %.1fx", st[i].link_ratio);
        if (st[i].throttled_share > 0.0)
            snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ", throttled %.0f%%",
                     100.0 * st[i].throttled_share);
        if (st[i].cpu_short)
            snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ", given %.0f%% of the CPU",
                     100.0 * st[i].cpu_given);
        used += snprintf(buf + used, len - (size_t)used, "%s rank %d %.2fx %s%s (runq %.0f%%, link %.0f%%%s)",
                         listed ? "," : "; slow:", i, st[i].slowdown, sc_sel_cause_name(st[i].cause),
                         st[i].persistent ? " persistent" : "", 100.0 * st[i].runq_share,
                         100.0 * st[i].link_util, extra);
        listed++;
    }
}
