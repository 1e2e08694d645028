/* A blocking call made while the engines hear that this rank is away
 * (sc_comm_away): no round waits for it meanwhile.  Returns the call's
 * code.  With no engine here, the call alone. */
#ifndef STARCOLL_AWAY_AROUND_H
#define STARCOLL_AWAY_AROUND_H
#include "comm_state.h"

#define AWAY_AROUND(what, call)                   \
    do {                                          \
        int engines_ = sc_comm_engines_here();    \
        if (engines_) sc_comm_away(NULL, 1, what); \
        int rc_ = (call);                         \
        if (engines_) sc_comm_away(NULL, 0, what); \
        return rc_;                               \
    } while (0)
/* Around the collectives of one call on a communicator outside any
 * engine's rounds (the agreement votes, a lockstep call): the engines of
 * the other communicators are told this rank is away, as around any exact
 * all-reduce, so none of their rounds waits for it meanwhile. */
static inline int away_begin(void)
{
    int engines = sc_comm_engines_here();
    if (engines) sc_comm_away(NULL, 1, SC_AWAY_ALLREDUCE);
    return engines;
}

static inline void away_end(int engines)
{
    if (engines) sc_comm_away(NULL, 0, SC_AWAY_ALLREDUCE);
}
#endif
