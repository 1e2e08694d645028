/* The tolerant engine's state, shared by its files:
 *   engine.c         start, stop, the engine thread, a rank's part of a round
 *   engine_coord.c   the coordinator: notices, closing rounds, decisions, verdicts
 *   engine_member.c  every other rank's engine thread
 *   engine_caller.c  the application thread's side: deposits, waiting, results
 *   engine_nonblocking.c  completing nonblocking calls' requests
 *   engine_direct.c  exact modes as plain collectives by the application threads
 *   engine_groups.c  the ring and its children
 *   engine_decide.c  membership and mode decisions
 *   engine_probe.c   the link probe
 *   engine_stall.c   the stall watchdog
 *   engine_fusion.c  small tensors fused into group slots
 *   engine_crowd.c   polled or blocking collectives (STARCOLL_COLL_WAIT)
 * Not part of the plugin's interface. */
#ifndef STARCOLL_ENGINE_INTERNAL_H
#define STARCOLL_ENGINE_INTERNAL_H
#include <pthread.h>
#include <stdio.h>
#include "engine.h"
#include "round_rules.h"
#include "mode_hier.h"
#include "policy.h"

/* ctrl tags: notices to the coordinator, its round and topology messages,
 * per-step features.  data tags: the children's traffic with parents. */
enum { TAG_NOTE = 7101, TAG_ROUND = 7102, TAG_FEAT = 7103, TAG_STATUS_ASK = 7104, TAG_STATUS = 7105 };
enum { TAG_CDEP_H = 7201, TAG_CDEP_B = 7202, TAG_CRES_H = 7203, TAG_CRES_B = 7204, TAG_RING = 7205 };
/* AWAY/BACK: in and out of a call outside these rounds (another
 * communicator's); DIRECT/ROUNDS: into direct steps and back; OFF: a call
 * off the pattern, waiting for the verdict (the count field holds its
 * shape); STALLED: this rank's application thread has waited past the
 * stall threshold; CROWD: this rank's process runs another engine (count
 * 1) or no longer (0), from its engine thread (engine_crowd.c). */
enum { NOTE_DEPOSIT = 1, NOTE_LEAVE = 2, NOTE_AWAY = 3, NOTE_BACK = 4, NOTE_STOPPED = 5, NOTE_DIRECT = 6, NOTE_ROUNDS = 7,
       NOTE_OFF = 8, NOTE_STALLED = 9, NOTE_CROWD = 10 };
/* deposit flags: FLUSH and EXACT as in round_rules.h; WAITS: the caller waits for it;
 * WAIT_ONLY: a child's own word that it waits for a deposit its parent
 * announced (the coordinator marks it blocked; nothing is announced);
 * COUNT_ONLY: calls made with nothing to deposit (sc_track_counted) */
enum { NOTE_FLUSH = SC_DEP_FLUSH, NOTE_WAITS = 2, NOTE_EXACT = SC_DEP_EXACT, NOTE_WAIT_ONLY = 8, NOTE_COUNT_ONLY = 16 };
enum { NOTE_KIND_FLAGS = NOTE_FLUSH | NOTE_EXACT };
/* kind, slot, count, flags, for-rank (-1: sender), position (the call's
 * place in the step stream: on-pattern calls before it, see identity.h),
 * epoch (a parent's word for a child: the topology it holds the deposit
 * under; -1 otherwise) */
enum { NOTE_KIND, NOTE_SLOT, NOTE_COUNT, NOTE_FLAGS, NOTE_FOR, NOTE_POS, NOTE_EPOCH, NOTE_LEN };
/* VERDICT: the fate of off-pattern calls (RH_SLOT holds an sc_off_verdict) */
enum { ROUND_RUN = 1, ROUND_STOP = 2, ROUND_TOPO = 3, ROUND_FINAL = 4, ROUND_VERDICT = 5 };
enum { CMD_NONE = 0, CMD_ENGINE = 1, CMD_SYNC = 2, CMD_HIER = 3, CMD_STOP = 4 };   /* direct: the per-step broadcast */
enum { CMD_PROBE = 0x100 };   /* ... or'ed with NONE, SYNC or HIER: probe the links first (engine_probe.c) */
enum { CMD_POLL = 0x200 };    /* ... or'ed with any: this step's collectives and the next broadcast polled */
enum { CMD_WHAT = 0xff };     /* the command without its flags */
/* Round message: header, then incl[n] (RUN), or parent[n], the
 * receiver's included deposits per slot and the rounds closed per slot
 * (TOPO; sc_round_msg_len longs at most).  POLL: the round's reduction
 * polled (RUN), and the first direct steps' collectives when RH_DIRECT. */
