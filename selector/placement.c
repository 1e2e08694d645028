/* Placement of the coordinator and of the children's parents. */
#include "placement.h"

#include <stdlib.h>
#include <string.h>
#include "order_stats.h"

static double headroom(const sc_rank_status *st) { return st->cpu_headroom + st->nic_headroom; }

/* Link load of a rank as a share of its speed with extra_bps more traffic
 * (0 when the speed is unknown: nothing to saturate that we can see). */
static double link_share(const sc_rank_status *st, double extra_bps)
{
    if (st->speed_bps <= 0.0)
        return 0.0;
    return st->link_util + extra_bps / st->speed_bps;
}

int sc_place_parents(int nranks, const sc_rank_status *st, const unsigned char *child,
                     const int *prev_parent, int *parent)
{
    int nchildren = 0, ring = 0;
    for (int i = 0; i < nranks; i++) {
        parent[i] = -1;
        if (child[i])
            nchildren++;
        else
            ring++;
    }
    if (nchildren == 0)
        return 1;
    if (ring == 0)
        return -1;
    int cap = (nchildren + ring - 1) / ring;
    int *taken = calloc((size_t)nranks, sizeof(int));
    double *extra = calloc((size_t)nranks, sizeof(double));
    if (!taken || !extra) {
        free(taken);
        free(extra);
        /* Out of memory: the first ring member serves everyone. */
        for (int i = 0, p = -1; i < nranks; i++) {
            if (!child[i] && p < 0)
                p = i;
            if (child[i])
                parent[i] = p;
        }
        return 0;
    }
    int fits = 1;
    /* Children keep a parent that is still a ring member with room. */
    for (int i = 0; prev_parent && i < nranks; i++) {
        int p = prev_parent[i];
        if (!child[i] || p < 0 || p >= nranks || child[p] || taken[p] >= cap)
            continue;
        if (link_share(&st[p], extra[p] + st[i].load_bps) > SC_PARENT_LINK_MAX)
            continue;
        parent[i] = p;
        taken[p]++;
        extra[p] += st[i].load_bps;
    }
    for (int i = 0; i < nranks; i++) {
        if (!child[i] || parent[i] >= 0)
            continue;
        int best = -1, spill = -1;
        for (int p = 0; p < nranks; p++) {
            if (child[p] || taken[p] >= cap)
                continue;
            double share = link_share(&st[p], extra[p] + st[i].load_bps);
            if (share <= SC_PARENT_LINK_MAX && (best < 0 || headroom(&st[p]) > headroom(&st[best])))
                best = p;
            if (spill < 0 || share < link_share(&st[spill], extra[spill] + st[i].load_bps))
                spill = p;
        }
        if (best < 0) {
            best = spill; /* every link is near saturation: take the least loaded */
            fits = 0;
        }
        parent[i] = best;
        taken[best]++;
        extra[best] += st[i].load_bps;
    }
    free(taken);
    free(extra);
    return fits;
}

int sc_place_coordinator(int nranks, const sc_rank_status *st, const unsigned char *child, int current)
{
    int best = -1;
    for (int i = 0; i < nranks; i++)
        if (!child[i] && (best < 0 || headroom(&st[i]) > headroom(&st[best])))
            best = i;
    if (best < 0)
        return current >= 0 && current < nranks ? current : 0;
    if (current >= 0 && current < nranks && !child[current] &&
        headroom(&st[best]) < headroom(&st[current]) + SC_COORD_SWITCH_GAIN)
        return current;
    return best;
}

int sc_deal_children(int nranks, const unsigned char *child, const double *load, int *order, int *parent)
{
    int members = 0, next = 0;
    for (int r = 0; r < nranks; r++)
        if (!child[r]) {
            int j = members++;   /* insertion by load; equal loads keep rank order */
            for (; j > 0 && load[order[j - 1]] > load[r]; j--)
                order[j] = order[j - 1];
            order[j] = r;
        }
    for (int r = 0; r < nranks; r++)
        parent[r] = child[r] && members > 0 ? order[next++ % members] : -1;
    return members;
}

int sc_short_while_learning(int nranks, const double *given, unsigned char *out)
{
    if (nranks <= 0) return 0;
    memset(out, 0, (size_t)nranks);
    double *known = malloc((size_t)nranks * sizeof *known);
    if (!known) return 0;
    int m = 0, nout = 0;
    for (int r = 0; r < nranks; r++)
        if (given[r] > 0.0) known[m++] = given[r];
    sc_sort_doubles(known, m);
    double med = m > 0 ? sc_median_sorted(known, m) : 0.0;
    for (int r = 0; r < nranks; r++) {
        out[r] = given[r] > 0.0 && given[r] <= SC_GIVEN_FACTOR * med;
        nout += out[r];
    }
    free(known);
    if (nout == nranks) {
        memset(out, 0, (size_t)nranks);
        nout = 0;
    }
    return nout;
}

int sc_first_coordinator(int nranks, const double *load, const double *given)
{
    if (nranks <= 0) return 0;
    unsigned char *out = calloc((size_t)nranks, 1);
    int coord = 0;
    if (out) {
        sc_short_while_learning(nranks, given, out);
        double least = -1.0;
        for (int r = 0; r < nranks; r++)
            if (!out[r] && (least < 0.0 || load[r] < least)) least = load[r];
        for (int r = 0; r < nranks; r++)
            if (!out[r] && load[r] <= 1.1 * least + 1e-3) {
                coord = r;
                break;
            }
    }
    free(out);
    return coord;
}
