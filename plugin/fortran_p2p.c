/* Fortran's point-to-point calls and probes: what blocking_p2p.c does for
 * C.  Open MPI's Fortran bindings call PMPI_ directly, so a Fortran code
 * blocked in MPI_RECV for a straggler's message was not known to be away
 * (each such wait cost a 10 s stall under tolerant modes: mpi_fortran.sh).
 * A blocking call starts its nonblocking form and tests it a while, then
 * waits away, by tests and naps (sc_poll_away); MPI_SENDRECV_REPLACE, which
 * needs MPI's own buffering, is away around the whole call.  Polling a
 * probe (MPI_IPROBE, MPI_IMPROBE) or MPI_REQUEST_GET_STATUS that finds
 * nothing counts as away, as MPI_TEST does (blocking.c).  Each entry runs
 * Open MPI's own implementation (fortran_entry.h).  Open MPI only. */
#include <mpi.h>
#include <pthread.h>
#include "comm_state.h"
#include "polite_wait.h"

#ifdef OPEN_MPI
#include "fortran_entry.h"

/* Open MPI's implementations (libmpi_mpifh), looked up once. */
static struct {
    void (*send)(void *buf, fint *count, fint *dt, fint *dest, fint *tag, fint *comm, fint *ierr);
    void (*ssend)(void *buf, fint *count, fint *dt, fint *dest, fint *tag, fint *comm, fint *ierr);
    void (*rsend)(void *buf, fint *count, fint *dt, fint *dest, fint *tag, fint *comm, fint *ierr);
    void (*recv)(void *buf, fint *count, fint *dt, fint *source, fint *tag, fint *comm, fint *status, fint *ierr);
    void (*mrecv)(void *buf, fint *count, fint *dt, fint *message, fint *status, fint *ierr);
    void (*sendrecv)(void *sbuf, fint *scount, fint *sdt, fint *dest, fint *stag, void *rbuf, fint *rcount,
                     fint *rdt, fint *source, fint *rtag, fint *comm, fint *status, fint *ierr);
    void (*sendrecv_replace)(void *buf, fint *count, fint *dt, fint *dest, fint *stag, fint *source, fint *rtag,
                             fint *comm, fint *status, fint *ierr);
    void (*probe)(fint *source, fint *tag, fint *comm, fint *status, fint *ierr);
    void (*mprobe)(fint *source, fint *tag, fint *comm, fint *message, fint *status, fint *ierr);
    void (*isend)(void *buf, fint *count, fint *dt, fint *dest, fint *tag, fint *comm, fint *req, fint *ierr);
    void (*issend)(void *buf, fint *count, fint *dt, fint *dest, fint *tag, fint *comm, fint *req, fint *ierr);
    void (*irsend)(void *buf, fint *count, fint *dt, fint *dest, fint *tag, fint *comm, fint *req, fint *ierr);
    void (*irecv)(void *buf, fint *count, fint *dt, fint *source, fint *tag, fint *comm, fint *req, fint *ierr);
    void (*imrecv)(void *buf, fint *count, fint *dt, fint *message, fint *req, fint *ierr);
    void (*iprobe)(fint *source, fint *tag, fint *comm, fint *flag, fint *status, fint *ierr);
    void (*improbe)(fint *source, fint *tag, fint *comm, fint *flag, fint *message, fint *status, fint *ierr);
    void (*request_get_status)(fint *req, fint *flag, fint *status, fint *ierr);
    void (*test)(fint *req, fint *flag, fint *status, fint *ierr);
    void (*wait)(fint *req, fint *status, fint *ierr);
    void (*cancel)(fint *req, fint *ierr);
} ompi;
static pthread_once_t looked_up = PTHREAD_ONCE_INIT;

#define ENTRY(fn) SC_F_ENTRY(ompi, fn)
static const sc_f_entry entries[] = {
    ENTRY(send),   ENTRY(ssend),   ENTRY(rsend),   ENTRY(recv),    ENTRY(mrecv),   ENTRY(sendrecv),
    ENTRY(sendrecv_replace), ENTRY(probe), ENTRY(mprobe), ENTRY(isend), ENTRY(issend), ENTRY(irsend),
    ENTRY(irecv),  ENTRY(imrecv),  ENTRY(iprobe),  ENTRY(improbe), ENTRY(request_get_status),
    ENTRY(test),   ENTRY(wait),    ENTRY(cancel)};

