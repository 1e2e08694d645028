/* Communicators kept exact for good (kept_exact.h). */
#include <stdio.h>
#include "kept_exact.h"
#include "away_around.h"

/* cs keeps every call exact from here on: its identity and agreement
 * communicator (where it has them) are dropped, at a call all its ranks
 * make (PMPI_Comm_free is collective), and its report row says why. */
void sc_keep_exact(sc_comm *cs, const char *why)
{
    sc_identity_free(cs->id);
    cs->id = NULL;
    if (cs->agree_comm != MPI_COMM_NULL) PMPI_Comm_free(&cs->agree_comm);
    cs->named_exact = 1;
    snprintf(sc_rt.row_why[cs->row - sc_rt.rows], sizeof sc_rt.row_why[0], "%s", why);
}

/* Two guesses that keep a communicator exact for good, unless
 * STARCOLL_EXACT_COMMS was given (then the user has said which):
 * - its ranks also sum over another that crosses it (sc_comm_crossed: a
 *   tensor-parallel group beside its data-parallel replicas): a
 *   model-parallel group's sums are activations, which a tolerant sum gets
 *   wrong, not late, and no size or shape tells them from gradients; which
 *   of the two is which is unknown, so neither gets rounds;
 * - its step's tensors were, while it was learned, each about the last
 *   step's sum (weights_probe.h): weights being averaged, whose sums must
 *   hold every rank's copy.
 * Agreed over the communicator (a rank that saw it is enough), at the call
 * that adopts a pattern, which every rank makes alike; only where nothing
 * is owed from earlier rounds there, on any rank (it would be dropped).
 * 1 when kept exact. */
int sc_keep_guessed_exact(sc_comm *cs, const sc_values_said *v)
{
    if (sc_rt.policy.exact_comms_set) return 0;   /* the same on every rank (the policy hash) */
    char other[24] = "";
    /* any[1]: size minus the lowest rank that saw averaging, which says so;
     * any[2]: a rank is owed results from earlier rounds (each rank's own
     * leftovers: agreed, so that all decide alike) */
    int mine[3] = {sc_comm_crossed(cs, other, sizeof other), v->averaged ? cs->size - cs->rank : 0, cs->carry != NULL};
    int any[3] = {1, 0, 1};
    int away = away_begin();
    if (PMPI_Allreduce(mine, any, 3, MPI_INT, MPI_MAX, cs->agree_comm) != MPI_SUCCESS) any[0] = 1, any[2] = 0;   /* the safe side */
    away_end(away);
    if (any[2]) return 0;
    if (any[0]) {
        snprintf(cs->why_exact, sizeof cs->why_exact,
                 "its ranks also sum over a communicator that neither holds it nor is held by it (model-parallel "
                 "sums beside data-parallel ones?): name the model-parallel ones in STARCOLL_EXACT_COMMS, or none");
        sc_keep_exact(cs, cs->why_exact);
        sc_say(SC_SAY_CROSSED, 0,
               "starcoll: comm %s: its ranks also sum over comm %s, and neither holds the other: a model-parallel "
               "(tensor-parallel) group beside data-parallel replicas?  A tolerant sum of activations is wrong, not "
               "late, so such communicators stay exact; name the model-parallel ones in STARCOLL_EXACT_COMMS (the "
               "report's numbers), or STARCOLL_EXACT_COMMS=none, and the others get rounds",
               cs->label, other[0] ? other : "?");
        return 1;
    }
    if (!any[1]) return 0;
    snprintf(cs->why_exact, sizeof cs->why_exact,
             "its tensors were each about the last step's sum (weights averaged, not gradients?): "
             "STARCOLL_EXACT_COMMS=none if they are gradients");
    sc_keep_exact(cs, cs->why_exact);
    if (cs->rank == cs->size - any[1])
        sc_say(SC_SAY_AVERAGED, 1,
               "starcoll: comm %s: while its step was learned, %d of its %d tensors that changed were each about the "
               "last step's sum over the %d ranks: weights being averaged, not gradients?  A late copy riding "
               "into a later sum makes an average wrong, so this communicator stays exact; if they are gradients, "
               "STARCOLL_EXACT_COMMS=none gives it rounds",
               cs->label, v->follow, v->judged, cs->size);
    return 1;
}
