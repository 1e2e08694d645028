/* The gradient noise scale (McCandlish et al. 2018) on synthetic gradients
 * with known variance, its robustness, and its effect on the quorum size. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "noise_scale.h"
#include "selector.h"
#include "unit_selector_synth.h"

static void test_estimator_formula(void)
{
    /* Two ranks, one dimension: g = 1 + a and 1 - a.  |G_small|^2 = 1 + a^2,
     * |G_big|^2 = 1, so |G|^2 = (2 - (1 + a^2)) / 1 and tr = a^2 / (1/2). */
    double a = 0.5, sq[2] = {(1 + a) * (1 + a), (1 - a) * (1 - a)}, g2, tr;
    CU_ASSERT_EQUAL_FATAL(sc_noise_scale_estimate(sq, 2, 4.0, &g2, &tr), 0);
    CU_ASSERT_DOUBLE_EQUAL(g2, 1 - a * a, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(tr, 2 * a * a, 1e-12);
    /* Buffers divided by n before the reduction give the same B. */
    double sq2[2] = {sq[0] / 4, sq[1] / 4}, g2b, trb;
    CU_ASSERT_EQUAL(sc_noise_scale_estimate(sq2, 2, 1.0, &g2b, &trb), 0);
    CU_ASSERT_DOUBLE_EQUAL(tr / g2, trb / g2b, 1e-12);
}

/* Per-rank local gradients G + noise, noise variance per component chosen so
 * tr(Sigma) = B_true |G|^2. */
static double run_known(double b_true, int n, int dim, int steps, uint64_t seed, double *raw_mean)
{
    synth rng;
    synth_init(&rng, 1, 1, 1, seed);
    static double sum[4096];
    double g_comp = 1.0 / sqrt((double)dim); /* |G|^2 = 1 */
    double sd = sqrt(b_true / dim);          /* tr(Sigma) = dim * sd^2 = B */
    sc_noise_scale ns;
    sc_noise_scale_init(&ns, 0.05);
    double sq[64], raw = 0.0;
    int used = 0;
    for (int t = 0; t < steps; t++) {
        memset(sum, 0, sizeof(double) * (size_t)dim);
        for (int r = 0; r < n; r++) {
            double s2 = 0.0;
            for (int j = 0; j < dim; j++) {
                double g = g_comp + sd * synth_normal(&rng);
                s2 += g * g;
                sum[j] += g;
            }
            sq[r] = s2;
        }
        double ssum = 0.0;
        for (int j = 0; j < dim; j++)
            ssum += sum[j] * sum[j];
        double g2, tr;
        if (sc_noise_scale_estimate(sq, n, ssum, &g2, &tr) == 0) {
            raw += tr / g2;
            used++;
        }
        sc_noise_scale_add(&ns, sq, n, ssum);
    }
    *raw_mean = raw / used;
    return sc_noise_scale_value(&ns, -1.0);
}

static void test_known_variance(void)
{
    const double cases[3] = {0.5, 6.0, 40.0};
    for (int c = 0; c < 3; c++) {
        double raw;
        double b = run_known(cases[c], 8, 1024, 300, 100 + c, &raw);
        printf("\n    B_true %.1f: smoothed %.3f, mean of single-step ratios %.3f", cases[c], b, raw);
        CU_ASSERT(fabs(b - cases[c]) < 0.15 * cases[c]);
    }
    printf("\n");
}

