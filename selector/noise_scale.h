/* The simple gradient noise scale of McCandlish et al. 2018 ("An Empirical
 * Model of Large-Batch Training"), measured from what starcoll already
 * reduces: per-rank squared norms of the local buffers and the squared norm
 * of their sum.
 *
 * With n ranks each holding the gradient of a local batch b, the local
 * buffers are "small batch" estimates (B_small = b) and their sum divided by
 * n is a "big batch" estimate (B_big = n b).  Since E|G_B|^2 = |G|^2 +
 * tr(Sigma)/B, two batch sizes give unbiased estimates of |G|^2 and of
 * tr(Sigma), and B_noise = tr(Sigma) / |G|^2.  starcoll does not know b, so
 * the noise scale is expressed in per-rank batches (b = 1): an effective
 * batch of k ranks then needs about 1 + B_noise/k times the optimisation
 * steps of an infinitely large batch.  Scaling every buffer by the same
 * constant (e.g. dividing by n before the reduction) cancels in the ratio. */
#ifndef STARCOLL_SELECTOR_NOISE_SCALE_H
#define STARCOLL_SELECTOR_NOISE_SCALE_H

/* Largest noise scale reported (per-rank batches): used when the |G|^2
 * estimate is not positive, i.e. the gradient is lost in the noise. */
#define SC_NOISE_SCALE_MAX 1e6

typedef struct sc_noise_scale {
    double alpha;     /* EMA weight of a new estimate */
    double ema_g2;    /* smoothed |G|^2 estimate */
    double ema_trace; /* smoothed tr(Sigma) estimate */
    long samples;     /* estimates taken */
} sc_noise_scale;

/* alpha in (0, 1]: weight of each new estimate (0.1 smooths over ~10 steps);
 * out-of-range values are replaced by 0.1. */
void sc_noise_scale_init(sc_noise_scale *ns, double alpha);

/* One step's unbiased estimates from n >= 2 per-rank squared norms and the
 * squared norm of their sum.  Returns 0 and sets *g2 and *trace (either may
 * be negative: single estimates are noisy), or -1 when the input cannot give
 * an estimate (n < 2, a zero, negative or non-finite norm). */
int sc_noise_scale_estimate(const double *grad_sqnorm, int n, double sum_sqnorm,
                            double *g2, double *trace);

/* Folds one step into the smoothed estimates.  Returns 1 when used, 0 when
 * skipped (see sc_noise_scale_estimate). */
int sc_noise_scale_add(sc_noise_scale *ns, const double *grad_sqnorm, int n, double sum_sqnorm);

/* Smoothed B_noise in per-rank batches, in [0, SC_NOISE_SCALE_MAX];
 * `fallback` while nothing has been measured. */
double sc_noise_scale_value(const sc_noise_scale *ns, double fallback);

#endif
