/* Call identity, this rank's evidence on a candidate unit: what its
 * shapes, its values, this rank's buffers and its gaps say of the last
 * calls (identity_evidence.c).  Shapes and values are the same on every
 * rank, so those answers are too; buffers and gaps are this rank's hints. */
#include "identity_internal.h"
#include <stdlib.h>

static int need_matches(int L)
{
    /* 3 units (2 after the first), and never fewer than the minimum calls,
     * so a run of equal shapes inside a longer step (A A A B) is not taken
     * for a step of one */
    int window = 3 * L > SC_LEARN_MIN_CALLS ? 3 * L : SC_LEARN_MIN_CALLS;
    return window - L;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The unit of the last L of the first n calls: does it hold two shapes or
 * more, one of them once only?  Deterministic in the shapes, so every rank
 * answers the same. */
int sc_id_told_apart_by_shape(const sc_identity *id, long n, int L)
{
    uint64_t *s = malloc(sizeof(uint64_t) * (size_t)L);
    if (!s) return 0;
    for (int j = 0; j < L; j++) s[j] = sc_id_at(id, n - L + j)->shape;
    qsort(s, (size_t)L, sizeof *s, cmp_u64);
    int distinct = 0, single = 0;
    for (int j = 0; j < L;) {
        int k = j;
        while (k < L && s[k] == s[j]) k++;
        distinct++;
        single |= k - j == 1;
        j = k;
    }
    free(s);
    return distinct >= 2 && single;
}

/* The ineligible calls of the last unit of U calls whose shape occurs once
 * in it (a per-step loss or metric: they mark where steps start): how many,
 * up to max, with their shapes in out when it is not NULL, in gap the
 * eligible calls from the marker before (the unit's last one for the
 * first) up to each, and in *before_first those before the first. */
int sc_id_unit_markers(const sc_identity *id, long n, int U, uint64_t *out, int *gap, int *before_first, int max)
{
    int found = 0, eligible = 0, total = 0, between = 0;
    for (int j = 0; j < U; j++) {
        const sc_call_key *c = sc_id_at(id, n - U + j);
        if (c->eligible) {
            eligible++;
            total++;
            continue;
        }
        if (found == max) continue;
        int occurs = 0;
        for (int i = 0; i < U && occurs < 2; i++) occurs += sc_id_at(id, n - U + i)->shape == c->shape;
        if (occurs == 1) {
            if (out) out[found] = c->shape;
            if (gap) gap[found] = eligible;
            if (found > 0) between += eligible;
            else if (before_first) *before_first = eligible;
            eligible = 0;
            found++;
        }
    }
    /* the first marker's: after the last one, around to it */
    if (gap && found > 0) gap[0] = total - between;
    return found;
}

/* The place in the unit (the last U of n calls) of its first value, a
 * call that is surely no gradient (a loss, a count, a flag), or -1: a unit
 * whose only calls off the slots may be small gradients
 * (sc_call_key.maybe_gradient, a narrow layer's bias) may be one of a
 * model's identical blocks, each holding its bias, and its marker would
 * make one block the step. */
int sc_id_first_value(const sc_identity *id, long n, int U)
{
    for (int j = 0; j < U; j++)
        if (sc_id_is_value(sc_id_at(id, n - U + j))) return j;
    return -1;
}

/* The unit (the last U of n calls) holds values, and each is a one-number
 * sum under the size floor (sc_call_key.one_number): a loss, or a
 * one-number parameter's gradient in every layer. */
int sc_id_values_one_number(const sc_identity *id, long n, int U)
{
    int values = 0;
    for (int j = 0; j < U; j++) {
        const sc_call_key *c = sc_id_at(id, n - U + j);
        if (!sc_id_is_value(c)) continue;
        if (!c->one_number) return 0;
        values++;
    }
    return values > 0;
}

/* Before the run of calls that repeat with the unit of L, since learning
 * began: a call that is or may be a gradient (a model's head before its
 * identical blocks).  first_gradient is kept as calls commit, as an index
 * since learning began, so this holds however far back the history ring
 * reaches, with no scan of it per call.  A count or a flag summed at
 * start is none, however many. */
int sc_id_gradient_before_run(const sc_identity *id, int L)
{
    long end = id->nhist - id->run_shape[L] - L;   /* where the unit's first copy in the run starts */
    return end > 0 && id->first_gradient >= 0 && id->first_gradient < end;
}

/* Every call of the unit (the last U of n calls) in a buffer of its own on
 * this rank: then buffers equal one unit back are the same tensors. */
int sc_id_own_buffers(const sc_identity *id, long n, int U)
{
    uint64_t *w = malloc(sizeof(uint64_t) * (size_t)U);
    if (!w) return 0;
    for (int j = 0; j < U; j++) w[j] = sc_id_at(id, n - U + j)->where;
    qsort(w, (size_t)U, sizeof *w, cmp_u64);
    int distinct = 1;
    for (int j = 1; j < U && distinct; j++) distinct = w[j] != w[j - 1];
    free(w);
    return distinct;
}

/* The k-th smallest of m[0..n) (reorders m), in linear time on average. */
static double kth_smallest(double *m, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = m[(lo + hi) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (m[i] < pivot) i++;
            while (m[j] > pivot) j--;
            if (i <= j) {
                double t = m[i];
                m[i++] = m[j];
                m[j--] = t;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else break;
    }
    return m[k];
}

/* The gap before call start + j dominates the unit of U calls from start:
 * at least 200 us, and twice any other gap of the unit. */
static int gap_dominates(const sc_identity *id, long start, int U, int j)
{
    double top = sc_id_at(id, start + j)->gap, next = 0;
    for (int k = 0; k < U; k++)
        if (k != j && sc_id_at(id, start + k)->gap > next) next = sc_id_at(id, start + k)->gap;
    return top >= 200e-6 && top >= 2 * next;
}

/* This rank's gaps: over the last two units of U calls, one place of the
 * unit was preceded both times by a gap that dominates its unit (the
 * forward pass before a step's first gradient), and the smaller of the
 * two is three times the median place's.  Each unit on its own, not the
 * smaller gap at each place: a code's own work between calls (filling a
 * fresh buffer, longer before larger tensors) repeats with a model's
 * layers, and the work before one of GPT-2's large tensors, paired with
 * the true step gap one unit on, once passed for a step start every
 * three layers, putting tensors of different layers in one slot. */
static int step_gap_shows(const sc_identity *id, long n, int U)
{
    if (U < 2 || n < 2L * U) return 0;
    double *m = id->scratch, top = -1, next = -1;
    int place = 0;   /* of top */
    long ia = (n - 2L * U) % SC_HIST_CAP, ib = (n - U) % SC_HIST_CAP;   /* no modulo per call compared */
    for (int j = 0; j < U; j++, ia = ia + 1 == SC_HIST_CAP ? 0 : ia + 1, ib = ib + 1 == SC_HIST_CAP ? 0 : ib + 1) {
        double a = id->hist[ia].gap, b = id->hist[ib].gap;
        m[j] = a < b ? a : b;
        if (m[j] > top) {
            next = top;
            top = m[j];
            place = j;
        } else if (m[j] > next) {
            next = m[j];
        }
    }
    if (top < 200e-6 || top < 2 * next) return 0;
    if (!gap_dominates(id, n - 2L * U, U, place) || !gap_dominates(id, n - U, U, place)) return 0;
    return top >= 3 * kth_smallest(m, U, (U - 1) / 2);
}

/* The newest of n calls, an eligible one, back in its buffer X after one
 * unit in another, Y, which it had been in once before, a steady run of X
 * ago: Y X X.. X Y X at this place of the unit of L calls (the newest
 * last).  Two tensors of one shape in turn (a GAN's critic, then its
 * generator), which no shape shows.  Twice, and with the same Y: not the
 * buffers an allocator gives back every other step (X Y X Y), nor one that
 * moved for good or now and then by chance. */
int sc_id_buffer_turned(const sc_identity *id, long n, int L)
{
    if (L <= 0 || n < 5L * L + 1) return 0;
    const sc_call_key *c0 = sc_id_at(id, n - 1), *c1 = sc_id_at(id, n - 1 - L);
    if (!c0->eligible || c1->shape != c0->shape || c1->where == c0->where) return 0;
    int a = 0;   /* the run of X between the two Ys */
    for (long j = 2; j * L < n && j * L < SC_HIST_CAP; j++) {
        const sc_call_key *c = sc_id_at(id, n - 1 - j * L);
        if (c->shape != c0->shape) return 0;
        if (c->where == c0->where) {
            a++;
            continue;
        }
        return a >= 2 && c->where == c1->where;
    }
    return 0;
}

/* The unit of L calls ending before call `end` in buffers of this rank's
 * own, each the same as one unit before. */
int sc_id_unit_steady_at(const sc_identity *id, long end, int L)
{
    if (end < 2L * L) return 0;
    if (L > 1 && sc_id_at(id, end - 1)->where == sc_id_at(id, end - 2)->where)
        return 0;   /* one buffer (staging): at once */
    for (long i = end - L; i < end; i++) {
        const sc_call_key *c = sc_id_at(id, i), *back = sc_id_at(id, i - L);
        if (c->where != back->where || c->shape != back->shape) return 0;
    }
    return sc_id_own_buffers(id, end, L);
}

/* This rank's buffers are its own per call of the unit of L, the same as
 * one unit back, in one of the last three units: each tensor keeps its
 * buffer.  Not the newest unit alone: a unit becomes the candidate only
 * after a few repeats, and the other model's step may be the one then. */
int sc_id_own_and_steady(const sc_identity *id, long n, int L)
{
    for (int j = 0; j < 3 && (long)j * L < SC_HIST_CAP - 2L * L; j++)
        if (sc_id_unit_steady_at(id, n - (long)j * L, L)) return 1;
    return 0;
}

/* The next unit after `after` that the recent shapes repeat (next_shape,
 * with the call just added), or 0. */
int sc_id_candidate_unit(const sc_identity *id, long n, int after)
{
    for (int L = after + 1; L <= SC_STEP_MAX && L < n; L++)
        if (id->next_shape[L] >= need_matches(L)) return L;
    return 0;
}

/* This rank's view of a candidate unit L: its address hint (the smallest m
 * whose m units its buffers repeat over three times, 0 none), and whether
 * it shows the unit spans a whole step (identity.h): buffers of their own
 * repeating with it, a run longer than any step, or a step gap every
 * `*gap` units. */
int sc_id_judge_unit(const sc_identity *id, long n, int L, int *hint, int *gap)
{
    int mmax = SC_STEP_MAX / L < SC_HINT_MAX ? SC_STEP_MAX / L : SC_HINT_MAX;
    *hint = *gap = 0;
    for (int m = 1; m <= mmax && !*hint; m++)
        if (id->next_where[m * L] >= 2 * m * L) *hint = m;
    for (int m = 1; m <= mmax && !*gap; m++)
        if (step_gap_shows(id, n, m * L)) *gap = m;
    int U = *hint > 1 ? *hint * L : L;
    return id->next_shape[L] >= 2 * L + SC_STEP_MAX || (*hint && U >= 2 && sc_id_own_buffers(id, n, U));
}

/* The unit's calls (the last U of n) between the calls of its first
 * value's shape (an ineligible call that is no gradient: a loss), around
 * the unit, where that shape comes twice or more: do two such runs that
 * hold calls differ?  Then the unit is two steps of different patterns in
 * turn, each with its loss: PowerSGD's power iteration sums its packed P
 * factors one step and its Q factors the next, and each rank computes the
 * next factors from the last sum at once (through an orthogonalization),
 * so a late or partial sum is wrong, not late (at 8 ranks under quorum
 * its loss went back from 0.2 to 1.0).  A value that comes once marks one
 * step (sc_id_unit_markers); a one-number sum that comes SC_LAYER_VALUES_MIN
 * times or more is a parameter of every layer.  Deterministic in the
 * shapes: the same on every rank. */
int sc_id_alternates(const sc_identity *id, long n, int U)
{
    int first = sc_id_first_value(id, n, U), times = 0;
    if (first < 0) return 0;
    const sc_call_key *v = sc_id_at(id, n - U + first);
    uint64_t value = v->shape, seen = 0, run = 0;
    for (int j = 0; j < U; j++) times += sc_id_at(id, n - U + j)->shape == value;
    if (times < 2) return 0;
    if (v->one_number && times >= SC_LAYER_VALUES_MIN) return 0;
    int held = 0, kinds = 0;
    for (int k = 1; k <= U; k++) {
        const sc_call_key *c = sc_id_at(id, n - U + (first + k) % U);
        if (c->shape != value) {
            run = sc_id_mix64(run ^ c->shape);
            held |= c->eligible;
            continue;
        }
        if (held) {
            if (kinds == 0) seen = run, kinds = 1;
            else if (run != seen) return 1;
        }
        run = 0;
        held = 0;
    }
    return 0;
}