enum { RH_KIND, RH_SLOT, RH_MODE, RH_K, RH_EPOCH, RH_FRESH, RH_DIRECT, RH_SEQ, RH_POLL, RH_LEN };
/* child -> parent deposit header; parent -> child result header (SEQ:
 * the last round summed in, ROUNDS: how many rounds are summed in) */
enum { CD_SLOT, CD_COUNT, CD_FLAGS, CD_EPOCH, CD_POS, CD_LEN };
enum { CR_SLOT, CR_INCL, CR_MODE, CR_K, CR_SEQ, CR_ROUNDS, CR_LEN };

typedef struct sc_deposit {
    long idx;                  /* this rank's call number on the slot (first of the range) */
    long upto;                 /* deposits idx..upto-1 summed here (held child entries) */
    int sent;                  /* child: already sent to the parent in this epoch */
    int borrowed;              /* buf is the caller's send buffer (the caller waits): not ours to keep */
    long flags;                /* NOTE_* flags of the (last) deposit */
    long pos;                  /* position of the (last) deposit in the step stream */
    int from, slot;            /* held early: the child and slot it came from */
    long epoch;                /* held early: the topology it was sent under */
    void *buf;
    struct sc_deposit *next;
} sc_deposit;

typedef struct sc_slot {
    long count;
    sc_dkind dk;
    size_t bytes;
    MPI_Datatype dt;
    /* shared with the application thread, under e->mu */
    long calls;                /* deposits made on this slot by this rank */
    sc_deposit *head, *tail, *spare;
    void *inbox;               /* completed rounds not yet returned */
    long inbox_rounds;
    long included_self;        /* my deposits included in completed rounds */
    /* Rounds are numbered per slot by the coordinator (RH_SEQ), and every
     * rank gets every round's result, through the ring or from a parent.
     * A result from a former parent can still be on its way when the ring
     * brings a later one: rounds_got < seq_seen until it is in.  A flush
     * waits for it, or that rank alone would miss a round (replicas
     * unequal).  seq_closed: the coordinator's count of closed rounds. */
    long rounds_got, seq_seen, seq_closed;
    int flush_next;
    /* While the application thread waits on this slot, rounds deliver
     * straight into its receive buffer (no copy through the inbox). */
    void *target;
    int target_filled;
    const void *target_alias;  /* a borrowed deposit living in target (MPI_IN_PLACE) */
    /* A nonblocking call on this slot not complete yet (at most one: a
     * later call on the slot waits for it), and the deposit count it needs. */
    sc_nb_call *nb;
    long nb_need;
    int nb_flush;              /* ... and it is a flush (sc_rounds_all_in) */
    /* Fusion (engine_fusion.c).  A small tensor's slot (a member) names
     * its group slot and its place in it; rounds of the group land in the
     * group's inbox, which each member takes its part of. */
    int fuse;                  /* member: the group slot; -1 not fused */
    size_t fuse_off;           /* member: byte offset in the group's buffers */
    long fused_rounds;         /* member, under mu: group rounds in its part not yet returned */
    int *members;              /* group: its member slots, in step order */
    int nmembers;              /* group: 0 for every other slot */
    void *stage;               /* group, application thread: this step's fused buffers */
    int staged;                /* group, application thread: stage holds something */
    long deposited;            /* group, under mu: this rank's group calls in its deposits so far */
    /* engine thread only */
    void *scratch;             /* the round buffer */
    sc_track track;            /* coordinator only */
} sc_slot;

/* A parent's view of one child (or former child still owed results). */
typedef struct sc_child {
    int active;                /* a child of this rank in the current topology */
    sc_deposit **held;         /* per slot: deposits received, not yet included */
    void **owed;               /* per slot: results not yet sent */
    long *owed_incl;           /* per slot: the child's inclusion count to send with them */
    long *owed_seq, *owed_rounds;   /* per slot: the last round owed, and how many are summed in owed */
    int *owed_any;
    long hdr[CR_LEN];
    void *sendbuf;             /* the result in flight */
    MPI_Request req[2];
    int in_flight;
} sc_child;

