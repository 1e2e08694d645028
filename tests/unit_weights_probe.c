/* Weights averaged, not gradients summed (plugin/weights_probe.h): the
 * ranks' values are made here and summed exactly, as a learned step's
 * calls are; the probe sees rank 0's side, as each rank sees its own. */
#include "cunit_main.h"
#include "weights_probe.h"
#include <math.h>
#include <stdlib.h>

#define RANKS 8
#define N 4096

static unsigned long long rng = 88172645463325252ULL;
static double noise(void)   /* about uniform in [-1, 1) */
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}

/* One call: every rank's contribution in x[r], rank 0's seen by the probe
 * (float), the exact sum into sum. */
static void call(sc_wprobe *p, float x[RANKS][N], long count, float *sum)
{
    for (long e = 0; e < count; e++) {
        double s = 0;
        for (int r = 0; r < RANKS; r++) s += x[r][e];
        sum[e] = (float)s;
    }
    sc_wprobe_before(p, x[0], count, SC_DK_FLOAT);
    sc_wprobe_after(p, sum, 1);
}

static float w[2][RANKS][N], sum[2][N];

/* Local SGD: each rank moves its weights a little, then they are summed
 * and averaged: w = sum / size. */
static int averaging(int tensors, int steps, int *follow, int *judged)
{
    sc_wprobe *p = sc_wprobe_new();
    for (int t = 0; t < tensors; t++)
        for (int r = 0; r < RANKS; r++)
            for (long e = 0; e < N; e++) w[t][r][e] = 0.05f * (float)(e % 17);
    for (int s = 0; s < steps; s++)
        for (int t = 0; t < tensors; t++) {
            for (int r = 0; r < RANKS; r++)
                for (long e = 0; e < N; e++) w[t][r][e] += (float)(0.001 * noise());
            call(p, w[t], N, sum[t]);
            for (int r = 0; r < RANKS; r++)
                for (long e = 0; e < N; e++) w[t][r][e] = sum[t][e] / RANKS;
        }
    int v = sc_wprobe_averaged(p, tensors, RANKS, follow, judged);
    sc_wprobe_free(p);
    return v;
}

static void test_averaged_weights(void)
{
    int follow = -1, judged = -1;
    CU_ASSERT_EQUAL(averaging(2, 6, &follow, &judged), 1);
    CU_ASSERT_EQUAL(follow, 2);
    CU_ASSERT_EQUAL(judged, 2);
}

/* Each rank sends w / size; the sum is the average, kept as the weights:
 * the contribution is the last result over size. */
static void test_averaged_by_prescaling(void)
{
    sc_wprobe *p = sc_wprobe_new();
    static float x[RANKS][N], avg[N];
    for (int r = 0; r < RANKS; r++)
        for (long e = 0; e < N; e++) x[r][e] = 1.0f / RANKS;
    for (int s = 0; s < 5; s++) {
        call(p, x, N, avg);
        for (int r = 0; r < RANKS; r++)
            for (long e = 0; e < N; e++) x[r][e] = (avg[e] + (float)(0.002 * noise())) / RANKS;
    }
    int follow = 0, judged = 0;
    CU_ASSERT_EQUAL(sc_wprobe_averaged(p, 1, RANKS, &follow, &judged), 1);
    CU_ASSERT_EQUAL(judged, 1);
    sc_wprobe_free(p);
}

/* Rank r's buffer of tensor t at step s, element e, in the tests below
 * whose values do not depend on the last sum. */
typedef float (*value_fn)(int r, long e, int s, int t);

/* `steps` steps of `tensors` calls whose values f gives; then the
 * verdict on a step of `tensors` calls must be `verdict`, on `judged`. */
static void expect(int steps, int tensors, value_fn f, int verdict, int judged)
{
    static float x[RANKS][N], out[N];
    sc_wprobe *p = sc_wprobe_new();
    for (int s = 0; s < steps; s++)
        for (int t = 0; t < tensors; t++) {
            for (int r = 0; r < RANKS; r++)
                for (long e = 0; e < N; e++) x[r][e] = f(r, e, s, t);
            call(p, x, N, out);
        }
    int follow = -1, asked = -1;
    CU_ASSERT_EQUAL(sc_wprobe_averaged(p, tensors, RANKS, &follow, &asked), verdict);
    CU_ASSERT_EQUAL(asked, judged);
    if (!verdict) CU_ASSERT_EQUAL(follow, 0);
    sc_wprobe_free(p);
}

