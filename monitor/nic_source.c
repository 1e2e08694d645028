/* NIC byte counters and link speed: see nic_source.h. */
#define _GNU_SOURCE
#include "nic_source.h"

#include "notice.h"
#include "sysfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ARPHRD_* values of <sys>/class/net/<if>/type that matter here. */
#define SC_ARPHRD_INFINIBAND 32
#define SC_ARPHRD_LOOPBACK 772

/* Directory entries auto looks at before choosing at most SC_NIC_MAX. */
#define SC_NIC_SCAN_MAX 512

static int valid_ifname(const char *name)
{
    size_t n = strlen(name);
    return n > 0 && n < SC_NIC_NAME_MAX && !strchr(name, '/') && strcmp(name, ".") != 0
           && strcmp(name, "..") != 0;
}

/* Speed in bytes per second from "speed" (Mb/s), 0 when unknown. */
static double read_speed(const char *root, const char *name)
{
    char text[64];
    int64_t mbps;
    if (sc_sysfile_read_once(text, sizeof text, root, "class/net/%s/speed", name) != 0
        || sc_parse_i64(text, &mbps) != 0 || mbps <= 0)
        return 0.0;
    return (double)mbps * 1e6 / 8.0;
}

/* Opens the byte counters of one interface and reads their baseline.
 * Returns 0, or -1 with the reason in why. */
static int open_link(sc_nic_source *s, const char *root, const char *name, const char **why)
{
    sc_nic_link *l = &s->links[s->nlinks];
    memset(l, 0, sizeof *l);
    snprintf(l->name, sizeof l->name, "%s", name);
    l->fd_tx = sc_sysfile_open(root, "class/net/%s/statistics/tx_bytes", name);
    l->fd_rx = sc_sysfile_open(root, "class/net/%s/statistics/rx_bytes", name);
    if (l->fd_tx < 0 || l->fd_rx < 0) {
        *why = "no statistics/tx_bytes or rx_bytes";
    } else if (sc_sysfile_read_u64(l->fd_tx, &l->tx) != 0 || sc_sysfile_read_u64(l->fd_rx, &l->rx) != 0) {
        *why = "byte counters are not numbers";
    } else {
        l->speed_Bps = read_speed(root, name);
        s->nlinks++;
        return 0;
    }
    sc_sysfile_close(&l->fd_tx);
    sc_sysfile_close(&l->fd_rx);
    return -1;
}

static int link_listed(const sc_nic_source *s, const char *name)
{
    for (int i = 0; i < s->nlinks; i++)
        if (strcmp(s->links[i].name, name) == 0)
            return 1;
    return 0;
}

static void open_list(sc_nic_source *s, const char *spec, const char *root, char *msg, size_t msglen)
{
    const char *p = spec;
    for (;;) {
        size_t len = strcspn(p, ",");
        char name[64];
        while (len > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            len--;
        }
        size_t n = len;
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\n'))
            n--;
        if (n >= sizeof name)
            n = sizeof name - 1;
        memcpy(name, p, n);
        name[n] = '\0';
        const char *why = NULL;
        if (n == 0)
            ;   /* empty item */
        else if (!valid_ifname(name))
            sc_notice(msg, msglen, "STARCOLL_NIC: '%s' is not an interface name; ignored", name);
        else if (link_listed(s, name))
            ;   /* named twice: follow once */
        else if (s->nlinks >= SC_NIC_MAX)
            sc_notice(msg, msglen, "STARCOLL_NIC: at most %d interfaces; '%s' ignored", SC_NIC_MAX, name);
        else if (open_link(s, root, name, &why) != 0)
            sc_notice(msg, msglen, "STARCOLL_NIC: interface '%s' unusable under %s/class/net (%s); ignored",
                      name, root, why);
        p += len;
        if (*p == '\0')
            break;
        p++;
    }
}

/* operstate up or unknown (virtual links often say unknown), or no
 * operstate file at all: worth following. */
static int maybe_up(const char *root, const char *name)
{
    char state[32];
    if (sc_sysfile_read_once(state, sizeof state, root, "class/net/%s/operstate", name) != 0)
        return 1;
    return strcmp(state, "up") == 0 || strcmp(state, "unknown") == 0;
}

static int link_type(const char *root, const char *name)
{
    char text[32];
    int64_t type;
    if (sc_sysfile_read_once(text, sizeof text, root, "class/net/%s/type", name) != 0
        || sc_parse_i64(text, &type) != 0)
        return -1;
    return (int)type;
}

