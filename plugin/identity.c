/* Call identity: learning the step's unit from the votes of every rank,
 * the agreed pattern, and learning again (identity.h).  What a rank's
 * calls say of a unit is in identity_evidence.c; following the pattern
 * call by call, in identity_follow.c. */
#include "identity_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t sc_shape_hash(long count, int type_code, int op_code, int eligible)
{
    uint64_t h = sc_id_mix64((uint64_t)count);
    h = sc_id_mix64(h ^ ((uint64_t)(uint32_t)type_code << 1));
    h = sc_id_mix64(h ^ ((uint64_t)(uint32_t)op_code << 2));
    return sc_id_mix64(h ^ (uint64_t)(eligible != 0)) & 0x3fffffffffffffffULL;   /* fits a long, and its negation */
}

uint64_t sc_where_hash(const void *sendbuf, const void *recvbuf)
{
    return sc_id_mix64((uint64_t)(uintptr_t)(sendbuf ? sendbuf : recvbuf));
}

static void forget_history(sc_identity *id)
{
    id->learned = 0;
    id->nhist = 0;
    id->voting = 0;
    id->first_gradient = -1;
    memset(id->run_shape, 0, sizeof(int) * (SC_STEP_MAX + 1));
    memset(id->run_where, 0, sizeof(int) * (SC_STEP_MAX + 1));
    id->nslots = 0;
    id->trusted = 0;
    id->why[0] = '\0';
    id->pos = 0;
    id->miss_streak = 0;
    id->marker_dependent = 0;
    id->nmarkers = 0;
    id->marker_slot = -1;
    id->since_marker = 0;
    id->seen_marker = id->shifted = 0;
    id->misaligned = id->foreign = 0;
    id->off_foreign = 0;
    id->shift_next = -1;
    id->turned = id->steady = id->watch = id->kept = 0;
    id->turns_since = 0;
    id->turn_slot = -1;
    id->watch_moves = id->move_d = 0;
    id->move_run = 0;
    id->off_moved = 0;
    id->ready_L = id->ready_M = 0;
}

sc_identity *sc_identity_new(void)
{
    sc_identity *id = calloc(1, sizeof *id);
    if (!id) return NULL;
    id->hist = malloc(sizeof(sc_call_key) * SC_HIST_CAP);
    id->recent = calloc(8 * SC_RECENT, sizeof(uint32_t));   /* lags before the first call read it */
    id->run_shape = calloc(SC_STEP_MAX + 1, sizeof(int));
    id->run_where = calloc(SC_STEP_MAX + 1, sizeof(int));
    id->next_shape = calloc(SC_STEP_MAX + 1, sizeof(int));
    id->next_where = calloc(SC_STEP_MAX + 1, sizeof(int));
    id->slot_shape = malloc(sizeof(uint64_t) * SC_SLOTS_MAX);
    id->slot_count = malloc(sizeof(long) * SC_SLOTS_MAX);
    id->slot_dkind = malloc(sizeof(int) * SC_SLOTS_MAX);
    id->scratch = malloc(sizeof(double) * SC_STEP_MAX);
    id->slot_where = malloc(sizeof(uint64_t) * SC_SLOTS_MAX);
    id->slot_away = malloc(sizeof(uint64_t) * SC_SLOTS_MAX);
    id->slot_last_away = malloc(sizeof(uint64_t) * SC_SLOTS_MAX);
    id->slot_now = malloc(sizeof(uint64_t) * SC_SLOTS_MAX);
    id->cache_shape = malloc(sizeof(uint64_t) * SC_SLOTS_MAX);
    id->cache_where = malloc(sizeof(uint64_t) * SC_SLOTS_MAX);
    id->cache_count = malloc(sizeof(long) * SC_SLOTS_MAX);
    id->cache_dkind = malloc(sizeof(int) * SC_SLOTS_MAX);
    if (!id->hist || !id->recent || !id->run_shape || !id->run_where || !id->next_shape || !id->next_where ||
        !id->slot_shape || !id->slot_count || !id->slot_dkind || !id->scratch || !id->slot_where || !id->slot_away ||
        !id->slot_last_away || !id->slot_now || !id->cache_shape || !id->cache_where || !id->cache_count ||
        !id->cache_dkind) {
        sc_identity_free(id);
        return NULL;
    }
    forget_history(id);
    return id;
}

