/* The recent steps the selector decides from: a ring buffer of the last
 * `cap` steps' feature rows and own times (see sc_detect_own_times), so a
 * decision can look at exactly the steps since the latest change point. */
#ifndef STARCOLL_SELECTOR_WINDOW_H
#define STARCOLL_SELECTOR_WINDOW_H

#include "sc_features.h"

typedef struct sc_window {
    int n;       /* ranks */
    int cap;     /* steps held at most */
    int count;   /* steps held */
    int head;    /* slot of the next step */
    double *feat;  /* cap x n x SC_NFEAT */
    double *own;   /* cap x n */
    double *xfer;  /* cap x n */
    long *step;    /* cap */
} sc_window;

/* Returns 0, or -1 when out of memory (then sc_window_free is still safe). */
int sc_window_init(sc_window *w, int nranks, int cap);
void sc_window_free(sc_window *w);
void sc_window_add(sc_window *w, long step, const double *feat, const double *own, const double *xfer);
/* Number of held steps numbered >= from_step (the newest ones). */
int sc_window_count_since(const sc_window *w, long from_step);
/* Row i of the newest `rows` steps, oldest first (0 <= i < rows <= count). */
const double *sc_window_feat(const sc_window *w, int rows, int i);
const double *sc_window_own(const sc_window *w, int rows, int i);
/* Per-rank means over the newest `rows` steps. */
void sc_window_means(const sc_window *w, int rows, double *mean_feat, double *mean_own,
                     double *mean_xfer);

#endif
