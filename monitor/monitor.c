/* The monitor: combines the sources into the feature record.  See monitor.h. */
#define _GNU_SOURCE   /* syscall(SYS_gettid) */
#include "monitor.h"

#include "cgroup_source.h"
#include "ib_source.h"
#include "nic_source.h"
#include "notice.h"
#include "papi_source.h"
#include "proc_source.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct sc_monitor {
    sc_proc_source proc;
    sc_papi_source papi;
    sc_nic_source nic;
    sc_ib_source ib;
    sc_cgroup_source cgroup;
};

/* Repeats the description in msg, one notice per line. */
static void notice_description(const sc_monitor *m, char *msg, size_t msglen)
{
    char text[2048];
    sc_monitor_describe(m, text, sizeof text);
    for (char *line = text, *end; *line; line = end) {
        end = line + strcspn(line, "\n");
        if (*end)
            *end++ = '\0';
        sc_notice(msg, msglen, "%s", line);
    }
}

sc_monitor *sc_monitor_open(const sc_monitor_config *cfg, char *msg, size_t msglen)
{
    static const sc_monitor_config defaults = {NULL, NULL, NULL, NULL, 0};
    if (!cfg)
        cfg = &defaults;
    if (msg && msglen)
        msg[0] = '\0';
    sc_monitor *m = calloc(1, sizeof *m);
    if (!m) {
        sc_notice(msg, msglen, "out of memory; no monitor signals");
        return NULL;
    }
    /* InfiniBand first: when its ports count, NIC auto leaves IPoIB out. */
    sc_ib_open(&m->ib, cfg->sys_root, msg, msglen);
    sc_nic_open(&m->nic, cfg->nic, cfg->sys_root, m->ib.active, msg, msglen);
    sc_proc_open(&m->proc, cfg->proc_root, msg, msglen);
    sc_cgroup_open(&m->cgroup, cfg->proc_root, cfg->sys_root);
    sc_papi_open(&m->papi, cfg->papi_events, msg, msglen);
    if (cfg->verbose >= 1)
        notice_description(m, msg, msglen);
    return m;
}

void sc_monitor_sample(sc_monitor *m, double wall_s, double *feat)
{
    if (!m || !feat)
        return;
    sc_proc_delta proc;
    sc_link_delta nic, ib;
    double ib_wait;
    double papi[SC_PAPI_MAX_EVENTS];
    sc_proc_sample(&m->proc, &proc);
    sc_nic_sample(&m->nic, &nic);
    sc_ib_sample(&m->ib, &ib, &ib_wait);
    sc_papi_sample(&m->papi, papi);

    double per_s = (isfinite(wall_s) && wall_s > 0.0) ? 1.0 / wall_s : 0.0;
    feat[SC_F_CPU_S] = proc.cpu_s;
    feat[SC_F_RUNQ_S] = proc.runq_s;
    feat[SC_F_APP_RUNQ_S] = proc.app_runq_s;
    feat[SC_F_NVCSW] = proc.nvcsw;
    feat[SC_F_THROTTLED_S] = sc_cgroup_sample(&m->cgroup);
    /* InfiniBand HCAs are NICs too: their bytes join the NIC rates. */
    feat[SC_F_NIC_TX_BPS] = (nic.tx_bytes + ib.tx_bytes) * per_s;
    feat[SC_F_NIC_RX_BPS] = (nic.rx_bytes + ib.rx_bytes) * per_s;
    feat[SC_F_NIC_SPEED_BPS] = sc_link_speed(&nic, &ib);
    feat[SC_F_IB_WAIT_PS] = ib_wait * per_s;
    for (int i = 0; i < SC_PAPI_MAX_EVENTS; i++)
        feat[SC_F_PAPI0 + i] = papi[i];
}

void sc_monitor_library_thread(void)
{
    sc_proc_library_thread((long)syscall(SYS_gettid));
}

int sc_monitor_describe(const sc_monitor *m, char *buf, size_t len)
{
    if (!buf || len == 0)
        return 0;
    buf[0] = '\0';
    if (!m) {
        sc_append(buf, len, "monitor: not open\n");
        return (int)strlen(buf);
    }
    sc_proc_describe(&m->proc, buf, len);
    sc_cgroup_describe(&m->cgroup, buf, len);
    sc_papi_describe(&m->papi, buf, len);
    sc_nic_describe(&m->nic, buf, len);
    sc_ib_describe(&m->ib, buf, len);
    return (int)strlen(buf);
}

unsigned sc_monitor_sources(const sc_monitor *m)
{
    if (!m)
        return 0;
    return (m->proc.active ? SC_MONITOR_PROC : 0u) | (m->papi.active ? SC_MONITOR_PAPI : 0u)
           | (m->nic.active ? SC_MONITOR_NIC : 0u) | (m->ib.active ? SC_MONITOR_IB : 0u);
}

void sc_monitor_close(sc_monitor *m)
{
    if (!m)
        return;
    sc_papi_close(&m->papi);
    sc_proc_close(&m->proc);
    sc_cgroup_close(&m->cgroup);
    sc_nic_close(&m->nic);
    sc_ib_close(&m->ib);
    free(m);
}
