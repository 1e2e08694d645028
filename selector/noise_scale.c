/* Simple gradient noise scale (McCandlish et al. 2018) from buffer norms. */
#include "noise_scale.h"

#include <math.h>

void sc_noise_scale_init(sc_noise_scale *ns, double alpha)
{
    ns->alpha = (alpha > 0.0 && alpha <= 1.0) ? alpha : 0.1;
    ns->ema_g2 = 0.0;
    ns->ema_trace = 0.0;
    ns->samples = 0;
}

int sc_noise_scale_estimate(const double *grad_sqnorm, int n, double sum_sqnorm,
                            double *g2, double *trace)
{
    if (n < 2 || !grad_sqnorm || !isfinite(sum_sqnorm) || sum_sqnorm <= 0.0)
        return -1;
    double small = 0.0; /* mean |G_small|^2 over the ranks */
    for (int i = 0; i < n; i++) {
        if (!isfinite(grad_sqnorm[i]) || grad_sqnorm[i] <= 0.0)
            return -1; /* a rank without a measurement: the sum is not over n buffers we know */
        small += grad_sqnorm[i];
    }
    small /= n;
    double dn = (double)n;
    double big = sum_sqnorm / (dn * dn); /* |G_big|^2 = |sum / n|^2 */
    /* B_small = 1, B_big = n (per-rank batches). */
    *g2 = (dn * big - small) / (dn - 1.0);
    *trace = (small - big) / (1.0 - 1.0 / dn);
    return 0;
}

int sc_noise_scale_add(sc_noise_scale *ns, const double *grad_sqnorm, int n, double sum_sqnorm)
{
    double g2, trace;
    if (sc_noise_scale_estimate(grad_sqnorm, n, sum_sqnorm, &g2, &trace) != 0)
        return 0;
    /* Smooth numerator and denominator separately: the ratio of two noisy
     * estimates is biased and explodes when |G|^2 is near zero. */
    if (ns->samples == 0) {
        ns->ema_g2 = g2;
        ns->ema_trace = trace;
    } else {
        ns->ema_g2 += ns->alpha * (g2 - ns->ema_g2);
        ns->ema_trace += ns->alpha * (trace - ns->ema_trace);
    }
    ns->samples++;
    return 1;
}

double sc_noise_scale_value(const sc_noise_scale *ns, double fallback)
{
    if (ns->samples == 0)
        return fallback;
    if (ns->ema_trace <= 0.0)
        return 0.0; /* no measurable noise: any batch is as good as the full one */
    if (ns->ema_g2 <= 0.0)
        return SC_NOISE_SCALE_MAX;
    double b = ns->ema_trace / ns->ema_g2;
    return b > SC_NOISE_SCALE_MAX ? SC_NOISE_SCALE_MAX : b;
}