static void test_robust_to_bad_norms(void)
{
    sc_noise_scale ns;
    sc_noise_scale_init(&ns, 0.0); /* out of range: replaced by the default */
    CU_ASSERT(ns.alpha > 0.0 && ns.alpha <= 1.0);
    CU_ASSERT_DOUBLE_EQUAL(sc_noise_scale_value(&ns, 7.0), 7.0, 0); /* nothing measured: fallback */
    double zero[3] = {1.0, 0.0, 1.0}, nan_[3] = {1.0, NAN, 1.0}, ok[3] = {2.0, 2.0, 2.0};
    CU_ASSERT_EQUAL(sc_noise_scale_add(&ns, zero, 3, 9.0), 0);
    CU_ASSERT_EQUAL(sc_noise_scale_add(&ns, nan_, 3, 9.0), 0);
    CU_ASSERT_EQUAL(sc_noise_scale_add(&ns, ok, 3, 0.0), 0);
    CU_ASSERT_EQUAL(sc_noise_scale_add(&ns, ok, 3, INFINITY), 0);
    CU_ASSERT_EQUAL(sc_noise_scale_add(&ns, ok, 1, 2.0), 0); /* one rank: no two batch sizes */
    CU_ASSERT_EQUAL(ns.samples, 0);
    /* Identical buffers: no noise at all, B = 0. */
    CU_ASSERT_EQUAL(sc_noise_scale_add(&ns, ok, 3, 9 * 2.0), 1);
    CU_ASSERT_DOUBLE_EQUAL(sc_noise_scale_value(&ns, -1), 0.0, 1e-12);
    /* Buffers that cancel: |G|^2 estimate negative -> the largest B, finite. */
    sc_noise_scale_init(&ns, 1.0);
    CU_ASSERT_EQUAL(sc_noise_scale_add(&ns, ok, 3, 1e-6), 1);
    double b = sc_noise_scale_value(&ns, -1);
    CU_ASSERT(isfinite(b));
    CU_ASSERT_DOUBLE_EQUAL(b, SC_NOISE_SCALE_MAX, 0);
}

static driver dn;

static void test_selector_measures_on_exact_steps(void)
{
    CU_ASSERT_FATAL(driver_init(&dn, SC_KIND_HEURISTIC, 8, 20, NULL, 21) == 0);
    int measured;
    double b = sc_selector_noise_scale(dn.sel, &measured);
    CU_ASSERT_FALSE(measured);
    CU_ASSERT_DOUBLE_EQUAL(b, 8.0, 0); /* the prior: n per-rank batches */
    dn.syn.noise_scale = 20.0;
    driver_run(&dn, 40, 0);
    b = sc_selector_noise_scale(dn.sel, &measured);
    CU_ASSERT_TRUE(measured);
    CU_ASSERT_DOUBLE_EQUAL(b, 20.0, 1e-6);
    /* Norms seen in quorum steps are not used. */
    double feat[8 * SC_NFEAT];
    dn.syn.noise_scale = 1000.0;
    for (int t = 0; t < 40; t++) {
        synth_step(&dn.syn, SC_MODE_QUORUM, 6, NULL, feat);
        sc_selector_observe(dn.sel, 40 + t, SC_MODE_QUORUM, feat);
    }
    CU_ASSERT_DOUBLE_EQUAL(sc_selector_noise_scale(dn.sel, NULL), 20.0, 1e-6);
    driver_free(&dn);
}

/* The paper's rule: a noisier gradient needs a bigger effective batch, so
 * the chosen quorum grows with B. */
static int quorum_for(double b)
{
    CU_ASSERT_FATAL(driver_init(&dn, SC_KIND_HEURISTIC, 16, 20, NULL, 22) == 0);
    dn.syn.jitter = 0.3;
    dn.syn.noise_scale = b;
    driver_run(&dn, 80, 0);
    int k = dn.d.mode == SC_MODE_QUORUM ? dn.d.quorum_k : 16;
    printf("\n    B=%g: %s k=%d | %s", b, dn.d.mode == SC_MODE_QUORUM ? "quorum" : "not quorum", k, dn.d.reason);
    driver_free(&dn);
    return k;
}

static void test_quorum_grows_with_noise(void)
{
    int k_low = quorum_for(0.5), k_mid = quorum_for(16.0), k_high = quorum_for(2000.0);
    printf("\n");
    CU_ASSERT_TRUE(k_low < 16);
    CU_ASSERT_TRUE(k_low <= k_mid && k_mid <= k_high);
    CU_ASSERT_TRUE(k_low < k_high);
}

void register_noise_suite(void)
{
    CU_pSuite s = CU_add_suite("gradient noise scale", NULL, NULL);
    CU_add_test(s, "estimator formula on a worked example", test_estimator_formula);
    CU_add_test(s, "synthetic gradients with known variance", test_known_variance);
    CU_add_test(s, "zeros, NaN, negative estimates", test_robust_to_bad_norms);
    CU_add_test(s, "selector measures on exact steps only", test_selector_measures_on_exact_steps);
    CU_add_test(s, "quorum size grows with the noise scale", test_quorum_grows_with_noise);
}