void sc_identity_free(sc_identity *id)
{
    if (!id) return;
    free(id->hist);
    free(id->recent);
    free(id->run_shape);
    free(id->run_where);
    free(id->next_shape);
    free(id->next_where);
    free(id->slot_shape);
    free(id->slot_count);
    free(id->slot_dkind);
    free(id->scratch);
    free(id->slot_where);
    free(id->slot_away);
    free(id->slot_last_away);
    free(id->slot_now);
    free(id->cache_shape);
    free(id->cache_where);
    free(id->cache_count);
    free(id->cache_dkind);
    free(id);
}

/* For every lag L (1 to SC_STEP_MAX), the run of calls equal to the call
 * L back, with the new call: one longer where it matches, else 0 (and the
 * same for shape and address together).  x_back[-L] is call L back.  A
 * fixed count, no branches (whether a call matches is data, not
 * predictable) and restrict arguments: the compiler vectorizes it at -O2. */
static void match_lags(const uint32_t *restrict sl_back, const uint32_t *restrict sh_back,
                       const uint32_t *restrict wl_back, const uint32_t *restrict wh_back, uint32_t s_lo,
                       uint32_t s_hi, uint32_t w_lo, uint32_t w_hi, const int *restrict run_shape,
                       const int *restrict run_where, int *restrict next_shape, int *restrict next_where)
{
    for (int L = 1; L <= SC_STEP_MAX; L++) {
        int same = (sl_back[-L] == s_lo) & (sh_back[-L] == s_hi);
        int same_where = same & (wl_back[-L] == w_lo) & (wh_back[-L] == w_hi);
        next_shape[L] = (run_shape[L] + 1) * same;
        next_where[L] = (run_where[L] + 1) * same_where;
    }
}