static void look_up(void)
{
    sc_f_look_up(entries, sizeof entries / sizeof entries[0]);
}

/* Open MPI's function, or NULL: the caller's ierr then says MPI_ERR_INTERN. */
#define OMPI(fn) (pthread_once(&looked_up, look_up), ompi.fn)

/* ---- blocking: tested a while, then away --------------------------------- */

#define F_STATUS_LEN (sizeof(MPI_Status) / sizeof(fint))   /* Open MPI's Fortran status: the C one's words */

/* A started request and where its status goes (the caller's, which may be
 * MPI_STATUS_IGNORE: Open MPI's test knows it). */
typedef struct {
    fint req, *status;
    int done;
} f_req;

/* Started requests, tested one by one for sc_poll_away: each completed
 * one is left alone (testing it again would blank its status). */
typedef struct {
    f_req *r;
    int n;
    fint rc;
} f_tested;

static int f_tested_over(void *ctx)
{
    f_tested *t = ctx;
    int all = 1;
    for (int i = 0; i < t->n; i++) {
        if (t->r[i].done) continue;
        fint flag = 0;
        ompi.test(&t->r[i].req, &flag, t->r[i].status, &t->rc);
        if (t->rc != MPI_SUCCESS) return 1;
        t->r[i].done = flag != 0;
        all &= t->r[i].done;
    }
    return all;
}

/* As blocking_p2p.c's: tested a while, then away, tests and naps. */
static void complete_f(f_req *r, int n, int what, fint *ierr)
{
    f_tested t = {.r = r, .n = n, .rc = MPI_SUCCESS};
    sc_poll_away(f_tested_over, &t, what);
    set_ierr(ierr, t.rc);
}

/* A probe by Open MPI's Fortran MPI_IPROBE (message NULL) or
 * MPI_IMPROBE, for sc_poll_away. */
typedef struct {
    fint *source, *tag, *comm, *message, *status, rc;
} f_probed;

static int f_probed_over(void *ctx)
{
    f_probed *p = ctx;
    fint flag = 0;
    if (p->message) ompi.improbe(p->source, p->tag, p->comm, &flag, p->message, p->status, &p->rc);
    else ompi.iprobe(p->source, p->tag, p->comm, &flag, p->status, &p->rc);
    return p->rc != MPI_SUCCESS || flag;
}

/* Whether the nonblocking way is there: else the plain call.  The calls
 * that need one more (irsend, imrecv, improbe) check it after this. */
static int started_ways(void)
{
    pthread_once(&looked_up, look_up);
    return sc_comm_engines_here() && ompi.test && ompi.wait && ompi.isend && ompi.issend && ompi.irecv &&
           ompi.iprobe && ompi.cancel;
}

#define PLAIN_F(fn, ...)                          \
    do {                                          \
        fint rc_ = MPI_ERR_INTERN;                \
        if (OMPI(fn)) ompi.fn(__VA_ARGS__, &rc_); \
        set_ierr(ierr, rc_);                      \
    } while (0)

/* One request started by Open MPI's isend, issend or irecv (one shape),
 * completed as above; status NULL: a send's, kept here. */
typedef void (*f_start)(void *buf, fint *count, fint *dt, fint *peer, fint *tag, fint *comm, fint *req, fint *ierr);
static void started_f(f_start start, void *buf, fint *count, fint *dt, fint *peer, fint *tag, fint *comm,
                      fint *status, int what, fint *ierr)
{
    fint st[F_STATUS_LEN], rc = MPI_SUCCESS;
    f_req r = {.status = status ? status : st};
    start(buf, count, dt, peer, tag, comm, &r.req, &rc);
    if (rc != MPI_SUCCESS) set_ierr(ierr, rc);
    else complete_f(&r, 1, what, ierr);
}

void ompi_send_f(void *buf, fint *count, fint *dt, fint *dest, fint *tag, fint *comm, fint *ierr);
void ompi_send_f(void *buf, fint *count, fint *dt, fint *dest, fint *tag, fint *comm, fint *ierr)
{
    if (!started_ways()) PLAIN_F(send, buf, count, dt, dest, tag, comm);
    else started_f(ompi.isend, buf, count, dt, dest, tag, comm, NULL, SC_AWAY_SEND, ierr);
}

