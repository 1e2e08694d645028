/* The start-up agreement (startup.c): collective over MPI_COMM_WORLD once
 * every rank is known to have the library.  0 when starcoll must stay out
 * of the way (the library is not on every rank): every call then passes
 * through untouched. */
#ifndef STARCOLL_STARTUP_H
#define STARCOLL_STARTUP_H
int sc_startup_agree(void);
#endif
