/* Which tensor of the step a call is: the identity every rank agrees on
 * (DESIGN.md, "Identity of a call").  Pure C, no MPI: the plugin feeds it
 * calls and the outcome of its agreement collectives (agree.c).
 *
 * A call is known by its shape: count, datatype, op, and whether it is
 * eligible; never by where its buffers are.  Every MPI_Allreduce on the
 * communicator counts, ineligible ones too (a per-step loss or metric
 * marks where a step starts).  While learning, every rank keeps the same
 * history of shapes, so every rank finds the same repeating unit at the
 * same call; the agreement collective that precedes each call confirms it
 * (the shapes are equal everywhere) and combines the hints only a rank can
 * see, its buffer addresses.
 *
 * Addresses only ever lengthen the step: a rank whose buffers repeat every
 * m units (each tensor keeps its own buffer) shows the step is m units
 * long; so does a gap before every m-th unit on every rank, for a unit
 * shapes tell apart.  A longer step than the true one never mixes two tensors (the same
 * tensor of two steps lands in two slots); a shorter one would.
 *
 * Buffers kept per tensor also show what no shape can: two models of the
 * same shapes trained in turn (a GAN), as one place's buffer leaving for
 * another for a step and coming back (sc_identity_turns_since).
 *
 * A run of equal blocks inside one step (a model's repeated layers) also
 * repeats, so a unit is agreed only with evidence that it spans a whole
 * step: some rank keeps a buffer per tensor and its buffers repeat with
 * the unit; or on every rank one place in the unit is preceded by a gap
 * (the forward pass) at least twice any other in each of the last two
 * units, each unit on its own; or the unit has repeated for longer than
 * any step can be (SC_STEP_MAX calls), so no run inside a step could have
 * lasted that long.
 *
 * A unit is *told apart* (trusted) when it holds at least two shapes, one
 * of them once only, or when addresses lengthened it.  A unit of one shape
 * (A A A A) cannot say whether a step is one tensor or several of one
 * size passed in turn through one buffer: it stays exact and the report
 * says so.  A unit told apart only by its ineligible calls (every gradient
 * of one shape, plus a loss) is checked at each such call: the step must
 * have held its whole number of gradients since the last one.
 *
 * After learning, eligible calls map to slots by their position: the
 * on-pattern calls since learning, modulo the slots per step.  A call
 * whose shape is not its slot's is *off* the pattern: what happens then is
 * agreed by all ranks (a stray call all ranks make, exact; a call some
 * rank makes alone, an error; a whole step off, learning again).  So is
 * a call, on a rank that kept a buffer per tensor, in another slot's
 * buffer (a step that left a gradient out, where shapes cannot show it):
 * learning again where every rank's is so, on its slot where not. */
#ifndef STARCOLL_IDENTITY_H
#define STARCOLL_IDENTITY_H
#include <stdint.h>

#define SC_STEP_MAX 2048       /* longest unit learned, in calls (eligible or not) */
#define SC_SLOTS_MAX 2048      /* eligible calls per step */
#define SC_HINT_MAX 16         /* a rank's address hint: the step is m units, m <= this */
#define SC_LEARN_MIN_CALLS 12  /* evidence needed before trusting a short unit */
/* A unit marked only by calls that may be small gradients (a narrow
 * layer's bias, sc_call_key.maybe_gradient) may be one of a model's
 * identical layers: it is trusted after a run of this many calls, longer
 * than such layers run inside one step (a model whose sums under the
 * size floor are small gradients is a narrow one). */
#define SC_BLOCK_RUN_MAX 256
/* A rank whose buffers are its own and the same every unit keeps the step
 * learning for this many units, so that two models of the same shapes
 * trained in turn (a GAN's critic K steps, then its generator once) can
 * show, twice, as one place's buffer going elsewhere and coming back: for
 * K up to (SC_TURN_UNITS - 3) / 2. */
#define SC_TURN_UNITS 18
/* A one-number sum that comes this many times or more in a step, between
 * runs of calls that differ, is a parameter in every layer (a ReZero
 * gate, a PReLU slope), not the loss of each of a step's patterns in turn
 * (a GAN's critic steps and its generator's: fewer, and up to
 * (SC_TURN_UNITS - 3) / 2 critic steps are shown by buffers). */
#define SC_LAYER_VALUES_MIN 9
/* A dropped step is resumed where it left off once the calls since have
 * continued it for a whole step and this many calls more (sc_identity_decide):
 * longer than ResNet-50's longest run of equal blocks (5 of 9 calls). */
#define SC_RESUME_EXTRA 64

