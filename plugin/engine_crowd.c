/* Polled or blocking collectives, per engine (STARCOLL_COLL_WAIT; why in
 * polled_coll.h).  blocking and polled hold for the whole job.  auto, the
 * default, polls an engine's collectives only while one of its ranks runs
 * another engine in its process: the layout in which Open MPI 4.1 held
 * calls for seconds (two threads in collectives on two communicators at
 * once), and where polling cost nothing measurable here; a process's only
 * engine stays blocking, since polling made its exact steps 20-45% slower.
 *
 * Every rank must wait the same way in each collective, and ranks run
 * different numbers of engines, so one rank never decides alone: each
 * engine thread tells its coordinator when its process comes to run
 * another engine or no longer does (NOTE_CROWD), the coordinator decides
 * (any rank so crowded: polled), and every rank learns the decision where
 * it learns what else it must do together: a round's message carries the
 * flag of that round's reduction (RH_POLL), and the broadcast opening each
 * direct step the flag of that step's collectives and of the next
 * broadcast (CMD_POLL).  Direct steps start with the flag of the round that
 * sent the ranks direct, or at the engine's start with the policy's. */
#include "engine_internal.h"
#include <stdlib.h>
#include "runtime.h"

static int engines_alive;   /* in this process */

void sc_crowd_join(sc_engine *e)
{
    e->crowd_joined = 1;
    __atomic_add_fetch(&engines_alive, 1, __ATOMIC_ACQ_REL);
}

int sc_crowd_init(sc_engine *e)
{
    e->polled = e->direct_polled = sc_rt.policy.coll_wait == SC_WAIT_POLLED;
    if (e->rank != e->coord) return 0;
    e->crowded = calloc((size_t)e->n, 1);
    return e->crowded ? 0 : -1;
}

void sc_crowd_free(sc_engine *e)
{
    if (e->crowd_joined) __atomic_sub_fetch(&engines_alive, 1, __ATOMIC_ACQ_REL);
    e->crowd_joined = 0;
    free(e->crowded);
    e->crowded = NULL;
}

void sc_crowd_heard(sc_engine *e, int r, long crowded)
{
    if (!e->crowded || r < 0 || r >= e->n) return;
    unsigned char now = crowded != 0;
    if (e->crowded[r] == now) return;
    e->crowded[r] = now;
    e->ncrowded += now ? 1 : -1;
    if (sc_rt.policy.coll_wait != SC_WAIT_AUTO) return;
    int polled = e->ncrowded > 0;
    if (polled == e->polled) return;
    __atomic_store_n(&e->polled, polled, __ATOMIC_RELEASE);
    if (sc_rt.policy.verbose >= 1) {
        char comm[64], rank[32];
        sc_comm_label(e, comm, sizeof comm);
        if (polled)
            sc_say(-1, 1, "starcoll: %s: its collectives polled from now on: %s runs another communicator's "
                   "engine too (STARCOLL_COLL_WAIT=auto)", comm, sc_rank_label(e, r, rank, sizeof rank));
        else
            sc_say(-1, 1, "starcoll: %s: its collectives blocking again: no rank runs another communicator's engine "
                   "(STARCOLL_COLL_WAIT=auto)", comm);
    }
}

int sc_crowd_progress(sc_engine *e)
{
    int crowded = __atomic_load_n(&engines_alive, __ATOMIC_ACQUIRE) > 1;
    if (crowded == e->crowd_told) return 0;
    e->crowd_told = crowded;
    if (e->rank == e->coord) sc_crowd_heard(e, e->rank, crowded);
    else if (sc_engine_failed(e, sc_engine_send_note(e, NOTE_CROWD, -1, crowded, 0, -1, -1))) return 0;
    return 1;
}
