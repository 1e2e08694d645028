/* The learned selector: per-class running means of each mode's interval. */
#include "learned.h"
#include "heuristic.h"
#include "names.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sc_learned_init(sc_learned *m)
{
    memset(m, 0, sizeof *m);
    m->last_explore = -1;
}

int sc_learned_class(const sc_situation *sit)
{
    const sc_detect_summary *sum = sit->sum;
    int strag = 0, worst = -1;
    for (int i = 0; i < sit->nranks; i++) {
        const sc_rank_status *st = &sit->rank[i];
        if (!st->straggler && !st->slow_link && !st->starved)
            continue;
        if (strag < 1)
            strag = 1;
        if (st->persistent)
            strag = 2;
        if (worst < 0 || st->slowdown > sit->rank[worst].slowdown)
            worst = i;
    }
    int cause = worst >= 0 ? (int)sit->rank[worst].cause : 0;
    if (cause < 0 || cause > 3)
        cause = 0;
    int spread = sit->spread < 0.05 ? 0 : sit->spread < 0.15 ? 1 : sit->spread < 0.40 ? 2 : 3;
    return ((strag * 4 + cause) * 2 + (sum->net_bound ? 1 : 0)) * 4 + spread;
}

void sc_learned_class_name(int cls, char *buf, size_t len)
{
    static const char *const strag[] = {"no straggler", "transient", "persistent"};
    static const char *const spread[] = {"<5%", "<15%", "<40%", ">=40%"};
    if (cls < 0 || cls >= SC_LEARNED_CLASSES) {
        snprintf(buf, len, "class %d?", cls);
        return;
    }
    int sp = cls % 4, net = (cls / 4) % 2, cause = (cls / 8) % 4, st = cls / 32;
    if (st == 0)
        snprintf(buf, len, "no straggler, spread %s%s", spread[sp], net ? ", network-bound" : "");
    else
        snprintf(buf, len, "%s %s straggler, spread %s%s", strag[st], sc_sel_cause_name((sc_cause)cause),
                 spread[sp], net ? ", network-bound" : "");
}

static int valid_cell(int cls, sc_mode mode)
{
    return cls >= 0 && cls < SC_LEARNED_CLASSES && (int)mode >= 0 && mode < SC_LEARNED_MODES;
}

void sc_learned_add(sc_learned *m, int cls, sc_mode mode, double ratio)
{
    if (!valid_cell(cls, mode) || !isfinite(ratio) || ratio <= 0.0)
        return;
    sc_learned_cell *c = &m->cell[cls][mode];
    if (c->count < SC_LEARNED_MEMORY)
        c->count += 1.0;
    c->mean += (ratio - c->mean) / c->count;
}

double sc_learned_count(const sc_learned *m, int cls, sc_mode mode)
{
    return valid_cell(cls, mode) ? m->cell[cls][mode].count : 0.0;
}

/* The time unit the ratios are measured in: the median compute time. */
static double ratio_unit(const sc_situation *sit)
{
    if (sit->sum->med_compute > 0.0)
        return sit->sum->med_compute;
    if (sit->sum->med_own > 0.0)
        return sit->sum->med_own;
    return 1.0;
}

double sc_learned_score(const sc_learned *m, const sc_situation *sit, int cls, sc_mode mode, int k,
                        const unsigned char *child)
{
    /* The heuristic's prediction, corrected by how far off it is for the
     * mode in force, so untried modes are judged on the same footing. */
    double prior = sc_predict_interval(sit, mode, k, child) / ratio_unit(sit) * sit->prior_scale;
    double pred = prior;
    if (valid_cell(cls, mode)) {
        const sc_learned_cell *c = &m->cell[cls][mode];
        pred = (c->count * c->mean + SC_LEARNED_PRIOR_WEIGHT * prior) / (c->count + SC_LEARNED_PRIOR_WEIGHT);
    }
    int keff = mode == SC_MODE_QUORUM ? k : sit->nranks;
    return pred * sc_iterations_factor(sit->noise_scale, keff);
}