void ompi_ssend_f(void *buf, fint *count, fint *dt, fint *dest, fint *tag, fint *comm, fint *ierr);
void ompi_ssend_f(void *buf, fint *count, fint *dt, fint *dest, fint *tag, fint *comm, fint *ierr)
{
    if (!started_ways()) PLAIN_F(ssend, buf, count, dt, dest, tag, comm);
    else started_f(ompi.issend, buf, count, dt, dest, tag, comm, NULL, SC_AWAY_SEND, ierr);
}

void ompi_recv_f(void *buf, fint *count, fint *dt, fint *source, fint *tag, fint *comm, fint *status, fint *ierr);
void ompi_recv_f(void *buf, fint *count, fint *dt, fint *source, fint *tag, fint *comm, fint *status, fint *ierr)
{
    if (!started_ways()) PLAIN_F(recv, buf, count, dt, source, tag, comm, status);
    else started_f(ompi.irecv, buf, count, dt, source, tag, comm, status, SC_AWAY_RECV, ierr);
}

/* The receive posted first; the caller's status is the receive's. */
void ompi_sendrecv_f(void *sbuf, fint *scount, fint *sdt, fint *dest, fint *stag, void *rbuf, fint *rcount, fint *rdt,
                     fint *source, fint *rtag, fint *comm, fint *status, fint *ierr);
void ompi_sendrecv_f(void *sbuf, fint *scount, fint *sdt, fint *dest, fint *stag, void *rbuf, fint *rcount, fint *rdt,
                     fint *source, fint *rtag, fint *comm, fint *status, fint *ierr)
{
    if (!started_ways()) {
        PLAIN_F(sendrecv, sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag, comm, status);
        return;
    }
    fint st[F_STATUS_LEN], rc = MPI_SUCCESS;
    f_req r[2] = {{.status = status}, {.status = st}};
    ompi.irecv(rbuf, rcount, rdt, source, rtag, comm, &r[0].req, &rc);
    if (rc != MPI_SUCCESS) {
        set_ierr(ierr, rc);
        return;
    }
    ompi.isend(sbuf, scount, sdt, dest, stag, comm, &r[1].req, &rc);
    if (rc != MPI_SUCCESS) {   /* the receive must not outlive the call */
        fint rc2 = MPI_SUCCESS;
        ompi.cancel(&r[0].req, &rc2);
        if (rc2 == MPI_SUCCESS) ompi.wait(&r[0].req, st, &rc2);
        set_ierr(ierr, rc);
        return;
    }
    complete_f(r, 2, SC_AWAY_SENDRECV, ierr);
}

void ompi_probe_f(fint *source, fint *tag, fint *comm, fint *status, fint *ierr);
void ompi_probe_f(fint *source, fint *tag, fint *comm, fint *status, fint *ierr)
{
    if (!started_ways()) {
        PLAIN_F(probe, source, tag, comm, status);
        return;
    }
    f_probed p = {.source = source, .tag = tag, .comm = comm, .status = status, .rc = MPI_SUCCESS};
    sc_poll_away(f_probed_over, &p, SC_AWAY_PROBE);
    set_ierr(ierr, p.rc);
}

void ompi_rsend_f(void *buf, fint *count, fint *dt, fint *dest, fint *tag, fint *comm, fint *ierr);
void ompi_rsend_f(void *buf, fint *count, fint *dt, fint *dest, fint *tag, fint *comm, fint *ierr)
{
    if (!started_ways() || !ompi.irsend) PLAIN_F(rsend, buf, count, dt, dest, tag, comm);
    else started_f(ompi.irsend, buf, count, dt, dest, tag, comm, NULL, SC_AWAY_SEND, ierr);
}

void ompi_mrecv_f(void *buf, fint *count, fint *dt, fint *message, fint *status, fint *ierr);
void ompi_mrecv_f(void *buf, fint *count, fint *dt, fint *message, fint *status, fint *ierr)
{
    if (!started_ways() || !ompi.imrecv) {
        PLAIN_F(mrecv, buf, count, dt, message, status);
        return;
    }
    fint rc = MPI_SUCCESS;
    f_req r = {.status = status};
    ompi.imrecv(buf, count, dt, message, &r.req, &rc);
    if (rc != MPI_SUCCESS) set_ierr(ierr, rc);
    else complete_f(&r, 1, SC_AWAY_RECV, ierr);
}

