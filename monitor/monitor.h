/* The monitor: per-rank signals sampled at step boundaries, filled into the
 * monitor-owned entries of the feature record (sc_features.h).  Plain C,
 * no MPI.  Sources, each optional and each able to say why it is off:
 *   proc  CPU time, run-queue delay, involuntary context switches (procfs)
 *   papi  up to four PAPI counters (STARCOLL_PAPI_EVENTS)
 *   nic   NIC bytes in and out, link speed (sysfs class/net, STARCOLL_NIC)
 *   ib    InfiniBand port bytes and congestion waits (sysfs class/infiniband)
 * Not thread-safe: open, sample and close from one thread (the one that
 * runs the application's steps: PAPI counts that thread). */
#ifndef STARCOLL_MONITOR_H
#define STARCOLL_MONITOR_H

#include "sc_features.h"

#include <stddef.h>

typedef struct sc_monitor_config {
    const char *papi_events;   /* STARCOLL_PAPI_EVENTS; NULL: "auto" */
    const char *nic;           /* STARCOLL_NIC; NULL: "auto" */
    const char *proc_root;     /* NULL: "/proc" (unit tests pass fixture trees) */
    const char *sys_root;      /* NULL: "/sys" */
    int verbose;               /* >= 1: msg also says what each source reads */
} sc_monitor_config;

typedef struct sc_monitor sc_monitor;

/* Bits of sc_monitor_sources(). */
enum sc_monitor_source_bit {
    SC_MONITOR_PROC = 1u << 0,
    SC_MONITOR_PAPI = 1u << 1,
    SC_MONITOR_NIC = 1u << 2,
    SC_MONITOR_IB = 1u << 3
};

/* Opens every source cfg allows (cfg NULL: all defaults) and takes the
 * baseline, so the first sample covers the time since open.  Never NULL
 * unless out of memory.  msg (may be NULL) is cleared, then gets one line
 * per notice ("starcoll monitor: ..."), e.g. a dropped PAPI event. */
sc_monitor *sc_monitor_open(const sc_monitor_config *cfg, char *msg, size_t msglen);

/* Fills feat[SC_F_CPU_S, SC_F_RUNQ_S, SC_F_APP_RUNQ_S, SC_F_NVCSW, SC_F_NIC_TX_BPS,
 * SC_F_NIC_RX_BPS, SC_F_NIC_SPEED_BPS, SC_F_IB_WAIT_PS, SC_F_PAPI0..3] with
 * the change since the previous sample; the *_BPS and *_PS entries are per
 * wall second, wall_s being the step's wall time given by the caller (when
 * it is not positive those rates are 0).  Entries of inactive sources are
 * 0; the other entries of feat are left alone.  m or feat NULL: no-op. */
void sc_monitor_sample(sc_monitor *m, double wall_s, double *feat);

/* Called by each thread the library itself runs (an engine thread), from
 * that thread, at any time, with or without a monitor open: its run-queue
 * delay then counts in SC_F_RUNQ_S only, not in SC_F_APP_RUNQ_S.
 * Thread-safe, unlike the rest of this interface. */
void sc_monitor_library_thread(void);

/* Writes one short line per source into buf ("proc: active: ...",
 * "ib: inactive: no /sys/class/infiniband"); returns the length written. */
int sc_monitor_describe(const sc_monitor *m, char *buf, size_t len);

/* Which sources are active: a mask of sc_monitor_source_bit. */
unsigned sc_monitor_sources(const sc_monitor *m);

void sc_monitor_close(sc_monitor *m);

#endif