/* Quorum size the learned selector tries: the heuristic's best, or one
 * rank fewer than all when the rule keeps everyone. */
static int learned_quorum_k(const sc_situation *sit, const sc_limits *pol)
{
    double obj;
    int k = sc_best_quorum(sit, pol, &obj);
    if (k >= sit->nranks && pol->quorum_fixed <= 0)
        k = sit->nranks - 1;
    return k < 1 ? 1 : k;
}

void sc_learned_choose(sc_learned *m, const sc_situation *sit, const sc_limits *pol, sc_mode current,
                       sc_candidate *out, int *explore)
{
    int n = sit->nranks;
    int cls = sc_learned_class(sit);
    unsigned char *kids = calloc((size_t)n, 1);
    int nkids = kids ? sc_pick_children(sit, 1, kids) : 0;
    int qk = learned_quorum_k(sit, pol);
    int usable[SC_LEARNED_MODES] = {
        1,
        n >= 3 && sc_limits_allow(pol, SC_MODE_HIER),
        n >= 2 && sc_limits_allow(pol, SC_MODE_QUORUM),
        nkids > 0 && sc_limits_allow(pol, SC_MODE_GROUPS),
    };
    double score[SC_LEARNED_MODES] = {0};
    int best = SC_MODE_SYNC;
    for (int md = 0; md < SC_LEARNED_MODES; md++) {
        if (!usable[md])
            continue;
        int k = md == SC_MODE_QUORUM ? qk : md == SC_MODE_GROUPS ? n - nkids : n;
        score[md] = sc_learned_score(m, sit, cls, (sc_mode)md, k, md == SC_MODE_GROUPS ? kids : NULL);
        if (score[md] < score[best])
            best = md;
    }
    m->epochs++;
    *explore = 0;
    int pick = best;
    if (m->epochs > SC_LEARNED_WARMUP &&
        (m->last_explore < 0 || m->epochs - m->last_explore >= SC_LEARNED_EXPLORE_GAP) &&
        (double)(m->explored + 1) <= SC_LEARNED_EXPLORE_SHARE * (double)m->epochs) {
        for (int md = 0; md < SC_LEARNED_MODES; md++) {
            if (usable[md] && md != (int)current && m->cell[cls][md].count == 0.0) {
                pick = md;
                *explore = 1;
                m->explored++;
                m->last_explore = m->epochs;
                break;
            }
        }
    }
    out->mode = (sc_mode)pick;
    out->by_rule = 0;
    out->k = pick == SC_MODE_QUORUM ? qk : pick == SC_MODE_GROUPS ? n - nkids : n;
    out->nchildren = pick == SC_MODE_GROUPS ? nkids : 0;
    memset(out->child, 0, (size_t)n);
    if (pick == SC_MODE_GROUPS && kids)
        memcpy(out->child, kids, (size_t)n);
    out->interval = sc_predict_interval(sit, out->mode, out->k, out->child);
    out->objective = score[pick];
    char cname[64];
    sc_learned_class_name(cls, cname, sizeof cname);
    if (*explore)
        snprintf(out->reason, sizeof out->reason, "explore: %s untried in class %d (%s)",
                 sc_sel_mode_name(out->mode), cls, cname);
    else if (pick == SC_MODE_SYNC)
        snprintf(out->reason, sizeof out->reason, "learned: sync scores %.3g (class %d, %s, %.0f epochs)",
                 score[pick], cls, cname, m->cell[cls][pick].count);
    else
        snprintf(out->reason, sizeof out->reason,
                 "learned: %s k=%d scores %.3g vs sync %.3g (class %d, %s, %.0f epochs)",
                 sc_sel_mode_name(out->mode), out->k, score[pick], score[SC_MODE_SYNC], cls, cname,
                 m->cell[cls][pick].count);
    free(kids);
}
