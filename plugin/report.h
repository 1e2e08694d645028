/* End-of-run report at MPI_Finalize (STARCOLL_REPORT), mpiP-style: a header,
 * then a table of calls per communicator, then one totals line. */
#ifndef STARCOLL_REPORT_H
#define STARCOLL_REPORT_H
#include "sc_features.h"

/* A selector decision, kept for the report (on the rank that writes it). */
void sc_report_decision(int comm, long step, sc_mode mode, int k, int children, const char *reason,
                        const char *signals);

/* Collective over MPI_COMM_WORLD; rank 0 writes. */
void sc_report_write(void);
#endif
