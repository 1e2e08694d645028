/* InfiniBand port counters, where <sys>/class/infiniband exists: for every
 * device and ACTIVE port, ports/<p>/counters/port_xmit_data and
 * port_rcv_data (counted in 4-byte words: reported in bytes) and
 * port_xmit_wait (ticks a packet waited for credits: congestion), re-read
 * every sample; ports/<p>/rate ("100 Gb/sec (4X EDR)") read at open. */
#ifndef STARCOLL_IB_SOURCE_H
#define STARCOLL_IB_SOURCE_H

#include "link_delta.h"

#include <stddef.h>
#include <stdint.h>

#define SC_IB_MAX_PORTS 16

typedef struct sc_ib_port {
    char name[2 * 64 + 8];   /* "<device>:<port>" */
    int fd_xmit, fd_rcv, fd_wait;   /* fd_wait -1: no port_xmit_wait */
    uint64_t xmit_words, rcv_words, wait;   /* counters at the previous sample */
    double speed_Bps;        /* 0: unknown */
    int lost;
} sc_ib_port;

typedef struct sc_ib_source {
    int active;
    char why[160];           /* why inactive */
    char skipped[160];       /* ports passed over, and why */
    int nports;
    sc_ib_port ports[SC_IB_MAX_PORTS];
} sc_ib_source;

/* Opens every usable port under sys_root (NULL: "/sys").  Never fails. */
void sc_ib_open(sc_ib_source *s, const char *sys_root, char *msg, size_t msglen);

/* Bytes and link speeds into d; port_xmit_wait increments into *wait. */
void sc_ib_sample(sc_ib_source *s, sc_link_delta *d, double *wait);

void sc_ib_describe(const sc_ib_source *s, char *buf, size_t len);

void sc_ib_close(sc_ib_source *s);

#endif
