/* The straggler table's rows (selector/straggler_log.h): who, from which
 * step to which, how much slower by own time, the cause most
 * classifications found, children and quorum steps, and the sync cost;
 * false alarms left out. */
#include <string.h>

#include <CUnit/CUnit.h>
#include "detect.h"
#include "straggler_log.h"

#define N 4

/* One step: ranks in `slow` take `factor` times the others' 10 ms; the
 * detector's status says so (straggler flag, onset at `onset`). */
static void step(sc_straggler_log *l, long s, sc_mode mode, int k, const int *parent, unsigned slow, double factor,
                 long onset, sc_rank_status *st)
{
    double own[N];
    for (int i = 0; i < N; i++) {
        int is = (slow >> i) & 1;
        own[i] = is ? 0.010 * factor : 0.010;
        if (is && !st[i].straggler) st[i].onset_step = onset;
        if (!is && st[i].straggler) st[i].end_step = s;
        st[i].straggler = is;
    }
    sc_straggler_log_step(l, s, mode, k, parent, own, NULL, st);
}

static void test_persistent_child(void)
{
    sc_straggler_log *l = sc_straggler_log_new(N);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    sc_rank_status st[N];
    memset(st, 0, sizeof st);
    int parent[N] = {-1, -1, -1, -1};
    for (long s = 0; s < 30; s++) {
        sc_mode mode = s < 10 ? SC_MODE_SYNC : SC_MODE_GROUPS;
        if (s == 10) parent[2] = 0;
        step(l, s, mode, N, parent, s >= 3 ? 1u << 2 : 0, 4.0, 2, st);
        if (s == 9 || s == 19) {   /* decisions: cpu, then (one window) none, then cpu again */
            st[2].cause = SC_CAUSE_CPU;
            st[2].throttled_share = 0.7;
            sc_straggler_log_classified(l, st);
        }
        if (s == 14) {
            st[2].cause = SC_CAUSE_NONE;
            sc_straggler_log_classified(l, st);
        }
    }
    sc_straggler_row rows[4];
    int dropped = -1;
    CU_ASSERT_EQUAL_FATAL(sc_straggler_log_rows(l, rows, 4, &dropped), 1);
    CU_ASSERT_EQUAL(dropped, 0);
    CU_ASSERT_EQUAL(rows[0].rank, 2);
    CU_ASSERT_EQUAL(rows[0].from_step, 2);    /* the test's estimated onset */
    CU_ASSERT_EQUAL(rows[0].to_step, -1);     /* still slow at the end */
    CU_ASSERT_EQUAL(rows[0].slow_steps, 27);
    CU_ASSERT_DOUBLE_EQUAL(rows[0].slowdown, 4.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(rows[0].sync_cost_s, 27 * 0.030, 1e-9);
    CU_ASSERT_EQUAL(rows[0].child_steps, 20);
    CU_ASSERT_EQUAL(rows[0].quorum_out_steps, 0);
    CU_ASSERT_EQUAL(rows[0].cause, SC_CAUSE_CPU);
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[0].signal, "throttled 70%"));
    CU_ASSERT_EQUAL(sc_straggler_log_steps(l), 30);
    sc_straggler_log_free(l);
}

/* A decision finds the cause before the change-point test holds the rank
 * slow (a CPU quota seen in its cgroup's throttled time); a later one,
 * while it is a child, reads its exchange with its parent as a slow link:
 * the first finding counts, and a tie keeps it. */
static void test_cause_found_first(void)
{
    sc_straggler_log *l = sc_straggler_log_new(N);
    sc_rank_status st[N];
    memset(st, 0, sizeof st);
    for (long s = 0; s < 40; s++) {
        step(l, s, SC_MODE_SYNC, N, NULL, s >= 12 ? 1u << 3 : 0, 3.0, 9, st);
        if (s == 10) {
            st[3].cause = SC_CAUSE_CPU;
            st[3].throttled_share = 0.9;
            sc_straggler_log_classified(l, st);
        }
        if (s == 30) {
            st[3].cause = SC_CAUSE_NETWORK;
            sc_straggler_log_classified(l, st);
        }
    }
    sc_straggler_row rows[4];
    CU_ASSERT_EQUAL_FATAL(sc_straggler_log_rows(l, rows, 4, NULL), 1);
    CU_ASSERT_EQUAL(rows[0].from_step, 9);
    CU_ASSERT_EQUAL(rows[0].cause, SC_CAUSE_CPU);
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[0].signal, "throttled 90%"));
    sc_straggler_log_free(l);
}

