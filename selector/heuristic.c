/* The heuristic selector: the paper's rule plus grouping of stragglers. */
#include "heuristic.h"
#include "names.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sc_limits_allow(const sc_limits *pol, sc_mode mode)
{
    if (mode == SC_MODE_SYNC)
        return 1;
    if (mode == SC_MODE_QUORUM && pol->staleness <= 0)
        return 0; /* a late buffer could never ride in a later round */
    return (pol->allowed & (1u << mode)) != 0;
}

double sc_iterations_factor(double noise_scale, int k)
{
    if (k < 1)
        k = 1;
    if (!(noise_scale >= 0.0))
        noise_scale = 0.0;
    return 1.0 + noise_scale / k;
}

static int clamp_k(int k, int n) { return k < 1 ? 1 : (k > n ? n : k); }

double sc_predict_interval(const sc_situation *sit, sc_mode mode, int k, const unsigned char *child)
{
    int n = sit->nranks;
    double slowest = sit->kth_mean[n - 1];
    switch (mode) {
    case SC_MODE_QUORUM:
        return sit->kth_mean[clamp_k(k, n) - 1];
    case SC_MODE_GROUPS: {
        if (!child || sit->nrows <= 0)
            return slowest;
        double sum = 0.0;
        for (int r = 0; r < sit->nrows; r++) {
            const double *row = sit->own_rows + (size_t)r * n;
            double mx = 0.0;
            for (int i = 0; i < n; i++)
                if (!child[i] && row[i] > mx)
                    mx = row[i];
            sum += mx;
        }
        return sum / sit->nrows;
    }
    case SC_MODE_HIER: {
        double x = sit->sum->med_xfer;
        return sit->sum->net_bound ? slowest - 0.5 * x : slowest + 0.05 * x;
    }
    default:
        return slowest;
    }
}

double sc_objective(const sc_situation *sit, sc_mode mode, int k, const unsigned char *child)
{
    int keff = mode == SC_MODE_QUORUM ? clamp_k(k, sit->nranks) : sit->nranks;
    return sc_predict_interval(sit, mode, k, child) * sc_iterations_factor(sit->noise_scale, keff);
}

int sc_best_quorum(const sc_situation *sit, const sc_limits *pol, double *objective)
{
    int n = sit->nranks;
    if (pol->quorum_fixed > 0) {
        int k = clamp_k(pol->quorum_fixed, n);
        *objective = sc_objective(sit, SC_MODE_QUORUM, k, NULL);
        return k;
    }
    int kmin = (n + 1) / 2; /* never fewer than half the ranks' fresh gradients */
    /* A round of one buffer averages nothing: each rank would step on its
     * own gradient alone.  At 2 ranks that takes a straggler the
     * change-point test holds, never a spread inside the noise (OSU's
     * osu_allreduce at 2 ranks went to k=1 on a 10% spread and failed its
     * validation). */
    if (kmin < 2 && sit->sum->nstragglers == 0)
        kmin = 2;
    int best = n;
    double best_obj = sc_objective(sit, SC_MODE_QUORUM, n, NULL);
    for (int k = n - 1; k >= kmin; k--) {
        double o = sc_objective(sit, SC_MODE_QUORUM, k, NULL);
        if (o < best_obj) { /* strict: ties keep the larger k */
            best_obj = o;
            best = k;
        }
    }
    *objective = best_obj;
    return best;
}

int sc_pick_children(const sc_situation *sit, int any_cause, unsigned char *child)
{
    int n = sit->nranks, count = 0, limit = n / 2;
    memset(child, 0, (size_t)n);
    if (n < 3)
        return 0; /* a ring needs two members besides any child */
    for (;;) {
        int pick = -1;
        for (int i = 0; i < n; i++) {
            const sc_rank_status *st = &sit->rank[i];
            int eligible = st->slow_link || st->starved ||
                           (st->straggler && st->persistent && st->slowdown >= SC_STRAGGLER_RATIO &&
                            (any_cause || st->cause == SC_CAUSE_CPU || st->cause == SC_CAUSE_NETWORK));
            if (!eligible || child[i] || i == sit->keep_member)
                continue;
            if (pick < 0 || st->slowdown > sit->rank[pick].slowdown)
                pick = i;
        }
        if (pick < 0 || count >= limit)
            break;
        child[pick] = 1;
        count++;
    }
    return count;
}

