/* CPU throttling of the process's cgroup: how long a CPU quota (cgroup v1
 * cpu.cfs_quota_us, v2 cpu.max) held the process off the CPU.
 *
 * A rank under a quota is throttled in bursts, often while it waits inside
 * MPI, so neither its time outside the library nor, on a busy node where
 * every rank queues, its run-queue delay stands out clearly; its throttled
 * time does, and a healthy rank's is zero.  Read from cpu.stat of the cpu
 * controller's cgroup named in <proc>/self/cgroup: v1 throttled_time
 * (nanoseconds) under <sys>/fs/cgroup/cpu (or cpu,cpuacct), v2
 * throttled_usec under <sys>/fs/cgroup.  Inactive, with a reason, where
 * neither is readable.  Plain C, no MPI. */
#ifndef STARCOLL_CGROUP_SOURCE_H
#define STARCOLL_CGROUP_SOURCE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sc_cgroup_source {
    int active;
    int fd;               /* cpu.stat, kept open and re-read */
    int v2;               /* 1: throttled_usec (v2), 0: throttled_time (v1) */
    uint64_t last;        /* the counter at the previous sample, in its unit */
    char path[160];       /* the cgroup, for the description */
    char why[160];        /* why inactive */
} sc_cgroup_source;

/* proc_root and sys_root: "/proc" and "/sys" (NULL: those), or a fixture
 * tree.  An inactive source says why in `why`, which the monitor's
 * description shows. */
void sc_cgroup_open(sc_cgroup_source *s, const char *proc_root, const char *sys_root);
/* Seconds throttled since the previous sample (0 when inactive). */
double sc_cgroup_sample(sc_cgroup_source *s);
void sc_cgroup_describe(const sc_cgroup_source *s, char *buf, size_t len);
void sc_cgroup_close(sc_cgroup_source *s);
/* The process's cgroup throttled time so far, seconds; -1 when unreadable
 * (opens and closes the files: for a reading now and then). */
double sc_cgroup_throttled_total_s(void);

#endif
