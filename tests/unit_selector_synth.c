/* Synthetic telemetry and the plugin-like driver for the selector tests. */
#include "unit_selector_synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINK_SPEED 1.25e9 /* 10 Gb/s in bytes per second */
#define STEP_BYTES 4e6

static uint64_t next_u64(synth *s)
{
    /* splitmix64: small, fast, and the same on every platform */
    uint64_t z = (s->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double uniform01(synth *s) { return ((next_u64(s) >> 11) + 0.5) / 9007199254740992.0; }

double synth_normal(synth *s)
{
    double u = uniform01(s), v = uniform01(s);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

void synth_init(synth *s, int n, double compute_s, double comm_s, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    s->compute_s = compute_s;
    s->comm_s = comm_s;
    s->hier_factor = 1.1;
    s->noise_scale = -1.0;
    s->rng = seed;
    for (int i = 0; i < n; i++)
        s->rank[i].slow = 1.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void synth_step(synth *s, sc_mode mode, int k, const int *parent, double *feat)
{
    int n = s->n;
    double c[SYNTH_MAX_RANKS], sorted[SYNTH_MAX_RANKS];
    int m = 0;
    for (int i = 0; i < n; i++) {
        double j = s->jitter > 0.0 ? exp(s->jitter * synth_normal(s)) : 1.0;
        int hidden = s->rank[i].member_only && parent && parent[i] >= 0;
        c[i] = s->compute_s * (hidden ? 1.0 : s->rank[i].slow) * j;
        if (!parent || parent[i] < 0)
            sorted[m++] = c[i];
    }
    qsort(sorted, (size_t)m, sizeof(double), cmp_double);
    double T = s->comm_s * (mode == SC_MODE_HIER ? s->hier_factor : 1.0) + (mode == SC_MODE_QUORUM ? s->round_cost_s : 0.0) +
               (mode == SC_MODE_GROUPS ? s->ring_cost_s : 0.0);
    if (mode == SC_MODE_QUORUM && s->quorum_spike_every > 0 && ++s->quorum_steps % s->quorum_spike_every == 0)
        T += s->quorum_spike_s;   /* a transient: a backlog drained, a round waiting for a late member */
    if (mode != SC_MODE_QUORUM || k < 1 || k > m)
        k = m;
    double ck = sorted[k - 1];
    /* Own transfer time of the slowest link among the ranks a round waits for. */
    double extra = 0.0;
    for (int i = 0; i < n; i++)
        if ((!parent || parent[i] < 0) && c[i] <= ck && s->rank[i].xfer_extra > extra)
            extra = s->rank[i].xfer_extra;
    double interval = ck + T + extra;
    /* Where each rank's step would end: a rank a round waits for at the
     * interval, a late member or a child after its own exchange. */
    double arrive[SYNTH_MAX_RANKS], last = 0.0;
    for (int i = 0; i < n; i++) {
        int ring = !parent || parent[i] < 0;
        const synth_rank *r = &s->rank[i];
        arrive[i] = ring && c[i] <= ck ? interval
                                       : c[i] + (ring ? 0.1 * T : T) + (r->member_only && !ring ? 0.0 : r->xfer_extra);
        if (arrive[i] < interval)
            arrive[i] = interval;
        if (arrive[i] > last)
            last = arrive[i];
    }
    for (int i = 0; i < n; i++) {
        const synth_rank *r = &s->rank[i];
        double *f = feat + (size_t)i * SC_NFEAT;
        memset(f, 0, SC_NFEAT * sizeof(double));
        int ring = !parent || parent[i] < 0;
        double step, wait;
        if (ring && c[i] <= ck) {
            step = interval;
            wait = interval - c[i];
        } else {
            /* A late quorum member or a child: takes what is ready, or
             * exchanges with its parent, off the critical path. */
            wait = (ring ? 0.1 * T : T) + (r->member_only && !ring ? 0.0 : r->xfer_extra);
            step = c[i] + wait > interval ? c[i] + wait : interval;
        }
        if (s->paced && last > arrive[i]) {
            f[SC_F_AWAY_S] = last - arrive[i];
            wait += last - arrive[i];
            step = last;
        }
        f[SC_F_STEP_S] = step;
        f[SC_F_COMPUTE_S] = c[i];
        f[SC_F_WAIT_S] = wait;
        double extra_c = c[i] - s->compute_s;
        if (r->hidden > 0.0 && extra_c > 0.0 && !(r->member_only && !ring)) {
            /* throttled inside MPI: the same wall time, less of it outside */
            f[SC_F_COMPUTE_S] -= r->hidden * extra_c;
            f[SC_F_WAIT_S] += r->hidden * extra_c;
        }
        if (s->lags && (mode == SC_MODE_SYNC || mode == SC_MODE_HIER))
            f[SC_F_LAG_S] = c[i] - sorted[0];
        double runq = r->member_only && !ring ? 0.0 : r->runq_share;
        double busy = r->sleeps ? 0.02 * c[i] : c[i] * (1.0 - runq);
        f[SC_F_CPU_S] = busy + 0.3 * wait; /* MPI polls part of the wait */
        f[SC_F_RUNQ_S] = c[i] * runq + r->engine_runq;
        if (s->app_runq) f[SC_F_APP_RUNQ_S] = c[i] * runq;
        f[SC_F_THROTTLED_S] = r->member_only && !ring ? 0.0 : step * r->throttled;
        f[SC_F_NVCSW] = (runq > 0.0 ? 400.0 : 5.0) * step;
        f[SC_F_NIC_TX_BPS] = f[SC_F_NIC_RX_BPS] = r->link_util * LINK_SPEED;
        f[SC_F_NIC_SPEED_BPS] = LINK_SPEED;
        f[SC_F_IB_WAIT_PS] = r->ib_wait_ps;
        f[SC_F_BYTES] = STEP_BYTES;
        f[SC_F_LINK_SPB] = r->link_spb;
        if (s->noise_scale >= 0.0) {
            /* Expected norms for |G|^2 = 1 and tr(Sigma) = B per rank batch. */
            f[SC_F_GRAD_SQNORM] = 1.0 + s->noise_scale;
            f[SC_F_SUM_SQNORM] = (double)n * n + n * s->noise_scale;
        }
    }
}

int driver_init_cfg(driver *dr, const sc_selector_config *cfg, uint64_t seed)
{
    memset(dr, 0, sizeof *dr);
    char msg[400];
    dr->sel = sc_selector_new(cfg, msg, sizeof msg);
    if (!dr->sel) {
        printf("driver: %s\n", msg);
        return -1;
    }
    if (msg[0])
        printf("driver: selector says: %s\n", msg);
    dr->epoch = cfg->epoch_steps;
    dr->d.parent = dr->parent;
    dr->d.mode = SC_MODE_SYNC;
    dr->d.quorum_k = cfg->nranks;
    for (int i = 0; i < cfg->nranks; i++)
        dr->parent[i] = -1;
    synth_init(&dr->syn, cfg->nranks, 0.1, 0.02, seed);
    return 0;
}

int driver_init(driver *dr, int kind, int n, int epoch, const char *model_path, uint64_t seed)
{
    sc_selector_config cfg = {.kind = kind, .nranks = n, .epoch_steps = epoch, .staleness = 4,
                              .model_path = model_path};
    return driver_init_cfg(dr, &cfg, seed);
}

int driver_run(driver *dr, long steps, int urgent)
{
    int before = dr->changes;
    for (long t = 0; t < steps; t++, dr->step++) {
        synth_step(&dr->syn, dr->d.mode, dr->d.quorum_k, dr->d.mode == SC_MODE_GROUPS ? dr->parent : NULL,
                   dr->feat);
        sc_selector_observe(dr->sel, dr->step, dr->d.mode, dr->feat);
        int epoch_end = (dr->step + 1) % dr->epoch == 0 || dr->step + 1 == dr->first_decision;
        /* As the plugin: before its first epoch ends, decide only on a clear case. */
        int early = dr->step + 1 < dr->first_decision && dr->decides == 0 && sc_selector_early_case(dr->sel);
        if (dr->step + 1 < dr->first_decision && !early)
            continue;
        if (epoch_end || early || (urgent && sc_selector_urgent(dr->sel))) {
            dr->decides++;
            if (sc_selector_decide(dr->sel, dr->step, &dr->d)) {
                if (dr->changes < SYNTH_MAX_CHANGES) {
                    dr->change_step[dr->changes] = dr->step;
                    dr->change_mode[dr->changes] = dr->d.mode;
                    dr->change_k[dr->changes] = dr->d.quorum_k;
                    snprintf(dr->change_reason[dr->changes], 160, "%s", dr->d.reason);
                }
                dr->changes++;
            }
        }
    }
    return dr->changes - before;
}

int driver_change_after(const driver *dr, long from)
{
    for (int i = 0; i < dr->changes && i < SYNTH_MAX_CHANGES; i++)
        if (dr->change_step[i] >= from)
            return i;
    return -1;
}

void driver_free(driver *dr)
{
    sc_selector_free(dr->sel);
    dr->sel = NULL;
}
