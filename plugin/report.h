/* End-of-run report at MPI_Finalize (STARCOLL_REPORT), mpiP-style: a header,
 * then a table of calls per communicator, then one totals line. */
#ifndef STARCOLL_REPORT_H
#define STARCOLL_REPORT_H
#include "sc_features.h"

/* A line about a communicator (a selector that fell back), kept like a
 * decision by the coordinator's process. */
void sc_report_note(int comm, const char *text);
/* A communicator's coordinator, said once by the coordinator's process. */
void sc_report_coordinator(int comm, int rank);
/* A decision, kept by the coordinator's process (world rank 0 gathers them). */
void sc_report_decision(int comm, long step, sc_mode mode, int k, int children, const char *reason,
                        const char *signals);

/* Collective over MPI_COMM_WORLD; rank 0 writes. */
void sc_report_write(void);
#endif
