/* InfiniBand port counters: see ib_source.h. */
#define _GNU_SOURCE
#include "ib_source.h"

#include "notice.h"
#include "sysfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SC_IB_MAX_DEVICES 16
#define SC_IB_PORTS_PER_DEVICE 8

/* port_xmit_data and port_rcv_data count 32-bit words. */
#define SC_IB_BYTES_PER_WORD 4.0

/* "100 Gb/sec (4X EDR)" or "2.5 Gb/sec (1X SDR)" -> bytes per second; 0
 * when unknown.  Parsed by hand: strtod would follow the application's
 * locale, where the decimal point may be a comma. */
static double parse_rate(const char *text)
{
    double v = 0.0, scale = 1.0;
    const char *p = text;
    if (*p < '0' || *p > '9')
        return 0.0;
    for (; *p >= '0' && *p <= '9'; p++)
        v = v * 10.0 + (*p - '0');
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++)
            v += (*p - '0') * (scale *= 0.1);
    while (*p == ' ')
        p++;
    if (strncmp(p, "Gb/s", 4) == 0)
        return v * 1e9 / 8.0;
    if (strncmp(p, "Mb/s", 4) == 0)
        return v * 1e6 / 8.0;
    return 0.0;
}

/* The state file reads "4: ACTIVE"; a missing file does not rule a port out. */
static int port_active(const char *root, const char *dev, const char *port)
{
    char state[64];
    if (sc_sysfile_read_once(state, sizeof state, root, "class/infiniband/%s/ports/%s/state", dev, port) != 0)
        return 1;
    return strstr(state, "ACTIVE") != NULL;
}

static void skip(sc_ib_source *s, const char *dev, const char *port, const char *why)
{
    sc_append(s->skipped, sizeof s->skipped, "%s%s:%s (%s)", s->skipped[0] ? ", " : "", dev, port, why);
}

static void open_port(sc_ib_source *s, const char *root, const char *dev, const char *port)
{
    if (!port_active(root, dev, port)) {
        skip(s, dev, port, "not ACTIVE");
        return;
    }
    if (s->nports >= SC_IB_MAX_PORTS) {
        skip(s, dev, port, "too many ports");
        return;
    }
    sc_ib_port *p = &s->ports[s->nports];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%.63s:%.63s", dev, port);
    const char *counters = "class/infiniband/%s/ports/%s/counters/%s";
    p->fd_xmit = sc_sysfile_open(root, counters, dev, port, "port_xmit_data");
    p->fd_rcv = sc_sysfile_open(root, counters, dev, port, "port_rcv_data");
    p->fd_wait = sc_sysfile_open(root, counters, dev, port, "port_xmit_wait");
    if (p->fd_xmit < 0 || p->fd_rcv < 0 || sc_sysfile_read_u64(p->fd_xmit, &p->xmit_words) != 0
        || sc_sysfile_read_u64(p->fd_rcv, &p->rcv_words) != 0) {
        skip(s, dev, port, "data counters missing or malformed");
        sc_sysfile_close(&p->fd_xmit);
        sc_sysfile_close(&p->fd_rcv);
        sc_sysfile_close(&p->fd_wait);
        return;
    }
    if (p->fd_wait >= 0 && sc_sysfile_read_u64(p->fd_wait, &p->wait) != 0)
        sc_sysfile_close(&p->fd_wait);   /* data without congestion waits */
    char rate[64];
    if (sc_sysfile_read_once(rate, sizeof rate, root, "class/infiniband/%s/ports/%s/rate", dev, port) == 0)
        p->speed_Bps = parse_rate(rate);
    s->nports++;
}

