/* The report's straggler table: which rank was slow, since when, why, and
 * what it would have cost under sync (selector/straggler_log.h), and the
 * same figures as CSV beside a report file.
 *
 * Each communicator's coordinator keeps its rows as text in
 * sc_rt.stragglers when its selector stops; world rank 0 gathers every
 * process's text (report.c) and renders it here with the ranks' hosts. */
#ifndef STARCOLL_REPORT_STRAGGLERS_H
#define STARCOLL_REPORT_STRAGGLERS_H
#include <stdio.h>
#include "straggler_log.h"

/* The coordinator's rows of one communicator (named comm, sc_report_label) at the
 * end of its selector; world_rank maps its ranks (NULL: unknown).  A NULL
 * log says the table could not be kept for it. */
void sc_report_stragglers(const char *comm, const sc_straggler_log *log, const int *world_rank);

/* Renders the gathered text as the report's table.  hosts holds
 * world_size names of host_len chars each (NULL: unknown). */
void sc_stragglers_write(FILE *f, const char *text, const char *hosts, int host_len);

/* The same rows as CSV with a header line.  Returns 0, or -1 when there is
 * nothing to write (no communicator watched). */
int sc_stragglers_write_csv(FILE *f, const char *text, const char *hosts, int host_len);
#endif