struct sc_engine {
    /* ctrl: notices and round messages (point-to-point) and the direct
     * steps' broadcast; data: rounds (engine threads) and the children's
     * traffic; direct: the application threads' direct collectives, apart
     * from data so a rank still finishing a round never crosses a direct
     * call on the same communicator at a switch.  The groups ring runs on
     * data among the members (ring_allreduce.c), no communicator of its own. */
    MPI_Comm ctrl, data, direct_comm;
    int rank, n, coord;
    char comm_label[24];       /* the communicator's name in lines and the report (sc_report_label) */
    int *world_rank;           /* coordinator: each rank's rank in MPI_COMM_WORLD (-1 unknown); else NULL */
    int world_order;           /* every rank r is world rank r: its lines need no world ranks */
    pthread_t thread;
    int thread_started;
    pthread_mutex_t mu;
    pthread_cond_t cv_main;    /* a round completed */
    pthread_cond_t cv_engine;  /* a deposit or a leave happened */
    int nslots;                /* user slots, then the fusion groups' */
    int nuser;                 /* the pattern's slots (identity.h) */
    sc_slot *slots;
    /* under mu: what the application thread reads */
    sc_mode mode;              /* mode of the rounds now */
    int k;
    int my_parent;             /* -1: ring member */
    int main_waiting;
    int waiting_slot;          /* slot the application thread waits on, -1 */
    /* Direct: exact modes run as plain collectives by the application
     * threads (no rounds), all ranks switching at the same call; see
     * engine.c, "direct". */
    int direct;                /* the application threads reduce directly */
    sc_mode direct_mode;       /* SC_MODE_SYNC or SC_MODE_HIER */
    long direct_at;            /* slot-0 call count (this rank's) from which to go direct (0: none) */
    long direct_cmd;           /* coordinator: what its application thread broadcasts next step */
    /* Polled or blocking collectives (engine_crowd.c).  direct_polled:
     * application thread, the direct steps' collectives; direct_polled_at:
     * under mu, its value from direct_at on. */
    int direct_polled, direct_polled_at;
    int crowd_joined;          /* counted among this process's engines */
    int crowd_told;            /* engine thread: this rank last said its process runs another engine */
    unsigned char *crowded;    /* coordinator: per rank, its process runs another engine */
    int ncrowded;              /* coordinator */
    int polled;                /* coordinator: its collectives polled now (read atomically by its application thread) */
    sc_mode pending_direct;    /* coordinator: exact mode to go direct in, or SC_NMODES */
    int stopped;               /* engine thread finished */
    int error;                 /* first MPI error seen by the engine thread */
    int quit;                  /* start-up failed elsewhere: stop at once */
    int left;                  /* this rank announced it leaves */
    int stopping;              /* every rank has left: finish what is in flight, start nothing */
    int nstopped;              /* coordinator: ranks whose traffic is done */
    /* topology, engine thread */
    long epoch;                /* topology epoch */
    int *parent;               /* per rank: -1 member, else its parent */
    int *ring_members;         /* the ring: member ranks of data, ascending */
    int ring_m, ring_me;       /* how many; this rank's index (-1: a child) */
    long ring_epoch;           /* epoch ring_members was listed for (-1 none) */
    void *ring_buf;            /* a chunk being received */
    sc_child *children;        /* per rank */
    sc_deposit *early;         /* child deposits sent under a topology this rank has not applied yet */
    void *res_buf;             /* a result being received */
    size_t max_bytes;          /* largest slot */
    sc_hier hier;              /* hier rounds on `data` */
    sc_hier direct_hier;       /* hier direct steps on `direct_comm` */
    /* child side, engine thread */
    MPI_Request dep_req[2];
    int dep_in_flight;
    long dep_hdr[CD_LEN];
    void *dep_buf;
    /* coordinator */
    unsigned char *gone;
    unsigned char *in_direct;  /* ranks whose application thread runs direct steps: no deposits until back */
    int *blocked_at;           /* slot each rank waits on, -1, or SC_BLOCKED_OUTSIDE */
    unsigned char *outside;    /* ranks in a call outside these rounds (AWAY, OFF, DIRECT until BACK or ROUNDS) */
    unsigned char *presumed;   /* ... or taken to be, silent through a stall, until their next notice (engine_coord.c) */
    long *blocked_need;        /* the deposit count that rank waits for */
    long *last_pos;            /* per rank: on-pattern calls it is known to have made */
    long *off_pos;             /* per rank: position of its call off the pattern awaiting a verdict, -1 */
    long *off_shape;           /* ... and that call's shape */
    int noff;                  /* ranks awaiting a verdict */
    int ngone;
    long *incl;                /* scratch for round messages */
    long *prev_incl;
    long round_direct;         /* the RH_DIRECT of the round being sent: 1, each rank goes direct at its next slot-0 call */
    long *msg;
    double round_period;       /* smoothed time between rounds */
    double last_note_t;        /* when the last notice arrived */
    double last_round_t;
    double last_activity;      /* last round or notice seen by this engine thread */
    long relaxed;              /* rounds closed under quorum by a stall */
    struct sc_decider *decider;
    double *learn_load, *learn_given;   /* auto, n each: every rank's figures while the pattern was learned */
    int verdict;               /* under mu: the verdict for this rank's off-pattern call, 0 none yet */
    int verdict_rank;          /* ... and a rank whose call differed, -1 */
    struct sc_stall *stall;    /* the stall watchdog (engine_stall.c) */
    double born;                    /* sc_now() when this engine started: the zero of SC_F_ARRIVE_S */
    double step_start, step_wait;   /* application thread: this step's start and time inside */
    /* Time this rank spent blocked in MPI outside this engine's calls (a
     * Wait on requests, an exact call, a barrier, another communicator's
     * call): wait, not compute, in the step's features.  Any thread may
     * block, hence a lock of its own; away_depth counts nested notices. */
    pthread_mutex_t away_mu;
    int away_depth;
    double away_since, away_s;
    double step_gsq, step_ssq;      /* this step's sampled squared norms: my buffers, the results */
    double step_bytes;
    int nb_pending;                 /* under mu: nonblocking calls not complete yet */
    pthread_t stager;               /* under mu: the thread that last staged a fused call */
    int stager_set;
    double nb_ssq;                  /* under mu: sampled squared norms of nonblocking results, for step_ssq */
    long steps;
    void *probe_buf;                /* the link probe's buffers (auto, 4 ranks or more), else NULL */
    void *lockstep_buf;             /* application thread: the poisoned buffer of an off-pattern direct call */
    double link_spb;                /* seconds per byte of this rank's latest link probe, 0 before one */
    FILE *trace;                    /* STARCOLL_TRACE, this rank's file */
    char trace_path[SC_PATH_LEN + 48];
    sc_engine_stats stats;
};

