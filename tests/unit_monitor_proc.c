/* proc source: exact values and deltas from the recorded /proc tree, thread
 * comings and goings, malformed and missing files, the real /proc. */
#define _GNU_SOURCE
#include "unit_monitor.h"

#include "proc_source.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Recorded in fixtures/good/proc/self/task (two threads). */
#define TID_MAIN 19142
#define TID_WORKER 19144
#define MAIN_RUN 99020097ull
#define MAIN_WAIT 54536410ull
#define MAIN_NVCSW 21ull
#define WORKER_RUN 98274955ull
#define WORKER_WAIT 1468074ull
#define WORKER_NVCSW 12ull

static char msg[2048];

static const sc_proc_task *task(const sc_proc_source *s, long tid)
{
    for (size_t i = 0; i < s->ntasks; i++)
        if (s->tasks[i].tid == tid)
            return &s->tasks[i];
    return NULL;
}

static void open_in(sc_proc_source *s, const char *root)
{
    char proc[1024];
    fixture_path(proc, sizeof proc, root, "proc");
    msg[0] = '\0';
    sc_proc_open(s, proc, msg, sizeof msg);
}

static void write_schedstat(const char *root, long tid, unsigned long long run, unsigned long long wait)
{
    char rel[128], text[128];
    snprintf(rel, sizeof rel, "proc/self/task/%ld/schedstat", tid);
    snprintf(text, sizeof text, "%llu %llu 40\n", run, wait);
    CU_ASSERT_EQUAL_FATAL(fixture_write(root, rel, text), 0);
}

static void write_status(const char *root, long tid, unsigned long long nvcsw)
{
    char rel[128], text[256];
    snprintf(rel, sizeof rel, "proc/self/task/%ld/status", tid);
    snprintf(text, sizeof text, "Name:\tx\nvoluntary_ctxt_switches:\t999\nnonvoluntary_ctxt_switches:\t%llu\n", nvcsw);
    CU_ASSERT_EQUAL_FATAL(fixture_write(root, rel, text), 0);
}

static void test_recorded_values(void)
{
    const char *root = fixture_copy("good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    sc_proc_source s;
    open_in(&s, root);
    CU_ASSERT_TRUE(s.active);
    CU_ASSERT_TRUE(s.per_task);
    CU_ASSERT_EQUAL(s.cpu_from, SC_PROC_CPU_SCHEDSTAT);
    CU_ASSERT_TRUE(s.have_runq);
    CU_ASSERT_EQUAL(s.nvcsw_from, SC_PROC_NVCSW_STATUS);
    CU_ASSERT_EQUAL(s.ntasks, 2);
    CU_ASSERT_STRING_EQUAL(msg, "");
    const sc_proc_task *m = task(&s, TID_MAIN), *w = task(&s, TID_WORKER);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_EQUAL(m->run_ns, MAIN_RUN);
    CU_ASSERT_EQUAL(m->wait_ns, MAIN_WAIT);
    CU_ASSERT_EQUAL(m->nvcsw, MAIN_NVCSW);
    CU_ASSERT_EQUAL(w->run_ns, WORKER_RUN);
    CU_ASSERT_EQUAL(w->wait_ns, WORKER_WAIT);
    CU_ASSERT_EQUAL(w->nvcsw, WORKER_NVCSW);
    char text[512] = "";
    sc_proc_describe(&s, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "proc: active"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "threads: 2"));
    sc_proc_close(&s);
    fixture_remove(root);
}

