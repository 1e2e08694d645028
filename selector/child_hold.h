/* Children that keep coming back.  A rank made a child because it was slow
 * looks healthy as a child: nobody waits for it, and work that needs the
 * CPU or the link it lacks (taking part in every round) is no longer its
 * own.  So the detector releases it, it rejoins the ring, is slow again, and
 * the topology flaps.  This is so for a rank short of a resource the
 * rounds need, which the monitor measures: starved of CPU (run-queue delay
 * far above its peers') or behind a slow link (the probe).  Such a new child stays one for SC_HOLD_MIN_EPOCHS
 * epochs whatever its first windows as a child look like, and a rank made a
 * child again within SC_HOLD_FLAP_EPOCHS epochs of its release is held a
 * child for SC_HOLD_FIRST_EPOCHS epochs, twice that at each further return,
 * up to SC_HOLD_MAX_EPOCHS.  Children made on timing alone (a burst, a
 * sleeping rank) are not held: their slowness shows as a child too.  Plain C. */
#ifndef STARCOLL_SELECTOR_CHILD_HOLD_H
#define STARCOLL_SELECTOR_CHILD_HOLD_H

#include "situation.h"

#define SC_HOLD_MIN_EPOCHS 5
#define SC_HOLD_FLAP_EPOCHS 10
#define SC_HOLD_FIRST_EPOCHS 10
#define SC_HOLD_MAX_EPOCHS 80

typedef struct sc_child_hold {
    int n;
    unsigned char *was_child; /* children of the decision in force */
    long *released_at;        /* step of the last release, -1 none */
    long *until;              /* held a child before this step, -1 none */
    int *epochs;              /* length of the last hold, 0 none */
} sc_child_hold;

int sc_child_hold_init(sc_child_hold *h, int nranks);
void sc_child_hold_free(sc_child_hold *h);

/* The decision in force at `step` has these children: note releases, and
 * start or lengthen the hold of a starved or slow-link rank made a child. */
void sc_child_hold_update(sc_child_hold *h, long step, int epoch_steps, const unsigned char *child,
                          const sc_rank_status *st);

/* Puts held children of `cur` back into `cand` (turning it into groups
 * when it was not); returns how many, and says so in cand->reason. */
int sc_child_hold_apply(const sc_child_hold *h, long step, const sc_candidate *cur, sc_candidate *cand);

#endif
