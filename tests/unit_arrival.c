/* Unit tests of the arrival lag (plugin/arrival.c): each rank's clock is
 * mapped onto the coordinator's by the least receive-minus-stamp, ranks
 * are compared at the latest step all have stamped, and ranks too far
 * apart, or with nothing stamped, give no lag. */
#include "cunit_main.h"
#include "arrival.h"

/* Three ranks whose clocks run 0, 100 and 3 s ahead of the coordinator's;
 * rank 2 reaches every step 30 ms after the others; each row reaches the
 * coordinator 1 to 5 ms after it was stamped (the least delay, 1 ms, is
 * the same for every rank, so it cancels). */
static void test_offsets_and_lag(void)
{
    sc_arrival *a = sc_arrival_new(3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    const double off[3] = {0.0, -100.0, -3.0}, late[3] = {0.0, 0.0, 0.030};
    const double delay[5] = {0.004, 0.001, 0.005, 0.002, 0.003};
    double lag[3] = {-1, -1, -1};
    CU_ASSERT_EQUAL(sc_arrival_lags(a, lag), -1); /* nothing stamped yet */
    CU_ASSERT_DOUBLE_EQUAL(lag[0], -1, 0);
    for (int step = 0; step < 5; step++)
        for (int r = 0; r < 3; r++) {
            double t = 10.0 + 0.2 * step + late[r]; /* true arrival, the coordinator's clock */
            sc_arrival_add(a, r, t - off[r], t + delay[(step + r) % 5]);
        }
    CU_ASSERT_EQUAL(sc_arrival_lags(a, lag), 4);
    CU_ASSERT_DOUBLE_EQUAL(lag[0], 0.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(lag[1], 0.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(lag[2], 0.030, 1e-9);
    sc_arrival_free(a);
}

/* The lag is taken at the latest step every rank has stamped: a rank a
 * step behind holds the others to that step. */
static void test_latest_common_step(void)
{
    sc_arrival *a = sc_arrival_new(2);
    double lag[2];
    for (int step = 0; step < 4; step++)
        sc_arrival_add(a, 0, 1.0 + step, 1.0 + step);
    for (int step = 0; step < 3; step++)
        sc_arrival_add(a, 1, 1.0 + step + (step == 2 ? 0.5 : 0.0), 1.0 + step + (step == 2 ? 0.5 : 0.0));
    CU_ASSERT_EQUAL(sc_arrival_lags(a, lag), 2);
    CU_ASSERT_DOUBLE_EQUAL(lag[0], 0.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(lag[1], 0.5, 1e-12);
    sc_arrival_free(a);
}

/* A rank left steps behind (a quorum's late rank, back in exact rounds)
 * at the others' pace is not late: no lag beyond SC_ARRIVAL_LEVEL steps
 * apart; a lag at that distance still. */
static void test_behind_not_slow(void)
{
    sc_arrival *a = sc_arrival_new(2);
    double lag[2];
    for (int step = 0; step < 20; step++) sc_arrival_add(a, 0, 1.0 + 0.04 * step, 1.0 + 0.04 * step);
    for (int step = 0; step < 20 - SC_ARRIVAL_LEVEL - 1; step++)
        sc_arrival_add(a, 1, 1.4 + 0.04 * step, 1.4 + 0.04 * step);   /* behind, 0.4 s */
    CU_ASSERT_EQUAL(sc_arrival_lags(a, lag), -1);
    sc_arrival_add(a, 1, 1.4 + 0.04 * 16, 1.4 + 0.04 * 16);              /* now SC_ARRIVAL_LEVEL apart */
    CU_ASSERT_EQUAL(sc_arrival_lags(a, lag), 19 - SC_ARRIVAL_LEVEL);
    sc_arrival_free(a);
}

/* Ranks further apart than the stamps kept, bad stamps and arguments. */
static void test_bounds(void)
{
    sc_arrival *a = sc_arrival_new(2);
    double lag[2];
    for (int step = 0; step < SC_ARRIVAL_STEPS + 1; step++)
        sc_arrival_add(a, 0, 1.0 + step, 1.0 + step);
    sc_arrival_add(a, 1, 1.0, 1.0);
    CU_ASSERT_EQUAL(sc_arrival_lags(a, lag), -1); /* rank 0's stamp of step 0 is gone */
    sc_arrival_add(a, 1, 0.0, 5.0);               /* no stamp: not a row */
    sc_arrival_add(a, 1, -3.0, 5.0);
    sc_arrival_add(a, 7, 1.0, 1.0);               /* no such rank */
    CU_ASSERT_EQUAL(sc_arrival_lags(a, lag), -1);
    CU_ASSERT_EQUAL(sc_arrival_lags(NULL, lag), -1);
    CU_ASSERT_EQUAL(sc_arrival_lags(a, NULL), -1);
    sc_arrival_free(a);
    CU_ASSERT_PTR_NULL(sc_arrival_new(0));
    sc_arrival_free(NULL);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("arrival lag", NULL, NULL);
    CU_add_test(s, "clock offsets by the least delay; a late rank's lag", test_offsets_and_lag);
    CU_add_test(s, "the latest step every rank has stamped", test_latest_common_step);
    CU_add_test(s, "a rank steps behind at the others' pace is not late", test_behind_not_slow);
    CU_add_test(s, "ranks too far apart, bad stamps and arguments", test_bounds);
    return sc_cunit_run();
}