/* In place needs MPI's own buffering: away around the whole call. */
void ompi_sendrecv_replace_f(void *buf, fint *count, fint *dt, fint *dest, fint *stag, fint *source, fint *rtag,
                             fint *comm, fint *status, fint *ierr);
void ompi_sendrecv_replace_f(void *buf, fint *count, fint *dt, fint *dest, fint *stag, fint *source, fint *rtag,
                             fint *comm, fint *status, fint *ierr)
{
    AWAY_AROUND_F(SC_AWAY_SENDRECV, sendrecv_replace, buf, count, dt, dest, stag, source, rtag, comm, status);
}

void ompi_mprobe_f(fint *source, fint *tag, fint *comm, fint *message, fint *status, fint *ierr);
void ompi_mprobe_f(fint *source, fint *tag, fint *comm, fint *message, fint *status, fint *ierr)
{
    if (!started_ways() || !ompi.improbe) {
        PLAIN_F(mprobe, source, tag, comm, message, status);
        return;
    }
    f_probed p = {.source = source, .tag = tag, .comm = comm, .message = message, .status = status, .rc = MPI_SUCCESS};
    sc_poll_away(f_probed_over, &p, SC_AWAY_PROBE);
    set_ierr(ierr, p.rc);
}

/* ---- polling: finding nothing counts as away (blocking.c) ---------------- */

void ompi_iprobe_f(fint *source, fint *tag, fint *comm, fint *flag, fint *status, fint *ierr);
void ompi_iprobe_f(fint *source, fint *tag, fint *comm, fint *flag, fint *status, fint *ierr)
{
    POLLING_F(iprobe, *flag, source, tag, comm, flag, status);
}

void ompi_improbe_f(fint *source, fint *tag, fint *comm, fint *flag, fint *message, fint *status, fint *ierr);
void ompi_improbe_f(fint *source, fint *tag, fint *comm, fint *flag, fint *message, fint *status, fint *ierr)
{
    POLLING_F(improbe, *flag, source, tag, comm, flag, message, status);
}

void ompi_request_get_status_f(fint *req, fint *flag, fint *status, fint *ierr);
void ompi_request_get_status_f(fint *req, fint *flag, fint *status, fint *ierr)
{
    POLLING_F(request_get_status, *flag, req, flag, status);
}

/* mpif.h's and `use mpi`'s names for each (fortran_entry.h). */
#define P2P_ARGS void *, fint *, fint *, fint *, fint *, fint *
SC_F_NAMES(ompi_send_f, mpi_send, MPI_SEND, P2P_ARGS, fint *)
SC_F_NAMES(ompi_ssend_f, mpi_ssend, MPI_SSEND, P2P_ARGS, fint *)
SC_F_NAMES(ompi_rsend_f, mpi_rsend, MPI_RSEND, P2P_ARGS, fint *)
SC_F_NAMES(ompi_recv_f, mpi_recv, MPI_RECV, P2P_ARGS, fint *, fint *)
SC_F_NAMES(ompi_mrecv_f, mpi_mrecv, MPI_MRECV, void *, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES(ompi_sendrecv_f, mpi_sendrecv, MPI_SENDRECV, void *, fint *, fint *, fint *, fint *, void *, fint *,
           fint *, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES(ompi_sendrecv_replace_f, mpi_sendrecv_replace, MPI_SENDRECV_REPLACE, void *, fint *, fint *, fint *,
           fint *, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES(ompi_probe_f, mpi_probe, MPI_PROBE, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES(ompi_mprobe_f, mpi_mprobe, MPI_MPROBE, fint *, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES_F08_PMPI(ompi_iprobe_f, mpi_iprobe, MPI_IPROBE, fint *, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES_F08_PMPI(ompi_improbe_f, mpi_improbe, MPI_IMPROBE, fint *, fint *, fint *, fint *, fint *, fint *, fint *)
SC_F_NAMES_F08_PMPI(ompi_request_get_status_f, mpi_request_get_status, MPI_REQUEST_GET_STATUS, fint *, fint *, fint *,
           fint *)
#else
typedef int sc_fortran_p2p_not_interposed;   /* an empty file is not C */
#endif