typedef struct sc_call_key {
    uint64_t shape;            /* count, datatype, op, eligibility: equal on every rank */
    uint64_t where;            /* the buffers' addresses: this rank's hint only */
    double gap;                /* seconds since the previous call on the communicator returned: a hint too */
    long count;
    int dkind;                 /* sc_dkind of an eligible call */
    int eligible;
    /* An ineligible call that may yet be a gradient: a float or double
     * MPI_SUM of 2 elements and up, under STARCOLL_MIN_BYTES only (a
     * narrow layer's bias).  Such a call in every block of a model's
     * identical blocks would mark each block as a step, so it marks no
     * step (sc_identity_decide).  A loss is one number; an op other
     * than MPI_SUM, an integer type, or a count named in STARCOLL_EXACT
     * is no gradient. */
    int maybe_gradient;
    /* An ineligible float or double MPI_SUM of one element, under
     * STARCOLL_MIN_BYTES only: a loss, or a one-number parameter's
     * gradient in every layer (a ReZero gate, a PReLU slope, Fixup's
     * scalars), which marks each layer as a step just as a small bias
     * would.  Such a unit is trusted at once only where its run reaches
     * back to where learning began (sc_identity_decide). */
    int one_number;
} sc_call_key;

/* The agreement vote: one per call while learning, reduced with MPI_MAX
 * over the communicator; negated fields give the minimum. */
enum { SC_VOTE_SHAPE, SC_VOTE_NSHAPE, SC_VOTE_UNIT, SC_VOTE_NUNIT, SC_VOTE_WAIT,
       SC_VOTE_SPANS,          /* this rank's buffers, or the run's length, show the unit spans a step */
       SC_VOTE_NO_GAP,         /* this rank's gaps do not show where steps start (MAX: any such rank) */
       SC_VOTE_NOT_OWN1,       /* this rank's buffers are not its own, the same every unit (MAX: any such rank) */
       SC_VOTE_NOT_TURNED,     /* this rank's buffers did not show two tensors in turn (MAX: any such rank) */
       SC_VOTE_TURN_WAIT,      /* this rank's buffers are its own and steady: learn on, so turns can show */
       SC_VOTE_HINT0,          /* + m - 1: this rank's buffers repeat every m units */
       SC_VOTE_GAP0 = SC_VOTE_HINT0 + SC_HINT_MAX,   /* + m - 1: its step gap comes every m units */
       SC_VOTE_LEN = SC_VOTE_GAP0 + SC_HINT_MAX };

typedef enum {
    SC_ID_LEARNING = 0,        /* no pattern yet: the call is exact, after an agreement */
    SC_ID_SLOT,                /* on the pattern: *slot is its tensor */
    SC_ID_OFF,                 /* eligible and off the pattern: the ranks must agree what to do */
    SC_ID_PASS                 /* ineligible call after learning: passes through */
} sc_id_kind;

/* Outcome of one learning agreement. */
typedef enum {
    SC_LEARN_GO_ON = 0,        /* keep learning */
    SC_LEARN_DONE,             /* a pattern is agreed (told apart or not: sc_identity_trusted) */
    SC_LEARN_DISAGREE          /* the ranks' calls differ here */
} sc_learn_outcome;

/* What all ranks agreed about an off-pattern call. */
typedef enum {
    SC_OFF_STRAY = 1,          /* every rank made it: exact, the pattern stays */
    SC_OFF_REJECT,             /* some rank did not: an error, the pattern stays */
    SC_OFF_RELEARN,            /* the pattern changed: learn again from this call */
    SC_OFF_ON                  /* a moved buffer only this rank saw (sc_identity_off_moved): the call is on the pattern */
} sc_off_verdict;

typedef struct sc_identity sc_identity;

sc_identity *sc_identity_new(void);
void sc_identity_free(sc_identity *id);

/* Classify one call; *slot gets the slot of an SC_ID_SLOT call (the
 * position advances), or the expected slot of an SC_ID_OFF one. */
sc_id_kind sc_identity_next(sc_identity *id, const sc_call_key *k, int *slot);

/* Learning: this rank's vote for call k (it enters the history). */
void sc_identity_vote(sc_identity *id, const sc_call_key *k, long vote[SC_VOTE_LEN]);
/* ... and the outcome from the votes reduced with MPI_MAX.  On
 * SC_LEARN_DISAGREE the call leaves the history again. */
sc_learn_outcome sc_identity_decide(sc_identity *id, const long agreed[SC_VOTE_LEN]);

/* An off-pattern call's agreed fate; returns what it comes to: STRAY
 * turns into RELEARN once a whole step went off the pattern (every rank
 * counts the same).  On RELEARN the caller drops what runs the old pattern,
 * then calls sc_identity_relearn.  For a moved call (sc_identity_off_moved)
 * STRAY, every rank's buffers moved alike, is RELEARN at once; any other
 * verdict is ON: the caller asks sc_identity_next again, which takes the
 * call on its slot. */
sc_off_verdict sc_identity_settle(sc_identity *id, sc_off_verdict v);
/* The last SC_ID_OFF was a call on its slot's shape whose buffer, on this
 * rank that has kept a buffer per tensor since learning, is another
 * slot's of this step: the step moved on (a gradient left out of a step),
 * as far as this rank's buffers tell.  Its rounds would take one tensor's
 * late buffers into another's sum, so it goes off the pattern, with its
 * shape or-ed with SC_SHAPE_MOVED: where every rank's call there is so,
 * the step is learned again; where some rank's is on the pattern (fresh
 * buffers show nothing), it is on the pattern after all. */
