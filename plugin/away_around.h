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
#endif
