/* Unit tests of the tolerant modes' pure parts: step-pattern learning
 * (pattern.c) and the coordinator's round rules (round_rules.c), driven
 * with synthetic call signatures and deposit arrivals. */
#include <CUnit/CUnit.h>
#include <string.h>
#include "pattern.h"
#include "round_rules.h"
#include "cunit_main.h"

static sc_sig S(long count) { sc_sig s = {count, 1, NULL, NULL}; return s; }
static sc_sig SB(long count, const void *buf) { sc_sig s = {count, 1, buf, buf}; return s; }

/* Feed a repeating step of signatures; return the call index at which the
 * pattern was learned (first slot >= 0), or -1. */
static int learn(sc_pattern *p, const long *step, int len, int steps, int *slots_out)
{
    int first = -1, n = 0;
    for (int t = 0; t < steps; t++)
        for (int i = 0; i < len; i++, n++) {
            int slot = sc_pattern_next(p, S(step[i]));
            if (slot >= 0 && first < 0) first = n;
            if (slots_out) slots_out[n] = slot;
        }
    return first;
}

static void test_pattern_single(void)
{
    sc_pattern p;
    sc_pattern_init(&p);
    long step[] = {100};
    int first = learn(&p, step, 1, 20, NULL);
    CU_ASSERT_EQUAL(p.len, 1);
    CU_ASSERT_EQUAL(first, SC_PATTERN_MIN_CALLS);   /* the first steps run exact */
}

static void test_pattern_same_signature_twice(void)
{
    /* A A A B: equal shapes inside a step stay distinct slots, and a run of
     * A's is not mistaken for a step of one. */
    sc_pattern p;
    sc_pattern_init(&p);
    long step[] = {10, 10, 10, 20};
    int slots[80];
    learn(&p, step, 4, 20, slots);
    CU_ASSERT_EQUAL(p.len, 4);
    int n = 79;   /* the last step: slots 0..3 in order */
    CU_ASSERT_EQUAL(slots[n - 3], 0);
    CU_ASSERT_EQUAL(slots[n - 2], 1);
    CU_ASSERT_EQUAL(slots[n - 1], 2);
    CU_ASSERT_EQUAL(slots[n], 3);
}

static void test_pattern_equal_shapes_by_buffer(void)
{
    /* Two layers of the same size in one step: their buffers tell them
     * apart, so they are two slots, not one slot called twice. */
    static float layer1[4], layer2[4];
    sc_pattern p;
    sc_pattern_init(&p);
    int last = -1;
    for (int t = 0; t < 20; t++) {
        sc_pattern_next(&p, SB(4, layer1));
        last = sc_pattern_next(&p, SB(4, layer2));
    }
    CU_ASSERT_EQUAL(p.len, 2);
    CU_ASSERT_EQUAL(last, 1);
    /* buffers that move every call: never a period, always exact */
    sc_pattern q;
    sc_pattern_init(&q);
    static char arena[4096];
    for (int i = 0; i < 1000; i++) CU_ASSERT_EQUAL(sc_pattern_next(&q, SB(4, arena + i % 4096)), SC_PAT_LEARNING);
}

static void test_pattern_prefix_and_stray(void)
{
    sc_pattern p;
    sc_pattern_init(&p);
    CU_ASSERT_EQUAL(sc_pattern_next(&p, S(999)), SC_PAT_LEARNING);   /* one call before the loop */
    long step[] = {1, 2, 3};
    learn(&p, step, 3, 10, NULL);
    CU_ASSERT_TRUE(p.learned);
    CU_ASSERT_EQUAL(p.len, 3);
    /* continue in phase: the next call is slot 0 */
    CU_ASSERT_EQUAL(sc_pattern_next(&p, S(1)), 0);
    /* a stray call mid-step runs exact, the step goes on */
    CU_ASSERT_EQUAL(sc_pattern_next(&p, S(77)), SC_PAT_MISMATCH);
    CU_ASSERT_EQUAL(sc_pattern_next(&p, S(2)), 1);
    CU_ASSERT_EQUAL(sc_pattern_next(&p, S(3)), 2);
    /* a new pattern: after a whole step of strays, learn again */
    int r = 0;
    for (int i = 0; i < 5 && r != SC_PAT_RELEARN; i++) r = sc_pattern_next(&p, S(50 + i % 2));
    CU_ASSERT_EQUAL(r, SC_PAT_RELEARN);
    CU_ASSERT_FALSE(p.learned);
    CU_ASSERT_EQUAL(p.relearns, 1);
}

