/* PAPI counters of the thread that opens the monitor (the application
 * thread, which does the compute), as deltas per sample, in the order of
 * STARCOLL_PAPI_EVENTS.  Optional in every way: built without PAPI, PAPI
 * failing to initialise, or no event left after dropping the unknown and
 * unavailable ones leaves the source inactive and the job running. */
#ifndef STARCOLL_PAPI_SOURCE_H
#define STARCOLL_PAPI_SOURCE_H

#include "papi_events.h"

#include <stddef.h>

typedef struct sc_papi_source {
    int active;
    int software_only;       /* auto fell back to PAPI's software events */
    int nevents;
    char names[SC_PAPI_MAX_EVENTS][SC_PAPI_NAME_MAX];
    char why[200];           /* why inactive, or a remark on the events used */
    int eventset;
    long long prev[SC_PAPI_MAX_EVENTS];
} sc_papi_source;

/* Hardware events auto tries first, and the software events it falls back to. */
extern const char *const sc_papi_auto_hardware[2];
extern const char *const sc_papi_auto_software[2];

/* Opens the source for events (STARCOLL_PAPI_EVENTS syntax) and reads the
 * baseline.  Not thread-safe (PAPI initialisation is not): call from the
 * thread that will sample.  Never fails; notices go to msg. */
void sc_papi_open(sc_papi_source *s, const char *events, char *msg, size_t msglen);

/* Counter changes since the previous sample into delta[0..SC_PAPI_MAX_EVENTS);
 * zero for missing events or when reading fails. */
void sc_papi_sample(sc_papi_source *s, double *delta);

void sc_papi_describe(const sc_papi_source *s, char *buf, size_t len);

void sc_papi_close(sc_papi_source *s);

#endif
