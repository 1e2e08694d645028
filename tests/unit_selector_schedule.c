/* STARCOLL_SCHEDULE's parser and its decisions (selector/schedule.c). */
#include <CUnit/CUnit.h>
#include <string.h>
#include "schedule.h"

static void test_schedule_decisions(void)
{
    char msg[256];
    sc_schedule *s = sc_schedule_parse("10:quorum:6,20:groups:7+3,25:sync,30:quorum", 8, msg, sizeof msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_STRING_EQUAL(msg, "");
    CU_ASSERT_EQUAL(sc_schedule_length(s), 4);
    int parent[8];
    sc_decision d;
    memset(&d, 0, sizeof d);
    d.parent = parent;
    CU_ASSERT_EQUAL(sc_schedule_due(s, 9, &d), 0);   /* not yet */
    CU_ASSERT_EQUAL(sc_schedule_due(s, 10, &d), 1);
    CU_ASSERT_EQUAL(d.mode, SC_MODE_QUORUM);
    CU_ASSERT_EQUAL(d.quorum_k, 6);
    CU_ASSERT_EQUAL(sc_schedule_due(s, 11, &d), 0);   /* taken once */
    CU_ASSERT_EQUAL(sc_schedule_due(s, 20, &d), 1);
    CU_ASSERT_EQUAL(d.mode, SC_MODE_GROUPS);
    CU_ASSERT_EQUAL(d.quorum_k, 6);   /* the ring: 8 ranks less 2 children */
    /* children get parents round-robin over the members in rank order */
    CU_ASSERT_EQUAL(parent[3], 0);
    CU_ASSERT_EQUAL(parent[7], 1);
    for (int r = 0; r < 8; r++)
        if (r != 3 && r != 7) CU_ASSERT_EQUAL(parent[r], -1);
    /* a late look takes the latest entry due, skipping the one passed by */
    CU_ASSERT_EQUAL(sc_schedule_due(s, 40, &d), 1);
    CU_ASSERT_EQUAL(d.mode, SC_MODE_QUORUM);
    CU_ASSERT_EQUAL(d.quorum_k, 7);   /* no K: n-1 */
    for (int r = 0; r < 8; r++) CU_ASSERT_EQUAL(parent[r], -1);
    CU_ASSERT_EQUAL(sc_schedule_due(s, 1000, &d), 0);   /* spent */
    sc_schedule_free(s);
}

static void test_schedule_bad_text(void)
{
    const char *bad[] = {
        "",                   /* empty */
        "10",                 /* no mode */
        "10:fast",            /* unknown mode */
        "10:auto",            /* auto is what the schedule replaces */
        "10:quorum:9",        /* k above n */
        "10:quorum:0",
        "10:groups",          /* groups without children */
        "10:groups:8",        /* no rank 8 */
        "10:groups:1+2+3+4+5+6+7",   /* a ring of one */
        "10:groups:3+3",      /* the same child twice */
        "10:sync:2",          /* sync takes no argument */
        "20:sync,10:hier",    /* steps must rise */
        "-1:sync",
        "10:quorum:6:1",      /* too many fields */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char msg[256] = "x";
        sc_schedule *s = sc_schedule_parse(bad[i], 8, msg, sizeof msg);
        CU_ASSERT_PTR_NULL(s);
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "STARCOLL_SCHEDULE"));   /* one line naming the variable */
        CU_ASSERT_PTR_NULL(strchr(msg, '\n'));
        sc_schedule_free(s);
    }
}

void register_schedule_suite(void)
{
    CU_pSuite s = CU_add_suite("schedule", NULL, NULL);
    CU_add_test(s, "decisions at their steps", test_schedule_decisions);
    CU_add_test(s, "bad texts: one line, no schedule", test_schedule_bad_text);
}
