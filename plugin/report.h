/* End-of-run report at MPI_Finalize (STARCOLL_REPORT), mpiP-style: a header,
 * then a table of calls per communicator, then one totals line. */
#ifndef STARCOLL_REPORT_H
#define STARCOLL_REPORT_H
#include <stddef.h>
#include "sc_features.h"

/* A communicator's name in lines and the report: its order of first use
 * at its rank 0 (ord; SC_REPORT_ROWS - 1 and on are lumped, "15+"), then
 * "@W" where that rank is world rank W, not 0 ("1@4": the first
 * communicator world rank 4 used and leads).  The same on all its ranks
 * once its first tolerant call agreed on it; before, ord is each rank's own. */
void sc_report_label(int ord, int leader, char *buf, size_t len);

/* A line about a communicator (a selector that fell back), kept like a
 * decision by the coordinator's process. */
void sc_report_note(const char *comm, const char *text);
/* A communicator's coordinator, said once by the coordinator's process. */
void sc_report_coordinator(const char *comm, int rank);
/* A decision, kept by the coordinator's process (world rank 0 gathers them). */
void sc_report_decision(const char *comm, long step, sc_mode mode, int k, int children, const char *reason,
                        const char *signals);

/* Collective over MPI_COMM_WORLD; rank 0 writes. */
void sc_report_write(void);
#endif
