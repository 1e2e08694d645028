/* papi source: STARCOLL_PAPI_EVENTS parsing (with or without PAPI), and on
 * PAPI builds: unknown events dropped alone, auto's fallback to software
 * events, a second event set on one thread refused without harm. */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "unit_monitor.h"

#include "papi_events.h"
#include "papi_source.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

static char msg[2048];

static void parse(const char *text, sc_papi_spec *spec)
{
    msg[0] = '\0';
    sc_papi_parse_spec(text, spec, msg, sizeof msg);
}

static void test_parse_auto_and_none(void)
{
    sc_papi_spec spec;
    parse(NULL, &spec);
    CU_ASSERT_EQUAL(spec.kind, SC_PAPI_SPEC_AUTO);
    parse("", &spec);
    CU_ASSERT_EQUAL(spec.kind, SC_PAPI_SPEC_AUTO);
    parse(" AUTO ", &spec);
    CU_ASSERT_EQUAL(spec.kind, SC_PAPI_SPEC_AUTO);
    parse("none", &spec);
    CU_ASSERT_EQUAL(spec.kind, SC_PAPI_SPEC_NONE);
    CU_ASSERT_EQUAL(spec.n, 0);
    CU_ASSERT_STRING_EQUAL(msg, "");
    parse(" , ,", &spec);
    CU_ASSERT_EQUAL(spec.kind, SC_PAPI_SPEC_NONE);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "names no event"));
}

static void test_parse_list(void)
{
    sc_papi_spec spec;
    parse(" PAPI_TOT_CYC ,perf::TASK-CLOCK,,PAPI_TOT_CYC, X ", &spec);
    CU_ASSERT_EQUAL(spec.kind, SC_PAPI_SPEC_LIST);
    CU_ASSERT_EQUAL_FATAL(spec.n, 3);
    CU_ASSERT_STRING_EQUAL(spec.names[0], "PAPI_TOT_CYC");
    CU_ASSERT_STRING_EQUAL(spec.names[1], "perf::TASK-CLOCK");
    CU_ASSERT_STRING_EQUAL(spec.names[2], "X");
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "'PAPI_TOT_CYC' listed twice"));

    parse("A,B,C,D,E,F", &spec);
    CU_ASSERT_EQUAL(spec.n, SC_PAPI_MAX_EVENTS);
    CU_ASSERT_STRING_EQUAL(spec.names[3], "D");
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "'E' dropped"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "'F' dropped"));

    char longname[300];
    memset(longname, 'Q', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    char text[400];
    snprintf(text, sizeof text, "%s,B", longname);
    parse(text, &spec);
    CU_ASSERT_EQUAL_FATAL(spec.n, 1);
    CU_ASSERT_STRING_EQUAL(spec.names[0], "B");
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "too long"));
}

static void test_source_none(void)
{
    sc_papi_source s;
    msg[0] = '\0';
    sc_papi_open(&s, "none", msg, sizeof msg);
    CU_ASSERT_FALSE(s.active);
    double delta[SC_PAPI_MAX_EVENTS] = {1, 2, 3, 4};
    sc_papi_sample(&s, delta);
    for (int i = 0; i < SC_PAPI_MAX_EVENTS; i++)
        CU_ASSERT_DOUBLE_EQUAL(delta[i], 0.0, 0.0);
    char text[256] = "";
    sc_papi_describe(&s, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "papi: inactive"));
    sc_papi_close(&s);
}

#ifdef HAVE_PAPI

/* PAPI that cannot start at all (no perf_event access) is a legitimate
 * environment: those checks then say so instead of failing. */
static int papi_unusable(const sc_papi_source *s)
{
    if (s->active || !strstr(s->why, "PAPI_library_init"))
        return 0;
    printf("\n    PAPI unusable here (%s): check skipped ", s->why);
    return 1;
}

static void test_unknown_event_dropped_alone(void)
{
    sc_papi_source s;
    msg[0] = '\0';
    sc_papi_open(&s, "perf::TASK-CLOCK,NO_SUCH_EVENT_X", msg, sizeof msg);
    if (papi_unusable(&s))
        return;
    CU_ASSERT_TRUE_FATAL(s.active);
    CU_ASSERT_EQUAL(s.nevents, 1);
    CU_ASSERT_STRING_EQUAL(s.names[0], "perf::TASK-CLOCK");
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "'NO_SUCH_EVENT_X'"));
    CU_ASSERT_PTR_NULL(strstr(msg, "TASK-CLOCK"));
    burn_cpu(0.02);
    double delta[SC_PAPI_MAX_EVENTS];
    sc_papi_sample(&s, delta);
    /* perf::TASK-CLOCK counts nanoseconds of this thread's CPU time. */
    CU_ASSERT(delta[0] >= 0.015e9 && delta[0] < 5e9);
    CU_ASSERT_DOUBLE_EQUAL(delta[1], 0.0, 0.0);
    sc_papi_close(&s);
}

