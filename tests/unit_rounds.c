/* Unit tests of the coordinator's round rules (round_rules.c), driven
 * with synthetic deposit arrivals.  Call identity has its own tests
 * (unit_identity.c). */
#include <CUnit/CUnit.h>
#include <string.h>
#include "round_rules.h"
#include "cunit_main.h"

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

/* ... judging slot 0, with where each rank is blocked (round_rules.h) */
static sc_rules rules_blocked(int k, int staleness, const int *blocked_at)
{
    sc_rules r = rules(k, staleness);
    r.blocked_at = blocked_at;
    r.slot = 0;
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
    sc_track_announce(&t, 2, 2, 1);   /* rank 2 reaches the flush */
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);
    CU_ASSERT_EQUAL(sc_round_close(&t, &r, incl), 3);
    CU_ASSERT_EQUAL(incl[2], 2);
    CU_ASSERT_FALSE(sc_track_flushing(&t));
    sc_track_free(&t);
}

/* MPI_Pcontrol is a local call: a flush one rank alone asked for waits
 * only until the others have made as many calls, never for a flush
 * deposit of theirs. */
static void test_flush_one_rank(void)
{
    sc_track t;
    sc_track_init(&t, 3);
    sc_rules r = rules(2, 4);
    long incl[3];
    double wake;
    sc_track_announce(&t, 0, 3, SC_DEP_FLUSH);
    sc_track_announce(&t, 1, 2, 0);
    sc_track_announce(&t, 2, 2, 0);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);   /* the deposits before it */
    sc_round_close(&t, &r, incl);
    CU_ASSERT_EQUAL(incl[0], 2);
    CU_ASSERT_EQUAL(incl[1], 2);
    CU_ASSERT_TRUE(sc_track_flushing(&t));
    sc_track_announce(&t, 1, 3, 0);
    sc_track_announce(&t, 2, 3, 0);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);
    CU_ASSERT_EQUAL(sc_round_close(&t, &r, incl), 3);
    CU_ASSERT_EQUAL(incl[0], 3);
    CU_ASSERT_FALSE(sc_track_flushing(&t));
    sc_track_free(&t);
}

/* A fused group's flush where another rank made the calls on its members'
 * own slots (an exact mode): it deposits nothing on the group, and says
 * only its count.  The flush completes on that count; the count alone is
 * nothing to include (no round for it). */
static void test_flush_counted_rank(void)
{
    sc_track t;
    sc_track_init(&t, 3);
    sc_rules r = rules(3, 4);
    long incl[3];
    double wake;
    sc_track_announce(&t, 0, 5, SC_DEP_FLUSH);
    sc_track_announce(&t, 1, 5, SC_DEP_FLUSH);
    sc_track_announce(&t, 2, 2, 0);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);   /* the deposits before it */
    sc_round_close(&t, &r, incl);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_WAIT);    /* rank 2 has not made call 5 */
    sc_track_counted(&t, 2, 4);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_WAIT);
    sc_track_counted(&t, 2, 5);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);
    CU_ASSERT_EQUAL(sc_round_close(&t, &r, incl), 2);
    CU_ASSERT_EQUAL(incl[0], 5);
    CU_ASSERT_EQUAL(incl[1], 5);
    CU_ASSERT_EQUAL(incl[2], 2);   /* nothing more of rank 2's: its calls went elsewhere */
    CU_ASSERT_FALSE(sc_track_flushing(&t));
    sc_track_counted(&t, 2, 9);
    CU_ASSERT_FALSE(sc_track_has_news(&t));
    sc_track_free(&t);
}

/* A drain (deposits no other rank will join: a fused group's in an exact
 * mode, a member's own slot's in a tolerant one) closes on anything; the
 * ranks not in it missed no round they could have been in, so their
 * staleness does not grow (counted, it read 5 and 6 against a bound of 4
 * with hot swaps every 3 steps). */
static void test_drain_counts_no_absence(void)
{
    sc_track t;
    sc_track_init(&t, 3);
    sc_rules r = rules(3, 2);
    r.drain = 1;
    long incl[3];
    double wake;
    for (long c = 1; c <= 5; c++) {
        sc_track_announce(&t, 0, c, 0);
        CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);
        CU_ASSERT_EQUAL(sc_round_close(&t, &r, incl), 1);
    }
    CU_ASSERT_EQUAL(t.max_absent, 0);
    CU_ASSERT_EQUAL(t.absent[1], 0);
    r.drain = 0;   /* ordinary rounds count it */
    r.k = 1;
    sc_track_announce(&t, 0, 6, 0);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_WAIT);   /* the quorum met: a grace for the rest */
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 1.0, &wake), SC_CLOSE);
    sc_round_close(&t, &r, incl);
    CU_ASSERT_EQUAL(t.absent[1], 1);
    sc_track_free(&t);
}

