/* Per-rank straggler detection (CUSUM change points) and cause. */
#include "detect.h"
#include "order_stats.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* CUSUM decision threshold in units of the cross-rank noise.  8 keeps false
 * alarms on a jittery but healthy rank to about one in a thousand steps
 * while a 2x straggler on a quiet machine is caught at its first step. */
#define CUSUM_H 8.0
/* Noise below this (5% step-to-step spread) is treated as this: a perfectly
 * quiet synthetic machine must not turn a 1% wobble into a straggler. */
#define NOISE_FLOOR 0.05
#define NOISE_ALPHA 0.1  /* EMA weight of a step's noise measurement */
#define MAD_TO_SIGMA 1.4826
/* Steps after an onset after which a rank showing no slowdown on average
 * is released as a false alarm. */
#define FALSE_ALARM_STEPS 3

/* Classification thresholds. */
#define LINK_NEAR 0.8          /* max(tx, rx) / speed: link near its speed */
/* Run-queue share above the peers' median ...  (a sleeping application
 * thread wakes into the queue of a busy node: measured 7% of wall against
 * its peers' 1% for a rank whose compute was a sleep, so 5% said cpu) */
#define RUNQ_EXCESS 0.10
#define RUNQ_FACTOR 2.0        /* ... and at least this times it */
#define CPU_LOW_FACTOR 0.8     /* CPU per wall second below this times the peers' */
#define NVCSW_FACTOR 2.0       /* involuntary switches at least this times the peers' ... */
#define NVCSW_EXCESS 5.0       /* ... plus this many per second */
#define COMPUTE_UP 1.1         /* compute above this times the peers': more compute */
#define CPU_FULL 0.9           /* CPU seconds per compute second: CPU fully used */
#define XFER_FACTOR 1.5        /* own transfer time this times the peers' ... */
#define XFER_EXCESS 0.2        /* ... and longer by this share of the median step (the 1.2x threshold) */
#define IB_FACTOR 4.0          /* InfiniBand waits this times the peers' median ... */
#define IB_FLOOR 1000.0        /* ... and at least this many per second */
#define NET_BOUND_SHARE 0.2    /* transfer share of the step for the network to matter */
#define RUNQ_COVERS 0.5        /* extra run-queue delay covering this share of the extra compute: cpu */
#define STARVED_EXCESS 0.3     /* run-queue share this far above the peers' median (and RUNQ_FACTOR times it) ... */
#define PROBE_FACTOR 4.0       /* link probe this times the peers' median ... */
/* ... and slower by XFER_EXCESS of the median step: the link alone would
 * make the rank a straggler by the 1.2x rule. */
/* Throttled by a CPU quota this share of the wall time more than the peers'
 * median: short of CPU, whatever the run queue says (on a busy node every
 * rank queues, and the throttled rank's share saturates like theirs). */
#define THROTTLED_FAR 0.2
/* Given at most SC_GIVEN_FACTOR times its peers' median share of the CPU while its
 * application threads are runnable (CPU over CPU plus their run-queue
 * delay), they queueing at least as much of the wall time as its peers'
 * and at least GIVEN_QUEUED of it: short of CPU on a crowded node.  A rank
 * on a core beside a pinned `stress-ng` gets 0.16-0.18 against its peers'
 * 0.31-0.42 (their polling counted), and queues 0.86-0.98 of its wall
 * against 0.62-0.82, short of STARVED_EXCESS.  The application threads
 * only: a rank whose compute sleeps is given little CPU while its engine
 * thread queues for rounds it is late for, and that is not short of CPU.
 * 65% of the peers' share is not short: on a busy node noise gives that. */
#define GIVEN_QUEUED 0.3

struct cusum {
    double s;         /* statistic of the active test (onset or end) */
    long run_start;   /* step where s last left zero: the change-point estimate */
    double run_sum;   /* sum of r since then (onset test) */
    long run_len;
    double level_sum; /* sum of r over the episode (end test reference) */
    long level_n;
    double after_sum; /* sum of r over the steps after the onset was detected */
    long after_n;
    long net_since;   /* first step of the window where net pressure began, -1 */
    long starved_since; /* first step of the window where CPU starvation began, -1 */
};