int sc_exact_mode(sc_mode m);
/* The next message with `tag` on comm from any rank, if one is waiting:
 * 1 with it in buf (count items of dt) and its sender in *src, 0 when none
 * is waiting, -1 when the probe or the receive failed. */
int sc_recv_next(MPI_Comm comm, int tag, MPI_Datatype dt, void *buf, int count, int *src);
/* Records the first MPI error of the engine (rc != MPI_SUCCESS) and wakes
 * the application thread, which returns it; returns rc != MPI_SUCCESS. */
int sc_engine_failed(sc_engine *e, int rc);
/* A notice to the coordinator, every field of it (NOTE_KIND ... NOTE_POS;
 * NOTE_EPOCH is filled here): the one place a notice is made. */
int sc_engine_send_note(sc_engine *e, long kind, long slot, long count, long flags, int for_rank, long pos);
/* A notice of `kind` (NOTE_*, no slot) from this rank to the coordinator. */
int sc_engine_note(sc_engine *e, long kind);
/* A NOTE_DEPOSIT notice: rank for_rank's (-1: this rank's) `count` calls
 * on slot, with NOTE_* flags, the latest at position pos. */
int sc_engine_deposit_note(sc_engine *e, int slot, long count, long flags, int for_rank, long pos);

/* engine_caller.c: squared norm on every 16th element */
double sc_sampled_sqnorm(const void *buf, long count, sc_dkind dk);
/* engine_caller.c, mu held on entry and on return: around the
 * application thread's wait on the engine (a loop on cv_main between
 * them).  Meanwhile the other communicators' engines hear this rank is
 * away and the coordinator's books count it waiting (main_waiting).
 * sc_wait_end returns the seconds since sc_wait_begin's time. */
double sc_wait_begin(sc_engine *e);
double sc_wait_end(sc_engine *e, double t0);

/* engine_nonblocking.c, mu held: complete sl's nonblocking call once the
 * round holding its deposit is in; complete every pending one (those
 * ready with their result, the others with rc). */
void sc_nb_ready(sc_engine *e, sc_slot *sl);
void sc_nb_fail_all(sc_engine *e, int rc);

