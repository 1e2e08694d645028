/* Call identity's parts, and the state they share (identity.h is what the
 * plugin sees): identity.c learns the step and agrees it, identity_evidence.c
 * weighs a candidate unit on this rank's calls, identity_follow.c maps each
 * call to its slot after learning.  Pure C, no MPI. */
#ifndef STARCOLL_IDENTITY_INTERNAL_H
#define STARCOLL_IDENTITY_INTERNAL_H
#include "identity.h"

#define SC_HIST_CAP (3 * SC_STEP_MAX)   /* calls remembered while learning */
/* The last SC_STEP_MAX calls' shapes and addresses once more (in 32-bit
 * halves), each stored twice (at j and j + SC_RECENT), so the calls 1 to
 * SC_STEP_MAX back lie in one run of memory: the vote compares each with
 * the new call, and that scan, through sc_call_key's 48 bytes with a
 * modulo and a branch per call, was most of a learning call's cost (perf:
 * 35% of the Intel MPI Benchmarks' Allreduce time at 256 B). */
#define SC_RECENT (SC_STEP_MAX + 1)
#define SC_MARKERS_MAX 8

struct sc_identity {
    /* learning: a ring of the calls since learning began, and per lag L
     * the number of consecutive recent calls equal to the call L back */
    int learned;
    sc_call_key *hist;
    long nhist;
    uint32_t *recent;   /* shape low, high, address low, high halves: 2 * SC_RECENT each */
    int *run_shape, *run_where;           /* committed */
    int *next_shape, *next_where;         /* with the call being voted on */
    double *scratch;                      /* SC_STEP_MAX values */
    int voting;                           /* a vote is pending decide */
    long first_gradient;                  /* the first call that is or may be a gradient, -1 none yet */
    /* the agreed pattern */
    int nslots;
    uint64_t *slot_shape;
    long *slot_count;
    int *slot_dkind;
    int trusted;
    char why[400];
    char how[400];             /* how the step's length was found, for STARCOLL_VERBOSE */
    long pos;
    int miss_streak;
    long relearns;
    /* a pattern told apart only by ineligible calls */
    int marker_dependent;
    uint64_t markers[SC_MARKERS_MAX];
    int marker_gap[SC_MARKERS_MAX];     /* eligible calls from the marker before, around the unit */
    int marker_slot;                    /* the slot after markers[0] (sc_identity_marker_slot), -1 none */
    int nmarkers;
    long since_marker;
    int seen_marker, shifted;
    /* a pattern told apart by shapes, with a per-step call: steps whose
     * calls between two such calls were on the pattern, but not a whole
     * step of it (sc_identity_misaligned); of them, steps that also held
     * a call off the pattern that no gradient left out explains (another
     * model's tensor: sc_identity_foreign) */
    long misaligned, foreign;
    int off_foreign;           /* such a call since the last per-step call */
    int shift_next;            /* the slot a call off the pattern is after a gradient left out, -1 none since */
    /* two tensors in turn at one place (sc_identity_turns_since) */
    int turned;                /* while learning: this rank saw one */
    int steady;                /* while learning: this rank's buffers were its own and steady once */
    int watch;                 /* after learning: this rank's buffers were its own, the same every unit */
    uint64_t *slot_where;      /* ... each slot's buffer then */
    uint64_t *slot_now;        /* each slot's buffer at its latest call (its learned one before), 0 unknown */
    int kept;                  /* this rank's buffers are its own per slot, the same at every call since learning */
    /* Which pattern this is: the relearn count when it was learned (a
     * resumed one keeps it), and its slot j is slot (j + rot) mod n of the
     * pattern as learned then.  The same on every rank. */
    long lineage;
    int rot;
    /* The trusted pattern dropped last, resumed where it left off when the
     * calls since continue it for a step and SC_RESUME_EXTRA calls more
     * (continues_cache): a model trained in turn with another (a GAN's
     * critic) comes back to its own step, and the late results owed to it
     * are paid by position. */
    int cache_n;               /* 0: none */
    uint64_t *cache_shape, *cache_where;
    long *cache_count;
    int *cache_dkind;
    int cache_next;            /* the slot it expected next */
    int cache_rot, cache_kept;
    long cache_lineage;
    char cache_how[300];
    long cache_match;          /* eligible calls since that continue it, in a row */
    uint64_t *slot_away;       /* the buffer it is away in, 0 while it is in its own */
    uint64_t *slot_last_away;  /* the buffer of its last time away, 0 none */
    long turns_since;
    int turn_slot;
    /* every slot's buffer the buffer of the slot move_d on, for move_run
     * calls in a row (watch_moves); moves: whole steps seen so, over every
     * pattern (never reset), the last by moved_by slots */
    int watch_moves, move_d, moved_by;
    long move_run, moves;
    /* the last off call was a moved one (sc_identity_off_moved) */
    int off_moved;
    /* the unit and length the step would have had when only the wait for
     * turns held it: the wait delays the step, never lengthens it */
    long ready_L, ready_M;
    char ready_how[400];
};

static inline uint64_t sc_id_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Call i of the history (calls since learning began), from the ring. */
static inline const sc_call_key *sc_id_at(const sc_identity *id, long i)
{
    return &id->hist[i % SC_HIST_CAP];
}

/* A call that is surely no gradient (a loss, a count, a flag): neither
 * eligible nor, under the size floor, maybe a small gradient. */
static inline int sc_id_is_value(const sc_call_key *c)
{
    return !c->eligible && !c->maybe_gradient;
}

/* identity_evidence.c: "the unit of U" is the last U of the first n calls
 * of the history.  Answers from shapes and values are the same on every
 * rank; those from buffers and gaps are this rank's alone. */
int sc_id_told_apart_by_shape(const sc_identity *id, long n, int L);    /* two shapes, one once */
int sc_id_unit_markers(const sc_identity *id, long n, int U, uint64_t *out, int *gap, int *before_first,
                       int max);                                        /* its per-step calls */
int sc_id_first_value(const sc_identity *id, long n, int U);            /* place of its first value, -1 */
int sc_id_values_one_number(const sc_identity *id, long n, int U);      /* its values are one-number sums */
int sc_id_gradient_before_run(const sc_identity *id, int L);            /* a gradient before L's run */
int sc_id_own_buffers(const sc_identity *id, long n, int U);            /* a buffer per call */
int sc_id_buffer_turned(const sc_identity *id, long n, int L);          /* the newest call's buffer came back */
int sc_id_unit_steady_at(const sc_identity *id, long end, int L);       /* own buffers, as a unit before */
int sc_id_own_and_steady(const sc_identity *id, long n, int L);         /* so in one of the last 3 units */
int sc_id_candidate_unit(const sc_identity *id, long n, int after);     /* next unit the shapes repeat */
int sc_id_judge_unit(const sc_identity *id, long n, int L, int *hint, int *gap);   /* hints; spans a step */
int sc_id_alternates(const sc_identity *id, long n, int U);             /* two patterns in turn */

#endif