struct sc_detect {
    int n, persist;
    int peek;       /* classify leaves the held conditions' starting steps alone */
    double sigma;
    int sigma_set;
    double ib_med_min; /* lowest positive median InfiniBand wait rate seen */
    struct cusum *cs;
    sc_rank_status *st;
    double *r, *tmp, *scratch, *vals;
    int *idx;
};

sc_detect *sc_detect_new(int nranks, int persist_steps)
{
    if (nranks < 1 || persist_steps < 1)
        return NULL;
    sc_detect *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    size_t n = (size_t)nranks;
    d->n = nranks;
    d->persist = persist_steps;
    d->cs = calloc(n, sizeof *d->cs);
    d->st = calloc(n, sizeof *d->st);
    d->r = calloc(n, sizeof(double));
    d->tmp = calloc(n, sizeof(double));
    d->scratch = calloc(n, sizeof(double));
    d->vals = calloc(n, sizeof(double));
    d->idx = calloc(n, sizeof(int));
    if (!d->cs || !d->st || !d->r || !d->tmp || !d->scratch || !d->vals || !d->idx) {
        sc_detect_free(d);
        return NULL;
    }
    for (int i = 0; i < nranks; i++) {
        d->st[i].onset_step = d->st[i].detect_step = -1;
        d->st[i].end_step = d->st[i].end_detect_step = -1;
        d->st[i].slowdown = 1.0;
        d->st[i].cpu_headroom = d->st[i].nic_headroom = 1.0;
        d->cs[i].net_since = -1;
        d->cs[i].starved_since = -1;
    }
    return d;
}

void sc_detect_free(sc_detect *d)
{
    if (!d)
        return;
    free(d->cs);
    free(d->st);
    free(d->r);
    free(d->tmp);
    free(d->scratch);
    free(d->vals);
    free(d->idx);
    free(d);
}

const sc_rank_status *sc_detect_status(const sc_detect *d) { return d->st; }

double sc_detect_noise(const sc_detect *d) { return d->sigma; }

/* A ring member with a compute and wait split (its transfer was measured). */
static int quorum_member(const double *feat, const unsigned char *ring, const double *xfer, int i)
{
    return (!ring || ring[i]) && (feat[(size_t)i * SC_NFEAT + SC_F_COMPUTE_S] > 0.0 || xfer[i] > 0.0);
}

void sc_detect_own_times(const double *feat, int nranks, const unsigned char *ring, int k,
                         double *scratch, double *own, double *xfer)
{
    int m = 0;
    for (int i = 0; i < nranks; i++)
        if (!ring || ring[i])
            scratch[m++] = feat[(size_t)i * SC_NFEAT + SC_F_COMPUTE_S];
    if (k <= 0 || k > m)
        k = m;
    double ck = sc_kth_smallest_inplace(scratch, m, k); /* compute of the rank a round waits for */
    for (int i = 0; i < nranks; i++) {
        const double *f = feat + (size_t)i * SC_NFEAT;
        double c = f[SC_F_COMPUTE_S], w = f[SC_F_WAIT_S];
        if (c <= 0.0 && w <= 0.0) {
            own[i] = f[SC_F_STEP_S];
            xfer[i] = 0.0;
            continue;
        }
        /* Time blocked outside the engine's calls (an exact per-step loss,
         * MPI_Waitall) is waiting for the others, never own transfer: in a
         * tolerant mode a per-step exact loss holds the fast ranks there
         * until the straggler arrives, and counted as transfer it made
         * them look as slow as the straggler (the spread vanished, and auto
         * flapped back to sync and out again every few steps). */
        double away = f[SC_F_AWAY_S] < w ? f[SC_F_AWAY_S] : w;
        double late = (!ring || ring[i]) && ck > c ? ck - c : 0.0;
        double x = w - away - late;
        if (x < 0.0)
            x = 0.0;
        xfer[i] = x;
        own[i] = c + x;
    }
    if (k >= m)
        return;
    /* In a quorum, a member whose buffer missed the round waits inside the
     * engine for a later round: for the others again, though no compute
     * gap shows it.  And a member late for the rounds skips their
     * transfer (its buffer rides a later round, its call returns at once),
     * though sync would make it pay it like the others: 8 ranks on 2
     * cores, fast ranks 8.7 ms compute + 5.5 ms transfer, a 2x straggler
     * 16.7 ms + 0.3 ms, read 1.2x, at the threshold, and a table row ended
     * mid-run.  So every member's own transfer counts as the median
     * member's (a slow link is found in the exact modes and by the probe). */
    int j = 0;
    for (int i = 0; i < nranks; i++)
        if (quorum_member(feat, ring, xfer, i))
            scratch[j++] = xfer[i];
    if (j == 0)
        return;
    double med = sc_kth_smallest_inplace(scratch, j, (j + 1) / 2);
    for (int i = 0; i < nranks; i++)
        if (quorum_member(feat, ring, xfer, i)) {
            own[i] += med - xfer[i];
            xfer[i] = med;
        }
}