void sc_identity_vote(sc_identity *id, const sc_call_key *k, long vote[SC_VOTE_LEN])
{
    memset(vote, 0, sizeof(long) * SC_VOTE_LEN);
    long i = id->nhist;
    id->hist[i % SC_HIST_CAP] = *k;
    /* The recent calls' shape and address, in 32-bit halves: baseline
     * x86-64 (SSE2) compares 32-bit lanes only, and the compiler then
     * vectorizes the lag loop below. */
    int q = (int)(i % SC_RECENT);
    const uint32_t s_lo = (uint32_t)k->shape, s_hi = (uint32_t)(k->shape >> 32);
    const uint32_t w_lo = (uint32_t)k->where, w_hi = (uint32_t)(k->where >> 32);
    uint32_t *r = id->recent;
    r[q] = r[q + SC_RECENT] = s_lo;
    r[2 * SC_RECENT + q] = r[3 * SC_RECENT + q] = s_hi;
    r[4 * SC_RECENT + q] = r[5 * SC_RECENT + q] = w_lo;
    r[6 * SC_RECENT + q] = r[7 * SC_RECENT + q] = w_hi;
    const uint32_t *sl_back = r + q + SC_RECENT, *sh_back = r + 3 * SC_RECENT + q;
    const uint32_t *wl_back = r + 5 * SC_RECENT + q, *wh_back = r + 7 * SC_RECENT + q;
    int lim = i < SC_STEP_MAX ? (int)i : SC_STEP_MAX;
    match_lags(sl_back, sh_back, wl_back, wh_back, s_lo, s_hi, w_lo, w_hi, id->run_shape, id->run_where,
               id->next_shape, id->next_where);
    for (int L = lim + 1; L <= SC_STEP_MAX; L++)   /* lags before the first call */
        id->next_shape[L] = id->next_where[L] = 0;
    id->voting = 1;
    vote[SC_VOTE_SHAPE] = (long)k->shape;
    vote[SC_VOTE_NSHAPE] = -(long)k->shape;
    long n = i + 1;
    /* The first candidate this rank has evidence for, else the smallest:
     * a run of equal blocks inside the step (a smaller candidate) must
     * not hide the step itself.  Multiples of the smallest are judged
     * with it (its hints and gaps look m units ahead). */
    int L = 0, hint = 0, gap = 0, spans = 0, tries = 0;
    int multiple = 0;   /* of L, the next at or above c: L is set once, so no division per candidate */
    for (int c = sc_id_candidate_unit(id, n, 0); c && tries < 8; c = sc_id_candidate_unit(id, n, c)) {
        while (L && multiple < c) multiple += L;
        if (L && c == multiple) continue;
        tries++;
        int h, g, sp = sc_id_judge_unit(id, n, c, &h, &g);
        if (!L || sp || g) {
            L = c;
            hint = h;
            gap = g;
            spans = sp;
        }
        if (sp || g || L == 1) break;   /* every later candidate is a multiple of a unit of 1 */
    }
    vote[SC_VOTE_UNIT] = L;
    vote[SC_VOTE_NUNIT] = -L;
    if (!L) return;
    /* Own, steady buffers: learn for SC_TURN_UNITS units, so that two
     * models of one shape trained in turn can show
     * (sc_id_buffer_turned).  Only then: a step that takes longer to learn (one marked by a small
     * bias alone, SC_BLOCK_RUN_MAX) gives fresh buffers that much more
     * time for an allocator to hand them back in such a pattern by chance
     * (a tensor-parallel code's NumPy replicas did, on every rank). */
    if (n <= (long)(SC_TURN_UNITS + 1) * L) id->turned |= sc_id_buffer_turned(id, n, L);
    if (!id->steady) id->steady = sc_id_own_and_steady(id, n, L);   /* and stays so: the other model's step breaks it */
    vote[SC_VOTE_NOT_TURNED] = !id->turned;
    /* The first learning only (a pattern learned again has been watched
     * since: sc_identity_turns_since), and no further back than the
     * history reaches. */
    if (!id->turned && id->steady && id->relearns == 0 && n < (long)SC_TURN_UNITS * L && n < SC_HIST_CAP)
        vote[SC_VOTE_TURN_WAIT] = 1;
    /* Address hints are needed only for a unit shapes do not tell apart:
     * for one, wait until every m could have shown. */
    int mmax = SC_STEP_MAX / L < SC_HINT_MAX ? SC_STEP_MAX / L : SC_HINT_MAX;
    if (hint) vote[SC_VOTE_HINT0 + hint - 1] = 1;
    else if (!sc_id_told_apart_by_shape(id, n, L) && n < 3 * (long)mmax * L) vote[SC_VOTE_WAIT] = 1;
    vote[SC_VOTE_SPANS] = spans;
    vote[SC_VOTE_NO_GAP] = !gap;
    vote[SC_VOTE_NOT_OWN1] = !(hint == 1 && sc_id_own_buffers(id, n, L));
    if (gap) vote[SC_VOTE_GAP0 + gap - 1] = 1;
}