/* engine_fusion.c: small tensors fused into group slots */
/* Group slots for the pattern's small slots (user slots 0..nuser-1 are
 * set); appends them to e->slots and sets e->nslots.  0, or -1 out of memory. */
int sc_fusion_plan(sc_engine *e);
/* A call on a member slot outside direct steps (engine.h, sc_engine_call);
 * *own: not done, the caller runs it on the member's own slot (exact mode). */
int sc_fusion_call(sc_engine *e, int slot, long pos, const void *sendbuf, void *recvbuf, int exact, int *own);
/* mu held: a member's part of its group's rounds, into buf (add: summed
 * in, else copied; nothing there: zeros when copied) and cleared. */
void sc_fusion_take(sc_engine *e, sc_slot *sl, void *buf, int add);
/* Leaving: what is staged goes in a last group deposit. */
int sc_fusion_deposit_staged(sc_engine *e, long pos);
/* This thread blocks elsewhere: what it staged here goes in group
 * deposits now (see engine_fusion.c, "Blocking elsewhere"). */
int sc_fusion_deposit_before_blocking(sc_engine *e);
/* Engine thread, mu held: a round of group slot s landed in its inbox. */
void sc_fusion_landed(sc_engine *e, sc_slot *g);
/* Deposit bookkeeping shared with engine_caller.c (mu held). */
sc_deposit *sc_deposit_get(sc_slot *sl);

/* engine_groups.c */
int sc_groups_init(sc_engine *e);
void sc_groups_free(sc_engine *e);
/* Apply a topology (parent per rank) at this rank: hand pending deposits to
 * their new owner, list the new ring.  included: per slot,
 * how many of this rank's deposits rounds have included so far (some
 * through a former parent, whose word may still be on its way): those are
 * neither sent nor announced again.  closed: per slot, the rounds closed
 * so far, which all reach this rank (NULL: the coordinator, which ran them). */
int sc_groups_apply(sc_engine *e, const long *parent, long epoch, const long *included, const long *closed);
/* Sum a round's buffer over the ring (all of data when every rank is a
 * member; hier's sub-communicators then in hier mode). */
int sc_groups_ring_allreduce(sc_engine *e, sc_mode mode, const void *sendbuf, void *recvbuf, int s, int polled);
/* Parent: does the round include deposits held for children? */
int sc_groups_children_hold(const sc_engine *e, int s, const long *incl);
/* Parent: fold held child deposits into the round buffer; returns how many. */
long sc_groups_take_children(sc_engine *e, int s, const long *incl);
/* Parent: a round result owed to the children. */
void sc_groups_owe(sc_engine *e, int s, const void *result, const long *incl, long seq);
/* Progress the children's traffic, parent and child side; 1 when something moved. */
int sc_groups_progress(sc_engine *e);
/* Child: forward new deposits to the parent; 1 when something moved. */
int sc_groups_forward(sc_engine *e);
/* Stopping: no new sends; 1 when nothing this rank sent is still in flight. */
int sc_groups_quiet(sc_engine *e);

/* engine_crowd.c: polled or blocking collectives, one decision per
 * engine carried to every rank (STARCOLL_COLL_WAIT) */
int sc_crowd_init(sc_engine *e);
void sc_crowd_join(sc_engine *e);          /* its thread runs: one more engine in this process */
void sc_crowd_free(sc_engine *e);          /* ... and one fewer, once freed */
/* Engine thread, each loop: tell the coordinator when this process comes
 * to run another engine or no longer does; 1 when something moved. */
int sc_crowd_progress(sc_engine *e);
/* Coordinator: rank r's word (NOTE_CROWD). */
void sc_crowd_heard(sc_engine *e, int r, long crowded);

/* engine_probe.c: the link probe, run in direct steps */
int sc_probe_init(sc_engine *e);
void sc_probe_free(sc_engine *e);
int sc_probe_wanted(const sc_engine *e);   /* coordinator: probe in this step */
int sc_probe_links(sc_engine *e);          /* collective on e->direct_comm (application threads); sets e->link_spb */

/* engine.c: shared by the engine threads */
/* Nothing moved: sleep a growing while (at most `until` s when not
 * negative); 1 when the engine must quit instead. */
int sc_engine_idle(sc_engine *e, double *nap, double until);
/* This rank's part of one round of slot s (engine.c); polled: its
 * reduction's (the round message's RH_POLL). */