/* Indices of the reference ranks: ring members not held slow (all ranks
 * when that leaves none).  Returns their count. */
static int reference_ranks(const sc_detect *d, const unsigned char *ring, int *idx)
{
    int m = 0;
    for (int i = 0; i < d->n; i++)
        if ((!ring || ring[i]) && !d->st[i].straggler && !d->st[i].slow_link && !d->st[i].starved)
            idx[m++] = i;
    if (m == 0)
        for (int i = 0; i < d->n; i++)
            idx[m++] = i;
    return m;
}

/* Median of v over the ranks listed in idx, with positive values only when
 * positive_only is set (0 when there are none). */
static double median_over(sc_detect *d, const double *v, const int *idx, int m, int positive_only)
{
    int k = 0;
    for (int j = 0; j < m; j++)
        if (!positive_only || v[idx[j]] > 0.0)
            d->vals[k++] = v[idx[j]];
    return sc_median_of(d->vals, k, d->scratch);
}

static void update_noise(sc_detect *d, const int *idx, int m)
{
    int k = 0;
    for (int j = 0; j < m; j++)
        d->tmp[k++] = d->r[idx[j]];
    if (k < 2)
        return;
    double med = sc_median_of(d->tmp, k, d->scratch);
    for (int j = 0; j < k; j++)
        d->tmp[j] = fabs(d->tmp[j] - med);
    double s = MAD_TO_SIGMA * sc_median_of(d->tmp, k, d->scratch);
    if (!d->sigma_set) {
        d->sigma = s;
        d->sigma_set = 1;
    } else {
        d->sigma += NOISE_ALPHA * (s - d->sigma);
    }
}