/* An exact mode's deposits (SC_DEP_EXACT) wait for a fresh buffer of
 * every rank, whatever their call counts: after a tolerant spell, a rank
 * three calls behind is not made to catch up alone.  A flush (a program
 * point) does make it catch up: its calls before its own flush deposit get
 * rounds first. */
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
        /* an exact mode: rank 2's next call is exact too; a flush: rank 2
         * makes its calls 2 to 4 before it reaches the flush */
        sc_track_announce(&t, 2, 2, as_flush ? 0 : flags);
        CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);
        int fresh = sc_round_close(&t, &r, incl);
        if (!as_flush) {
            CU_ASSERT_EQUAL(fresh, 3);   /* one round with all three buffers */
            CU_ASSERT_EQUAL(incl[0], 5);
            CU_ASSERT_EQUAL(incl[2], 2);
            CU_ASSERT_FALSE(sc_track_flushing(&t));
        } else {
            CU_ASSERT_EQUAL(fresh, 1);   /* rank 2 alone: it must reach its flush first */
            CU_ASSERT_EQUAL(incl[0], 4);
            CU_ASSERT_EQUAL(incl[2], 2);
            CU_ASSERT_TRUE(sc_track_flushing(&t));
            sc_track_announce(&t, 2, 4, 0);
            CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);
            CU_ASSERT_EQUAL(sc_round_close(&t, &r, incl), 1);
            sc_track_announce(&t, 2, 5, flags);
            CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);
            CU_ASSERT_EQUAL(sc_round_close(&t, &r, incl), 3);   /* the flush round: everybody's flush deposit */
            CU_ASSERT_EQUAL(incl[2], 5);
            CU_ASSERT_FALSE(sc_track_flushing(&t));
        }
        CU_ASSERT_EQUAL(t.exact_upto[0], 5);   /* both kinds wait: exact_upto tracks them */
        CU_ASSERT_EQUAL(t.exact_upto[2], as_flush ? 5 : 2);
        sc_track_free(&t);
    }
}

/* A fused group's leftovers in an exact mode: one rank's late group
 * deposit, which no other rank will join (members reduce on their own slots
 * there), closes at once when draining, and waits without. */
static void test_drain_leftovers(void)
{
    sc_track t;
    CU_ASSERT_EQUAL_FATAL(sc_track_init(&t, 4), 0);
    sc_rules r = rules(4, 4);   /* exact: every member */
    double wake;
    long incl[4];
    for (int i = 0; i < 4; i++) sc_track_announce(&t, i, 3, 0);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0.0, &wake), SC_CLOSE);
    CU_ASSERT_EQUAL(sc_round_close(&t, &r, incl), 4);
    sc_track_announce(&t, 2, 4, 0);   /* the late rank's last tolerant step */
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0.0, &wake), SC_WAIT);
    r.drain = 1;
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0.0, &wake), SC_CLOSE);
    CU_ASSERT_EQUAL(sc_round_close(&t, &r, incl), 1);
    CU_ASSERT_EQUAL(incl[2], 4);
    CU_ASSERT_EQUAL(incl[0], 3);
    /* nothing left: no empty round */
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0.0, &wake), SC_WAIT);
    /* a flush still goes first: it waits for every rank's calls */
    sc_track_announce(&t, 1, 5, SC_DEP_FLUSH);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0.0, &wake), SC_CLOSE);   /* rank 1's earlier deposits, before the flush */
    CU_ASSERT_EQUAL(sc_round_close(&t, &r, incl), 1);
    CU_ASSERT_EQUAL(incl[1], 4);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0.0, &wake), SC_WAIT);
    sc_track_free(&t);
}

static void test_gone_and_blocked(void)
{
    sc_track t;
    sc_track_init(&t, 4);
    unsigned char gone[4] = {0, 0, 0, 1};
    int blocked[4] = {-1, 1, 1, -1};
    sc_rules r = rules_blocked(3, 4, blocked);
    r.gone = gone;
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

/* The stall rule (relax_quorum) in groups mode: the only new deposit is a
 * child's, which counts toward no quorum, and it waits for it; its
 * parent is blocked on another communicator, the other member is thought
 * to be computing.  The rule must close the round, or the stall lasts
 * until that member comes (a 46.7 s stall of the two-communicator soak). */
static void test_relax_on_child_deposit(void)
{
    sc_track t;
    sc_track_init(&t, 4);
    unsigned char member[4] = {1, 0, 1, 0};   /* ring 0 and 2; 1 and 3 children */
    int blocked[4] = {SC_BLOCKED_OUTSIDE, 0, -1, -1};
    sc_rules r = rules_blocked(2, 4, blocked);
    r.member = member;
    double wake;
    sc_track_announce(&t, 1, 1, 0);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_WAIT);   /* no member fresh */
    r.excuse_blocked = 1;
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_WAIT);   /* member 2 may come */
    r.relax_quorum = 1;
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);
    blocked[1] = -1;   /* nobody waits here: nothing to relax for */
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_WAIT);
    blocked[1] = 0;
    long incl[4];
    CU_ASSERT_EQUAL(sc_round_close(&t, &r, incl), 1);
    CU_ASSERT_EQUAL(incl[1], 1);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_WAIT);   /* nothing new: no empty round */
    sc_track_free(&t);
}

