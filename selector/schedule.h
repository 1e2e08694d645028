/* A fixed schedule of decisions (STARCOLL_SCHEDULE), taken in place of the
 * selector's under STARCOLL_MODE=auto: for tests that must force hot swaps
 * at known steps, and for experiments ("what if we switched here?").
 *
 * Text: entries separated by commas, each STEP:MODE[:ARG], steps rising:
 *     40:quorum:6     from the coordinator's step 40, quorum rounds of 6
 *     60:groups:7+3   groups with ranks 7 and 3 as children
 *     80:sync         (also hier; quorum without ARG waits for n-1)
 * Children get parents round-robin over the ring members in rank order.
 * Pure C, no MPI. */
#ifndef STARCOLL_SELECTOR_SCHEDULE_H
#define STARCOLL_SELECTOR_SCHEDULE_H
#include <stddef.h>
#include "sc_features.h"

typedef struct sc_schedule sc_schedule;

/* Parses text for a communicator of nranks.  NULL on a bad text (with one
 * line in msg naming the entry and what is accepted) or out of memory. */
sc_schedule *sc_schedule_parse(const char *text, int nranks, char *msg, size_t msglen);

/* The entry due at `step` (the last one whose step has come and that was
 * not taken yet): 1 with *out filled (out->parent, when not NULL, gets
 * nranks entries, -1 for ring members), else 0. */
int sc_schedule_due(sc_schedule *s, long step, sc_decision *out);

/* Entries in the schedule. */
int sc_schedule_length(const sc_schedule *s);

void sc_schedule_free(sc_schedule *s);
#endif