/* One classification of rank 3: at step `at`, the cause found, with the
 * signal's throttled share and link probe ratio. */
typedef struct verdict {
    long at;
    sc_cause cause;
    double throttled, link_ratio;
} verdict;

/* Rank 3's run: factor times slower from step `from` to `to` (exclusive)
 * and again from `again` on (again == to: slow throughout); a child from
 * step child_at (groups; sync before) until release_at (-1: to the end);
 * found short of CPU before any step with the signal `found` (NULL: not;
 * the children from the start). */
typedef struct child_case {
    long steps;
    double factor;
    long from, to, again, child_at, release_at;
    const char *found;
} child_case;

/* Runs c, classified as the verdicts say.  Fills the log's rows (at most
 * 4) and returns their count. */
static int child_run(const child_case *c, const verdict *v, int nv, sc_straggler_row *rows)
{
    sc_straggler_log *l = sc_straggler_log_new(N);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    sc_rank_status st[N];
    memset(st, 0, sizeof st);
    int parent[N] = {-1, -1, -1, -1};
    if (c->found) sc_straggler_log_found(l, 3, SC_CAUSE_CPU, c->found);
    for (long s = 0; s < c->steps; s++) {
        if (s == c->child_at) parent[3] = 0;
        if (s == c->release_at) parent[3] = -1;
        int slow = (s >= c->from && s < c->to) || s >= c->again;
        step(l, s, s < c->child_at ? SC_MODE_SYNC : SC_MODE_GROUPS, N, parent, slow ? 1u << 3 : 0, c->factor,
             s < c->to ? c->from : c->again, st);
        for (int j = 0; j < nv; j++)
            if (v[j].at == s) {
                st[3].cause = v[j].cause;
                st[3].throttled_share = v[j].throttled;
                st[3].link_ratio = v[j].link_ratio;
                sc_straggler_log_classified(l, st);
            }
    }
    int nrows = sc_straggler_log_rows(l, rows, 4, NULL);
    sc_straggler_log_free(l);
    return nrows;
}

/* A rank made a child for its CPU quota keeps up as a child and is
 * throttled less: the later decisions read it "network" (its exchange
 * with its parent) or "none", three to one.  A child's classifications do
 * not vote once a cause is known: the table keeps cpu.  Then a slow link
 * found late, after decisions that read "none". */
static void test_child_keeps_its_cause(void)
{
    sc_straggler_row rows[4];
    /* the decision at step 10 makes it a child, from a member's window */
    const verdict quota[] = {{10, SC_CAUSE_CPU, 0.9, 0.0},
                             {30, SC_CAUSE_NETWORK, 0.1, 0.0},
                             {50, SC_CAUSE_NONE, 0.1, 0.0},
                             {70, SC_CAUSE_NETWORK, 0.1, 0.0}};
    CU_ASSERT_EQUAL_FATAL(child_run(&(child_case){120, 3.0, 2, 120, 120, 11, -1, NULL}, quota, 4, rows), 1);
    CU_ASSERT_EQUAL(rows[0].rank, 3);
    CU_ASSERT_EQUAL(rows[0].cause, SC_CAUSE_CPU);
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[0].signal, "throttled 90%"));
    CU_ASSERT(rows[0].child_steps > 100);

    /* A rank behind a slow link, slow from step 2, read "none" until its
     * probe showed at step 50, the decision that made it a child: the
     * cause ties with none and wins, and the child's later windows do
     * not vote it back. */
    const verdict link[] = {{30, SC_CAUSE_NONE, 0.0, 0.0},
                            {50, SC_CAUSE_NETWORK, 0.0, 41.0},
                            {70, SC_CAUSE_NONE, 0.0, 0.0},
                            {90, SC_CAUSE_NONE, 0.0, 0.0}};
    CU_ASSERT_EQUAL_FATAL(child_run(&(child_case){120, 2.0, 2, 120, 120, 51, -1, NULL}, link, 4, rows), 1);
    CU_ASSERT_EQUAL(rows[0].cause, SC_CAUSE_NETWORK);
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[0].signal, "probe 41.0x"));

    /* A rank under a CPU quota, slow at steps 1-3, on time at 4-5 where
     * the (early) decision at step 5 finds it short of CPU and makes it a
     * child, slow again from step 6: one episode, merged, and the cause
     * found between its parts is kept against the child's later
     * "network". */
    const verdict merged[] = {{5, SC_CAUSE_CPU, 0.9, 0.0},
                              {15, SC_CAUSE_NETWORK, 0.0, 0.0},
                              {25, SC_CAUSE_NETWORK, 0.0, 0.0},
                              {35, SC_CAUSE_NETWORK, 0.0, 0.0}};
    CU_ASSERT_EQUAL_FATAL(child_run(&(child_case){40, 3.0, 1, 4, 6, 6, -1, NULL}, merged, 4, rows), 1);
    CU_ASSERT_EQUAL(rows[0].from_step, 1);
    CU_ASSERT_EQUAL(rows[0].cause, SC_CAUSE_CPU);
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[0].signal, "throttled 90%"));
}

