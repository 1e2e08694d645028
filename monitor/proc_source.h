/* The process's CPU time, run-queue delay and involuntary context switches,
 * from procfs.  CPU and run-queue nanoseconds come from schedstat summed
 * over every thread (<proc>/self/task/<tid>/schedstat), because the library
 * runs an engine thread beside the application's; a thread that exits
 * takes its last partial interval with it.  Without a task directory the
 * same files under <proc>/self/ are read (main thread only); without a
 * usable schedstat, CPU time falls back to utime+stime of <proc>/self/stat
 * (clock ticks).  Involuntary switches: for the live process (root
 * "/proc") from getrusage, which is process-wide and costs one system
 * call where reading every thread's status file costs several
 * microseconds per thread; for any other root (recorded trees) from
 * nonvoluntary_ctxt_switches of each thread's status. */
#ifndef STARCOLL_PROC_SOURCE_H
#define STARCOLL_PROC_SOURCE_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>

/* Threads followed at most; each holds one or two open descriptors.  A
 * thread beyond the limit that is taken in later (when others exit) counts
 * its whole history once, as a thread born since the last sample would. */
#define SC_PROC_MAX_TASKS 128

typedef enum sc_proc_cpu_from {
    SC_PROC_CPU_NONE = 0,
    SC_PROC_CPU_SCHEDSTAT,   /* nanoseconds, summed over threads */
    SC_PROC_CPU_STAT         /* utime+stime in clock ticks, whole process */
} sc_proc_cpu_from;

typedef enum sc_proc_nvcsw_from {
    SC_PROC_NVCSW_NONE = 0,
    SC_PROC_NVCSW_RUSAGE,    /* getrusage(RUSAGE_SELF), live process only */
    SC_PROC_NVCSW_STATUS     /* status of each thread */
} sc_proc_nvcsw_from;

typedef struct sc_proc_task {
    long tid;                /* 0: the <proc>/self pseudo-task */
    int library;             /* one of the library's own threads (sc_proc_library_thread) */
    int fd_schedstat;
    int fd_status;
    uint64_t run_ns, wait_ns, nvcsw;   /* values at the previous sample */
    unsigned seen;           /* scan generation that last listed it */
} sc_proc_task;

typedef struct sc_proc_delta {
    double cpu_s;            /* CPU seconds used since the previous sample */
    double runq_s;           /* seconds runnable but waiting for a CPU, every thread */
    double app_runq_s;       /* the same, the application's threads only (not the library's) */
    double nvcsw;            /* involuntary context switches */
} sc_proc_delta;

typedef struct sc_proc_source {
    int active;              /* at least one of the three signals works */
    sc_proc_cpu_from cpu_from;
    sc_proc_nvcsw_from nvcsw_from;
    int have_runq;
    int per_task;            /* 1: threads listed from <proc>/self/task */
    char why[160];           /* why inactive, or which signal is missing */
    DIR *task_dir;
    int fd_stat;             /* <proc>/self/stat, for the CPU fallback */
    uint64_t stat_ticks;
    uint64_t rusage_nvcsw;   /* ru_nivcsw at the previous sample */
    double tick_s;
    sc_proc_task tasks[SC_PROC_MAX_TASKS];
    size_t ntasks;
    size_t untracked;        /* threads beyond SC_PROC_MAX_TASKS at the last scan */
    unsigned generation;
    char buf[8192];          /* status can be long on machines with many CPUs */
} sc_proc_source;

/* Opens the source under proc_root (NULL: "/proc") and takes the baseline
 * sample.  Never fails: a source that cannot work is left inactive with the
 * reason in why and one notice in msg. */
void sc_proc_open(sc_proc_source *s, const char *proc_root, char *msg, size_t msglen);

/* Fills d with the change since the previous sample (or since open); all
 * zero for signals that are not available. */
void sc_proc_sample(sc_proc_source *s, sc_proc_delta *d);

/* Marks thread tid (this process's, as gettid returns it) as the
 * library's own: its queueing counts in runq_s, not in app_runq_s.  A
 * straggler's engine thread polls for the rounds it is late for and
 * queues most of the time on a busy node, so the whole process's run-queue
 * delay said "cpu" of a rank whose compute was a sleep.  Thread-safe;
 * process-wide; up to SC_PROC_MAX_LIBRARY threads are remembered. */
#define SC_PROC_MAX_LIBRARY 64
void sc_proc_library_thread(long tid);

/* The calling thread's CPU and run-queue seconds so far, from
 * /proc/thread-self/schedstat.  Returns 0, or -1 where that cannot be read. */
int sc_proc_thread_times(double *cpu_s, double *runq_s);
/* Appends one line to buf saying what the source reads, or why not. */
void sc_proc_describe(const sc_proc_source *s, char *buf, size_t len);

void sc_proc_close(sc_proc_source *s);

#endif
