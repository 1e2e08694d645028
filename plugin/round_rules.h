/* When the coordinator closes a round of a slot (DESIGN.md, "Tolerant
 * semantics").  Pure bookkeeping over deposit notices: no MPI, no clocks
 * of its own, so unit tests drive it with synthetic arrivals.
 *
 * A rank's deposits on a slot are numbered by its call count.  A round
 * includes, for each rank, every deposit it has announced so far (the
 * round message carries these counts, so engines include exactly what the
 * coordinator counted).  A rank is *fresh* in a round when it has announced
 * a deposit that no earlier round included. */
#ifndef STARCOLL_ROUND_RULES_H
#define STARCOLL_ROUND_RULES_H

#define SC_BLOCKED_OUTSIDE (-2)   /* blocked_at: in a call outside this engine's rounds */

typedef struct sc_track {
    int n;
    long rounds;          /* rounds closed so far */
    long *announced;      /* per rank: deposits announced (call count) */
    long *included;       /* per rank: deposits included in closed rounds */
    int *absent;          /* per rank: consecutive closed rounds it had nothing fresh in */
    long *exact_upto;     /* per rank: count of its latest deposit flagged flush or exact (it waits for it) */
    long *waits_upto;     /* per rank: count of its latest deposit whose caller waits (or will wait) for it */
    long *counted;        /* per rank: calls it made here with nothing to deposit (a fused group's, made on
                             the members' own slots in an exact mode): a flush needs the count, not a buffer */
    long flush_upto;      /* a flush (or a catch-up) needs every active rank's first flush_upto deposits; 0 none */
    long flush_asked;     /* ... of which a flush deposit asked for this many (the rest is a catch-up's) */
    double quorum_since;  /* time the quorum was first met for the open round; < 0 not yet */
    long max_absent;      /* largest absence seen (staleness, for the report) */
    double fresh_total;   /* sum over closed rounds of their fresh ranks */
} sc_track;

typedef struct sc_rules {
    int k;                /* quorum: fresh ranks a round waits for */
    int staleness;        /* a rank absent from this many rounds in a row is waited for */
    double grace_s;       /* after the quorum is met, wait this long for the rest */
    const unsigned char *gone;   /* per rank: left (finalized); may be NULL */
    /* per rank: counts toward k (ring member); NULL = everybody.  A rank
     * that is not is a child, whose deposits are runs no round cuts. */
    const unsigned char *member;
    /* Per rank: the slot whose round the rank is blocked waiting for, or -1
     * (NULL: nobody).  A rank blocked on another slot cannot deposit here
     * until that round closes, so it is neither counted toward k nor waited
     * for by the staleness bound: waiting for it could never end. */
    const int *blocked_at;
    int slot;             /* the slot of the track being judged */
    /* Set only when no slot's round could close otherwise: then a round
     * that a rank waits for goes on without the ranks blocked elsewhere. */
    int excuse_blocked;
    /* Stall: nobody announced anything for a long while and ranks wait
     * here, blocked by something the library cannot see (an exact
     * collective of the application's): close with the fresh ranks present
     * rather than hang.  Never overrides the staleness bound. */
    int relax_quorum;
    /* Close on anything to include, fresh ranks or not: deposits no other
     * rank will join, such as a fused group's leftovers in an exact mode
     * or a small tensor's own-slot deposit in a tolerant one
     * (engine_fusion.c). */
    int drain;
} sc_rules;

int sc_track_init(sc_track *t, int n);
void sc_track_free(sc_track *t);

/* How a deposit asks to be reduced (flags of sc_track_announce).
 *   FLUSH: at a program point (MPI_Pcontrol(0) or (2), a pattern change):
 *          its round waits until every active rank has made as many calls,
 *          so a rank behind in calls catches up first (those calls get
 *          rounds of their own).
 *   EXACT: made while an exact mode is in force: its round waits for a
 *          fresh deposit of every member, whatever their call counts, so
 *          a switch from a tolerant mode costs no catch-up. */
enum { SC_DEP_FLUSH = 1, SC_DEP_EXACT = 4 };

/* Record that rank r has announced `count` deposits on this slot; flags
 * (SC_DEP_*) describe the latest. */
void sc_track_announce(sc_track *t, int r, long count, int flags);

/* Rank r has made `count` calls on this slot, with nothing to deposit
 * for the ones beyond its announced deposits: a flush of this slot does
 * not wait for them (nothing is included for them). */
void sc_track_counted(sc_track *t, int r, long count);

/* Is there anything to include at all? */
int sc_track_has_news(const sc_track *t);

/* Going direct needs equal call counts: rounds hold every active rank's
 * deposits beyond count-1 back until all have made `count` (catch-up). */
void sc_track_catch_up(sc_track *t, long count);
/* The catch-up is off (the mode went tolerant: the ranks behind now make
 * those calls fused, on their group, and would never reach the count on
 * this slot); a flush a deposit asked for stays. */
void sc_track_cancel_catch_up(sc_track *t);
/* A flush or a catch-up is pending. */
int sc_track_flushing(const sc_track *t);

typedef enum { SC_WAIT = 0, SC_CLOSE = 1 } sc_verdict;
/* Decide at time now whether the open round closes.  *wake_s gets the time
 * at which the verdict may change without new arrivals (or a negative value). */
sc_verdict sc_round_verdict(sc_track *t, const sc_rules *r, double now, double *wake_s);

/* Close the round: fills incl[] (per rank counts the round includes),
 * returns the number of fresh ranks, updates absences. */
int sc_round_close(sc_track *t, const sc_rules *r, long *incl);
#endif
