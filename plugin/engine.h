/* The tolerant engine of one communicator: a per-rank thread that serves
 * rounds on private duplicates of the user's communicator, so a rank whose
 * main thread is still computing contributes what it holds (nothing, or a
 * late buffer) and never holds a round up.  One rank, the coordinator,
 * collects deposit notices, closes rounds by the rules of round_rules.h and
 * sends the round messages, which also carry mode changes, so every rank
 * switches at the same round. */
#ifndef STARCOLL_ENGINE_H
#define STARCOLL_ENGINE_H
#include <mpi.h>
#include "eligibility.h"
#include "identity.h"
#include "sc_features.h"

typedef struct sc_engine sc_engine;

/* Per-slot figures for the report (this rank's view; the coordinator's
 * also holds the round bookkeeping). */
typedef struct sc_engine_stats {
    long rounds;               /* rounds this rank took part in */
    double fresh_sum;          /* fresh buffers summed over rounds */
    long late_calls;           /* calls that returned missed rounds without waiting */
    long max_staleness;        /* coordinator: largest absence of a rank, in rounds */
    double wait_s;             /* main thread: time blocked waiting for its round */
    long mode_rounds[SC_NMODES];
    long child_rounds;         /* rounds this rank spent as a child (groups) */
    long relaxed;              /* coordinator: rounds closed below quorum to end a stall */
    long min_fresh;            /* coordinator: fewest fresh ranks in a quorum round (-1: none) */
    long fused_calls;          /* calls whose buffers rode in a group's fused round (engine_fusion.c) */
    long polled;               /* rounds and direct-step calls whose collectives were polled (engine_crowd.c);
                                  added atomically: the engine's and the caller's threads both count */
    long copied_bytes;         /* bytes of callers' buffers copied in (deposits, fusion stages) and results
                                  copied out (inboxes); results reduced straight into a waiting caller's buffer
                                  count nothing.  Added atomically: the caller's and engine's threads both copy. */
} sc_engine_stats;

/* Start the engine for comm, whose eligible calls follow the agreed
 * pattern (its slots).  Collective over comm (duplicates it).  learn_load_s: this
 * rank's compute time while the pattern was learned, plus the time its
 * cgroup's CPU quota throttled it then, and learn_given, the share of the
 * CPU its calling thread was given while runnable then (< 0 unknown), place
 * the coordinator.  NULL on failure, with a notice; the caller then stays
 * exact. */
sc_engine *sc_engine_start(MPI_Comm comm, const sc_identity *id, sc_mode mode, const char *comm_label,
                           double learn_load_s, double learn_given);

/* One user call as the application made it. */
typedef struct sc_user_call {
    const void *sendbuf;
    void *recvbuf;
    int count;
    MPI_Datatype dt;
    MPI_Op op;
} sc_user_call;

/* One eligible call on the pattern: slot s at position pos (identity.h).
 * exact: wait for the round holding this buffer (sync semantics, flush);
 * else return missed rounds at once when there are any.  Returns
 * MPI_SUCCESS whenever the call completed as its mode defines, late or
 * not; an MPI error code for a real failure.  *first_off: in a lockstep
 * step, a rank found off the pattern (the call then fails), else -1. */
int sc_engine_call(sc_engine *e, int slot, long pos, const void *sendbuf, void *recvbuf, int exact, int *first_off);

/* A nonblocking call (MPI_Iallreduce) whose user request is `req`, a
 * generalized request (MPI_Grequest_start) made by the caller.  Whoever
 * completes the call writes the result into recvbuf first, sets rc, and
 * then completes req; nothing touches the call or recvbuf after that (req's
 * free function may free the call inside MPI_Grequest_complete). */
typedef struct sc_nb_call {
    MPI_Request req;
    void *recvbuf;
    int rc;
} sc_nb_call;

/* sc_engine_call for a nonblocking call: the deposit is a copy, and
 * *pending = 1 when the engine completes nb later (when the round holding
 * the deposit is in: the results go to nb->recvbuf and nb->req completes,
 * from the engine's thread); *pending = 0 when the call completed here
 * (missed rounds returned at once, a direct step, or a failure: the
 * caller completes req). */
int sc_engine_icall(sc_engine *e, int slot, long pos, const void *sendbuf, void *recvbuf, int exact, int *first_off,
                    sc_nb_call *nb, int *pending);

/* An eligible call off the pattern at position pos, whose slot would be
 * `slot`, of shape `shape`: waits until every rank's call at that position
 * is known, and gives the verdict (SC_OFF_STRAY: every rank made this call;
 * SC_OFF_REJECT: not, *first_off names a rank whose call differed). */