/* A flush pending at a count inside a child's run: a child's deposits
 * reach its parent summed over runs of calls, announced by their ends, and
 * the parent takes a run whole or not at all.  A round counted up to the
 * cap inside the run claimed calls it never summed; at the next topology
 * change they were dropped on both sides (a step of a child's gradients
 * lost, seen as a conservation failure under auto).  The child waits whole
 * for the flush round; a member in its place is cut at the cap as before. */
static void test_flush_cap_keeps_child_runs_whole(void)
{
    for (int child = 0; child <= 1; child++) {
        sc_track t;
        sc_track_init(&t, 3);
        unsigned char member[3] = {1, 1, (unsigned char)!child};
        sc_rules r = rules(1, 4);
        r.member = member;
        long incl[3];
        double wake;
        sc_track_announce(&t, 0, 2, SC_DEP_FLUSH);   /* rank 0 flushes at its 2nd call */
        sc_track_announce(&t, 1, 1, 0);              /* rank 1 is a call behind */
        sc_track_announce(&t, 2, 2, 0);              /* rank 2: calls 1 and 2, one run if a child */
        CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);   /* rank 1's call 1 first */
        sc_round_close(&t, &r, incl);
        CU_ASSERT_EQUAL(incl[0], 1);
        CU_ASSERT_EQUAL(incl[1], 1);
        CU_ASSERT_EQUAL(incl[2], child ? 0 : 1);
        CU_ASSERT_TRUE(sc_track_flushing(&t));
        CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_WAIT);   /* nothing more before the flush */
        sc_track_announce(&t, 1, 2, 0);
        CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);
        sc_round_close(&t, &r, incl);
        CU_ASSERT_EQUAL(incl[0], 2);
        CU_ASSERT_EQUAL(incl[1], 2);
        CU_ASSERT_EQUAL(incl[2], 2);   /* the run whole, in the flush round */
        CU_ASSERT_FALSE(sc_track_flushing(&t));
        sc_track_free(&t);
    }
    /* Held whole is not absent: a child ahead of a flush one rank asked
     * for, computing (not blocked), staleness 1.  Counted absent, it would
     * make the staleness bound wait for it before rank 1's next round, and
     * rank 1, whose call waits for that round, would never reach the
     * flush that frees the child's run. */
    sc_track t;
    sc_track_init(&t, 3);
    unsigned char member[3] = {1, 1, 0};
    int blocked[3] = {0, 0, -1};   /* ranks 0 and 1 wait here; the child computes */
    sc_rules r = rules_blocked(1, 1, blocked);
    r.member = member;
    long incl[3];
    double wake;
    sc_track_announce(&t, 0, 3, SC_DEP_FLUSH);
    sc_track_announce(&t, 1, 1, 0);
    sc_track_announce(&t, 2, 4, 0);   /* one run, calls 1 to 4 */
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);
    sc_round_close(&t, &r, incl);
    CU_ASSERT_EQUAL(incl[2], 0);
    CU_ASSERT_EQUAL(t.absent[2], 0);
    sc_track_announce(&t, 1, 2, 0);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);   /* rank 1's call 2, before the flush */
    sc_round_close(&t, &r, incl);
    CU_ASSERT_EQUAL(incl[1], 2);
    sc_track_announce(&t, 1, 3, 0);
    CU_ASSERT_EQUAL(sc_round_verdict(&t, &r, 0, &wake), SC_CLOSE);   /* the flush round */
    sc_round_close(&t, &r, incl);
    CU_ASSERT_EQUAL(incl[0], 3);
    CU_ASSERT_EQUAL(incl[1], 3);
    CU_ASSERT_EQUAL(incl[2], 4);
    CU_ASSERT_FALSE(sc_track_flushing(&t));
    sc_track_free(&t);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite r = CU_add_suite("round rules", NULL, NULL);
    CU_add_test(r, "quorum and grace", test_quorum_and_grace);
    CU_add_test(r, "staleness bound", test_staleness_bound);
    CU_add_test(r, "flush", test_flush);
    CU_add_test(r, "flush one rank alone asked for", test_flush_one_rank);
    CU_add_test(r, "a drain counts no absence", test_drain_counts_no_absence);
    CU_add_test(r, "a flush completes on a rank's count where it deposited nothing", test_flush_counted_rank);
    CU_add_test(r, "exact deposits: no catch-up", test_exact_without_catch_up);
    CU_add_test(r, "departed and blocked ranks", test_gone_and_blocked);
    CU_add_test(r, "a fused group's leftovers drain in an exact mode", test_drain_leftovers);
    CU_add_test(r, "the stall rule closes on a child's deposit alone", test_relax_on_child_deposit);
    CU_add_test(r, "a flush's cap never cuts a child's run", test_flush_cap_keeps_child_runs_whole);
    return sc_cunit_run();
}