static void test_pattern_never_periodic(void)
{
    sc_pattern p;
    sc_pattern_init(&p);
    for (long i = 0; i < 1000; i++) CU_ASSERT_EQUAL(sc_pattern_next(&p, S(i)), SC_PAT_LEARNING);
    CU_ASSERT_FALSE(p.learned);
}

/* ---- round rules ---- */

static sc_rules rules(int k, int staleness)
{
    sc_rules r;
    memset(&r, 0, sizeof r);
    r.k = k;
    r.staleness = staleness;
    r.grace_s = 0.001;
    return r;
}

static void test_quorum_and_grace(void)
{
    sc_track t;
    CU_ASSERT_EQUAL_FATAL(sc_track_init(&t, 4), 0);
    sc_rules r = rules(3, 4);
    double wake;
    sc_track_announce(&t, 0, 1, 0);
    sc_track_announce(&t, 1, 1, 0);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0.0, &wake), SC_WAIT);   /* 2 < k */
    sc_track_announce(&t, 2, 1, 0);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0.0, &wake), SC_WAIT);   /* quorum met: grace for the last */
    CU_ASSERT_DOUBLE_EQUAL(wake, 0.001, 1e-12);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0.0011, &wake), SC_CLOSE);
    long incl[4];
    CU_ASSERT_EQUAL(sc_round_close(&t, &r, incl), 3);
    CU_ASSERT_EQUAL(incl[0], 1);
    CU_ASSERT_EQUAL(incl[3], 0);
    CU_ASSERT_EQUAL(t.absent[3], 1);
    /* all four in: close at once, no grace */
    for (int i = 0; i < 4; i++) sc_track_announce(&t, i, i == 3 ? 1 : 2, 0);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 5.0, &wake), SC_CLOSE);
    CU_ASSERT_EQUAL(sc_round_close(&t, &r, incl), 4);
    CU_ASSERT_EQUAL(t.absent[3], 0);
    sc_track_free(&t);
}

static void test_staleness_bound(void)
{
    sc_track t;
    sc_track_init(&t, 3);
    sc_rules r = rules(2, 2);
    long incl[3];
    double wake;
    for (int round = 1; round <= 2; round++) {
        sc_track_announce(&t, 0, round, 0);
        sc_track_announce(&t, 1, round, 0);
        CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 100.0 * round, &wake), SC_WAIT);   /* grace starts */
        CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 100.0 * round + 1, &wake), SC_CLOSE);
        sc_round_close(&t, &r, incl);
    }
    CU_ASSERT_EQUAL(t.absent[2], 2);
    /* rank 2 missed the bound: the next round waits for it, quorum or not */
    sc_track_announce(&t, 0, 3, 0);
    sc_track_announce(&t, 1, 3, 0);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 1000, &wake), SC_WAIT);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 2000, &wake), SC_WAIT);
    sc_track_announce(&t, 2, 1, 0);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 2000, &wake), SC_CLOSE);
    CU_ASSERT_EQUAL(sc_round_close(&t, &r, incl), 3);
    CU_ASSERT_EQUAL(t.max_absent, 2);
    sc_track_free(&t);
}

static void test_flush(void)
{
    sc_track t;
    sc_track_init(&t, 3);
    sc_rules r = rules(1, 4);
    long incl[3];
    double wake;
    /* ranks 0 and 1 flush at their 2nd deposit; rank 2 is one behind */
    sc_track_announce(&t, 0, 2, 1);
    sc_track_announce(&t, 1, 2, 1);
    sc_track_announce(&t, 2, 1, 0);
    /* rank 2's earlier deposit gets a round; the flush deposits are held back */
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);
    sc_round_close(&t, &r, incl);
    CU_ASSERT_EQUAL(incl[0], 1);
    CU_ASSERT_EQUAL(incl[1], 1);
    CU_ASSERT_EQUAL(incl[2], 1);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_WAIT);
    sc_track_announce(&t, 2, 2, 0);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);
    CU_ASSERT_EQUAL(sc_round_close(&t, &r, incl), 3);
    CU_ASSERT_EQUAL(incl[2], 2);
    CU_ASSERT_EQUAL(t.flush_upto, 0);
    sc_track_free(&t);
}

