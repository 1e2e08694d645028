/* The tolerant engine's nonblocking calls (engine.h, sc_engine_icall):
 * a call's request completes when the round holding its deposit is in,
 * from whichever thread brought that round in (the engine thread, as a
 * ring member or a child), or with an error when the engine fails or
 * stops first.  The result is written before the request completes and
 * never after: the slot forgets the call first. */
#include "engine_internal.h"
#include <string.h>

/* mu held */
static void complete(sc_engine *e, sc_slot *sl, int rc)
{
    sc_nb_call *nb = sl->nb;
    sl->nb = NULL;
    e->nb_pending--;
    if (rc == MPI_SUCCESS) {
        memcpy(nb->recvbuf, sl->inbox, sl->bytes);
        memset(sl->inbox, 0, sl->bytes);
        sc_engine_copied(e, sl->bytes);
        sl->inbox_rounds = 0;
        e->nb_ssq += sc_sampled_sqnorm(nb->recvbuf, sl->count, sl->dk);
        if (e->my_parent >= 0) e->stats.child_rounds++;
    }
    nb->rc = rc;
    MPI_Request req = nb->req;   /* nb may be freed inside the completion (a request freed by the user) */
    PMPI_Grequest_complete(req);
    pthread_cond_broadcast(&e->cv_main);
}

void sc_nb_ready(sc_engine *e, sc_slot *sl)
{
    if (sl->nb && e->error) complete(e, sl, e->error);
    else if (sl->nb && sl->included_self >= sl->nb_need && (!sl->nb_flush || sc_rounds_all_in(sl)))
        complete(e, sl, MPI_SUCCESS);
}

void sc_nb_fail_all(sc_engine *e, int rc)
{
    for (int s = 0; e->slots && s < e->nslots; s++) {
        sc_nb_ready(e, &e->slots[s]);
        if (e->slots[s].nb) complete(e, &e->slots[s], rc);
    }
}
