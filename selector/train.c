/* Offline training of the learned model from traces. */
#include "train.h"
#include "learned.h"
#include "model_file.h"
#include "selector.h"
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_EPOCH 20

struct source {
    sc_trace_reader *r;
    sc_trace_row row; /* next unconsumed row */
    int has_row;
};

/* Advances a source; returns 0, or -1 with msg. */
static int advance(struct source *src, const char *path, char *msg, size_t msglen)
{
    long prev = src->has_row ? src->row.step : -1;
    int got = sc_trace_next(src->r, &src->row, msg, msglen);
    if (got < 0)
        return -1;
    src->has_row = got;
    if (got && src->row.step < prev) {
        snprintf(msg, msglen, "%s: steps go backwards (step %ld after %ld): traces must be in step order",
                 path, src->row.step, prev);
        return -1;
    }
    return 0;
}

/* Opens every file and checks they describe the same job. */
static int open_sources(struct source *src, const char *const *paths, int npaths, int *nranks,
                        int *epoch, char *msg, size_t msglen)
{
    *nranks = -1;
    *epoch = -1;
    for (int i = 0; i < npaths; i++) {
        src[i].r = sc_trace_open(paths[i], msg, msglen);
        if (!src[i].r)
            return -1;
        int nr = sc_trace_nranks(src[i].r);
        if (nr < 1) {
            snprintf(msg, msglen, "%s: the header does not give nranks", paths[i]);
            return -1;
        }
        if (*nranks >= 0 && nr != *nranks) {
            snprintf(msg, msglen, "%s: nranks %d, but %s has %d: traces of different jobs?", paths[i], nr,
                     paths[0], *nranks);
            return -1;
        }
        *nranks = nr;
        if (*epoch < 0 && sc_trace_epoch(src[i].r) > 0)
            *epoch = sc_trace_epoch(src[i].r);
        char err[512];
        if (advance(&src[i], paths[i], err, sizeof err) != 0) {
            snprintf(msg, msglen, "%s", err);
            return -1;
        }
    }
    return 0;
}

/* Reads the written model back (it must load as STARCOLL_MODEL would) and
 * counts its cells. */
static int check_model(const char *path, int *cells, char *msg, size_t msglen)
{
    sc_learned *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(msg, msglen, "out of memory");
        return -1;
    }
    sc_learned_init(m);
    int rc = sc_model_load(m, path, msg, msglen);
    *cells = 0;
    for (int c = 0; rc == 0 && c < SC_LEARNED_CLASSES; c++)
        for (int md = 0; md < SC_LEARNED_MODES; md++)
            *cells += m->cell[c][md].count > 0.0;
    free(m);
    return rc;
}

int sc_train_from_traces(const char *const *paths, int npaths, int epoch_steps, const char *out_path,
                         sc_train_summary *summary, char *msg, size_t msglen)
{
    sc_train_summary sum;
    memset(&sum, 0, sizeof sum);
    if (npaths < 1) {
        snprintf(msg, msglen, "no trace files given");
        return -1;
    }
    struct source *src = calloc((size_t)npaths, sizeof *src);
    if (!src) {
        snprintf(msg, msglen, "out of memory");
        return -1;
    }
    int rc = -1, nranks, epoch;
    double *feat = NULL;
    unsigned char *seen = NULL;
    sc_selector *sel = NULL;
    if (open_sources(src, paths, npaths, &nranks, &epoch, msg, msglen) != 0)
        goto out;
    if (epoch_steps > 0)
        epoch = epoch_steps;
    if (epoch < 1)
        epoch = DEFAULT_EPOCH;
    feat = calloc((size_t)nranks * SC_NFEAT, sizeof(double));
    seen = calloc((size_t)nranks, 1);
    sc_selector_config cfg = {.kind = SC_KIND_LEARNED, .nranks = nranks, .epoch_steps = epoch,
                              .staleness = 4};
    char smsg[256];
    sel = feat && seen ? sc_selector_new(&cfg, smsg, sizeof smsg) : NULL;
    if (!sel) {
        snprintf(msg, msglen, "out of memory");
        goto out;
    }
    sum.files = npaths;
    sum.nranks = nranks;
    for (;;) {
        long step = -1;
        for (int i = 0; i < npaths; i++)
            if (src[i].has_row && (step < 0 || src[i].row.step < step))
                step = src[i].row.step;
        if (step < 0)
            break;
        memset(seen, 0, (size_t)nranks);
        int present = 0;
        sc_mode mode = SC_MODE_AUTO;
        for (int i = 0; i < npaths; i++) {
            while (src[i].has_row && src[i].row.step == step) {
                const sc_trace_row *row = &src[i].row;
                if (row->rank >= nranks) {
                    snprintf(msg, msglen, "%s: rank %d at step %ld, but nranks is %d", paths[i], row->rank,
                             step, nranks);
                    goto out;
                }
                if (seen[row->rank]) {
                    snprintf(msg, msglen, "%s: rank %d appears twice at step %ld", paths[i], row->rank, step);
                    goto out;
                }
                seen[row->rank] = 1;
                present++;
                if (mode == SC_MODE_AUTO || row->rank == 0)
                    mode = row->mode; /* rank 0's word, else the first seen */
                memcpy(feat + (size_t)row->rank * SC_NFEAT, row->feat, sizeof row->feat);
                char err[512];
                if (advance(&src[i], paths[i], err, sizeof err) != 0) {
                    snprintf(msg, msglen, "%s", err);
                    goto out;
                }
            }
        }
        if (present < nranks) {
            sum.skipped_steps++;
            continue;
        }
        sc_selector_observe(sel, step, mode, feat);
        sum.steps++;
        if (sum.steps % epoch == 0) {
            sc_selector_learn(sel, step);
            sum.epochs++;
        }
    }
    if (sum.steps == 0) {
        snprintf(msg, msglen, "no step has a row from all %d ranks: give every rank's trace", nranks);
        goto out;
    }
    if (sum.steps % epoch != 0) {
        sc_selector_learn(sel, -1);
        sum.epochs++;
    }
    for (int i = 0; i < npaths; i++)
        sum.truncated += sc_trace_truncated(src[i].r);
    char comment[200];
    snprintf(comment, sizeof comment, "trained by starcoll-train from %d trace files: %d ranks, %ld steps, %ld epochs of %d",
             npaths, nranks, sum.steps, sum.epochs, epoch);
    if (sc_selector_save_model(sel, out_path, comment, msg, msglen) != 0)
        goto out;
    if (check_model(out_path, &sum.cells, msg, msglen) != 0)
        goto out;
    rc = 0;
out:
    for (int i = 0; i < npaths; i++)
        sc_trace_close(src[i].r);
    free(src);
    free(feat);
    free(seen);
    sc_selector_free(sel);
    if (summary)
        *summary = sum;
    return rc;
}