static void describe_children(const sc_situation *sit, const unsigned char *child, int nchildren,
                              char *buf, size_t len)
{
    size_t used = 0;
    int shown = 0;
    buf[0] = '\0';
    for (int i = 0; i < sit->nranks && shown < 3; i++) {
        if (!child[i])
            continue;
        const sc_rank_status *st = &sit->rank[i];
        char sig[48] = "";
        if (st->cause == SC_CAUSE_CPU && st->throttled_share > 0.0)
            snprintf(sig, sizeof sig, " throttled %.0f%%", 100.0 * st->throttled_share);
        else if (st->cause == SC_CAUSE_CPU && sc_rank_short_by_share(st))
            snprintf(sig, sizeof sig, " given %.0f%% of the CPU", 100.0 * st->cpu_given);
        else if (st->cause == SC_CAUSE_CPU)
            snprintf(sig, sizeof sig, " runq %.0f%%", 100.0 * st->runq_share);
        else if (st->cause == SC_CAUSE_NETWORK && st->probe_slow)
            snprintf(sig, sizeof sig, " probe %.1fx", st->link_ratio);
        else if (st->cause == SC_CAUSE_NETWORK)
            snprintf(sig, sizeof sig, " link %.0f%%", 100.0 * st->link_util);
        int w = snprintf(buf + used, len - used, "%srank %d %.2fx %s%s", shown ? ", " : "", i,
                         st->slowdown, sc_sel_cause_name(st->cause), sig);
        if (w < 0 || (size_t)w >= len - used)
            return;
        used += (size_t)w;
        shown++;
    }
    if (nchildren > shown)
        snprintf(buf + used, len - used, ", +%d more", nchildren - shown);
}

void sc_heuristic_choose(const sc_situation *sit, const sc_limits *pol, sc_mode current,
                         sc_candidate *out)
{
    int n = sit->nranks;
    const sc_detect_summary *sum = sit->sum;
    out->nchildren = 0;
    memset(out->child, 0, (size_t)n);
    out->k = n;
    out->by_rule = 1;

    if (n >= 3 && sc_limits_allow(pol, SC_MODE_GROUPS)) {
        int c = sc_pick_children(sit, 0, out->child);
        if (c > 0) {
            char who[100];
            describe_children(sit, out->child, c, who, sizeof who);
            out->mode = SC_MODE_GROUPS;
            out->nchildren = c;
            out->k = n - c;
            out->interval = sc_predict_interval(sit, SC_MODE_GROUPS, out->k, out->child);
            out->objective = sc_objective(sit, SC_MODE_GROUPS, out->k, out->child);
            snprintf(out->reason, sizeof out->reason, "groups: persistent straggler%s (%s); ring %d",
                     c > 1 ? "s" : "", who, n - c);
            return;
        }
    }
    memset(out->child, 0, (size_t)n);

    if (n >= 3 && sum->net_bound && sum->nstragglers == 0 && sum->nslow_links == 0 && sum->nstarved == 0 &&
        sc_limits_allow(pol, SC_MODE_HIER)) {
        out->mode = SC_MODE_HIER;
        out->interval = sc_predict_interval(sit, SC_MODE_HIER, n, NULL);
        out->objective = sc_objective(sit, SC_MODE_HIER, n, NULL);
        snprintf(out->reason, sizeof out->reason,
                 "hier: network-bound (%d/%d links >=80%% of speed%s, transfer %.0f%% of step), no straggler",
                 sum->nlink_near, n, sum->ib_growing ? ", IB waits growing" : "",
                 100.0 * sum->comm_share);
        return;
    }

    double sync_obj = sc_objective(sit, SC_MODE_SYNC, n, NULL);
    double sync_interval = sc_predict_interval(sit, SC_MODE_SYNC, n, NULL);
    double threshold = current == SC_MODE_SYNC ? SC_SPREAD_LEAVE : SC_SPREAD_SYNC;
    const char *bsrc = sit->noise_measured ? "" : " (prior)";
    if (sit->spread < threshold || n < 2) {
        out->mode = SC_MODE_SYNC;
        out->interval = sync_interval;
        out->objective = sync_obj;
        snprintf(out->reason, sizeof out->reason, "sync: step-time spread %.1f%% < %.0f%%, %s",
                 100.0 * sit->spread, 100.0 * threshold,
                 sum->nstragglers ? "stragglers transient" : "no straggler");
        return;
    }
    double qobj;
    int k = sc_best_quorum(sit, pol, &qobj);
    out->by_rule = 0;
    if (k >= n || !sc_limits_allow(pol, SC_MODE_QUORUM) || qobj >= sync_obj) {
        out->mode = SC_MODE_SYNC;
        out->interval = sync_interval;
        out->objective = sync_obj;
        snprintf(out->reason, sizeof out->reason,
                 "sync: spread %.1f%% but %s (B=%.3g%s)", 100.0 * sit->spread,
                 sc_limits_allow(pol, SC_MODE_QUORUM) ? "no smaller quorum pays off" : "quorum not allowed",
                 sit->noise_scale, bsrc);
        return;
    }
    out->mode = SC_MODE_QUORUM;
    out->k = k;
    out->interval = sc_predict_interval(sit, SC_MODE_QUORUM, k, NULL);
    out->objective = qobj;
    snprintf(out->reason, sizeof out->reason,
             "quorum k=%d/%d: spread %.0f%%, interval %.3gs vs %.3gs at k=%d, B=%.3g%s, cost %.3g vs %.3g",
             k, n, 100.0 * sit->spread, out->interval, sync_interval, n, sit->noise_scale, bsrc, qobj,
             sync_obj);
}
