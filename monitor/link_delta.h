/* What a network source (Ethernet-style NICs, InfiniBand ports) reports per
 * sample, so the aggregator can combine them into the NIC features. */
#ifndef STARCOLL_LINK_DELTA_H
#define STARCOLL_LINK_DELTA_H

typedef struct sc_link_delta {
    double tx_bytes;         /* bytes sent since the previous sample, all links */
    double rx_bytes;         /* bytes received since the previous sample */
    double busy_speed_Bps;   /* summed speed of the links whose counters moved (known speeds only) */
    double max_speed_Bps;    /* largest known speed among the links followed, 0 if none */
} sc_link_delta;

/* Link speed to report: that of the links that carried traffic during the
 * step, or when none did, the fastest link available. */
static inline double sc_link_speed(const sc_link_delta *a, const sc_link_delta *b)
{
    double busy = a->busy_speed_Bps + b->busy_speed_Bps;
    if (busy > 0.0)
        return busy;
    return a->max_speed_Bps > b->max_speed_Bps ? a->max_speed_Bps : b->max_speed_Bps;
}

#endif
