/* CPU time, run-queue delay and involuntary context switches from procfs:
 * see proc_source.h. */
#define _GNU_SOURCE
#include "proc_source.h"

#include "notice.h"
#include "sysfile.h"

#include <ctype.h>
#include <stdatomic.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The library's own threads, process-wide: set from any thread, read by
 * the sampling one.  A slot is published by its tid store after the count
 * was taken, so a reader sees 0 (not yet) or the tid, never garbage. */
static _Atomic long library_tids[SC_PROC_MAX_LIBRARY];
static _Atomic int library_count;

void sc_proc_library_thread(long tid)
{
    if (tid <= 0)
        return;
    int i = atomic_fetch_add(&library_count, 1);
    if (i < SC_PROC_MAX_LIBRARY)
        atomic_store(&library_tids[i], tid);
}

static int is_library_thread(long tid)
{
    int n = atomic_load(&library_count);
    if (n > SC_PROC_MAX_LIBRARY)
        n = SC_PROC_MAX_LIBRARY;
    for (int i = 0; i < n; i++)
        if (atomic_load(&library_tids[i]) == tid)
            return 1;
    return 0;
}

/* Sums of the per-thread changes found by one scan. */
typedef struct scan_totals {
    uint64_t run_ns, wait_ns, nvcsw;
    uint64_t app_wait_ns;    /* wait_ns of the threads not the library's */
    int schedstat_ok;        /* threads whose schedstat parsed */
    int status_ok;           /* threads whose status parsed */
} scan_totals;

static int parse_schedstat(const char *text, uint64_t *run_ns, uint64_t *wait_ns)
{
    uint64_t v[3];
    /* "run_ns wait_ns timeslices"; the third field is not needed. */
    if (sc_parse_u64_fields(text, v, 3) < 2)
        return -1;
    *run_ns = v[0];
    *wait_ns = v[1];
    return 0;
}

static int parse_nvcsw(const char *text, uint64_t *out)
{
    static const char key[] = "nonvoluntary_ctxt_switches:";
    for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
        if (p != text && p[-1] != '\n')
            continue;
        p += sizeof key - 1;
        char token[32];
        size_t n = strcspn(p, "\n");
        if (n >= sizeof token)
            return -1;
        memcpy(token, p, n);
        token[n] = '\0';
        return sc_parse_u64(token, out);
    }
    return -1;
}

/* utime + stime (fields 14 and 15) of /proc/<pid>/stat, in clock ticks.
 * Fields are counted after the last ')' because the command name in
 * field 2 may itself hold blanks and parentheses. */
static int parse_stat_ticks(const char *text, uint64_t *ticks)
{
    const char *p = strrchr(text, ')');
    if (!p)
        return -1;
    p++;
    uint64_t v[2];
    for (int field = 3; field <= 15; field++) {
        while (*p == ' ')
            p++;
        if (*p == '\0' || *p == '\n')
            return -1;
        if (field >= 14) {
            char *end;
            if (!isdigit((unsigned char)*p))
                return -1;
            errno = 0;
            unsigned long long x = strtoull(p, &end, 10);
            if (errno == ERANGE || (*end != ' ' && *end != '\n' && *end != '\0'))
                return -1;
            v[field - 14] = (uint64_t)x;
            p = end;
        } else {
            p += strcspn(p, " \n");
        }
    }
    *ticks = v[0] + v[1];
    return 0;
}

/* A counter that went backwards belongs to a new thread that reused the
 * tid, or was reset: count nothing rather than a wrapped huge value. */
static uint64_t advance(uint64_t *prev, uint64_t now)
{
    uint64_t d = now >= *prev ? now - *prev : 0;
    *prev = now;
    return d;
}

static void read_task(sc_proc_source *s, sc_proc_task *t, scan_totals *acc)
{
    uint64_t run, wait, nv;
    if (t->fd_schedstat >= 0 && sc_sysfile_reread(t->fd_schedstat, s->buf, sizeof s->buf) > 0
        && parse_schedstat(s->buf, &run, &wait) == 0) {
        acc->run_ns += advance(&t->run_ns, run);
        uint64_t waited = advance(&t->wait_ns, wait);
        acc->wait_ns += waited;
        /* A thread is looked up until it is found to be the library's: an
         * engine thread registers just after it starts. */
        if (!t->library && t->tid > 0)
            t->library = is_library_thread(t->tid);
        if (!t->library)
            acc->app_wait_ns += waited;
        acc->schedstat_ok++;
    }
    if (t->fd_status >= 0 && sc_sysfile_reread(t->fd_status, s->buf, sizeof s->buf) > 0
        && parse_nvcsw(s->buf, &nv) == 0) {
        acc->nvcsw += advance(&t->nvcsw, nv);
        acc->status_ok++;
    }
}

static void close_task(sc_proc_task *t)
{
    sc_sysfile_close(&t->fd_schedstat);
    sc_sysfile_close(&t->fd_status);
}