/* Data-parallel gradients: a mean that drifts plus each rank's batch
 * noise, as large as the mean (a real batch's is larger still). */
static float gradient(int r, long e, int s, int t)
{
    (void)r;
    return (float)(0.1 * sin(0.01 * (double)e + t + 0.1 * s) + 0.1 * noise());
}

static void test_gradients_not_averaged(void)
{
    expect(6, 3, gradient, 0, 3);
}

/* Buffers the same every step say nothing: a benchmark's ones (whose sum
 * over size is the ones again), a frozen layer's zeros, rank + i. */
static float ones(int r, long e, int s, int t) { (void)r, (void)e, (void)s, (void)t; return 1.0f; }
static float zeros(int r, long e, int s, int t) { (void)r, (void)e, (void)s, (void)t; return 0.0f; }
static float rank_plus_i(int r, long e, int s, int t) { (void)s, (void)t; return (float)(r + e); }

static void test_unchanging_buffers_say_nothing(void)
{
    expect(6, 1, ones, 0, 0);
    expect(6, 1, zeros, 0, 0);
    expect(6, 1, rank_plus_i, 0, 0);
}

/* The suite's own synthetic gradients (benchmarks/starcoll_loops: a tag
 * times 1 + (rank + step + tensor + element) % 3) are not weights. */
static float suite_value(int r, long e, int s, int t)
{
    float tag = t == 0 ? 1 : t == 1 ? 64 : 4096;
    return tag * (float)(1 + (r + s + t + e) % 3);
}

static void test_suite_values_not_averaged(void)
{
    expect(6, 3, suite_value, 0, 3);
}

/* Half the tensors averaged is not most of them; one more is. */
static void test_most_tensors(void)
{
    static float a[RANKS][N], b[RANKS][N], out[N];
    for (int extra = 0; extra < 2; extra++) {
        sc_wprobe *p = sc_wprobe_new();
        for (int r = 0; r < RANKS; r++)
            for (long e = 0; e < N; e++) a[r][e] = 1.0f;
        for (int s = 0; s < 5; s++) {
            for (int r = 0; r < RANKS; r++)
                for (long e = 0; e < N; e++) a[r][e] += (float)(0.001 * noise());
            call(p, a, N, out);   /* averaged */
            for (int r = 0; r < RANKS; r++)
                for (long e = 0; e < N; e++) a[r][e] = out[e] / RANKS;
            for (int r = 0; r < RANKS; r++)
                for (long e = 0; e < N; e++) b[r][e] = (float)noise();
            call(p, b, N, out);   /* a gradient */
            if (extra) {
                for (int r = 0; r < RANKS; r++)
                    for (long e = 0; e < N; e++) b[r][e] = (float)(3.0 + 0.001 * s * (e % 5));
                call(p, b, 100, out);   /* a second averaged-looking one: ones plus a drift, over the sum */
            }
        }
        int follow = 0, judged = 0, v = sc_wprobe_averaged(p, 2 + extra, RANKS, &follow, &judged);
        CU_ASSERT_EQUAL(judged, 2 + extra);
        CU_ASSERT_EQUAL(v, extra);
        sc_wprobe_free(p);
    }
}

/* One call of three doubles: d moves a little first, as weights do. */
static void moved_call(sc_wprobe *p, double *d, const double *r, long count, sc_dkind dk, int ok)
{
    d[0] += 0.001;
    sc_wprobe_before(p, d, count, dk);
    sc_wprobe_after(p, r, ok);
}

/* Too little kept, too long a step, failed calls, other shapes, NaN,
 * doubles, short calls, no probe; the verdict forgets what it kept. */