static void open_auto(sc_nic_source *s, const char *root, int skip_infiniband)
{
    char (*names)[SC_SYSFILE_NAME_MAX] = malloc(SC_NIC_SCAN_MAX * sizeof *names);
    if (!names) {
        snprintf(s->why, sizeof s->why, "out of memory listing interfaces");
        return;
    }
    int more = 0;
    int n = sc_sysfile_list(root, "class/net", names, SC_NIC_SCAN_MAX, &more);
    if (n < 0) {
        snprintf(s->why, sizeof s->why, "no %.100s/class/net", root);
        free(names);
        return;
    }
    int left_out = more;
    for (int i = 0; i < n; i++) {
        const char *name = names[i];
        const char *why = NULL;
        int type = link_type(root, name);
        if (strcmp(name, "lo") == 0 || type == SC_ARPHRD_LOOPBACK || !valid_ifname(name))
            continue;
        if (skip_infiniband && type == SC_ARPHRD_INFINIBAND)
            why = "IPoIB, counted by the InfiniBand port";
        else if (!maybe_up(root, name))
            continue;   /* down: carries nothing */
        else if (s->nlinks >= SC_NIC_MAX)
            left_out++;
        else if (open_link(s, root, name, &why) == 0)
            continue;
        if (why)
            sc_append(s->skipped, sizeof s->skipped, "%s%s (%s)", s->skipped[0] ? ", " : "", name, why);
    }
    if (left_out)
        sc_append(s->skipped, sizeof s->skipped, "%s%d more beyond the first %d",
                  s->skipped[0] ? ", " : "", left_out, SC_NIC_MAX);
    if (s->nlinks == 0)
        snprintf(s->why, sizeof s->why, "no interface other than loopback is up with readable byte counters");
    free(names);
}

void sc_nic_open(sc_nic_source *s, const char *spec, const char *sys_root, int skip_infiniband,
                 char *msg, size_t msglen)
{
    memset(s, 0, sizeof *s);
    const char *root = sys_root && *sys_root ? sys_root : "/sys";
    const char *p = spec ? spec : "";
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0' || strcasecmp(p, "auto") == 0) {
        s->mode = SC_NIC_AUTO;
        open_auto(s, root, skip_infiniband);
    } else if (strcasecmp(p, "none") == 0) {
        s->mode = SC_NIC_NONE;
        snprintf(s->why, sizeof s->why, "off: STARCOLL_NIC=none");
        return;
    } else {
        s->mode = SC_NIC_LIST;
        open_list(s, p, root, msg, msglen);
        if (s->nlinks == 0) {
            snprintf(s->why, sizeof s->why, "none of STARCOLL_NIC='%.60s' is usable", p);
            sc_notice(msg, msglen, "nic: inactive: %s (accepted: auto, none, or interface names)", s->why);
        }
    }
    s->active = s->nlinks > 0;
}

void sc_nic_sample(sc_nic_source *s, sc_link_delta *d)
{
    memset(d, 0, sizeof *d);
    for (int i = 0; i < s->nlinks; i++) {
        sc_nic_link *l = &s->links[i];
        if (l->lost)
            continue;
        uint64_t tx, rx;
        if (sc_sysfile_read_u64(l->fd_tx, &tx) != 0 || sc_sysfile_read_u64(l->fd_rx, &rx) != 0) {
            l->lost = 1;   /* the interface went away; it stays out */
            continue;
        }
        /* A counter that went backwards was reset: count nothing this time. */
        uint64_t dtx = tx >= l->tx ? tx - l->tx : 0;
        uint64_t drx = rx >= l->rx ? rx - l->rx : 0;
        l->tx = tx;
        l->rx = rx;
        d->tx_bytes += (double)dtx;
        d->rx_bytes += (double)drx;
        if (dtx + drx > 0)
            d->busy_speed_Bps += l->speed_Bps;
        if (l->speed_Bps > d->max_speed_Bps)
            d->max_speed_Bps = l->speed_Bps;
    }
}

void sc_nic_describe(const sc_nic_source *s, char *buf, size_t len)
{
    if (!s->active) {
        sc_append(buf, len, "nic: inactive: %s", s->why);
    } else {
        sc_append(buf, len, "nic: active (%s):", s->mode == SC_NIC_AUTO ? "auto" : "STARCOLL_NIC");
        for (int i = 0; i < s->nlinks; i++) {
            const sc_nic_link *l = &s->links[i];
            sc_append(buf, len, "%s%s ", i ? ", " : " ", l->name);
            if (l->speed_Bps > 0)
                sc_append(buf, len, "%.0f Mb/s", l->speed_Bps * 8.0 / 1e6);
            else
                sc_append(buf, len, "speed unknown");
            if (l->lost)
                sc_append(buf, len, " (gone)");
        }
    }
    if (s->skipped[0])
        sc_append(buf, len, "; skipped %s", s->skipped);
    sc_append(buf, len, "\n");
}

void sc_nic_close(sc_nic_source *s)
{
    for (int i = 0; i < s->nlinks; i++) {
        sc_sysfile_close(&s->links[i].fd_tx);
        sc_sysfile_close(&s->links[i].fd_rx);
    }
    s->nlinks = 0;
    s->active = 0;
}