static long parse_tid(const char *name)
{
    long tid = 0;
    if (!*name)
        return -1;
    for (const char *c = name; *c; c++) {
        if (!isdigit((unsigned char)*c) || tid > 100000000L)
            return -1;
        tid = tid * 10 + (*c - '0');
    }
    return tid > 0 ? tid : -1;
}

static sc_proc_task *find_task(sc_proc_source *s, long tid)
{
    for (size_t i = 0; i < s->ntasks; i++)
        if (s->tasks[i].tid == tid)
            return &s->tasks[i];
    return NULL;
}

/* A thread first seen now was born since the previous scan (or this is the
 * baseline at open): its counters start from zero. */
static sc_proc_task *add_task(sc_proc_source *s, long tid, int want_schedstat, int want_status)
{
    sc_proc_task *t = &s->tasks[s->ntasks];
    char rel[64];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->fd_schedstat = t->fd_status = -1;
    int dfd = dirfd(s->task_dir);
    if (want_schedstat) {
        snprintf(rel, sizeof rel, "%ld/schedstat", tid);
        t->fd_schedstat = openat(dfd, rel, O_RDONLY | O_CLOEXEC);
    }
    if (want_status) {
        snprintf(rel, sizeof rel, "%ld/status", tid);
        t->fd_status = openat(dfd, rel, O_RDONLY | O_CLOEXEC);
    }
    s->ntasks++;
    return t;
}

/* Reads every thread listed now; forgets threads that have gone. */
static void scan_tasks(sc_proc_source *s, int want_schedstat, int want_status, scan_totals *acc)
{
    memset(acc, 0, sizeof *acc);
    if (!s->per_task) {
        read_task(s, &s->tasks[0], acc);
        return;
    }
    unsigned gen = ++s->generation;
    s->untracked = 0;
    rewinddir(s->task_dir);
    struct dirent *e;
    while ((e = readdir(s->task_dir)) != NULL) {
        long tid = parse_tid(e->d_name);
        if (tid < 0)
            continue;
        sc_proc_task *t = find_task(s, tid);
        if (!t) {
            if (s->ntasks >= SC_PROC_MAX_TASKS) {
                s->untracked++;
                continue;
            }
            t = add_task(s, tid, want_schedstat, want_status);
        }
        t->seen = gen;
        read_task(s, t, acc);
    }
    size_t kept = 0;
    for (size_t i = 0; i < s->ntasks; i++) {
        if (s->tasks[i].seen == gen)
            s->tasks[kept++] = s->tasks[i];
        else
            close_task(&s->tasks[i]);
    }
    s->ntasks = kept;
}

static int read_stat_ticks(sc_proc_source *s, uint64_t *ticks)
{
    if (sc_sysfile_reread(s->fd_stat, s->buf, sizeof s->buf) <= 0)
        return -1;
    return parse_stat_ticks(s->buf, ticks);
}

/* Keeps only the descriptors of the signals that worked at open. */
static void drop_unused_fds(sc_proc_source *s)
{
    for (size_t i = 0; i < s->ntasks; i++) {
        if (!s->have_runq)
            sc_sysfile_close(&s->tasks[i].fd_schedstat);
        if (s->nvcsw_from != SC_PROC_NVCSW_STATUS)
            sc_sysfile_close(&s->tasks[i].fd_status);
    }
}

/* The root is this process's own /proc: system calls can stand in for files. */
static int is_live_proc(const char *root)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    return n == 5 && strncmp(root, "/proc", 5) == 0;
}

static int read_rusage_nvcsw(uint64_t *nvcsw)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0 || ru.ru_nivcsw < 0)
        return -1;
    *nvcsw = (uint64_t)ru.ru_nivcsw;
    return 0;
}