/* An exact mode's deposits (SC_DEP_EXACT) wait for a fresh buffer of
 * every rank, whatever their call counts: after a tolerant spell, a rank
 * three calls behind is not made to catch up alone.  The same deposits as
 * a flush (a program point) do make it catch up. */
static void test_exact_without_catch_up(void)
{
    for (int as_flush = 0; as_flush <= 1; as_flush++) {
        sc_track t;
        sc_track_init(&t, 3);
        sc_rules r = rules(3, 4);   /* exact: k = every member */
        long incl[3];
        double wake;
        int flags = as_flush ? SC_DEP_FLUSH : SC_DEP_EXACT;
        /* the tolerant spell: rank 2 three calls behind */
        sc_track_announce(&t, 0, 4, 0);
        sc_track_announce(&t, 1, 4, 0);
        sc_track_announce(&t, 2, 1, 0);
        CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);
        sc_round_close(&t, &r, incl);
        sc_track_announce(&t, 0, 5, flags);
        sc_track_announce(&t, 1, 5, flags);
        CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_WAIT);   /* rank 2 has nothing yet */
        sc_track_announce(&t, 2, 2, flags);
        CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);
        int fresh = sc_round_close(&t, &r, incl);
        if (!as_flush) {
            CU_ASSERT_EQUAL(fresh, 3);   /* one round with all three buffers */
            CU_ASSERT_EQUAL(incl[0], 5);
            CU_ASSERT_EQUAL(incl[2], 2);
            CU_ASSERT_EQUAL(t.flush_upto, 0);
        } else {
            CU_ASSERT_EQUAL(fresh, 1);   /* rank 2 alone: it must reach call 5 first */
            CU_ASSERT_EQUAL(incl[0], 4);
            CU_ASSERT_EQUAL(incl[2], 2);
            CU_ASSERT_EQUAL(t.flush_upto, 5);
        }
        CU_ASSERT_EQUAL(t.exact_upto[0], 5);   /* both kinds wait: exact_upto tracks them */
        CU_ASSERT_EQUAL(t.exact_upto[2], 2);
        sc_track_free(&t);
    }
}

static void test_gone_and_blocked(void)
{
    sc_track t;
    sc_track_init(&t, 4);
    unsigned char gone[4] = {0, 0, 0, 1};
    int blocked[4] = {-1, 1, 1, -1};
    sc_rules r = rules(3, 4);
    r.gone = gone;
    r.blocked_at = blocked;
    r.slot = 0;
    double wake;
    sc_track_announce(&t, 0, 1, 0);
    blocked[0] = 0;   /* rank 0 waits here; 1 and 2 wait on slot 1; 3 has left */
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_WAIT);   /* plain rules: quorum of 3 not met */
    r.excuse_blocked = 1;                                          /* nothing else can close */
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);
    long incl[4];
    sc_round_close(&t, &r, incl);
    CU_ASSERT_EQUAL(t.absent[1], 0);   /* blocked ranks miss nothing */
    CU_ASSERT_EQUAL(t.absent[3], 0);   /* nor do departed ones */
    sc_track_free(&t);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite p = CU_add_suite("pattern", NULL, NULL);
    CU_add_test(p, "one slot per step", test_pattern_single);
    CU_add_test(p, "equal shapes stay distinct slots", test_pattern_same_signature_twice);
    CU_add_test(p, "equal shapes told apart by their buffers", test_pattern_equal_shapes_by_buffer);
    CU_add_test(p, "prefix call, stray call, new pattern", test_pattern_prefix_and_stray);
    CU_add_test(p, "no period: stays exact", test_pattern_never_periodic);
    CU_pSuite r = CU_add_suite("round rules", NULL, NULL);
    CU_add_test(r, "quorum and grace", test_quorum_and_grace);
    CU_add_test(r, "staleness bound", test_staleness_bound);
    CU_add_test(r, "flush", test_flush);
    CU_add_test(r, "exact deposits: no catch-up", test_exact_without_catch_up);
    CU_add_test(r, "departed and blocked ranks", test_gone_and_blocked);
    return sc_cunit_run();
}
