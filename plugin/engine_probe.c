/* The link probe: how fast each rank's own link moves bytes.
 *
 * In an exact collective every rank waits for the slowest link, so step
 * times alone cannot say whose link is slow.  Once an epoch, while auto
 * runs direct, every rank exchanges a buffer with its neighbours at two
 * distances (rank+1 and rank+2 around the communicator), a barrier before
 * each so the exchanges start together.  A slow link slows every exchange
 * of its own rank but only one exchange of any other rank (for 4 ranks or
 * more), so a rank's link time is the fastest of its exchanges.  The
 * result, in seconds per byte, goes to the selector as SC_F_LINK_SPB. */
#include "engine_internal.h"
#include <stdlib.h>
#include "polled_coll.h"
#include "runtime.h"

enum { TAG_PROBE = 7301 };
enum { PROBE_MIN_BYTES = 64 * 1024, PROBE_MAX_BYTES = 1024 * 1024 };

/* The probe's size: the largest slot, within 64 KiB and 1 MiB (enough
 * to measure bandwidth rather than latency, little next to a step). */
static size_t probe_bytes(const sc_engine *e)
{
    size_t bytes = e->max_bytes;
    if (bytes < PROBE_MIN_BYTES) bytes = PROBE_MIN_BYTES;
    if (bytes > PROBE_MAX_BYTES) bytes = PROBE_MAX_BYTES;
    return bytes;
}

int sc_probe_init(sc_engine *e)
{
    if (sc_rt.policy.mode != SC_MODE_AUTO || e->n < 4) return 0;   /* never probes */
    size_t bytes = probe_bytes(e);
    e->probe_buf = malloc(2 * bytes);
    if (!e->probe_buf) return -1;
    for (size_t i = 0; i < bytes; i++) ((char *)e->probe_buf)[i] = (char)i;
    return 0;
}

void sc_probe_free(sc_engine *e)
{
    free(e->probe_buf);
    e->probe_buf = NULL;
}

int sc_probe_wanted(const sc_engine *e)
{
    int epoch = sc_rt.policy.epoch > 0 ? sc_rt.policy.epoch : 20;
    return e->probe_buf && e->steps % epoch == epoch / 2;
}

/* Collective over e->direct_comm (the application threads'): every rank calls it at the same step (the
 * direct step's broadcast says when). */
int sc_probe_links(sc_engine *e)
{
    size_t bytes = probe_bytes(e);
    char *out = e->probe_buf, *in = out + bytes;
    double best = -1;
    int rc = MPI_SUCCESS;
    for (int shift = 1; shift <= 2 && rc == MPI_SUCCESS; shift++) {
        int to = (e->rank + shift) % e->n, from = (e->rank - shift + e->n) % e->n;
        rc = sc_polled_barrier(e->direct_comm, e->direct_polled);
        if (rc != MPI_SUCCESS) break;
        double t0 = sc_now();
        rc = sc_polled_sendrecv(out, (int)bytes, MPI_BYTE, to, TAG_PROBE, in, (int)bytes, MPI_BYTE, from, TAG_PROBE,
                                e->direct_comm, e->direct_polled);
        double t = sc_now() - t0;
        if (rc == MPI_SUCCESS && (best < 0 || t < best)) best = t;
    }
    if (rc == MPI_SUCCESS && best > 0) e->link_spb = best / (double)bytes;
    return rc;
}
