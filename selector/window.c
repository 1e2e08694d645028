/* Ring buffer of the recent steps' rows. */
#include "window.h"

#include <stdlib.h>
#include <string.h>

int sc_window_init(sc_window *w, int nranks, int cap)
{
    memset(w, 0, sizeof *w);
    if (nranks < 1 || cap < 1)
        return -1;
    size_t n = (size_t)nranks, c = (size_t)cap;
    w->n = nranks;
    w->cap = cap;
    w->feat = calloc(c * n * SC_NFEAT, sizeof(double));
    w->own = calloc(c * n, sizeof(double));
    w->xfer = calloc(c * n, sizeof(double));
    w->step = calloc(c, sizeof(long));
    if (!w->feat || !w->own || !w->xfer || !w->step) {
        sc_window_free(w);
        return -1;
    }
    return 0;
}

void sc_window_free(sc_window *w)
{
    free(w->feat);
    free(w->own);
    free(w->xfer);
    free(w->step);
    w->feat = w->own = w->xfer = NULL;
    w->step = NULL;
    w->count = 0;
}

void sc_window_add(sc_window *w, long step, const double *feat, const double *own, const double *xfer)
{
    size_t n = (size_t)w->n, slot = (size_t)w->head;
    memcpy(w->feat + slot * n * SC_NFEAT, feat, n * SC_NFEAT * sizeof(double));
    memcpy(w->own + slot * n, own, n * sizeof(double));
    memcpy(w->xfer + slot * n, xfer, n * sizeof(double));
    w->step[slot] = step;
    w->head = (w->head + 1) % w->cap;
    if (w->count < w->cap)
        w->count++;
}

/* Slot of row i among the newest `rows` steps, oldest first. */
static size_t slot_of(const sc_window *w, int rows, int i)
{
    int back = rows - i; /* 1 = newest */
    return (size_t)((w->head - back + w->cap) % w->cap);
}

int sc_window_count_since(const sc_window *w, long from_step)
{
    int m = 0;
    while (m < w->count && w->step[slot_of(w, m + 1, 0)] >= from_step)
        m++;
    return m;
}

const double *sc_window_feat(const sc_window *w, int rows, int i)
{
    return w->feat + slot_of(w, rows, i) * (size_t)w->n * SC_NFEAT;
}

const double *sc_window_own(const sc_window *w, int rows, int i)
{
    return w->own + slot_of(w, rows, i) * (size_t)w->n;
}

void sc_window_means(const sc_window *w, int rows, double *mean_feat, double *mean_own,
                     double *mean_xfer)
{
    size_t n = (size_t)w->n;
    memset(mean_feat, 0, n * SC_NFEAT * sizeof(double));
    memset(mean_own, 0, n * sizeof(double));
    memset(mean_xfer, 0, n * sizeof(double));
    if (rows <= 0)
        return;
    for (int r = 0; r < rows; r++) {
        size_t slot = slot_of(w, rows, r);
        const double *f = w->feat + slot * n * SC_NFEAT;
        const double *o = w->own + slot * n, *x = w->xfer + slot * n;
        for (size_t j = 0; j < n * SC_NFEAT; j++)
            mean_feat[j] += f[j];
        for (size_t i = 0; i < n; i++) {
            mean_own[i] += o[i];
            mean_xfer[i] += x[i];
        }
    }
    for (size_t j = 0; j < n * SC_NFEAT; j++)
        mean_feat[j] /= rows;
    for (size_t i = 0; i < n; i++) {
        mean_own[i] /= rows;
        mean_xfer[i] /= rows;
    }
}