int sc_detect_step(sc_detect *d, long step, const double *own, const unsigned char *ring)
{
    int *idx = d->idx;
    int m = reference_ranks(d, ring, idx);
    double ref = median_over(d, own, idx, m, 1);
    if (ref <= 0.0)
        return 0; /* no timing this step */
    for (int i = 0; i < d->n; i++)
        d->r[i] = own[i] > 0.0 ? log(own[i] / ref) : 0.0;
    update_noise(d, idx, m);

    double sig = d->sigma > NOISE_FLOOR ? d->sigma : NOISE_FLOOR;
    double delta = log(SC_STRAGGLER_RATIO);
    int events = 0;
    for (int i = 0; i < d->n; i++) {
        struct cusum *c = &d->cs[i];
        sc_rank_status *st = &d->st[i];
        double r = d->r[i];
        if (c->s == 0.0) {
            c->run_start = step;
            c->run_sum = 0.0;
            c->run_len = 0;
        }
        if (!st->straggler) {
            /* Onset test: shift of log step time from 0 to at least delta. */
            c->s += (r - 0.5 * delta) / sig;
            if (c->s <= 0.0) {
                c->s = 0.0;
                continue;
            }
            c->run_sum += r;
            c->run_len++;
            if (c->s > CUSUM_H) {
                st->straggler = 1;
                st->onset_step = c->run_start;
                st->detect_step = step;
                c->level_sum = c->run_sum;
                c->level_n = c->run_len;
                c->after_sum = 0.0;
                c->after_n = 0;
                c->s = 0.0;
                events++;
            }
        } else {
            /* End test: shift from the episode's level back to 0.  The
             * level only takes steps consistent with it (s at zero), so a
             * recovery in progress does not drag the reference down. */
            double level = c->level_n > 0 ? c->level_sum / (double)c->level_n : delta;
            if (level < delta)
                level = delta;
            c->after_sum += r;
            c->after_n++;
            c->s += (0.5 * level - r) / sig;
            if (c->s <= 0.0) {
                c->s = 0.0;
                c->level_sum += r;
                c->level_n++;
                continue;
            }
            /* A false alarm (a burst of jitter) shows no slowdown once
             * detected: end it after a few steps instead of waiting for the
             * CUSUM to climb from the alarm's inflated level. */
            int false_alarm = c->after_n >= FALSE_ALARM_STEPS && c->after_sum / c->after_n < 0.5 * delta;
            if (c->s > CUSUM_H || false_alarm) {
                st->straggler = 0;
                st->end_step = c->run_start;
                st->end_detect_step = step;
                c->s = 0.0;
                if (!false_alarm)
                    events++; /* releasing a false alarm changes nothing worth a decision */
            }
        }
    }
    return events;
}

void sc_detect_rebase(sc_detect *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->n; i++) {
        struct cusum *c = &d->cs[i];
        if (!d->st[i].straggler)
            continue;
        c->s = 0.0;
        c->level_sum = 0.0;
        c->level_n = 0;
    }
}

static double clamp01(double x) { return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x); }

/* Fills the per-rank window signals of the classification. */
static void window_signals(sc_detect *d, const double *mean_feat, const double *mean_own,
                           const double *mean_xfer)
{
    int have_app = 0;   /* traces from before app_runq_s read it as 0 */
    for (int i = 0; i < d->n; i++)
        if (mean_feat[(size_t)i * SC_NFEAT + SC_F_APP_RUNQ_S] > 0.0) have_app = 1;
    for (int i = 0; i < d->n; i++) {
        const double *f = mean_feat + (size_t)i * SC_NFEAT;
        sc_rank_status *st = &d->st[i];
        double wall = f[SC_F_STEP_S] > 0.0 ? f[SC_F_STEP_S] : mean_own[i];
        st->own_s = mean_own[i];
        st->xfer_s = mean_xfer[i];
        st->compute_s = f[SC_F_COMPUTE_S];
        st->step_s = f[SC_F_STEP_S];
        double app_runq = have_app ? f[SC_F_APP_RUNQ_S] : f[SC_F_RUNQ_S];
        st->runq_share = wall > 0.0 ? clamp01(app_runq / wall) : 0.0;
        st->runq_all_share = wall > 0.0 ? clamp01(f[SC_F_RUNQ_S] / wall) : 0.0;
        st->throttled_share = wall > 0.0 ? clamp01(f[SC_F_THROTTLED_S] / wall) : 0.0;
        st->runq_s = app_runq > 0.0 ? app_runq : 0.0;
        st->cpu_per_wall = wall > 0.0 ? f[SC_F_CPU_S] / wall : 0.0;
        st->cpu_given = f[SC_F_CPU_S] > 0.0 && app_runq >= 0.0 ? f[SC_F_CPU_S] / (f[SC_F_CPU_S] + app_runq) : 0.0;
        st->nvcsw_rate = wall > 0.0 ? f[SC_F_NVCSW] / wall : 0.0;
        double speed = f[SC_F_NIC_SPEED_BPS];
        double bps = f[SC_F_NIC_TX_BPS] > f[SC_F_NIC_RX_BPS] ? f[SC_F_NIC_TX_BPS] : f[SC_F_NIC_RX_BPS];
        st->link_util = speed > 0.0 ? bps / speed : 0.0;
        st->speed_bps = speed;
        st->ib_wait_ps = f[SC_F_IB_WAIT_PS];
        st->link_s = f[SC_F_LINK_SPB] * f[SC_F_BYTES];
        st->load_bps = wall > 0.0 ? f[SC_F_BYTES] / wall : 0.0;
    }
}