void sc_proc_open(sc_proc_source *s, const char *proc_root, char *msg, size_t msglen)
{
    memset(s, 0, sizeof *s);
    s->fd_stat = -1;
    long hz = sysconf(_SC_CLK_TCK);
    s->tick_s = 1.0 / (double)(hz > 0 ? hz : 100);
    const char *root = proc_root && *proc_root ? proc_root : "/proc";
    int live = is_live_proc(root);

    char path[SC_SYSFILE_PATH_MAX];
    if (sc_sysfile_path(path, root, "self/task") == 0)
        s->task_dir = opendir(path);
    scan_totals acc;
    if (s->task_dir) {
        s->per_task = 1;
        scan_tasks(s, 1, !live, &acc);
        if (s->ntasks == 0) {        /* an empty task directory: not usable */
            closedir(s->task_dir);
            s->task_dir = NULL;
            s->per_task = 0;
        }
    }
    if (!s->per_task) {
        sc_proc_task *t = &s->tasks[0];
        t->tid = 0;
        t->fd_schedstat = sc_sysfile_open(root, "self/schedstat");
        t->fd_status = live ? -1 : sc_sysfile_open(root, "self/status");
        s->ntasks = 1;
        scan_tasks(s, 1, !live, &acc);
    }
    s->have_runq = acc.schedstat_ok > 0;
    if (live) {
        if (read_rusage_nvcsw(&s->rusage_nvcsw) == 0)
            s->nvcsw_from = SC_PROC_NVCSW_RUSAGE;
    } else if (acc.status_ok > 0) {
        s->nvcsw_from = SC_PROC_NVCSW_STATUS;
    }
    drop_unused_fds(s);

    if (s->have_runq) {
        s->cpu_from = SC_PROC_CPU_SCHEDSTAT;
    } else {
        s->fd_stat = sc_sysfile_open(root, "self/stat");
        if (s->fd_stat >= 0 && read_stat_ticks(s, &s->stat_ticks) == 0)
            s->cpu_from = SC_PROC_CPU_STAT;
        else
            sc_sysfile_close(&s->fd_stat);
    }
    int have_nvcsw = s->nvcsw_from != SC_PROC_NVCSW_NONE;
    s->active = s->cpu_from != SC_PROC_CPU_NONE || have_nvcsw;

    if (!s->active) {
        snprintf(s->why, sizeof s->why,
                 "no readable, well-formed schedstat, status or stat under %.80s/self", root);
        sc_notice(msg, msglen, "proc: inactive: %s", s->why);
    } else if (!s->have_runq || !have_nvcsw) {
        snprintf(s->why, sizeof s->why, "%s%s%s",
                 s->have_runq ? "" : "no run-queue delay (schedstat unreadable or malformed)",
                 !s->have_runq && !have_nvcsw ? "; " : "",
                 have_nvcsw      ? ""
                 : live          ? "no involuntary switches (getrusage failed)"
                                 : "no involuntary switches (status unreadable or malformed)");
        sc_notice(msg, msglen, "proc: %s", s->why);
    }
    if (!s->active)
        sc_proc_close(s);
}

void sc_proc_sample(sc_proc_source *s, sc_proc_delta *d)
{
    memset(d, 0, sizeof *d);
    if (!s->active)
        return;
    int per_task_status = s->nvcsw_from == SC_PROC_NVCSW_STATUS;
    if (s->have_runq || per_task_status) {
        scan_totals acc;
        scan_tasks(s, s->have_runq, per_task_status, &acc);
        if (s->cpu_from == SC_PROC_CPU_SCHEDSTAT)
            d->cpu_s = (double)acc.run_ns * 1e-9;
        if (s->have_runq) {
            d->runq_s = (double)acc.wait_ns * 1e-9;
            d->app_runq_s = (double)acc.app_wait_ns * 1e-9;
        }
        if (per_task_status)
            d->nvcsw = (double)acc.nvcsw;
    }
    uint64_t now;
    if (s->nvcsw_from == SC_PROC_NVCSW_RUSAGE && read_rusage_nvcsw(&now) == 0)
        d->nvcsw = (double)advance(&s->rusage_nvcsw, now);
    if (s->cpu_from == SC_PROC_CPU_STAT && read_stat_ticks(s, &now) == 0)
        d->cpu_s = (double)advance(&s->stat_ticks, now) * s->tick_s;
}

void sc_proc_describe(const sc_proc_source *s, char *buf, size_t len)
{
    if (!s->active) {
        sc_append(buf, len, "proc: inactive: %s\n", s->why);
        return;
    }
    sc_append(buf, len, "proc: active: cpu time from %s",
              s->cpu_from == SC_PROC_CPU_SCHEDSTAT ? "schedstat (ns)"
              : s->cpu_from == SC_PROC_CPU_STAT    ? "stat (clock ticks)"
                                                   : "nowhere");
    if (s->have_runq)
        sc_append(buf, len, ", run-queue delay from schedstat");
    if (s->nvcsw_from == SC_PROC_NVCSW_RUSAGE)
        sc_append(buf, len, ", involuntary switches from getrusage");
    else if (s->nvcsw_from == SC_PROC_NVCSW_STATUS)
        sc_append(buf, len, ", involuntary switches from status");
    if (s->per_task)
        sc_append(buf, len, "; threads: %zu", s->ntasks);
    else
        sc_append(buf, len, "; main thread only (no task directory)");
    if (s->untracked)
        sc_append(buf, len, ", %zu more not followed", s->untracked);
    if (s->why[0])
        sc_append(buf, len, "; %s", s->why);
    sc_append(buf, len, "\n");
}

void sc_proc_close(sc_proc_source *s)
{
    for (size_t i = 0; i < s->ntasks; i++)
        close_task(&s->tasks[i]);
    s->ntasks = 0;
    sc_sysfile_close(&s->fd_stat);
    if (s->task_dir) {
        closedir(s->task_dir);
        s->task_dir = NULL;
    }
    s->active = 0;
}

int sc_proc_thread_times(double *cpu_s, double *runq_s)
{
    char buf[256];
    uint64_t run = 0, wait = 0;
    int fd = sc_sysfile_open("/proc", "thread-self/schedstat");
    if (fd < 0) return -1;
    int ok = sc_sysfile_reread(fd, buf, sizeof buf) > 0 && parse_schedstat(buf, &run, &wait) == 0;
    sc_sysfile_close(&fd);
    if (!ok) return -1;
    *cpu_s = (double)run * 1e-9;
    *runq_s = (double)wait * 1e-9;
    return 0;
}
