/* Unit tests of benchmarks/straggle.c: the spec parser (each pattern, good
 * and bad specs), determinism, and the delays each pattern produces. */
#include "../benchmarks/straggle.h"
#include "cunit_main.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static straggle parse_ok(const char *spec)
{
    straggle s;
    char err[256] = "";
    int rc = straggle_parse(spec, &s, err, sizeof err);
    if (rc != 0)
        printf("\n  unexpected error for '%s': %s\n", spec, err);
    CU_ASSERT_EQUAL(rc, 0);
    return s;
}

/* Assert spec is rejected with a message that mentions `needle`. */
static void parse_bad(const char *spec, const char *needle)
{
    straggle s;
    char err[256] = "";
    CU_ASSERT_EQUAL(straggle_parse(spec, &s, err, sizeof err), -1);
    CU_ASSERT(strchr(err, '\n') == NULL);
    if (!strstr(err, needle))
        printf("\n  message for '%s' lacks '%s': %s\n", spec, needle, err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, needle));
}

/* ---- parser --------------------------------------------------------------- */

static void test_parse_none(void)
{
    straggle s = parse_ok(NULL);
    CU_ASSERT_EQUAL(s.pattern, STRAGGLE_NONE);
    s = parse_ok("");
    CU_ASSERT_EQUAL(s.pattern, STRAGGLE_NONE);
    s = parse_ok("none");
    CU_ASSERT_EQUAL(s.pattern, STRAGGLE_NONE);
    s = parse_ok("none,seed=7");
    CU_ASSERT_EQUAL(s.seed, 7ULL);
    CU_ASSERT_EQUAL(straggle_delay_s(&s, 0, 4, 3, 1.0), 0.0);
}

