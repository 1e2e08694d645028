/* Offline training of the learned model from recorded traces: the traces
 * of one job (one file per rank, or any split) are merged step by step and
 * replayed through a learned selector that only learns, then its model is
 * written.  Used by starcoll-train and by the tests. */
#ifndef STARCOLL_SELECTOR_TRAIN_H
#define STARCOLL_SELECTOR_TRAIN_H

#include <stddef.h>

typedef struct sc_train_summary {
    int files;
    int nranks;
    long steps;         /* steps with a row from every rank, replayed */
    long skipped_steps; /* steps missing some rank's row */
    long epochs;
    int cells;          /* (class, mode) cells the model holds */
    int truncated;      /* files that ended in a partial line */
} sc_train_summary;

/* Trains from the trace files and writes the model to out_path.
 * epoch_steps <= 0: the traces' epoch (20 when they do not say).  Returns
 * 0, or -1 with one line in msg (file, line and what is wrong). */
int sc_train_from_traces(const char *const *paths, int npaths, int epoch_steps, const char *out_path,
                         sc_train_summary *summary, char *msg, size_t msglen);

#endif