/* Children from the start (sc_selector_start): the decider says what the
 * start found before any step.  Each episode that opens while the rank
 * stays that child takes it (two here, steps 12-17 and 25 on), and the
 * child's classifications ("network", its exchange with its parent), made
 * between episodes too, do not vote it away.  Released, the rank's later
 * episodes go by the classifications again.  A finding never followed by
 * an episode lists nobody. */
static void test_found_at_start(void)
{
    static const char found[] = "given 15% of the CPU while the step was learned";
    const verdict net[] = {{9, SC_CAUSE_NETWORK, 0.0, 0.0},
                           {19, SC_CAUSE_NETWORK, 0.0, 0.0},
                           {29, SC_CAUSE_NETWORK, 0.0, 0.0},
                           {35, SC_CAUSE_NETWORK, 0.0, 0.0}};
    sc_straggler_row rows[4];
    /* slow at steps 12-17 and from 25, a child throughout */
    CU_ASSERT_EQUAL_FATAL(child_run(&(child_case){40, 2.5, 12, 18, 25, 0, -1, found}, net, 4, rows), 2);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL(rows[r].rank, 3);
        CU_ASSERT_EQUAL(rows[r].cause, SC_CAUSE_CPU);
        CU_ASSERT_PTR_NOT_NULL(strstr(rows[r].signal, "given 15%"));
    }
    CU_ASSERT_EQUAL(rows[1].from_step, 25);
    /* never slow */
    CU_ASSERT_EQUAL(child_run(&(child_case){40, 2.5, 40, 40, 40, 0, -1, found}, net, 4, rows), 0);
    /* released at step 20, slow from 25 */
    CU_ASSERT_EQUAL_FATAL(child_run(&(child_case){40, 2.5, 25, 25, 25, 0, 20, found}, net, 4, rows), 1);
    CU_ASSERT_EQUAL(rows[0].cause, SC_CAUSE_NETWORK);
    /* a rank the log does not have, or no signal: nothing */
    sc_straggler_log *l = sc_straggler_log_new(N);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    sc_straggler_log_found(l, 9, SC_CAUSE_CPU, "no such rank");
    sc_straggler_log_found(l, 3, SC_CAUSE_CPU, NULL);
    sc_straggler_log_found(NULL, 3, SC_CAUSE_CPU, found);
    sc_straggler_log_free(l);
}

static void test_onset_end_and_quorum(void)
{
    sc_straggler_log *l = sc_straggler_log_new(N);
    sc_rank_status st[N];
    memset(st, 0, sizeof st);
    for (long s = 0; s < 60; s++) {
        unsigned slow = s >= 20 && s < 40 ? 1u << 1 : 0;
        step(l, s, s >= 22 ? SC_MODE_QUORUM : SC_MODE_SYNC, 3, NULL, slow, 2.0, 20, st);
    }
    sc_straggler_row rows[4];
    CU_ASSERT_EQUAL_FATAL(sc_straggler_log_rows(l, rows, 4, NULL), 1);
    CU_ASSERT_EQUAL(rows[0].rank, 1);
    CU_ASSERT_EQUAL(rows[0].from_step, 20);
    CU_ASSERT_EQUAL(rows[0].to_step, 39);   /* the step before the estimated end */
    CU_ASSERT_EQUAL(rows[0].slow_steps, 20);
    CU_ASSERT_EQUAL(rows[0].quorum_out_steps, 18);
    CU_ASSERT_EQUAL(rows[0].cause, SC_CAUSE_NONE);
    CU_ASSERT_STRING_EQUAL(rows[0].signal, "no decision while it was slow");
    sc_straggler_log_free(l);
}

