/* The stall sentinel: one thread per process that calls nothing of MPI's.
 * The stall watchdog runs on each communicator's engine thread, so while
 * that thread is held in an MPI call (a round's reduction waits for every
 * ring member's engine thread; a rank stopped or starved of CPU holds it)
 * the watchdog is mute and a job can hang for minutes without a word.
 * The sentinel reads each engine's heartbeat (sc_engine_look) and says
 * what the engine thread is in and what this process's application thread
 * waits for. */
#ifndef STARCOLL_STALL_SENTINEL_H
#define STARCOLL_STALL_SENTINEL_H
/* With STARCOLL_STALL > 0, once an engine runs; later calls do nothing. */
void sc_sentinel_start(void);
/* At MPI_Finalize, after the engines stopped: joins the thread. */
void sc_sentinel_stop(void);
#endif
