/* Order statistics over small arrays of doubles. */
#include "order_stats.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void sc_sort_doubles(double *v, int n)
{
    if (n > 1)
        qsort(v, (size_t)n, sizeof *v, cmp_double);
}

double sc_median_sorted(const double *sorted, int n)
{
    if (n <= 0)
        return 0.0;
    if (n % 2)
        return sorted[n / 2];
    return 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

/* Rearranges v[0..n) so that v[k] holds the value it would hold if sorted,
 * with smaller-or-equal values before it (Hoare's selection, median-of-three
 * pivots: linear on average, deterministic). */
static void select_kth(double *v, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (hi > lo) {
        int mid = lo + (hi - lo) / 2;
        /* Order v[lo], v[mid], v[hi]; the median becomes the pivot. */
        if (v[mid] < v[lo]) { double t = v[mid]; v[mid] = v[lo]; v[lo] = t; }
        if (v[hi] < v[lo]) { double t = v[hi]; v[hi] = v[lo]; v[lo] = t; }
        if (v[hi] < v[mid]) { double t = v[hi]; v[hi] = v[mid]; v[mid] = t; }
        double pivot = v[mid];
        int i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return; /* v[j+1 .. i-1] all equal the pivot */
    }
}

double sc_median_of(const double *v, int n, double *scratch)
{
    if (n <= 0)
        return 0.0;
    memcpy(scratch, v, (size_t)n * sizeof *v);
    int upper = n / 2;
    select_kth(scratch, n, upper);
    double hi = scratch[upper];
    if (n % 2)
        return hi;
    double lo = scratch[0]; /* the lower middle: the largest value left of upper */
    for (int i = 1; i < upper; i++)
        if (scratch[i] > lo)
            lo = scratch[i];
    return 0.5 * (lo + hi);
}

double sc_kth_smallest_inplace(double *v, int n, int k)
{
    if (n <= 0)
        return 0.0;
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    select_kth(v, n, k - 1);
    return v[k - 1];
}

double sc_kth_smallest(const double *v, int n, int k, double *scratch)
{
    if (n <= 0)
        return 0.0;
    memcpy(scratch, v, (size_t)n * sizeof *v);
    return sc_kth_smallest_inplace(scratch, n, k);
}
