/* NIC byte counters and link speed from <sys>/class/net/<if>/: statistics/
 * tx_bytes and rx_bytes re-read every sample, speed (Mb/s; -1 or
 * unreadable: unknown) read at open.  STARCOLL_NIC selects the interfaces:
 * "auto" (or unset) follows every interface other than loopback whose
 * operstate is up or unknown (bytes moved only count where they move; the
 * reported speed is that of the interfaces that carried traffic), "none"
 * none, or a comma list of names. */
#ifndef STARCOLL_NIC_SOURCE_H
#define STARCOLL_NIC_SOURCE_H

#include "link_delta.h"

#include <stddef.h>
#include <stdint.h>

#define SC_NIC_MAX 16
#define SC_NIC_NAME_MAX 16   /* IFNAMSIZ */

typedef enum sc_nic_mode { SC_NIC_AUTO = 0, SC_NIC_NONE, SC_NIC_LIST } sc_nic_mode;

typedef struct sc_nic_link {
    char name[SC_NIC_NAME_MAX];
    int fd_tx, fd_rx;
    uint64_t tx, rx;         /* counters at the previous sample */
    double speed_Bps;        /* 0: unknown */
    int lost;                /* counters stopped being readable: interface gone */
} sc_nic_link;

typedef struct sc_nic_source {
    int active;
    sc_nic_mode mode;
    char why[160];           /* why inactive */
    char skipped[160];       /* interfaces auto passed over, and why */
    int nlinks;
    sc_nic_link links[SC_NIC_MAX];
} sc_nic_source;

/* Opens the interfaces that spec selects under sys_root (NULL: "/sys").
 * skip_infiniband: leave IPoIB interfaces (type 32) out of auto, because
 * the InfiniBand port counters already count their traffic. */
void sc_nic_open(sc_nic_source *s, const char *spec, const char *sys_root, int skip_infiniband,
                 char *msg, size_t msglen);

void sc_nic_sample(sc_nic_source *s, sc_link_delta *d);

void sc_nic_describe(const sc_nic_source *s, char *buf, size_t len);

void sc_nic_close(sc_nic_source *s);

#endif