static long gcd(long a, long b)
{
    while (b) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static void commit_call(sc_identity *id)
{
    int *t = id->run_shape;
    id->run_shape = id->next_shape;
    id->next_shape = t;
    t = id->run_where;
    id->run_where = id->next_where;
    id->next_where = t;
    const sc_call_key *c = sc_id_at(id, id->nhist);
    /* for sc_id_gradient_before_run */
    if (id->first_gradient < 0 && (!sc_id_is_value(c) || c->one_number)) id->first_gradient = id->nhist;
    id->nhist++;
    id->voting = 0;
}

/* The agreed pattern: M units of the last L calls, starting with the call
 * after this one; its eligible calls are the slots.  turned: every rank's
 * buffers showed two tensors in turn (sc_id_buffer_turned): exact. */
static void adopt(sc_identity *id, int L, long M, int turned)
{
    long unit = M * L;
    int by_shape = sc_id_told_apart_by_shape(id, id->nhist, L);
    int nslots = 0, nonslot = 0, too_many = 0;
    if (unit > SC_STEP_MAX) unit = L;   /* the hints disagree: the pattern stays exact (below) */
    /* the last step's own calls where they are remembered (decide: they
     * repeat one step back), else the unit's, M times */
    int whole = id->nhist >= unit && unit <= SC_HIST_CAP;
    for (long j = 0; j < unit; j++) {
        const sc_call_key *c = whole ? sc_id_at(id, id->nhist - unit + j) : sc_id_at(id, id->nhist - L + (j % L));
        if (!c->eligible) {
            nonslot++;
            continue;
        }
        if (nslots == SC_SLOTS_MAX) {
            too_many = 1;
            break;
        }
        id->slot_shape[nslots] = c->shape;
        id->slot_count[nslots] = c->count;
        id->slot_dkind[nslots] = c->dkind;
        id->slot_where[nslots] = c->where;
        id->slot_now[nslots] = whole ? c->where : 0;
        id->slot_away[nslots] = id->slot_last_away[nslots] = 0;
        nslots++;
    }
    id->learned = 1;
    id->nslots = too_many ? 0 : nslots;
    id->pos = 0;
    id->miss_streak = 0;
    id->trusted = 0;
    if (M * L > SC_STEP_MAX)
        snprintf(id->why, sizeof id->why, "the ranks' buffer addresses suggest steps of different lengths");
    else if (too_many)
        snprintf(id->why, sizeof id->why, "more than %d eligible calls per step", SC_SLOTS_MAX);
    else if (nslots == 0)
        snprintf(id->why, sizeof id->why, "no eligible call in the step");
    else if (whole && sc_id_alternates(id, id->nhist, (int)unit))
        snprintf(id->why, sizeof id->why,
                 "the step is two patterns in turn, each with its per-step call (PowerSGD summing its P factors one "
                 "step and its Q factors the next, which it computes from those sums at once, or two models trained "
                 "in turn), or a one-number sum in each of fewer than %d layers (a ReZero gate, a PReLU slope): a "
                 "late sum may be wrong, not late; a communicator per model (MPI_Comm_dup) tells two models apart",
                 SC_LAYER_VALUES_MIN);
    else if (turned)
        snprintf(id->why, sizeof id->why,
                 "every rank's buffer at one place of the step went to another one and came back, twice, while the "
                 "step was learned: two tensors of one shape there in turn (two models trained alternately?); a "
                 "communicator per model (MPI_Comm_dup) tells them apart");
    else if (!by_shape && M == 1 && L == 1)
        snprintf(id->why, sizeof id->why,
                 "every call has one shape (%ld elements) and no buffer of its own: one tensor per step cannot be "
                 "told from several of one size passed in turn through one buffer (a per-step loss "
                 "MPI_Allreduce tells steps apart)", id->slot_count[0]);
    else if (!by_shape && M == 1)
        snprintf(id->why, sizeof id->why,
                 "the step repeats one sequence of %d calls with no call of a shape of its own and no buffer of "
                 "its own per tensor, so where a step starts is unknown (a per-step loss MPI_Allreduce tells "
                 "steps apart)", L);
    else
        id->trusted = 1;
    /* Told apart only by ineligible calls: every slot has one shape. */
    int one_shape = 1;
    for (int s = 1; s < id->nslots; s++) one_shape &= id->slot_shape[s] == id->slot_shape[0];
    id->marker_dependent = id->trusted && M == 1 && nonslot > 0 && one_shape;
    int before_first = 0;
    id->nmarkers =
        id->trusted
            ? sc_id_unit_markers(id, id->nhist, L, id->markers, id->marker_gap, &before_first, SC_MARKERS_MAX)
            : 0;
    id->marker_slot = id->nmarkers > 0 && M == 1 && whole ? before_first % id->nslots : -1;
    id->since_marker = 0;
    id->seen_marker = id->shifted = 0;
    id->misaligned = id->foreign = 0;
    id->off_foreign = 0;
    id->shift_next = -1;
    id->watch = id->trusted && M == 1 && sc_id_own_and_steady(id, id->nhist, L);
    id->kept = whole && 2 * unit <= SC_HIST_CAP && sc_id_unit_steady_at(id, id->nhist, (int)unit);
    id->lineage = id->relearns;
    id->rot = 0;
    id->cache_n = 0;
    id->turns_since = 0;
    id->turn_slot = -1;
    id->watch_moves = id->trusted && id->kept;
    id->move_d = 0;
    id->move_run = 0;
}

#define RESUMED "resumed where it left off, the calls since continuing it for a step and more; learned as "

/* The cached pattern again, from the slot the calls that continued it
 * reached (that slot first). */
static void resume(sc_identity *id)
{
    int n = id->cache_n, first = (int)((id->cache_next + id->cache_match) % n);
    for (int j = 0; j < n; j++) {
        int o = (first + j) % n;
        id->slot_shape[j] = id->cache_shape[o];
        id->slot_count[j] = id->cache_count[o];
        id->slot_dkind[j] = id->cache_dkind[o];
        id->slot_now[j] = id->slot_where[j] = id->cache_where[o];
        id->slot_away[j] = id->slot_last_away[j] = 0;
    }
    id->learned = id->trusted = 1;
    id->nslots = n;
    id->why[0] = '\0';
    snprintf(id->how, sizeof id->how, "%s%s", RESUMED, id->cache_how);
    id->pos = 0;
    id->miss_streak = 0;
    id->marker_dependent = id->nmarkers = 0;
    id->marker_slot = -1;
    id->watch = 0;
    id->kept = id->cache_kept;   /* until a call's buffer differs from its last one */
    id->watch_moves = id->kept;
    id->move_d = 0;
    id->move_run = 0;
    id->lineage = id->cache_lineage;
    id->rot = (id->cache_rot + first) % n;
    id->cache_n = 0;
}

/* Learning: has the cached pattern been continued by the calls since, in
 * a row, for a whole step and SC_RESUME_EXTRA calls more?  Not a step
 * only: a unit learned by mistake (a run of equal blocks inside a longer
 * step, taken for the step on one rank's timing, as seen under
 * AddressSanitizer) would come back at every run of its blocks.
 * Deterministic in the shapes: every rank answers the same. */
static int continues_cache(sc_identity *id)
{
    const sc_call_key *c = sc_id_at(id, id->nhist - 1);
    if (!id->cache_n || !c->eligible) return 0;
    int n = id->cache_n;
    if (c->shape == id->cache_shape[(id->cache_next + id->cache_match) % n]) id->cache_match++;
    else id->cache_match = c->shape == id->cache_shape[id->cache_next];
    return id->cache_match >= (long)n + SC_RESUME_EXTRA;
}

sc_learn_outcome sc_identity_decide(sc_identity *id, const long agreed[SC_VOTE_LEN])
{
    if (!id->voting) return SC_LEARN_GO_ON;
    if (agreed[SC_VOTE_SHAPE] != -agreed[SC_VOTE_NSHAPE]) {
        id->voting = 0;   /* the call leaves the history */
        return SC_LEARN_DISAGREE;
    }
    long L = agreed[SC_VOTE_UNIT];
    commit_call(id);
    if (continues_cache(id)) {
        resume(id);
        return SC_LEARN_DONE;
    }
    if (L <= 0 || L != -agreed[SC_VOTE_NUNIT] || agreed[SC_VOTE_WAIT]) return SC_LEARN_GO_ON;
    /* A unit with a per-step call that is no gradient (a loss, a metric)
     * is no run of layers inside a step: no further evidence needed. */
    int marked = sc_id_unit_markers(id, id->nhist, (int)L, NULL, NULL, NULL, 1) > 0;
    /* Marked only by calls that may be small gradients (a narrow layer's
     * bias under STARCOLL_MIN_BYTES), and no value beside them (a loss):
     * maybe one of a model's identical layers, inside the step, each
     * holding its bias.  Not a gap shows it spans a step (the work before
     * each layer's first call makes one too), nor buffers (malloc hands
     * each layer's back alike): a run longer than such layers run in one
     * step does.  A step with a loss is learned by its loss long before.
     * Buffers of their own may then lengthen it, as an unmarked unit's. */
    int block_like = marked && sc_id_first_value(id, id->nhist, (int)L) < 0;
    /* Marked by one-number sums alone, after gradients that did not
     * repeat with the unit (a model's head before its blocks): the one
     * number may be a gate or a slope in every layer (ReZero, PReLU), and
     * the unit a block inside the step.  A loss-marked step repeats from
     * where learning began (every call of it, however placed), so it is
     * learned at once; this one after the long run, or as a longer unit.
     * Not a unit that was ready before, held only by the wait for turns
     * (ready_L): calls that broke its run since (a validation pass,
     * another model's step) are no head before it. */
    if (marked && !block_like && id->ready_L != L && sc_id_values_one_number(id, id->nhist, (int)L) &&
        sc_id_gradient_before_run(id, (int)L))
        block_like = 1;
    if (block_like) {
        if (id->run_shape[L] < 2 * L + SC_BLOCK_RUN_MAX) return SC_LEARN_GO_ON;
        marked = 0;
    }
    if (!marked && !block_like && !agreed[SC_VOTE_SPANS] && agreed[SC_VOTE_NO_GAP])
        return SC_LEARN_GO_ON;   /* maybe a run inside a step */
    /* The step is the least common multiple of what the ranks' buffers
     * say and, for a unit shapes tell apart, of where their gaps fall.
     * Not of the gaps when every rank holds each tensor of the unit in a
     * buffer of its own, the same every unit: a call one unit on is then
     * the same tensor, so the unit is the step, whatever a gap says (one
     * rank's scheduling hiccup, twice at the same place, once made two
     * steps of one here, and a flush then reached only half the slots).
     * Neither when the unit holds a call of its own shape that is not a
     * gradient (a per-step loss or metric): that call marks the step, and
     * fresh arrays every step that one rank's allocator gives back every
     * other step must not make the step two steps long. */
    /* Nor where some rank's step gap comes every unit: then another's
     * every m units is noise (its compute next to nothing every other
     * step, as random compute times do now and then), far likelier than
     * a model of identical layers whose work before each layer dominates
     * on some rank; a step learned twice too long keeps a one-step flush
     * from reaching half its slots. */
    int gaps_count = !marked && !block_like && sc_id_told_apart_by_shape(id, id->nhist, (int)L) &&
                     agreed[SC_VOTE_NOT_OWN1] && !agreed[SC_VOTE_GAP0];
    long M = 1;
    size_t used = (size_t)snprintf(id->how, sizeof id->how, "a unit of %ld calls%s", L,
                                   marked       ? ", marked by a per-step call that is no gradient"
                                   : block_like ? ", marked by calls that may be small gradients, after a long run"
                                                : "");
    for (int m = 2; !marked && m <= SC_HINT_MAX && M * L <= SC_STEP_MAX; m++) {
        int by_hint = agreed[SC_VOTE_HINT0 + m - 1] > 0, by_gap = gaps_count && agreed[SC_VOTE_GAP0 + m - 1] > 0;
        if (!by_hint && !by_gap) continue;
        M = M / gcd(M, m) * m;
        if (used < sizeof id->how)
            used += (size_t)snprintf(id->how + used, sizeof id->how - used, "; x%d: %s", m,
                                     by_hint && by_gap ? "some rank's buffers and gaps repeat so"
                                     : by_hint     ? "some rank's buffers repeat so"
                                                   : "some rank's step gaps come so");
    }
    /* Held only by the wait for turns: the step as it stands now is the
     * step, agreed when the wait ends.  Buffers that repeat every other
     * step on some rank (fresh arrays an allocator gives back) would
     * otherwise have the longer learning double it, and a one-step flush
     * would reach half of its slots. */
    if (agreed[SC_VOTE_TURN_WAIT]) {
        if (id->ready_L != L) {
            id->ready_L = L;
            id->ready_M = M;
            snprintf(id->ready_how, sizeof id->ready_how, "%s", id->how);
        }
        return SC_LEARN_GO_ON;
    }
    if (id->ready_L == L) {
        M = id->ready_M;
        snprintf(id->how, sizeof id->how, "%s", id->ready_how);
    }
    /* A step of M units is the last M * L calls, which must repeat one
     * step back: gaps every M units say where steps start, not that the
     * units between are equal (ResNet-50's blocks: a unit of one block,
     * gaps at every step of 81 calls, and the step is not nine blocks).
     * Buffers that repeat so (a hint) have shown it already. */
    if (M > 1 && M * L <= SC_STEP_MAX && id->run_shape[M * L] < M * L) return SC_LEARN_GO_ON;
    adopt(id, (int)L, M, agreed[SC_VOTE_NOT_TURNED] == 0);
    return SC_LEARN_DONE;
}

void sc_identity_relearn(sc_identity *id)
{
    /* a trusted pattern of gradients is kept to resume (not one told
     * apart by a per-step call: its markers are not kept) */
    if (id->learned && id->trusted && !id->marker_dependent && id->nslots > 0) {
        int n = id->nslots;
        memcpy(id->cache_shape, id->slot_shape, sizeof(uint64_t) * (size_t)n);
        memcpy(id->cache_where, id->slot_now, sizeof(uint64_t) * (size_t)n);
        memcpy(id->cache_count, id->slot_count, sizeof(long) * (size_t)n);
        memcpy(id->cache_dkind, id->slot_dkind, sizeof(int) * (size_t)n);
        id->cache_n = n;
        id->cache_next = (int)(id->pos % n);
        id->cache_rot = id->rot;
        id->cache_kept = id->kept;
        id->cache_lineage = id->lineage;
        const char *how = strncmp(id->how, RESUMED, strlen(RESUMED)) ? id->how : id->how + strlen(RESUMED);
        snprintf(id->cache_how, sizeof id->cache_how, "%.*s", (int)sizeof id->cache_how - 1, how);
        id->cache_match = 0;
    }
    forget_history(id);
    id->relearns++;
}

int sc_identity_learned(const sc_identity *id) { return id->learned; }
int sc_identity_trusted(const sc_identity *id) { return id->learned && id->trusted; }
int sc_identity_slots(const sc_identity *id) { return id->nslots; }
long sc_identity_slot_count(const sc_identity *id, int slot) { return id->slot_count[slot]; }
int sc_identity_slot_dkind(const sc_identity *id, int slot) { return id->slot_dkind[slot]; }
uint64_t sc_identity_slot_shape(const sc_identity *id, int slot) { return id->slot_shape[slot]; }
uint64_t sc_identity_slot_buffer(const sc_identity *id, int slot) { return id->slot_now[slot]; }
int sc_identity_buffers_kept(const sc_identity *id) { return id->learned && id->kept; }
long sc_identity_lineage(const sc_identity *id, int *rot)
{
    *rot = id->rot;
    return id->lineage;
}
long sc_identity_position(const sc_identity *id) { return id->pos; }
long sc_identity_relearns(const sc_identity *id) { return id->relearns; }
int sc_identity_marker_slot(const sc_identity *id, uint64_t *shape)
{
    if (!id->learned || id->marker_slot < 0) return -1;
    if (shape) *shape = id->markers[0];
    return id->marker_slot;
}
const char *sc_identity_why_exact(const sc_identity *id) { return id->learned ? id->why : "pattern not learned"; }

long sc_identity_misaligned(const sc_identity *id) { return id->learned ? id->misaligned : 0; }
long sc_identity_foreign(const sc_identity *id) { return id->learned ? id->foreign : 0; }

long sc_identity_moves(const sc_identity *id, int *by)
{
    *by = id->moved_by;
    return id->moves;
}

long sc_identity_turns_since(const sc_identity *id, int *slot)
{
    *slot = id->turn_slot;
    return id->learned ? id->turns_since : 0;
}

const char *sc_identity_how(const sc_identity *id) { return id->learned ? id->how : "pattern not learned"; }

uint64_t sc_identity_pattern_hash(const sc_identity *id)
{
    uint64_t h = sc_id_mix64((uint64_t)id->nslots);
    for (int s = 0; s < id->nslots; s++) h = sc_id_mix64(h ^ id->slot_shape[s]);
    return h;
}
