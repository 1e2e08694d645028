/* Weights averaged, not gradients summed (weights_probe.h). */
#include "weights_probe.h"
#include <math.h>
#include <stdlib.h>

typedef struct {
    long count;
    sc_dkind dk;
    int n;                              /* samples kept (count when smaller) */
    int done;                           /* the result is in */
    double x[SC_WPROBE_SAMPLES];        /* contribution */
    double r[SC_WPROBE_SAMPLES];        /* result */
} sc_wcall;

struct sc_wprobe {
    sc_wcall calls[SC_WPROBE_CALLS];    /* a ring: call i since the last verdict in calls[i % SC_WPROBE_CALLS] */
    long kept;                          /* calls made since the last verdict */
    int open;                           /* a call's contribution is in, its result not yet */
};

sc_wprobe *sc_wprobe_new(void)
{
    return calloc(1, sizeof(sc_wprobe));
}

void sc_wprobe_free(sc_wprobe *p)
{
    free(p);
}

static void sample(const void *buf, long count, sc_dkind dk, int n, double *out)
{
    for (int i = 0; i < n; i++) {
        long e = n < SC_WPROBE_SAMPLES ? i : (long)((double)i * (double)count / SC_WPROBE_SAMPLES);
        out[i] = dk == SC_DK_DOUBLE ? ((const double *)buf)[e] : (double)((const float *)buf)[e];
    }
}

void sc_wprobe_before(sc_wprobe *p, const void *contrib, long count, sc_dkind dk)
{
    if (!p) return;
    p->open = 0;
    if (!contrib || count <= 0 || (dk != SC_DK_FLOAT && dk != SC_DK_DOUBLE)) return;
    sc_wcall *c = &p->calls[p->kept % SC_WPROBE_CALLS];
    c->count = count;
    c->dk = dk;
    c->n = count < SC_WPROBE_SAMPLES ? (int)count : SC_WPROBE_SAMPLES;
    c->done = 0;
    sample(contrib, count, dk, c->n, c->x);
    p->open = 1;
}

void sc_wprobe_after(sc_wprobe *p, const void *result, int ok)
{
    if (!p || !p->open) return;
    p->open = 0;
    sc_wcall *c = &p->calls[p->kept % SC_WPROBE_CALLS];
    if (!ok || !result) return;
    sample(result, c->count, c->dk, c->n, c->r);
    c->done = 1;
    p->kept += 1;
}

/* Is `now`'s contribution `was`'s result over size (n near-equal copies
 * sum to n times one), within SC_WPROBE_CLOSE of its norm?  -1 when it
 * cannot say (not the same tensor's shape, unchanged since, zero, not
 * finite). */
static int follows(const sc_wcall *now, const sc_wcall *was, int size)
{
    if (!now->done || !was->done || now->count != was->count || now->dk != was->dk) return -1;
    double xx = 0, changed = 0, miss = 0;
    for (int i = 0; i < now->n; i++) {
        if (!isfinite(now->x[i]) || !isfinite(was->r[i])) return -1;
        double d = now->x[i] - was->r[i] / size;
        xx += now->x[i] * now->x[i];
        changed += fabs(now->x[i] - was->x[i]);
        miss += d * d;
    }
    /* A buffer the same every step (a benchmark's ones, a frozen layer's
     * zeros) says nothing: averaged weights move. */
    if (xx == 0 || changed == 0) return -1;
    return miss <= SC_WPROBE_CLOSE * SC_WPROBE_CLOSE * xx;
}

int sc_wprobe_averaged(sc_wprobe *p, int slots, int comm_size, int *follow, int *judged)
{
    int yes = 0, asked = 0;
    if (p && slots > 0 && comm_size > 0) {
        long have = p->kept < SC_WPROBE_CALLS ? p->kept : SC_WPROBE_CALLS;
        /* each of the last step's calls against the same tensor's call one step before */
        long pairs = have - slots < slots ? have - slots : slots;
        for (long j = 0; j < pairs; j++) {
            long now = p->kept - 1 - j;
            int f = follows(&p->calls[now % SC_WPROBE_CALLS], &p->calls[(now - slots) % SC_WPROBE_CALLS], comm_size);
            if (f < 0) continue;
            asked += 1;
            yes += f;
        }
        p->kept = 0;
        p->open = 0;
    }
    if (follow) *follow = yes;
    if (judged) *judged = asked;
    return asked > 0 && 2 * yes > asked;
}
