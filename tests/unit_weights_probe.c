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

/* Data-parallel gradients: a mean that drifts plus each rank's batch
 * noise, as large as the mean (a real batch's is larger still). */
static void test_gradients_not_averaged(void)
{
    sc_wprobe *p = sc_wprobe_new();
    static float g[RANKS][N], out[N];
    for (int s = 0; s < 6; s++)
        for (int t = 0; t < 3; t++) {
            for (int r = 0; r < RANKS; r++)
                for (long e = 0; e < N; e++) g[r][e] = (float)(0.1 * sin(0.01 * (double)e + t + 0.1 * s) + 0.1 * noise());
            call(p, g, N - t, out);
        }
    int follow = -1, judged = -1;
    CU_ASSERT_EQUAL(sc_wprobe_averaged(p, 3, RANKS, &follow, &judged), 0);
    CU_ASSERT_EQUAL(follow, 0);
    CU_ASSERT_EQUAL(judged, 3);
    sc_wprobe_free(p);
}

/* Buffers the same every step say nothing: a benchmark's ones (whose sum
 * over size is the ones again), a frozen layer's zeros, rank + i. */
static void test_unchanging_buffers_say_nothing(void)
{
    static float x[RANKS][N], out[N];
    for (int kind = 0; kind < 3; kind++) {
        sc_wprobe *p = sc_wprobe_new();
        for (int r = 0; r < RANKS; r++)
            for (long e = 0; e < N; e++) x[r][e] = kind == 0 ? 1.0f : kind == 1 ? 0.0f : (float)(r + e);
        for (int s = 0; s < 6; s++) call(p, x, N, out);
        int follow = -1, judged = -1;
        CU_ASSERT_EQUAL(sc_wprobe_averaged(p, 1, RANKS, &follow, &judged), 0);
        CU_ASSERT_EQUAL(judged, 0);
        sc_wprobe_free(p);
    }
}

/* The suite's own synthetic gradients (benchmarks/starcoll_loops: a tag
 * times 1 + (rank + step + tensor + element) % 3) are not weights. */
static void test_suite_values_not_averaged(void)
{
    sc_wprobe *p = sc_wprobe_new();
    static float x[RANKS][N], out[N];
    for (int s = 0; s < 6; s++)
        for (int i = 0; i < 3; i++) {
            float tag = i == 0 ? 1 : i == 1 ? 64 : 4096;
            for (int r = 0; r < RANKS; r++)
                for (long e = 0; e < N; e++) x[r][e] = tag * (float)(1 + (r + s + i + e) % 3);
            call(p, x, N, out);
        }
    int judged = -1;
    CU_ASSERT_EQUAL(sc_wprobe_averaged(p, 3, RANKS, NULL, &judged), 0);
    CU_ASSERT_EQUAL(judged, 3);
    sc_wprobe_free(p);
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
    double d[3] = {1, 2, 3}, r[3] = {8, 16, 24};
    for (int i = 0; i < 2 * SC_WPROBE_CALLS; i++) {
        d[0] += 0.001;
        sc_wprobe_before(p, d, 3, SC_DK_DOUBLE);
        sc_wprobe_after(p, r, 1);
    }
    CU_ASSERT_EQUAL(sc_wprobe_averaged(p, SC_WPROBE_CALLS, RANKS, &follow, &judged), 0);
    CU_ASSERT_EQUAL(judged, 0);
    /* doubles, three elements: averaged (d is about r / 8 each time) */
    d[0] = 1;
    for (int i = 0; i < 4; i++) {
        d[0] += 0.001;
        sc_wprobe_before(p, d, 3, SC_DK_DOUBLE);
        sc_wprobe_after(p, r, 1);
    }
    CU_ASSERT_EQUAL(sc_wprobe_averaged(p, 1, RANKS, &follow, &judged), 1);
    CU_ASSERT_EQUAL(judged, 1);
    /* forgotten: nothing kept now */
    CU_ASSERT_EQUAL(sc_wprobe_averaged(p, 1, RANKS, &follow, &judged), 0);
    CU_ASSERT_EQUAL(judged, 0);
    /* a failed call is forgotten; other shapes, other kinds, NaN are not judged */
    sc_wprobe_before(p, d, 3, SC_DK_DOUBLE);
    sc_wprobe_after(p, r, 0);
    d[0] += 0.001;
    sc_wprobe_before(p, d, 3, SC_DK_DOUBLE);
    sc_wprobe_after(p, r, 1);
    d[0] += 0.001;
    sc_wprobe_before(p, d, 2, SC_DK_DOUBLE);
    sc_wprobe_after(p, r, 1);
    CU_ASSERT_EQUAL(sc_wprobe_averaged(p, 1, RANKS, &follow, &judged), 0);
    CU_ASSERT_EQUAL(judged, 0);
    sc_wprobe_before(p, d, 3, SC_DK_OTHER);   /* not kept at all */
    sc_wprobe_after(p, r, 1);
    double nan_r[3] = {NAN, 16, 24};
    sc_wprobe_before(p, d, 3, SC_DK_DOUBLE);
    sc_wprobe_after(p, nan_r, 1);
    d[0] += 0.001;
    sc_wprobe_before(p, d, 3, SC_DK_DOUBLE);
    sc_wprobe_after(p, r, 1);
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
