/* Arrival lag from the ranks' own stamps (see arrival.h). */
#include "arrival.h"

#include <stdlib.h>

struct sc_arrival {
    int n;
    long *rows;       /* stamped rows per rank */
    double *offset;   /* per rank: least (received - stamp) seen */
    double *stamp;    /* n x SC_ARRIVAL_STEPS, by row index modulo */
};

sc_arrival *sc_arrival_new(int nranks)
{
    if (nranks < 1) return NULL;
    sc_arrival *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->n = nranks;
    a->rows = calloc((size_t)nranks, sizeof *a->rows);
    a->offset = calloc((size_t)nranks, sizeof *a->offset);
    a->stamp = calloc((size_t)nranks * SC_ARRIVAL_STEPS, sizeof *a->stamp);
    if (!a->rows || !a->offset || !a->stamp) {
        sc_arrival_free(a);
        return NULL;
    }
    return a;
}

void sc_arrival_free(sc_arrival *a)
{
    if (!a) return;
    free(a->rows);
    free(a->offset);
    free(a->stamp);
    free(a);
}

void sc_arrival_add(sc_arrival *a, int r, double stamp, double received)
{
    if (!a || r < 0 || r >= a->n || !(stamp > 0.0)) return;
    double off = received - stamp;
    if (a->rows[r] == 0 || off < a->offset[r]) a->offset[r] = off;
    a->stamp[(size_t)r * SC_ARRIVAL_STEPS + (size_t)(a->rows[r] % SC_ARRIVAL_STEPS)] = stamp;
    a->rows[r]++;
}

long sc_arrival_lags(const sc_arrival *a, double *lag)
{
    if (!a || !lag) return -1;
    long j = -1, newest = -1;
    for (int r = 0; r < a->n; r++) {
        long last = a->rows[r] - 1;
        if (r == 0 || last < j) j = last;
        if (last > newest) newest = last;
    }
    if (j < 0 || newest - j > SC_ARRIVAL_LEVEL) return -1;
    double earliest = 0.0;
    for (int r = 0; r < a->n; r++) {
        double t = a->stamp[(size_t)r * SC_ARRIVAL_STEPS + (size_t)(j % SC_ARRIVAL_STEPS)] + a->offset[r];
        lag[r] = t;
        if (r == 0 || t < earliest) earliest = t;
    }
    for (int r = 0; r < a->n; r++) lag[r] -= earliest;
    return j;
}