/* Own times in a quorum (measured: 8 ranks on 2 cores, k=5): the fast
 * ranks compute 8.7 ms and wait 5.5 ms for the round's transfer; the 2x
 * straggler computes 16.7 ms and, late for the rounds, waits 0.3 ms.  Sync
 * would make it pay the transfer too: its own time is its compute plus
 * the median member's transfer, 1.5x the others', not 1.2x (read so, its
 * table row ended mid-run). */
static void test_quorum_own_times(void)
{
    enum { R = 8 };
    double feat[R * SC_NFEAT], scratch[R], own[R], xfer[R];
    memset(feat, 0, sizeof feat);
    for (int i = 0; i < R; i++) {
        double *f = feat + (size_t)i * SC_NFEAT;
        f[SC_F_COMPUTE_S] = i == R - 1 ? 0.0167 : 0.0087 + 0.0001 * i;
        f[SC_F_WAIT_S] = i == R - 1 ? 0.0003 : 0.0055;
        f[SC_F_STEP_S] = f[SC_F_COMPUTE_S] + f[SC_F_WAIT_S];
    }
    sc_detect_own_times(feat, R, NULL, 5, scratch, own, xfer);
    double fast = own[0];
    for (int i = 0; i < R - 1; i++) {
        CU_ASSERT_DOUBLE_EQUAL(xfer[i], xfer[R - 1], 1e-12);   /* one transfer for all */
        CU_ASSERT(own[i] < 0.0150);
    }
    CU_ASSERT(xfer[R - 1] > 0.004);
    CU_ASSERT(own[R - 1] / fast > 1.5);
    /* Exact steps are unchanged: the straggler's own time is its compute
     * and its own short wait (the others wait for it, late). */
    sc_detect_own_times(feat, R, NULL, R, scratch, own, xfer);
    CU_ASSERT_DOUBLE_EQUAL(own[R - 1], 0.0170, 1e-9);
}

/* A persistent straggler read 3.2x by arrival in sync and 1.56x in a
 * quorum (measured, 8 ranks): the mode change rebases its episode's level,
 * and it stays held slow; without the rebase the end test takes the new
 * scale for a recovery. */
static int held_through_mode_change(int rebase)
{
    enum { R = 8 };
    sc_detect *d = sc_detect_new(R, 5);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    int held = 1;
    for (long s = 0; s < 40; s++) {
        double own[R];
        for (int i = 0; i < R; i++) own[i] = 0.009 * (1.0 + 0.01 * ((i * 7 + s * 3) % 5));
        own[R - 1] *= s < 10 ? 3.2 : 1.56;
        if (s >= 10) for (int i = 0; i < R; i++) own[i] += 0.005;   /* the quorum's transfer, everyone's */
        if (s == 10 && rebase) sc_detect_rebase(d);
        sc_detect_step(d, s, own, NULL);
        if (s >= 3 && !sc_detect_status(d)[R - 1].straggler) held = 0;
    }
    sc_detect_free(d);
    return held;
}

static void test_mode_change_rebases(void)
{
    CU_ASSERT(held_through_mode_change(1));
    CU_ASSERT(!held_through_mode_change(0));   /* the test can fail */
}

static void test_false_alarms_and_merge(void)
{
    sc_straggler_log *l = sc_straggler_log_new(N);
    sc_rank_status st[N];
    memset(st, 0, sizeof st);
    for (long s = 0; s < 80; s++) {
        unsigned slow = 0;
        if (s >= 5 && s < 8) slow |= 1u << 0;                        /* 3 steps: too short */
        if (s >= 10 && s < 20) slow |= 1u << 3;                      /* held slow, but 1.1x: a false alarm */
        if ((s >= 30 && s < 40) || (s >= 43 && s < 50)) slow |= 1u << 2;   /* a 3-step gap: one episode */
        double factor = (slow & (1u << 3)) ? 1.1 : 3.0;
        step(l, s, SC_MODE_SYNC, N, NULL, slow, factor, s, st);
    }
    sc_straggler_row rows[4];
    CU_ASSERT_EQUAL_FATAL(sc_straggler_log_rows(l, rows, 4, NULL), 1);
    CU_ASSERT_EQUAL(rows[0].rank, 2);
    CU_ASSERT_EQUAL(rows[0].from_step, 30);
    CU_ASSERT_EQUAL(rows[0].to_step, 49);
    CU_ASSERT_EQUAL(rows[0].slow_steps, 17);
    sc_straggler_log_free(l);
}