int sc_engine_off(sc_engine *e, int slot, long pos, uint64_t shape, sc_off_verdict *verdict, int *first_off);
/* Then: the stray call run exact by every rank (call), or a rejected one
 * (NULL); the rank takes part in rounds again. */
int sc_engine_off_done(sc_engine *e, const sc_user_call *call);
/* A call whose buffer says the step moved on this rank only
 * (sc_identity_off_moved): in rounds, as sc_engine_off with `shape` marked
 * SC_SHAPE_MOVED, the rank back in the rounds unless every rank's call was
 * so (SC_OFF_STRAY); in a direct step, where nothing rides into a later
 * sum and an off call would fail the others' calls, SC_OFF_REJECT at once. */
int sc_engine_off_moved(sc_engine *e, int slot, long pos, uint64_t shape, sc_off_verdict *verdict);

/* MPI_Pcontrol(2): the next call on every slot is an exact round. */
void sc_engine_flush_next(sc_engine *e);

/* The mode rounds currently run in (changes only at round boundaries). */
sc_mode sc_engine_mode(sc_engine *e);
/* The steps run direct (plain collectives, no rounds): the same on every
 * rank at every program point between two eligible calls (engine_direct.c). */
int sc_engine_direct(sc_engine *e);

/* This rank is about to block in a call outside e's rounds (away=1), or is
 * back (away=0): e's coordinator neither counts on it nor waits for it.
 * what: which call (SC_AWAY_*), for the stall watchdog. */
enum { SC_AWAY_OTHER = 0, SC_AWAY_BARRIER, SC_AWAY_BCAST, SC_AWAY_REDUCE, SC_AWAY_ALLGATHER, SC_AWAY_GATHER,
       SC_AWAY_SCATTER, SC_AWAY_ALLTOALL, SC_AWAY_ALLREDUCE, SC_AWAY_OTHER_COMM, SC_AWAY_WAIT, SC_AWAY_TEST,
       SC_AWAY_ALLGATHERV, SC_AWAY_GATHERV, SC_AWAY_SCATTERV, SC_AWAY_ALLTOALLV, SC_AWAY_REDUCE_SCATTER, SC_AWAY_SCAN,
       SC_AWAY_SEND, SC_AWAY_RECV, SC_AWAY_SENDRECV, SC_AWAY_PROBE, SC_AWAY_COMM_CREATE, SC_AWAY_FILE, SC_AWAY_WIN,
       SC_AWAY_NEIGHBOR, SC_AWAY_N };
/* what a rank away in call `what` is doing: "in MPI_Barrier" */
const char *sc_away_name(int what);
void sc_engine_away(sc_engine *e, int away, int what);

/* Seconds on the monotonic clock (no MPI call). */
double sc_now(void);

/* For the stall sentinel (stall_sentinel.c), which calls nothing of MPI's:
 * what this engine's threads do at `now`.  app: its application thread,
 * one phrase.  speak: its engine thread has been silent past
 * STARCOLL_STALL while the application thread waits, and this rank says
 * so now (it coordinates, or STARCOLL_VERBOSE >= 2): engine holds the
 * line's start, next_s the silence at which it speaks again. */
typedef struct sc_engine_view {
    int speak;
    double next_s;
    char engine[400];
    char app[200];
} sc_engine_view;
void sc_engine_look(sc_engine *e, double now, sc_engine_view *v);
/* Set by the plugin: called around a wait inside sc_engine_call, so the
 * engines of the other communicators learn the same. */
typedef void (*sc_away_fn)(sc_engine *waiting_in, int away);
extern sc_away_fn sc_engine_away_hook;

/* Say this rank leaves, without waiting (sc_engine_leave then waits). */
void sc_engine_announce_leave(sc_engine *e);

/* After announcing they leave: a rank whose engines run direct (plain
 * collectives by the application threads) takes part in them, with nothing
 * to add, until the rounds resume (its leave notice asks for that) or every
 * rank has left; so the ranks still running never wait for it. */
void sc_engine_serve_while_direct(sc_engine **engines, int n);

/* This rank leaves (MPI_Finalize, the communicator is freed, or the
 * pattern changed): rounds go on without it; returns once every rank has
 * left and every announced deposit has been reduced.  Frees the engine;
 * stats (summed over slots) are copied out.  leftover (may be NULL)
 * receives each slot's results not yet returned. */
typedef void (*sc_leftover_fn)(void *ctx, int slot, const void *buf, size_t bytes);
void sc_engine_leave(sc_engine *e, sc_engine_stats *out, sc_leftover_fn leftover, void *ctx);
#endif
