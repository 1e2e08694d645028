/* The engine thread of every rank but the coordinator: it follows the
 * coordinator's round messages in order (so the collectives line up on
 * every member), serves its children or its parent (engine_groups.c), and
 * answers the watchdog. */
#include "engine_internal.h"

/* A verdict for this rank's off-pattern call (engine_caller.c waits for it). */
static void take_verdict(sc_engine *e, const long *msg)
{
    pthread_mutex_lock(&e->mu);
    e->verdict = (int)msg[RH_SLOT];
    e->verdict_rank = (int)msg[RH_K];
    pthread_cond_broadcast(&e->cv_main);
    pthread_mutex_unlock(&e->mu);
}

void sc_member_loop(sc_engine *e)
{
    double nap = 20e-6;
    for (;;) {
        int flag = 0, progressed = 0;
        if (PMPI_Iprobe(e->coord, TAG_ROUND, e->ctrl, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            sc_engine_failed(e, MPI_ERR_OTHER);
            return;
        }
        if (flag) {
            if (PMPI_Recv(e->msg, sc_round_msg_len(e), MPI_LONG, e->coord, TAG_ROUND, e->ctrl, MPI_STATUS_IGNORE) !=
                MPI_SUCCESS) {
                sc_engine_failed(e, MPI_ERR_OTHER);
                return;
            }
            sc_mode mode = (sc_mode)e->msg[RH_MODE];
            int k = (int)e->msg[RH_K];
            if (e->msg[RH_KIND] == ROUND_STOP) {
                sc_stop_traffic(e);
                return;
            }
            if (e->msg[RH_KIND] == ROUND_VERDICT) {
                take_verdict(e, e->msg);
            } else if (e->msg[RH_KIND] == ROUND_TOPO) {
                pthread_mutex_lock(&e->mu);
                e->mode = mode;
                e->k = k;
                pthread_mutex_unlock(&e->mu);
                if (sc_groups_apply(e, e->msg + RH_LEN, e->msg[RH_EPOCH], e->msg + RH_LEN + e->n,
                                    e->msg + RH_LEN + e->n + e->nslots) != MPI_SUCCESS) return;
            } else {
                if (e->msg[RH_DIRECT] > 0) {   /* before the round, so the waiting caller sees it */
                    pthread_mutex_lock(&e->mu);
                    e->direct_at = e->msg[RH_LEN + e->rank] + 1;   /* my next slot-0 call */
                    e->direct_polled_at = e->msg[RH_POLL] != 0;
                    pthread_mutex_unlock(&e->mu);
                }
                sc_run_round(e, (int)e->msg[RH_SLOT], e->msg + RH_LEN, e->msg[RH_FRESH], mode, k, e->msg[RH_SEQ],
                             e->msg[RH_POLL] != 0);
            }
            progressed = 1;
        }
        progressed |= sc_groups_progress(e);
        progressed |= sc_groups_forward(e);
        progressed |= sc_stall_progress(e);
        progressed |= sc_crowd_progress(e);
        if (progressed) {
            nap = 20e-6;
            continue;
        }
        if (sc_engine_idle(e, &nap, -1)) return;
    }
}
