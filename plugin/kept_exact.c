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

/* The step just ended at a per-step call held calls on the learned
 * pattern and then one off it that no gradient left out explains
 * (sc_identity_foreign): another model's step in turn, whose tensors
 * took this one's slots.  Rounds cannot tell such tensors apart (a late
 * rank's gradient of one rides into the other's sum), so from this call,
 * which every rank makes alike (shapes and positions are the same on
 * every rank), the communicator has no rounds again: its calls stay
 * agreed and exact.  What the rounds still owed is paid to each tensor's
 * next call by its buffer where every rank kept one per tensor, else not
 * (the report counts it): by slot it would go to the other model's
 * tensor where that one's step comes next (GPT-2's halves in turn).  The
 * rounds before this call may have mixed the two.  Each model on a
 * communicator of its own is tolerated. */
void sc_keep_exact_two_models(sc_comm *cs)
{
    cs->row->misaligned += 1;
    cs->two_models = 1;
    sc_comm_stop_engine_here(cs);
    snprintf(cs->why_exact, sizeof cs->why_exact,
             "another model's step came in turn with this one's, its tensors in this step's places (calls that "
             "line up, then one that no gradient left out explains): give each model its own communicator "
             "(MPI_Comm_dup)");
    snprintf(sc_rt.row_why[cs->row - sc_rt.rows], sizeof sc_rt.row_why[0], "%s", cs->why_exact);
    sc_say(SC_SAY_TWO_MODELS, 0,
           "starcoll: comm %s: a step held calls on the learned step's pattern, then one off it that no gradient "
           "left out explains: another model's step in turn, whose tensors took this one's places (an actor and "
           "a critic, two nets of one shape)?  Tolerant rounds cannot tell the two apart, so this communicator's "
           "calls are exact from here; the rounds before may have summed one into the other, and the results they "
           "still owed are not delivered (the report counts them).  Give each model its own communicator "
           "(MPI_Comm_dup) and both are tolerated",
           cs->label);
}