void sc_ib_open(sc_ib_source *s, const char *sys_root, char *msg, size_t msglen)
{
    (void)msg;
    (void)msglen;   /* machines without InfiniBand are the common case: no notice */
    memset(s, 0, sizeof *s);
    const char *root = sys_root && *sys_root ? sys_root : "/sys";
    char devs[SC_IB_MAX_DEVICES][SC_SYSFILE_NAME_MAX];
    int ndev = sc_sysfile_list(root, "class/infiniband", devs, SC_IB_MAX_DEVICES, NULL);
    if (ndev < 0) {
        snprintf(s->why, sizeof s->why, "no %.100s/class/infiniband", root);
        return;
    }
    for (int d = 0; d < ndev; d++) {
        char ports[SC_IB_PORTS_PER_DEVICE][SC_SYSFILE_NAME_MAX];
        char rel[SC_SYSFILE_PATH_MAX];
        snprintf(rel, sizeof rel, "class/infiniband/%.63s/ports", devs[d]);
        int np = sc_sysfile_list(root, rel, ports, SC_IB_PORTS_PER_DEVICE, NULL);
        for (int p = 0; p < np; p++)
            open_port(s, root, devs[d], ports[p]);
    }
    s->active = s->nports > 0;
    if (!s->active)
        snprintf(s->why, sizeof s->why, "no ACTIVE port with readable counters under %.80s/class/infiniband", root);
}

static uint64_t advance(uint64_t *prev, uint64_t now)
{
    uint64_t d = now >= *prev ? now - *prev : 0;
    *prev = now;
    return d;
}

void sc_ib_sample(sc_ib_source *s, sc_link_delta *d, double *wait)
{
    memset(d, 0, sizeof *d);
    *wait = 0.0;
    for (int i = 0; i < s->nports; i++) {
        sc_ib_port *p = &s->ports[i];
        if (p->lost)
            continue;
        uint64_t xmit, rcv, w;
        if (sc_sysfile_read_u64(p->fd_xmit, &xmit) != 0 || sc_sysfile_read_u64(p->fd_rcv, &rcv) != 0) {
            p->lost = 1;
            continue;
        }
        uint64_t dx = advance(&p->xmit_words, xmit);
        uint64_t dr = advance(&p->rcv_words, rcv);
        d->tx_bytes += (double)dx * SC_IB_BYTES_PER_WORD;
        d->rx_bytes += (double)dr * SC_IB_BYTES_PER_WORD;
        if (dx + dr > 0)
            d->busy_speed_Bps += p->speed_Bps;
        if (p->speed_Bps > d->max_speed_Bps)
            d->max_speed_Bps = p->speed_Bps;
        if (p->fd_wait >= 0 && sc_sysfile_read_u64(p->fd_wait, &w) == 0)
            *wait += (double)advance(&p->wait, w);
    }
}

void sc_ib_describe(const sc_ib_source *s, char *buf, size_t len)
{
    if (!s->active) {
        sc_append(buf, len, "ib: inactive: %s", s->why);
    } else {
        sc_append(buf, len, "ib: active:");
        for (int i = 0; i < s->nports; i++) {
            const sc_ib_port *p = &s->ports[i];
            sc_append(buf, len, "%s%s ", i ? ", " : " ", p->name);
            if (p->speed_Bps > 0)
                sc_append(buf, len, "%.0f Gb/s", p->speed_Bps * 8.0 / 1e9);
            else
                sc_append(buf, len, "rate unknown");
            if (p->fd_wait < 0)
                sc_append(buf, len, " (no port_xmit_wait)");
            if (p->lost)
                sc_append(buf, len, " (gone)");
        }
    }
    if (s->skipped[0])
        sc_append(buf, len, "; skipped %s", s->skipped);
    sc_append(buf, len, "\n");
}

void sc_ib_close(sc_ib_source *s)
{
    for (int i = 0; i < s->nports; i++) {
        sc_sysfile_close(&s->ports[i].fd_xmit);
        sc_sysfile_close(&s->ports[i].fd_rcv);
        sc_sysfile_close(&s->ports[i].fd_wait);
    }
    s->nports = 0;
    s->active = 0;
}