/* A slow link in sync: every rank waits alike in the collective, so no
 * arrival shows it; its probe does, from the first probe on. */
static void test_slow_link(void)
{
    sc_straggler_log *l = sc_straggler_log_new(N);
    sc_rank_status st[N];
    memset(st, 0, sizeof st);
    double own[N] = {0.05, 0.05, 0.05, 0.05}, feat[N * SC_NFEAT];
    memset(feat, 0, sizeof feat);
    for (long s = 0; s < 40; s++) {
        for (int i = 0; i < N; i++) {
            feat[i * SC_NFEAT + SC_F_BYTES] = 1e6;
            if (s >= 8) feat[i * SC_NFEAT + SC_F_LINK_SPB] = i == 3 ? 1e-7 : 1e-8;   /* probes from step 8 */
        }
        sc_straggler_log_step(l, s, SC_MODE_SYNC, N, NULL, own, feat, st);
        if (s == 20) {
            st[3].cause = SC_CAUSE_NETWORK;
            st[3].link_ratio = 10.0;
            sc_straggler_log_classified(l, st);
        }
    }
    sc_straggler_row rows[4];
    CU_ASSERT_EQUAL_FATAL(sc_straggler_log_rows(l, rows, 4, NULL), 1);
    CU_ASSERT_EQUAL(rows[0].rank, 3);
    CU_ASSERT_EQUAL(rows[0].from_step, 8);
    CU_ASSERT_EQUAL(rows[0].to_step, -1);
    CU_ASSERT_EQUAL(rows[0].slow_steps, 32);
    CU_ASSERT_DOUBLE_EQUAL(rows[0].slowdown, 1.0, 1e-9);              /* by arrival: not slower */
    CU_ASSERT_DOUBLE_EQUAL(rows[0].sync_cost_s, 32 * 1e6 * 9e-8, 1e-9); /* its link's extra time */
    CU_ASSERT_EQUAL(rows[0].cause, SC_CAUSE_NETWORK);
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[0].signal, "link probe 10.0x"));
    sc_straggler_log_free(l);
}

static void test_nobody(void)
{
    sc_straggler_log *l = sc_straggler_log_new(N);
    sc_rank_status st[N];
    memset(st, 0, sizeof st);
    for (long s = 0; s < 50; s++) step(l, s, SC_MODE_SYNC, N, NULL, 0, 1.0, -1, st);
    sc_straggler_row rows[4];
    CU_ASSERT_EQUAL(sc_straggler_log_rows(l, rows, 4, NULL), 0);
    CU_ASSERT_EQUAL(sc_straggler_log_steps(l), 50);
    CU_ASSERT_PTR_NULL(sc_straggler_log_new(0));
    sc_straggler_log_free(l);
}

void register_stragglers_suite(void)
{
    CU_pSuite s = CU_add_suite("straggler table", NULL, NULL);
    CU_add_test(s, "persistent cpu straggler made a child", test_persistent_child);
    CU_add_test(s, "a cause found before the test holds it slow counts", test_cause_found_first);
    CU_add_test(s, "a child's later classifications keep its cause", test_child_keeps_its_cause);
    CU_add_test(s, "a cause found at the start, before any step, is kept", test_found_at_start);
    CU_add_test(s, "onset and end, left out of quorums", test_onset_end_and_quorum);
    CU_add_test(s, "in a quorum a late member pays the median transfer", test_quorum_own_times);
    CU_add_test(s, "a mode change rebases a held straggler's level", test_mode_change_rebases);
    CU_add_test(s, "false alarms left out, close episodes merged", test_false_alarms_and_merge);
    CU_add_test(s, "a slow link found by its probe", test_slow_link);
    CU_add_test(s, "nobody in a run without a straggler", test_nobody);
}