int sc_identity_off_moved(const sc_identity *id);
#define SC_SHAPE_MOVED (1ULL << 62)   /* above sc_shape_hash's 62 bits */
/* Learn again from the next call. */
void sc_identity_relearn(sc_identity *id);

/* The agreed pattern. */
int sc_identity_learned(const sc_identity *id);
int sc_identity_trusted(const sc_identity *id);      /* its tensors are told apart: tolerable */
int sc_identity_slots(const sc_identity *id);        /* eligible calls per step */
long sc_identity_slot_count(const sc_identity *id, int slot);
int sc_identity_slot_dkind(const sc_identity *id, int slot);
uint64_t sc_identity_slot_shape(const sc_identity *id, int slot);
/* This rank's buffer hint (sc_where_hash) of slot's latest call, its
 * learned one before any; 0 unknown.  On this rank only: it tells which
 * tensor a slot is across patterns where buffers are kept per tensor. */
uint64_t sc_identity_slot_buffer(const sc_identity *id, int slot);
/* This rank kept a buffer of its own per slot, the same from two steps
 * before the pattern was agreed to its latest call: a buffer is a tensor. */
int sc_identity_buffers_kept(const sc_identity *id);
/* Which pattern this is, the same on every rank: the relearn count when it
 * was learned (a pattern resumed where it left off keeps it), and in *rot
 * how far its slots turned since (its slot j is slot (j + rot) mod n of
 * the pattern as learned). */
long sc_identity_lineage(const sc_identity *id, int *rot);
long sc_identity_position(const sc_identity *id);    /* on-pattern eligible calls since learning */
long sc_identity_relearns(const sc_identity *id);
/* Where the step's first per-step call of a shape of its own (a loss)
 * falls: the slot of the gradient after it, its shape in *shape (may be
 * NULL); -1 when the pattern has none.  Two patterns of one shape, both
 * marked by the same call, have the same tensor in that slot. */
int sc_identity_marker_slot(const sc_identity *id, uint64_t *shape);
/* Why an agreed pattern is not told apart, "" when it is. */
const char *sc_identity_why_exact(const sc_identity *id);
/* Two tensors in turn at one place of the step, seen in this rank's own
 * buffers: a place's buffer went to another for a unit, twice the same
 * one, with a steady run between (two models of the same shapes trained
 * in turn, which shapes cannot tell apart).  Seen by every rank while
 * learning, it makes the pattern exact (sc_identity_why_exact says so):
 * every rank runs the same code, and one rank's allocator alone can show
 * such a period by chance.  After learning this gives how often this rank
 * saw it since, and in *slot the first slot. */
long sc_identity_turns_since(const sc_identity *id, int *slot);
/* Steps since learning whose calls between two per-step calls (a loss
 * that marks the step) were on the pattern, but not a whole step of it:
 * calls took slots that were not theirs, as another model's step in
 * turn does whose shapes line up with this one's after a call off it.
 * The same on every rank (shapes and positions are). */
long sc_identity_misaligned(const sc_identity *id);
/* Of those steps, the ones that also held a call off the pattern that
 * is not the next slot's shape after a gradient left out (the calls
 * after such a gap are the slots after it, in order): another model's
 * tensor, whose step lined up with this one's until it.  The same on
 * every rank. */
long sc_identity_foreign(const sc_identity *id);
/* Steps whose calls all moved the same number of slots on (*by, the last),
 * seen by this rank's own buffers (a gradient left out of a step), over
 * every pattern since the identity began.  Only this rank's view. */
long sc_identity_moves(const sc_identity *id, int *by);
/* How the agreed step's length was found: its unit, and which evidence
 * lengthened it to a multiple (for STARCOLL_VERBOSE). */
const char *sc_identity_how(const sc_identity *id);
/* A hash of the pattern's shapes (slot order), to match a later pattern
 * with an earlier one. */
uint64_t sc_identity_pattern_hash(const sc_identity *id);

/* Shape hash of a call: the same on every rank for the same call. */
uint64_t sc_shape_hash(long count, int type_code, int op_code, int eligible);
/* Address hint of a call: the buffer that holds this rank's contribution,
 * sendbuf (NULL for MPI_IN_PLACE: then recvbuf).  Not the receive buffer
 * beside it: codes keep a gradient per tensor (a parameter's .grad) far
 * more often than its receive buffer, which is often a fresh temporary
 * that an allocator may give back every m steps.  Such a period, in a
 * hash of both, once made a step of 3 tensors 12 calls long, and a flush
 * of one step then reached a quarter of the slots. */
uint64_t sc_where_hash(const void *sendbuf, const void *recvbuf);
#endif