void sc_run_round(sc_engine *e, int s, const long *incl, long fresh, sc_mode mode, int k, long seq, int polled);
static inline int sc_round_msg_len(const sc_engine *e)
{
    return RH_LEN + e->n + 2 * e->nslots;
}
/* mu held: every round of sl this rank has heard of has reached it (a
 * flush returns only then). */
static inline int sc_rounds_all_in(const sc_slot *sl)
{
    return sl->rounds_got >= sl->seq_seen;
}
/* Every rank has left: finish what is in flight, then stop. */
void sc_stop_traffic(sc_engine *e);
void sc_engine_free(sc_engine *e);

/* engine_coord.c / engine_member.c: the engine thread's loop */
void sc_coordinator_loop(sc_engine *e);
void sc_member_loop(sc_engine *e);
int sc_coord_drain_notes(sc_engine *e);
/* After a round of slot s closed: ranks that waited only for it are not blocked any longer. */
void sc_coord_reblock_after(sc_engine *e, int s);
/* Round message (RUN, STOP, FINAL) to the members, or TOPO to everybody;
 * tail: incl[n] (RUN) or parent[n] (TOPO, followed by the receiver's
 * included counts and the rounds closed, per slot); seq: RUN's number. */
int sc_send_round(sc_engine *e, long kind, int s, sc_mode mode, int k, const long *tail, long fresh, long seq);

/* engine_direct.c: lockstep calls by the application threads.  A call
 * that finds another rank off the pattern fails (*first_off names it) and
 * every rank goes back to rounds. */
int sc_direct_call(sc_engine *e, int slot, const void *sendbuf, void *recvbuf, int *back_to_rounds, int *first_off);
int sc_direct_off(sc_engine *e, int slot, uint64_t shape, sc_off_verdict *verdict, int *first_off, int *back_to_rounds);

/* engine_stall.c: the stall watchdog.  The application thread says what
 * it does; each engine thread raises the alarm when its application thread
 * has waited past STARCOLL_STALL, and the coordinator then asks every rank
 * what it does and prints one line. */
typedef enum { SC_APP_COMPUTING = 0, SC_APP_IN_CALL, SC_APP_OFF, SC_APP_AWAY, SC_APP_LEFT } sc_app_state;
int sc_stall_init(sc_engine *e);
void sc_stall_free(sc_engine *e);
/* slot, pos: -1 keep; what: an SC_AWAY_* for SC_APP_AWAY */
void sc_stall_app(sc_engine *e, sc_app_state state, int slot, long pos, int what);
/* Engine thread, each loop: the alarm, answers, and (coordinator) the
 * line; 1 when something moved. */
int sc_stall_progress(sc_engine *e);
/* Engine thread: entering (slot >= 0) and leaving (-1) a round's reduction,
 * for the sentinel's line. */
void sc_stall_round(sc_engine *e, int slot, long seq);
/* Coordinator: rank r has waited `waited` seconds. */
void sc_stall_alarm(sc_engine *e, int r, double waited);
/* Coordinator: its books to stderr (STARCOLL_VERBOSE=2); with_answers:
 * and the ranks' own view, from a watchdog query just answered. */
void sc_stall_books(sc_engine *e, int with_answers);
/* Names for the coordinator's lines: "comm 1 (coordinated by world rank 2)"
 * and "rank 1 (world 3)" on a communicator whose ranks are not the world's
 * in order, so a job with many sub-communicators says which one. */
const char *sc_comm_label(const sc_engine *e, char *buf, size_t len);
const char *sc_rank_label(const sc_engine *e, int r, char *buf, size_t len);

/* engine_decide.c: the coordinator's membership and mode decisions */
struct sc_decider *sc_decider_new(sc_engine *e);
void sc_decider_free(struct sc_decider *d);
/* Fold in one rank's step features (drained from TAG_FEAT). */
void sc_decider_observe(struct sc_decider *d, int rank, const double *feat);
/* At a step boundary: 1 when a new topology or mode is decided; fills
 * parent[] and *mode, *k. */
int sc_decider_decide(struct sc_decider *d, long *parent, sc_mode *mode, int *k);
/* Counts n bytes copied to or from a caller's buffer (sc_engine_stats.copied_bytes). */
static inline void sc_engine_copied(sc_engine *e, size_t n)
{
    __atomic_add_fetch(&e->stats.copied_bytes, (long)n, __ATOMIC_RELAXED);
}
#endif
