/* cgroup source: the CPU quota's throttled time from cgroup v1 and v2
 * trees, the controller found in /proc/self/cgroup, missing and odd files. */
#define _GNU_SOURCE
#include "unit_monitor.h"

#include "cgroup_source.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A fresh tree with proc/self/cgroup holding cgroup_text; returns its path. */
static char *tree(const char *cgroup_text)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/unit_cgroup.XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    CU_ASSERT_EQUAL_FATAL(fixture_write(dir, "proc/self/cgroup", cgroup_text), 0);
    return dir;
}

static void open_in(sc_cgroup_source *s, const char *dir)
{
    char proc[256], sys[256];
    fixture_path(proc, sizeof proc, dir, "proc");
    fixture_path(sys, sizeof sys, dir, "sys");
    sc_cgroup_open(s, proc, sys);
}

static void test_v1(void)
{
    /* cpu shares a hierarchy with cpuacct, as systemd mounts it */
    char *dir = tree("4:memory:/job7\n2:cpu,cpuacct:/job7\n0::/\n");
    CU_ASSERT_EQUAL_FATAL(fixture_write(dir, "sys/fs/cgroup/cpu,cpuacct/job7/cpu.stat",
                                        "nr_periods 10\nnr_throttled 4\nthrottled_time 1500000000\n"), 0);
    sc_cgroup_source s;
    open_in(&s, dir);
    CU_ASSERT_TRUE(s.active);
    CU_ASSERT_FALSE(s.v2);
    CU_ASSERT_STRING_EQUAL(s.path, "/job7");
    CU_ASSERT_DOUBLE_EQUAL(sc_cgroup_sample(&s), 0.0, 1e-12); /* nothing since open */
    CU_ASSERT_EQUAL_FATAL(fixture_write(dir, "sys/fs/cgroup/cpu,cpuacct/job7/cpu.stat",
                                        "nr_periods 12\nnr_throttled 6\nthrottled_time 2000000000\n"), 0);
    CU_ASSERT_DOUBLE_EQUAL(sc_cgroup_sample(&s), 0.5, 1e-12);
    /* a counter that goes back (a new cgroup of the same name): no negative time */
    CU_ASSERT_EQUAL_FATAL(fixture_write(dir, "sys/fs/cgroup/cpu,cpuacct/job7/cpu.stat", "throttled_time 7\n"), 0);
    CU_ASSERT_DOUBLE_EQUAL(sc_cgroup_sample(&s), 0.0, 1e-12);
    char text[256] = "";
    sc_cgroup_describe(&s, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "cgroup: active: CPU throttling of /job7"));
    sc_cgroup_close(&s);
    fixture_remove(dir);
}

static void test_v2(void)
{
    char *dir = tree("0::/user.slice/job\n");
    CU_ASSERT_EQUAL_FATAL(fixture_write(dir, "sys/fs/cgroup/user.slice/job/cpu.stat",
                                        "usage_usec 900\nnr_throttled 3\nthrottled_usec 250000\n"), 0);
    sc_cgroup_source s;
    open_in(&s, dir);
    CU_ASSERT_TRUE(s.active);
    CU_ASSERT_TRUE(s.v2);
    CU_ASSERT_EQUAL_FATAL(fixture_write(dir, "sys/fs/cgroup/user.slice/job/cpu.stat",
                                        "usage_usec 990\nnr_throttled 5\nthrottled_usec 1000000\n"), 0);
    CU_ASSERT_DOUBLE_EQUAL(sc_cgroup_sample(&s), 0.75, 1e-12);
    sc_cgroup_close(&s);
    fixture_remove(dir);
}

static void test_missing_and_odd(void)
{
    sc_cgroup_source s;
    char text[256];
    /* a v1 cpu line but no cpu.stat: inactive, said, and samples 0 */
    char *dir = tree("1:cpu:/gone\n");
    open_in(&s, dir);
    CU_ASSERT_FALSE(s.active);
    CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "no readable throttling count for cgroup /gone"));
    CU_ASSERT_DOUBLE_EQUAL(sc_cgroup_sample(&s), 0.0, 0.0);
    text[0] = '\0';
    sc_cgroup_describe(&s, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "cgroup: inactive:"));
    sc_cgroup_close(&s);
    fixture_remove(dir);
    /* cpuset is not cpu; no v2 line either */
    dir = tree("3:cpuset:/x\n");
    open_in(&s, dir);
    CU_ASSERT_FALSE(s.active);
    CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "no cpu controller"));
    fixture_remove(dir);
    /* a cpu.stat without the counter, and one with garbage in it */
    dir = tree("1:cpu:/\n");
    CU_ASSERT_EQUAL_FATAL(fixture_write(dir, "sys/fs/cgroup/cpu/cpu.stat", "nr_periods 0\n"), 0);
    open_in(&s, dir);
    CU_ASSERT_FALSE(s.active);
    CU_ASSERT_EQUAL_FATAL(fixture_write(dir, "sys/fs/cgroup/cpu/cpu.stat", "throttled_time 12x\n"), 0);
    open_in(&s, dir);
    CU_ASSERT_FALSE(s.active);
    fixture_remove(dir);
}

/* The real machine: active or inactive with a reason, never a crash. */
static void test_real(void)
{
    sc_cgroup_source s;
    sc_cgroup_open(&s, NULL, NULL);
    CU_ASSERT_TRUE(s.active || s.why[0] != '\0');
    CU_ASSERT(sc_cgroup_sample(&s) >= 0.0);
    sc_cgroup_close(&s);
}

void unit_monitor_cgroup_suite(void)
{
    CU_pSuite s = CU_add_suite("cgroup source", NULL, NULL);
    CU_add_test(s, "v1: cpu,cpuacct hierarchy, deltas in seconds, a counter going back", test_v1);
    CU_add_test(s, "v2: throttled_usec", test_v2);
    CU_add_test(s, "missing or odd files: inactive with a reason", test_missing_and_odd);
    CU_add_test(s, "the real machine", test_real);
}