static void test_bounds(void)
{
    int follow = -1, judged = -1;
    CU_ASSERT_EQUAL(sc_wprobe_averaged(NULL, 2, RANKS, &follow, &judged), 0);
    CU_ASSERT_EQUAL(judged, 0);
    sc_wprobe_before(NULL, w[0][0], N, SC_DK_FLOAT);
    sc_wprobe_after(NULL, sum[0], 1);
    sc_wprobe_free(NULL);

    /* one step only: nothing to compare */
    CU_ASSERT_EQUAL(averaging(2, 1, &follow, &judged), 0);
    CU_ASSERT_EQUAL(judged, 0);
    /* a step longer than what is kept */
    sc_wprobe *p = sc_wprobe_new();
    double d[3] = {1, 2, 3}, r[3] = {8, 16, 24}, nan_r[3] = {NAN, 16, 24};
    for (int i = 0; i < 2 * SC_WPROBE_CALLS; i++) moved_call(p, d, r, 3, SC_DK_DOUBLE, 1);
    CU_ASSERT_EQUAL(sc_wprobe_averaged(p, SC_WPROBE_CALLS, RANKS, &follow, &judged), 0);
    CU_ASSERT_EQUAL(judged, 0);
    /* doubles, three elements: averaged (d is about r / 8 each time) */
    d[0] = 1;
    for (int i = 0; i < 4; i++) moved_call(p, d, r, 3, SC_DK_DOUBLE, 1);
    CU_ASSERT_EQUAL(sc_wprobe_averaged(p, 1, RANKS, &follow, &judged), 1);
    CU_ASSERT_EQUAL(judged, 1);
    /* forgotten: nothing kept now */
    CU_ASSERT_EQUAL(sc_wprobe_averaged(p, 1, RANKS, &follow, &judged), 0);
    CU_ASSERT_EQUAL(judged, 0);
    /* a failed call is forgotten: the next is judged against the one before it */
    d[0] = 1;
    moved_call(p, d, r, 3, SC_DK_DOUBLE, 1);
    moved_call(p, d, nan_r, 3, SC_DK_DOUBLE, 0);
    moved_call(p, d, r, 3, SC_DK_DOUBLE, 1);
    CU_ASSERT_EQUAL(sc_wprobe_averaged(p, 1, RANKS, &follow, &judged), 1);
    CU_ASSERT_EQUAL(judged, 1);
    /* other shapes, other kinds, NaN are not judged */
    moved_call(p, d, r, 3, SC_DK_DOUBLE, 1);
    moved_call(p, d, r, 2, SC_DK_DOUBLE, 1);
    CU_ASSERT_EQUAL(sc_wprobe_averaged(p, 1, RANKS, &follow, &judged), 0);
    CU_ASSERT_EQUAL(judged, 0);
    moved_call(p, d, r, 3, SC_DK_OTHER, 1);   /* not kept at all */
    moved_call(p, d, nan_r, 3, SC_DK_DOUBLE, 1);
    moved_call(p, d, r, 3, SC_DK_DOUBLE, 1);
    CU_ASSERT_EQUAL(sc_wprobe_averaged(p, 1, RANKS, &follow, &judged), 0);
    CU_ASSERT_EQUAL(judged, 0);
    CU_ASSERT_EQUAL(sc_wprobe_averaged(p, 0, RANKS, &follow, &judged), 0);
    sc_wprobe_free(p);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("weights averaged, not gradients", NULL, NULL);
    CU_add_test(s, "local SGD's averaged weights are each the last sum over size", test_averaged_weights);
    CU_add_test(s, "weights sent over size are the last sum", test_averaged_by_prescaling);
    CU_add_test(s, "data-parallel gradients are not", test_gradients_not_averaged);
    CU_add_test(s, "buffers the same every step say nothing", test_unchanging_buffers_say_nothing);
    CU_add_test(s, "the suite's synthetic gradients are not", test_suite_values_not_averaged);
    CU_add_test(s, "most of the step's tensors, not half", test_most_tensors);
    CU_add_test(s, "too little kept, long steps, failed calls, shapes, NaN, doubles", test_bounds);
    return sc_cunit_run();
}
