/* Per-rank telemetry traces (STARCOLL_TRACE): the writer the plugin calls
 * and the reader starcoll-train uses.  The format is in TRACE.md: a
 * self-describing text header, a column line naming every field, then one
 * line per rank per step. */
#ifndef STARCOLL_SELECTOR_TRACE_H
#define STARCOLL_SELECTOR_TRACE_H

#include <stddef.h>
#include <stdio.h>

#include "sc_features.h"

#define SC_TRACE_MAGIC "# starcoll-trace 1"

/* Writes the header and the column line.  papi_events (NULL or "": none)
 * names the PAPI events behind papi0..papi3, comma-separated.  Returns 0,
 * or -1 on a write error (errno set). */
int sc_trace_write_header(FILE *f, int rank, int nranks, int epoch_steps, const char *papi_events);

/* Writes one step of one rank: rank, step, mode name, its parent (-1: a
 * ring member; a child's parent rank in groups), then SC_NFEAT values
 * (non-finite or negative values written as 0).  Returns 0 or -1. */
int sc_trace_write_step(FILE *f, int rank, long step, sc_mode mode, int parent, const double *feat);

typedef struct sc_trace_row {
    int rank;
    long step;
    sc_mode mode;
    int parent;            /* -1: a ring member (also when the column is absent) */
    double feat[SC_NFEAT]; /* columns absent from the file read as 0 */
} sc_trace_row;

typedef struct sc_trace_reader sc_trace_reader;

/* Opens a trace and reads its header.  NULL with one line in msg when the
 * file cannot be read or is not a starcoll trace. */
sc_trace_reader *sc_trace_open(const char *path, char *msg, size_t msglen);
/* Header values: -1 where the header does not say. */
int sc_trace_rank(const sc_trace_reader *r);
int sc_trace_nranks(const sc_trace_reader *r);
int sc_trace_epoch(const sc_trace_reader *r);
/* PAPI event names from the header ("" when none). */
const char *sc_trace_papi(const sc_trace_reader *r);
/* 1 when the file ended in a partial line (a job killed while writing),
 * which the reader dropped. */
int sc_trace_truncated(const sc_trace_reader *r);

/* Reads the next row: 1 when read, 0 at the end, -1 on a malformed line
 * (one line in msg: file, line number, what is wrong). */
int sc_trace_next(sc_trace_reader *r, sc_trace_row *row, char *msg, size_t msglen);
void sc_trace_close(sc_trace_reader *r);

#endif