static void test_parse_fixed(void)
{
    straggle s = parse_ok("rank=3,ms=5");
    CU_ASSERT_EQUAL(s.pattern, STRAGGLE_FIXED);
    CU_ASSERT_EQUAL(s.rank, 3);
    CU_ASSERT_DOUBLE_EQUAL(s.delay_s, 0.005, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(s.prob, 1.0, 0);
    s = parse_ok("fixed,rank=0,ms=250us,prob=0.25,seed=9");
    CU_ASSERT_EQUAL(s.rank, 0);
    CU_ASSERT_DOUBLE_EQUAL(s.delay_s, 250e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(s.prob, 0.25, 0);
    CU_ASSERT_EQUAL(s.seed, 9ULL);
    s = parse_ok("ms=0.2s,rank=last");
    CU_ASSERT_EQUAL(s.rank, STRAGGLE_LAST_RANK);
    CU_ASSERT_DOUBLE_EQUAL(s.delay_s, 0.2, 1e-12);
    s = parse_ok("ms=7ms");
    CU_ASSERT_DOUBLE_EQUAL(s.delay_s, 0.007, 1e-12);
}

static void test_parse_patterns(void)
{
    straggle s = parse_ok("persistent");
    CU_ASSERT_EQUAL(s.pattern, STRAGGLE_PERSISTENT);
    CU_ASSERT_EQUAL(s.rank, STRAGGLE_LAST_RANK);
    CU_ASSERT_DOUBLE_EQUAL(s.factor, 2.0, 0);
    CU_ASSERT(s.delay_s < 0);
    s = parse_ok("persistent,rank=2,factor=3.5");
    CU_ASSERT_EQUAL(s.rank, 2);
    CU_ASSERT_DOUBLE_EQUAL(s.factor, 3.5, 0);
    s = parse_ok("persistent,ms=4");
    CU_ASSERT_DOUBLE_EQUAL(s.delay_s, 0.004, 1e-12);

    s = parse_ok("jitter");
    CU_ASSERT_EQUAL(s.pattern, STRAGGLE_JITTER);
    CU_ASSERT_DOUBLE_EQUAL(s.sigma, 0.5, 0);
    s = parse_ok("jitter,sigma=0.2,seed=3");
    CU_ASSERT_DOUBLE_EQUAL(s.sigma, 0.2, 0);

    s = parse_ok("burst");
    CU_ASSERT_EQUAL(s.pattern, STRAGGLE_BURST);
    CU_ASSERT_EQUAL(s.period, 10);
    CU_ASSERT_DOUBLE_EQUAL(s.factor, 4.0, 0);
    s = parse_ok("burst,period=3,factor=1.5");
    CU_ASSERT_EQUAL(s.period, 3);

    s = parse_ok("onset");
    CU_ASSERT_EQUAL(s.pattern, STRAGGLE_ONSET);
    CU_ASSERT_EQUAL(s.start, 50);
    CU_ASSERT_EQUAL(s.end, STRAGGLE_NEVER);
    CU_ASSERT_DOUBLE_EQUAL(s.factor, 2.0, 0);
    s = parse_ok("onset,rank=1,start=5,end=9,factor=3");
    CU_ASSERT_EQUAL(s.rank, 1);
    CU_ASSERT_EQUAL(s.start, 5);
    CU_ASSERT_EQUAL(s.end, 9);
    s = parse_ok("onset,end=never,start=0");
    CU_ASSERT_EQUAL(s.end, STRAGGLE_NEVER);
}

static void test_parse_bad(void)
{
    parse_bad("slow", "unknown pattern 'slow'");
    parse_bad("slow", "accepted:");
    parse_bad("rank=3", "fixed needs ms=");
    parse_bad("rank=3,ms=5,bogus=1", "unknown key 'bogus'");
    parse_bad("jitter,rank=2", "no key 'rank' for pattern jitter");
    parse_bad("none,ms=3", "no key 'ms' for pattern none");
    parse_bad("rank=-1,ms=5", "rank=-1");
    parse_bad("rank=x,ms=5", "rank=x");
    parse_bad("rank=3,ms=-5", "ms=-5");
    parse_bad("rank=3,ms=5min", "ms=5min");
    parse_bad("rank=3,ms=", "ms=");
    parse_bad("rank=3,ms=nan", "ms=nan");
    parse_bad("rank=3,ms=5,prob=1.5", "prob=1.5");
    parse_bad("persistent,factor=0.5", "factor=0.5");
    parse_bad("persistent,factor=2x", "factor=2x");
    parse_bad("persistent,factor=2,ms=3", "not both");
    parse_bad("jitter,sigma=-1", "sigma=-1");
    parse_bad("burst,period=0", "period=0");
    parse_bad("burst,period=2.5", "period=2.5");
    parse_bad("onset,start=-3", "start=-3");
    parse_bad("onset,start=10,end=10", "must come after");
    parse_bad("rank=3,ms=5,seed=-2", "seed=-2");
    parse_bad("rank=3,ms=5,rank=4", "given twice");
    parse_bad("rank=3,,ms=5", "empty item");
    parse_bad("rank=3,ms=5,", "empty item");
    parse_bad("persistent,factor", "not key=value");
    parse_bad("=4", "not key=value");
}

static void test_parse_error_keeps_output(void)
{
    straggle s = parse_ok("persistent,rank=2");
    straggle before = s;
    char err[64];
    CU_ASSERT_EQUAL(straggle_parse("persistent,rank=oops", &s, err, sizeof err), -1);
    CU_ASSERT_EQUAL(memcmp(&s, &before, sizeof s), 0);
    /* A tiny error buffer is truncated, never overrun. */
    char tiny[8];
    CU_ASSERT_EQUAL(straggle_parse("nope", &s, tiny, sizeof tiny), -1);
    CU_ASSERT_EQUAL(strlen(tiny), sizeof tiny - 1);
}

static void test_check_rank(void)
{
    char err[200];
    straggle s = parse_ok("rank=3,ms=1");
    CU_ASSERT_EQUAL(straggle_check(&s, 4, err, sizeof err), 0);
    CU_ASSERT_EQUAL(straggle_check(&s, 3, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "rank=3"));
    s = parse_ok("persistent");
    CU_ASSERT_EQUAL(straggle_check(&s, 1, err, sizeof err), 0);
    s = parse_ok("burst");
    CU_ASSERT_EQUAL(straggle_check(&s, 2, err, sizeof err), 0);
}

static void test_describe_round_trip(void)
{
    const char *specs[] = {
        "none", "rank=3,ms=5,prob=0.5,seed=4", "persistent,factor=3", "persistent,rank=1,ms=2",
        "jitter,sigma=0.3", "jitter,ms=10", "burst,period=2,factor=5", "onset,rank=0,start=4,end=8",
        "onset,ms=1.5",
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        straggle a = parse_ok(specs[i]);
        char line[200];
        straggle_describe(&a, line, sizeof line);
        straggle b = parse_ok(line);
        CU_ASSERT_EQUAL(a.pattern, b.pattern);
        for (long step = 0; step < 40; step++)
            for (int r = 0; r < 4; r++)
                CU_ASSERT_DOUBLE_EQUAL(straggle_delay_s(&a, r, 4, step, 0.01),
                                       straggle_delay_s(&b, r, 4, step, 0.01), 1e-12);
    }
    straggle s = parse_ok("persistent,rank=2,factor=3");
    char line[200];
    CU_ASSERT_STRING_EQUAL(straggle_describe(&s, line, sizeof line), "persistent,rank=2,factor=3,seed=1");
}

/* ---- delays --------------------------------------------------------------- */

static void test_fixed_delays(void)
{
    straggle s = parse_ok("rank=2,ms=5");
    for (long step = 0; step < 100; step++)
        for (int r = 0; r < 4; r++)
            CU_ASSERT_DOUBLE_EQUAL(straggle_delay_s(&s, r, 4, step, 0.0), r == 2 ? 0.005 : 0.0, 0);
    /* prob=P: about P of the steps, deterministic per seed, different across seeds. */
    straggle a = parse_ok("rank=2,ms=5,prob=0.3,seed=1");
    straggle b = parse_ok("rank=2,ms=5,prob=0.3,seed=2");
    int hits = 0, differ = 0;
    const int steps = 20000;
    for (long step = 0; step < steps; step++) {
        double d = straggle_delay_s(&a, 2, 4, step, 0.0);
        CU_ASSERT(d == 0.0 || d == 0.005);
        hits += d > 0;
        differ += d != straggle_delay_s(&b, 2, 4, step, 0.0);
        CU_ASSERT_EQUAL(d, straggle_delay_s(&a, 2, 4, step, 0.0));
    }
    CU_ASSERT(fabs((double)hits / steps - 0.3) < 0.02);
    CU_ASSERT(differ > steps / 10);
    straggle never = parse_ok("rank=2,ms=5,prob=0");
    for (long step = 0; step < 1000; step++)
        CU_ASSERT_EQUAL(straggle_delay_s(&never, 2, 4, step, 0.0), 0.0);
}

static void test_persistent_delays(void)
{
    straggle s = parse_ok("persistent,factor=3");
    for (long step = 0; step < 50; step++)
        for (int r = 0; r < 8; r++)
            CU_ASSERT_EQUAL(straggle_delay_s(&s, r, 8, step, 0.01), r == 7 ? 2.0 * 0.01 : 0.0);
    /* Without base compute, factor gives nothing; ms gives a fixed delay. */
    CU_ASSERT_EQUAL(straggle_delay_s(&s, 7, 8, 0, 0.0), 0.0);
    straggle m = parse_ok("persistent,rank=1,ms=4");
    CU_ASSERT_DOUBLE_EQUAL(straggle_delay_s(&m, 1, 8, 5, 0.0), 0.004, 1e-15);
    CU_ASSERT_EQUAL(straggle_delay_s(&m, 7, 8, 5, 0.0), 0.0);
    /* The last rank follows the world size. */
    CU_ASSERT(straggle_delay_s(&s, 3, 4, 0, 0.01) > 0);
    CU_ASSERT_EQUAL(straggle_delay_s(&s, 3, 8, 0, 0.01), 0.0);
}

static void test_burst_rotates(void)
{
    straggle s = parse_ok("burst,period=3,factor=4");
    const int n = 4;
    for (long step = 0; step < 48; step++) {
        int slow = 0;
        for (int r = 0; r < n; r++) {
            double d = straggle_delay_s(&s, r, n, step, 0.01);
            if (d > 0) {
                slow++;
                CU_ASSERT_EQUAL(r, (int)((step / 3) % n));
                CU_ASSERT_DOUBLE_EQUAL(d, 0.03, 1e-15);
            }
        }
        CU_ASSERT_EQUAL(slow, 1);
    }
    /* Every rank takes its turn. */
    for (int r = 0; r < n; r++)
        CU_ASSERT(straggle_delay_s(&s, r, n, 3L * r, 0.01) > 0);
}

static void test_onset_window(void)
{
    straggle s = parse_ok("onset,rank=1,start=5,end=9,factor=2");
    for (long step = 0; step < 20; step++) {
        double want = (step >= 5 && step < 9) ? 0.01 : 0.0;
        CU_ASSERT_DOUBLE_EQUAL(straggle_delay_s(&s, 1, 4, step, 0.01), want, 1e-15);
        CU_ASSERT_EQUAL(straggle_delay_s(&s, 0, 4, step, 0.01), 0.0);
    }
    straggle open = parse_ok("onset");
    CU_ASSERT_EQUAL(straggle_delay_s(&open, 3, 4, 49, 0.01), 0.0);
    CU_ASSERT(straggle_delay_s(&open, 3, 4, 50, 0.01) > 0);
    CU_ASSERT(straggle_delay_s(&open, 3, 4, 1000000, 0.01) > 0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_jitter_statistics(void)
{
    straggle s = parse_ok("jitter,sigma=0.5");
    enum { N = 20001 };
    static double factor[N];
    int zero = 0;
    for (long i = 0; i < N; i++) {
        int rank = (int)(i % 8);
        long step = i / 8;
        double d = straggle_delay_s(&s, rank, 8, step, 1.0);
        CU_ASSERT(d >= 0);
        zero += d == 0.0;
        factor[i] = 1.0 + d;   /* the factor, clipped at 1 from below */
    }
    qsort(factor, N, sizeof factor[0], cmp_double);
    /* Median of a lognormal with mu 0 is 1: about half the draws are clipped. */
    CU_ASSERT(fabs((double)zero / N - 0.5) < 0.02);
    /* Upper quartile of exp(0.5 z) is exp(0.5 * 0.6745) = 1.401. */
    CU_ASSERT(fabs(factor[3 * N / 4] - 1.401) < 0.03);
    /* Different ranks at the same step get different factors. */
    CU_ASSERT(straggle_delay_s(&s, 0, 8, 7, 1.0) != straggle_delay_s(&s, 1, 8, 7, 1.0)
              || straggle_delay_s(&s, 2, 8, 7, 1.0) != straggle_delay_s(&s, 3, 8, 7, 1.0));
    /* ms replaces base time. */
    straggle m = parse_ok("jitter,ms=1000");
    CU_ASSERT_DOUBLE_EQUAL(straggle_delay_s(&m, 5, 8, 11, 0.0), straggle_delay_s(&s, 5, 8, 11, 1.0), 1e-12);
    straggle flat = parse_ok("jitter,sigma=0");
    CU_ASSERT_EQUAL(straggle_delay_s(&flat, 1, 8, 3, 1.0), 0.0);
}

static void test_determinism_and_bounds(void)
{
    const char *specs[] = { "rank=1,ms=3,prob=0.5", "jitter", "burst,period=2", "onset,start=3" };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        straggle a = parse_ok(specs[i]);
        straggle b = parse_ok(specs[i]);   /* a fresh parse: no hidden state */
        for (long step = 0; step < 200; step++)
            for (int r = 0; r < 4; r++)
                CU_ASSERT_EQUAL(straggle_delay_s(&a, r, 4, step, 0.01), straggle_delay_s(&b, r, 4, step, 0.01));
        /* Query order does not matter. */
        double fwd = straggle_delay_s(&a, 1, 4, 150, 0.01);
        for (long step = 199; step >= 0; step--)
            (void)straggle_delay_s(&a, 2, 4, step, 0.01);
        CU_ASSERT_EQUAL(fwd, straggle_delay_s(&a, 1, 4, 150, 0.01));
        /* Out-of-range arguments give no delay, never a crash. */
        CU_ASSERT_EQUAL(straggle_delay_s(&a, -1, 4, 5, 0.01), 0.0);
        CU_ASSERT_EQUAL(straggle_delay_s(&a, 4, 4, 5, 0.01), 0.0);
        CU_ASSERT_EQUAL(straggle_delay_s(&a, 1, 4, -5, 0.01), 0.0);
        CU_ASSERT_EQUAL(straggle_delay_s(&a, 1, 4, 5, -1.0), 0.0);
        CU_ASSERT_EQUAL(straggle_delay_s(NULL, 1, 4, 5, 0.01), 0.0);
    }
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite parser = CU_add_suite("straggle_parse", NULL, NULL);
    CU_pSuite delays = CU_add_suite("straggle_delay", NULL, NULL);
    if (!parser || !delays)
        return 1;
    CU_add_test(parser, "none", test_parse_none);
    CU_add_test(parser, "fixed", test_parse_fixed);
    CU_add_test(parser, "persistent jitter burst onset", test_parse_patterns);
    CU_add_test(parser, "bad specs rejected with a clear message", test_parse_bad);
    CU_add_test(parser, "error leaves output untouched", test_parse_error_keeps_output);
    CU_add_test(parser, "rank checked against world size", test_check_rank);
    CU_add_test(parser, "describe parses back", test_describe_round_trip);
    CU_add_test(delays, "fixed and prob", test_fixed_delays);
    CU_add_test(delays, "persistent (F-1)*base on one rank", test_persistent_delays);
    CU_add_test(delays, "burst rotates", test_burst_rotates);
    CU_add_test(delays, "onset window", test_onset_window);
    CU_add_test(delays, "jitter median 1", test_jitter_statistics);
    CU_add_test(delays, "determinism and bounds", test_determinism_and_bounds);
    return sc_cunit_run();
}
