/* End-of-run report at MPI_Finalize (STARCOLL_REPORT), mpiP-style: a header,
 * then a table of calls per communicator, then one totals line. */
#ifndef STARCOLL_REPORT_H
#define STARCOLL_REPORT_H
/* Collective over MPI_COMM_WORLD; rank 0 writes. */
void sc_report_write(void);
#endif