static void test_auto(void)
{
    sc_papi_source s;
    msg[0] = '\0';
    sc_papi_open(&s, "auto", msg, sizeof msg);
    if (papi_unusable(&s))
        return;
    char text[512] = "";
    sc_papi_describe(&s, text, sizeof text);
    printf("\n    %s    ", text);
    CU_ASSERT_TRUE_FATAL(s.active);
    CU_ASSERT(s.nevents >= 1 && s.nevents <= 2);
    const char *const *expected = s.software_only ? sc_papi_auto_software : sc_papi_auto_hardware;
    for (int i = 0; i < s.nevents; i++) {
        int listed = strcmp(s.names[i], expected[0]) == 0 || strcmp(s.names[i], expected[1]) == 0;
        CU_ASSERT_TRUE(listed);
    }
    if (s.software_only)
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "software events only"));
    burn_cpu(0.01);
    double delta[SC_PAPI_MAX_EVENTS];
    sc_papi_sample(&s, delta);
    CU_ASSERT(delta[0] > 0.0);   /* cycles or task-clock nanoseconds */
    sc_papi_close(&s);
}

static void test_only_unknown_events(void)
{
    sc_papi_source s;
    msg[0] = '\0';
    sc_papi_open(&s, "BOGUS_ONE,BOGUS_TWO", msg, sizeof msg);
    if (papi_unusable(&s))
        return;
    CU_ASSERT_FALSE(s.active);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "'BOGUS_ONE'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "'BOGUS_TWO'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "papi: inactive"));
    double delta[SC_PAPI_MAX_EVENTS];
    sc_papi_sample(&s, delta);
    CU_ASSERT_DOUBLE_EQUAL(delta[0], 0.0, 0.0);
    sc_papi_close(&s);
}

/* PAPI runs one event set per thread: a second monitor on the same thread
 * (or an application already counting) leaves the second one inactive. */
static void test_second_event_set_refused(void)
{
    sc_papi_source a, b;
    msg[0] = '\0';
    sc_papi_open(&a, "perf::TASK-CLOCK", msg, sizeof msg);
    if (papi_unusable(&a))
        return;
    CU_ASSERT_TRUE_FATAL(a.active);
    msg[0] = '\0';
    sc_papi_open(&b, "perf::TASK-CLOCK", msg, sizeof msg);
    printf("\n    second event set: %s ", b.active ? "also counts" : b.why);
    if (!b.active)
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "papi: inactive"));
    double delta[SC_PAPI_MAX_EVENTS];
    sc_papi_sample(&b, delta);
    sc_papi_close(&b);
    burn_cpu(0.01);
    sc_papi_sample(&a, delta);
    CU_ASSERT(delta[0] > 0.0);   /* the first is unharmed */
    sc_papi_close(&a);
    /* After closing, counting can start again. */
    sc_papi_open(&b, "perf::TASK-CLOCK", msg, sizeof msg);
    CU_ASSERT_TRUE(b.active);
    sc_papi_close(&b);
}

#else /* !HAVE_PAPI */

static void test_without_papi(void)
{
    sc_papi_source s;
    msg[0] = '\0';
    sc_papi_open(&s, "PAPI_TOT_CYC", msg, sizeof msg);
    CU_ASSERT_FALSE(s.active);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "built without PAPI"));
    sc_papi_close(&s);
    msg[0] = '\0';
    sc_papi_open(&s, "auto", msg, sizeof msg);
    CU_ASSERT_FALSE(s.active);
    CU_ASSERT_STRING_EQUAL(msg, "");   /* nobody asked for counters: no notice */
    sc_papi_close(&s);
}

#endif

void unit_monitor_papi_suite(void)
{
    CU_pSuite s = CU_add_suite("monitor papi source", NULL, NULL);
    CU_add_test(s, "parse auto and none", test_parse_auto_and_none);
    CU_add_test(s, "parse a list", test_parse_list);
    CU_add_test(s, "none: inactive, zeros", test_source_none);
#ifdef HAVE_PAPI
    CU_add_test(s, "unknown event dropped alone", test_unknown_event_dropped_alone);
    CU_add_test(s, "auto: hardware or software events", test_auto);
    CU_add_test(s, "only unknown events: inactive", test_only_unknown_events);
    CU_add_test(s, "second event set on a thread", test_second_event_set_refused);
#else
    CU_add_test(s, "built without PAPI", test_without_papi);
#endif
}