/* Median over the reference ranks of one double field of sc_rank_status. */
static double peer_median(sc_detect *d, size_t field, const int *idx, int m, int positive_only,
                          double *v)
{
    for (int i = 0; i < d->n; i++)
        v[i] = *(const double *)((const char *)&d->st[i] + field);
    return median_over(d, v, idx, m, positive_only);
}

static sc_cause cause_of(const sc_rank_status *st, double med_compute, double med_runq, double med_runq_s,
                         double med_cpw, double med_nvcsw, double med_xfer, double med_own)
{
    int runq_high = st->runq_share >= med_runq + RUNQ_EXCESS && st->runq_share >= RUNQ_FACTOR * med_runq;
    /* On a crowded machine every rank queues (waiting ranks yield), so the
     * share saturates; a rank held back by a CPU quota or a busy core shows
     * instead as extra queueing that accounts for its extra compute time
     * (CFS throttling counts as run-queue delay). */
    int queued_for_it = st->compute_s > med_compute &&
                        st->runq_s - med_runq_s >= RUNQ_COVERS * (st->compute_s - med_compute);
    runq_high = runq_high || queued_for_it;
    int starved = st->cpu_per_wall <= CPU_LOW_FACTOR * med_cpw &&
                  st->nvcsw_rate >= NVCSW_FACTOR * med_nvcsw + NVCSW_EXCESS;
    int cpu = runq_high || starved || st->runq_far || st->cpu_short;
    int compute_up = med_compute > 0.0 && st->compute_s > COMPUTE_UP * med_compute;
    int xfer_up = st->xfer_s >= XFER_FACTOR * med_xfer && st->xfer_s - med_xfer >= XFER_EXCESS * med_own;
    int network = st->net_pressure || (xfer_up && !compute_up);
    /* CPU use per compute second; cpu_s also counts polling while waiting,
     * so take the compute part only as an upper bound check. */
    double cpu_s = st->cpu_per_wall * (st->step_s > 0.0 ? st->step_s : st->own_s);
    int cpu_full = st->compute_s > 0.0 && cpu_s >= CPU_FULL * st->compute_s;
    if (compute_up) {
        if (cpu)
            return SC_CAUSE_CPU;
        /* A rank behind a slow link also arrives late (its collectives
         * finish late for it), which counts as compute by arrival: its own
         * probe, far slower than its peers', says which it is. */
        if (st->probe_slow)
            return SC_CAUSE_NETWORK;
        if (cpu_full)
            return SC_CAUSE_WORK;
        if (network)
            return SC_CAUSE_NETWORK;
        return SC_CAUSE_NONE;
    }
    if (network)
        return SC_CAUSE_NETWORK;
    if (cpu)
        return SC_CAUSE_CPU;
    return SC_CAUSE_NONE;
}

void sc_detect_set_persist(sc_detect *d, int persist_steps)
{
    if (d && persist_steps >= 1)
        d->persist = persist_steps;
}

void sc_detect_peek(sc_detect *d, int on)
{
    if (d)
        d->peek = on ? 1 : 0;
}

/* A condition seen over the window ending at last_step: *since is the
 * first step of the run of windows showing it (-1 none).  1 once it has
 * held for `persist` steps. */