static void test_deltas_summed_over_threads(void)
{
    const char *root = fixture_copy("good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    sc_proc_source s;
    open_in(&s, root);
    write_schedstat(root, TID_MAIN, MAIN_RUN + 5000000, MAIN_WAIT + 2000000);
    write_schedstat(root, TID_WORKER, WORKER_RUN + 1000000, WORKER_WAIT + 3000000);
    write_status(root, TID_MAIN, MAIN_NVCSW + 4);
    write_status(root, TID_WORKER, WORKER_NVCSW + 1);
    sc_proc_delta d;
    sc_proc_sample(&s, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.cpu_s, 0.006, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(d.runq_s, 0.005, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(d.app_runq_s, 0.005, 1e-12);   /* no library thread here */
    CU_ASSERT_DOUBLE_EQUAL(d.nvcsw, 5.0, 0.0);
    /* Nothing changed since: all zero. */
    sc_proc_sample(&s, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.cpu_s, 0.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d.runq_s, 0.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d.nvcsw, 0.0, 0.0);
    sc_proc_close(&s);
    fixture_remove(root);
}

/* The library's own thread (an engine thread, registered by tid) queues
 * in runq_s only; the application's threads in both.  Registration is
 * process-wide, so the thread is one no other test's fixture has. */
static void test_library_thread_not_the_applications(void)
{
    const long tid_engine = 20001;
    const char *root = fixture_copy("good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    sc_proc_source s;
    open_in(&s, root);
    sc_proc_library_thread(tid_engine);
    sc_proc_library_thread(0);   /* not a thread: ignored */
    write_schedstat(root, tid_engine, 1000000, 4000000);   /* born since open: all of it is new */
    write_schedstat(root, TID_MAIN, MAIN_RUN + 5000000, MAIN_WAIT + 2000000);
    sc_proc_delta d;
    sc_proc_sample(&s, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.cpu_s, 0.006, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(d.runq_s, 0.006, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(d.app_runq_s, 0.002, 1e-12);
    /* And again: the engine's queueing stays out. */
    write_schedstat(root, tid_engine, 2000000, 9000000);
    write_schedstat(root, TID_WORKER, WORKER_RUN, WORKER_WAIT + 1000000);
    sc_proc_sample(&s, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.runq_s, 0.006, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(d.app_runq_s, 0.001, 1e-12);
    sc_proc_close(&s);
    fixture_remove(root);
}

static void test_threads_come_and_go(void)
{
    const char *root = fixture_copy("good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    sc_proc_source s;
    open_in(&s, root);
    /* The worker exits; a new thread appears and all its time is new. */
    fixture_unlink(root, "proc/self/task/19144");
    write_schedstat(root, 20000, 7000000, 1000000);
    write_status(root, 20000, 4);
    sc_proc_delta d;
    sc_proc_sample(&s, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.cpu_s, 0.007, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(d.runq_s, 0.001, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(d.nvcsw, 4.0, 0.0);
    CU_ASSERT_EQUAL(s.ntasks, 2);
    CU_ASSERT_PTR_NULL(task(&s, TID_WORKER));
    CU_ASSERT_PTR_NOT_NULL(task(&s, 20000));
    sc_proc_close(&s);
    fixture_remove(root);
}

static void test_counter_going_back_counts_nothing(void)
{
    const char *root = fixture_copy("good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    sc_proc_source s;
    open_in(&s, root);
    write_schedstat(root, TID_MAIN, 1000, 1000);   /* tid reused by a new thread */
    sc_proc_delta d;
    sc_proc_sample(&s, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.cpu_s, 0.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d.runq_s, 0.0, 0.0);
    write_schedstat(root, TID_MAIN, 1000 + 3000000, 1000);
    sc_proc_sample(&s, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.cpu_s, 0.003, 1e-12);
    sc_proc_close(&s);
    fixture_remove(root);
}

static void test_malformed_tree_inactive(void)
{
    const char *root = fixture_copy("malformed");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    sc_proc_source s;
    open_in(&s, root);
    CU_ASSERT_FALSE(s.active);
    CU_ASSERT_EQUAL(s.cpu_from, SC_PROC_CPU_NONE);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "starcoll monitor: proc: inactive"));
    sc_proc_delta d = {1, 2, 3, 4};
    sc_proc_sample(&s, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.cpu_s, 0.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d.runq_s, 0.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d.app_runq_s, 0.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d.nvcsw, 0.0, 0.0);
    char text[512] = "";
    sc_proc_describe(&s, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "proc: inactive"));
    sc_proc_close(&s);
    fixture_remove(root);
}

static void test_missing_tree_inactive(void)
{
    sc_proc_source s;
    msg[0] = '\0';
    sc_proc_open(&s, "/nonexistent/starcoll/proc", msg, sizeof msg);
    CU_ASSERT_FALSE(s.active);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "proc: inactive"));
    sc_proc_close(&s);
}

/* Without schedstat, CPU time comes from utime+stime of stat, whose
 * command name may hold blanks and parentheses. */
static void test_stat_fallback(void)
{
    const char *root = fixture_copy("good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT_EQUAL(fixture_write(root, "proc/self/task/19142/schedstat", "garbage\n"), 0);
    CU_ASSERT_EQUAL(fixture_write(root, "proc/self/task/19144/schedstat", ""), 0);
    /* Neighbouring fields (majflt, cmajflt, cutime, cstime) differ so that
     * reading one field off would show. */
    const char *stat = "19142 (a) (b c)) S 1 1 1 0 -1 4194304 110 1 2 3 19 0 4 5 20 0 2 0 54445\n";
    CU_ASSERT_EQUAL(fixture_write(root, "proc/self/stat", stat), 0);
    sc_proc_source s;
    open_in(&s, root);
    CU_ASSERT_TRUE(s.active);
    CU_ASSERT_EQUAL(s.cpu_from, SC_PROC_CPU_STAT);
    CU_ASSERT_FALSE(s.have_runq);
    CU_ASSERT_EQUAL(s.nvcsw_from, SC_PROC_NVCSW_STATUS);
    CU_ASSERT_EQUAL(s.stat_ticks, 19);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "no run-queue delay"));
    stat = "19142 (a) (b c)) S 1 1 1 0 -1 4194304 110 1 2 3 29 5 4 5 20 0 2 0 54445\n";
    CU_ASSERT_EQUAL(fixture_write(root, "proc/self/stat", stat), 0);
    write_status(root, TID_WORKER, WORKER_NVCSW + 3);
    sc_proc_delta d;
    sc_proc_sample(&s, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.cpu_s, 15.0 / (double)sysconf(_SC_CLK_TCK), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(d.runq_s, 0.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d.nvcsw, 3.0, 0.0);
    sc_proc_close(&s);
    fixture_remove(root);
}

static void test_no_task_directory(void)
{
    const char *root = fixture_copy("good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    fixture_unlink(root, "proc/self/task");
    sc_proc_source s;
    open_in(&s, root);
    CU_ASSERT_TRUE(s.active);
    CU_ASSERT_FALSE(s.per_task);
    CU_ASSERT_EQUAL(s.tasks[0].run_ns, MAIN_RUN);
    CU_ASSERT_EQUAL(s.tasks[0].nvcsw, MAIN_NVCSW);
    CU_ASSERT_EQUAL(fixture_write(root, "proc/self/schedstat", "99520097 54536410 23\n"), 0);
    sc_proc_delta d;
    sc_proc_sample(&s, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.cpu_s, 0.0005, 1e-12);
    char text[512] = "";
    sc_proc_describe(&s, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "main thread only"));
    sc_proc_close(&s);
    fixture_remove(root);
}

/* One thread's file broken: the others still count. */
static void test_one_thread_malformed(void)
{
    const char *root = fixture_copy("good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT_EQUAL(fixture_write(root, "proc/self/task/19144/schedstat", "12 junk\n"), 0);
    CU_ASSERT_EQUAL(fixture_write(root, "proc/self/task/19144/status", "Name:\tx\nnonvoluntary_ctxt_switches:\tmany\n"), 0);
    sc_proc_source s;
    open_in(&s, root);
    CU_ASSERT_TRUE(s.have_runq);
    CU_ASSERT_EQUAL(s.nvcsw_from, SC_PROC_NVCSW_STATUS);
    write_schedstat(root, TID_MAIN, MAIN_RUN + 2000000, MAIN_WAIT);
    write_status(root, TID_MAIN, MAIN_NVCSW + 1);
    sc_proc_delta d;
    sc_proc_sample(&s, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.cpu_s, 0.002, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(d.nvcsw, 1.0, 0.0);
    sc_proc_close(&s);
    fixture_remove(root);
}

static void test_real_proc(void)
{
    sc_proc_source s;
    msg[0] = '\0';
    sc_proc_open(&s, NULL, msg, sizeof msg);
    CU_ASSERT_TRUE_FATAL(s.active);
    CU_ASSERT_TRUE(s.per_task);
    CU_ASSERT_TRUE(task(&s, (long)getpid()) != NULL);
    CU_ASSERT_EQUAL(s.cpu_from, SC_PROC_CPU_SCHEDSTAT);
    CU_ASSERT_EQUAL(s.nvcsw_from, SC_PROC_NVCSW_RUSAGE);
    burn_cpu(0.05);
    sc_proc_delta d;
    sc_proc_sample(&s, &d);
    printf("\n    real /proc: %.4f s CPU, %.6f s run-queue, %.0f involuntary switches over a 0.05 s burn ",
           d.cpu_s, d.runq_s, d.nvcsw);
    CU_ASSERT(d.cpu_s >= 0.04 && d.cpu_s < 5.0);
    CU_ASSERT(d.runq_s >= 0.0 && d.runq_s < 60.0);
    sc_proc_close(&s);
}

void unit_monitor_proc_suite(void)
{
    CU_pSuite s = CU_add_suite("monitor proc source", NULL, NULL);
    CU_add_test(s, "recorded values", test_recorded_values);
    CU_add_test(s, "deltas summed over threads", test_deltas_summed_over_threads);
    CU_add_test(s, "threads come and go", test_threads_come_and_go);
    CU_add_test(s, "the library's thread is not the application's", test_library_thread_not_the_applications);
    CU_add_test(s, "counter going back counts nothing", test_counter_going_back_counts_nothing);
    CU_add_test(s, "malformed tree: inactive, zeros", test_malformed_tree_inactive);
    CU_add_test(s, "missing tree: inactive", test_missing_tree_inactive);
    CU_add_test(s, "stat fallback for CPU", test_stat_fallback);
    CU_add_test(s, "no task directory: main thread", test_no_task_directory);
    CU_add_test(s, "one thread malformed", test_one_thread_malformed);
    CU_add_test(s, "real /proc", test_real_proc);
}
