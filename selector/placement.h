/* Placement of the coordinator and of the children's parents on the ranks
 * with the most CPU and NIC headroom (sc_rank_status.cpu_headroom +
 * nic_headroom, ties to the lowest rank).
 *
 * Children are spread so that no parent's link saturates: each parent takes
 * at most ceil(children / ring) children, and only while its link load plus
 * the children's reduced bytes per second stays under SC_PARENT_LINK_MAX of
 * its speed (where the speed is known).  A child keeps its parent while that
 * parent stays valid, so placement does not churn with noise. */
#ifndef STARCOLL_SELECTOR_PLACEMENT_H
#define STARCOLL_SELECTOR_PLACEMENT_H

#include "detect.h"

#define SC_PARENT_LINK_MAX 0.9    /* a parent's link may run up to this share of its speed */
#define SC_COORD_SWITCH_GAIN 0.5  /* headroom a new coordinator must add to replace the current:
                                   * a real starvation, not a noisy window */

/* Fills parent[i] (-1 for ring members, else a ring member) for the ranks
 * flagged in child.  prev_parent (NULL: none) is the assignment in force.
 * Returns 1 when every child fits within its parent's link headroom, 0 when
 * some parent's link will run near saturation (each child still gets the
 * parent with the most room), -1 when there is no ring member at all. */
int sc_place_parents(int nranks, const sc_rank_status *st, const unsigned char *child,
                     const int *prev_parent, int *parent);

/* The coordinator: a ring member with the most headroom.  The current one
 * (-1: none) stays unless it became a child or another ring member has
 * SC_COORD_SWITCH_GAIN more headroom. */
int sc_place_coordinator(int nranks, const sc_rank_status *st, const unsigned char *child, int current);

/* The first coordinator, from every rank's figures while the step's
 * pattern was learned: load[r] (compute outside the library plus time its
 * CPU quota throttled it) and given[r] (the share of the CPU its calling
 * thread was given while runnable; <= 0 unknown).  Ranks given at most
 * SC_GIVEN_FACTOR (detect.h) of the median known share are left out (unless
 * every rank would be); of the others, the lowest rank whose load is
 * within 10% (or 1 ms) of their least.  Pure: every rank computes the
 * same choice from the same gathered figures. */
int sc_first_coordinator(int nranks, const double *load, const double *given);

/* Children (child[r] set) dealt round-robin to the ring members in order
 * of load (load[r], least first, ties to the lower rank), so no member
 * takes them all: parent[r] is a member for each child, -1 for members
 * (for every rank when there is no member).  order: nranks ints of
 * scratch, the members in that order after the call.  Returns the number
 * of members. */
int sc_deal_children(int nranks, const unsigned char *child, const double *load, int *order, int *parent);

/* The ranks given at most SC_GIVEN_FACTOR of the median known share of the
 * CPU while the pattern was learned (none when every rank would be): out[r]
 * set for each, their number returned.  The first coordinator is never one
 * of them, and auto makes them children from its first step. */
int sc_short_while_learning(int nranks, const double *given, unsigned char *out);

#endif