static int held(long *since, int now, long last_step, int window_steps, int persist)
{
    if (!now) {
        *since = -1;
        return 0;
    }
    if (*since < 0)
        *since = last_step - window_steps + 1;
    return last_step - *since + 1 >= persist;
}

void sc_detect_classify(sc_detect *d, long last_step, int window_steps, const double *mean_feat,
                        const double *mean_own, const double *mean_xfer,
                        const unsigned char *ring, sc_detect_summary *sum)
{
    int n = d->n;
    memset(sum, 0, sizeof *sum);
    sum->worst = -1;
    window_signals(d, mean_feat, mean_own, mean_xfer);

    int *idx = d->idx;
    double *v = d->tmp;
    int m = reference_ranks(d, ring, idx);
    double med_own = peer_median(d, offsetof(sc_rank_status, own_s), idx, m, 1, v);
    double med_compute = peer_median(d, offsetof(sc_rank_status, compute_s), idx, m, 0, v);
    double med_runq = peer_median(d, offsetof(sc_rank_status, runq_share), idx, m, 0, v);
    double med_runq_all = peer_median(d, offsetof(sc_rank_status, runq_all_share), idx, m, 0, v);
    double med_throttled = peer_median(d, offsetof(sc_rank_status, throttled_share), idx, m, 0, v);
    double med_runq_s = peer_median(d, offsetof(sc_rank_status, runq_s), idx, m, 0, v);
    double med_cpw = peer_median(d, offsetof(sc_rank_status, cpu_per_wall), idx, m, 0, v);
    double med_given = peer_median(d, offsetof(sc_rank_status, cpu_given), idx, m, 1, v);
    double med_nvcsw = peer_median(d, offsetof(sc_rank_status, nvcsw_rate), idx, m, 0, v);
    double med_xfer = peer_median(d, offsetof(sc_rank_status, xfer_s), idx, m, 0, v);
    double med_ib = peer_median(d, offsetof(sc_rank_status, ib_wait_ps), idx, m, 0, v);
    double med_link = peer_median(d, offsetof(sc_rank_status, link_s), idx, m, 1, v);
    sum->med_own = med_own;
    sum->med_compute = med_compute;
    sum->med_xfer = med_xfer;

    /* Network pressure per rank, and whether most ranks share it. */
    for (int i = 0; i < n; i++) {
        sc_rank_status *st = &d->st[i];
        int ib_high = st->ib_wait_ps >= IB_FLOOR && st->ib_wait_ps >= IB_FACTOR * med_ib;
        st->link_ratio = med_link > 0.0 ? st->link_s / med_link : 0.0;
        st->probe_slow = med_link > 0.0 && st->link_ratio >= PROBE_FACTOR &&
                         st->link_s - med_link >= XFER_EXCESS * med_own;
        st->net_pressure = st->link_util >= LINK_NEAR || ib_high || st->probe_slow;
        if (st->link_util >= LINK_NEAR)
            sum->nlink_near++;
    }
    if (!d->peek && med_ib > 0.0 && (d->ib_med_min <= 0.0 || med_ib < d->ib_med_min))
        d->ib_med_min = med_ib;
    double ib_ref = d->ib_med_min > IB_FLOOR ? d->ib_med_min : IB_FLOOR;
    sum->ib_growing = med_ib >= 2.0 * ib_ref;
    for (int i = 0; i < n; i++)
        v[i] = d->st[i].own_s > 0.0 ? d->st[i].xfer_s / d->st[i].own_s : 0.0;
    sum->comm_share = sc_median_of(v, n, d->scratch);
    int majority = 2 * sum->nlink_near >= n || sum->ib_growing;
    sum->net_bound = majority && sum->comm_share >= NET_BOUND_SHARE;

    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        sc_rank_status *st = &d->st[i];
        struct cusum *c = &d->cs[i];
        st->slowdown = med_own > 0.0 && st->own_s > 0.0 ? st->own_s / med_own : 1.0;
        double share = st->own_s > 0.0 ? st->xfer_s / st->own_s : 0.0;
        /* A link under pressure on this rank alone, where transfers matter
         * (a slow probe says so by itself: the excess counts the step's bytes). */
        int lone_link = !majority && (st->probe_slow || (st->net_pressure && share >= NET_BOUND_SHARE));
        /* A look between decisions (sc_detect_peek) leaves where the held
         * conditions began as it was: one short, noisy window must not
         * reset a starvation the decisions see held. */
        long net_since = c->net_since, starved_since = c->starved_since;
        st->slow_link = held(&net_since, lone_link, last_step, window_steps, d->persist);
        /* Starved of CPU where transfers matter.  A rank whose compute is
         * mostly waiting (sleeps, I/O, a GPU) computes no slower under a
         * quota, but every exact collective waits for its MPI progress, and
         * there every rank waits alike: timing cannot tell, its run-queue
         * delay (throttling counts there) can.  A child no longer takes
         * part in the rounds, so its transfers say nothing: still starved,
         * it stays starved. */
        int child = ring && !ring[i];
        /* Far: well above the peers' share, and either queueing RUNQ_FACTOR
         * times as long or left RUNQ_FACTOR times less of the CPU (on a
         * busy node the peers queue half the time themselves, and a rank
         * under a 5% quota at 94% can never queue twice as long). */
        st->runq_far = (st->runq_all_share >= med_runq_all + STARVED_EXCESS &&
                        (st->runq_all_share >= RUNQ_FACTOR * med_runq_all ||
                         RUNQ_FACTOR * (1.0 - st->runq_all_share) <= 1.0 - med_runq_all)) ||
                       st->throttled_share >= med_throttled + THROTTLED_FAR;
        st->cpu_short = st->cpu_given > 0.0 && med_given > 0.0 && st->cpu_given <= SC_GIVEN_FACTOR * med_given &&
                        st->runq_share >= med_runq && st->runq_share >= GIVEN_QUEUED;
        /* Where the others wait for it: its transfers, and its lateness
         * (beside a pinned hog, a rank given 17% of the CPU arrived 1.13x
         * late with 19% of its step in transfers, and stayed in the ring). */
        double waited = share + (st->slowdown > 1.0 ? st->slowdown - 1.0 : 0.0);
        int starved_now = (st->runq_far || st->cpu_short) && (waited >= NET_BOUND_SHARE || child);
        st->starved = held(&starved_since, starved_now, last_step, window_steps, d->persist);
        if (!d->peek) {
            c->net_since = net_since;
            c->starved_since = starved_since;
        }
        st->persistent = (st->straggler && last_step - st->onset_step + 1 >= d->persist) || st->slow_link || st->starved;
        if (st->straggler || lone_link)
            st->cause = cause_of(st, med_compute, med_runq, med_runq_s, med_cpw, med_nvcsw, med_xfer, med_own);
        else if (st->starved)
            st->cause = SC_CAUSE_CPU;
        else
            st->cause = SC_CAUSE_NONE;
        if (st->straggler)
            sum->nstragglers++;
        if (st->slow_link)
            sum->nslow_links++;
        if (st->starved)
            sum->nstarved++;
        if (st->slowdown > worst) {
            worst = st->slowdown;
            sum->worst = i;
        }
        /* Headroom for placement: a queued CPU, or a rank persistently slow,
         * has less to give (jitter and brief slowdowns are ignored, so
         * placement does not follow noise). */
        double slow_excess = st->persistent && st->slowdown >= SC_STRAGGLER_RATIO ? st->slowdown - 1.0 : 0.0;
        st->cpu_headroom = clamp01(1.0 - st->runq_all_share - slow_excess);
        double nic = st->link_util > 0.0 ? 1.0 - st->link_util : 1.0;
        if (st->ib_wait_ps >= IB_FLOOR && st->ib_wait_ps >= IB_FACTOR * med_ib)
            nic *= 0.5;
        st->nic_headroom = clamp01(nic);
    }
}
