/* Order statistics over small arrays of doubles (per-rank values of one
 * step): sorting, median, k-th smallest.  Deterministic, no allocation:
 * callers pass scratch space of n doubles. */
#ifndef STARCOLL_SELECTOR_ORDER_STATS_H
#define STARCOLL_SELECTOR_ORDER_STATS_H

/* Sorts v[0..n) ascending in place. */
void sc_sort_doubles(double *v, int n);
/* Median of v[0..n) (mean of the two middle values when n is even), using
 * scratch[0..n); v is left untouched.  0 when n <= 0. */
double sc_median_of(const double *v, int n, double *scratch);
/* Median of an already sorted array. */
double sc_median_sorted(const double *sorted, int n);
/* k-th smallest (k from 1) of v[0..n), reordering v; k clamped to [1, n];
 * 0 when n <= 0. */
double sc_kth_smallest_inplace(double *v, int n, int k);
/* k-th smallest (k from 1) of v[0..n), k clamped to [1, n]; 0 when n <= 0. */
double sc_kth_smallest(const double *v, int n, int k, double *scratch);

#endif
