/* Pauses of the whole machine, as a program sees them.  A virtual machine
 * can be stopped by its host for seconds (this one's kernel logged
 * "workqueue lockup ... stuck for 40-88 s" several times a day), and a
 * call that spans such a pause takes that long whatever MPI or starcoll
 * do.  A thread that sleeps 20 ms at a time and finds far more time gone
 * saw one: a timed test can tell the machine's pauses from its own
 * waits.  No MPI calls; any thread level. */
#ifndef MACHINE_PAUSE_H
#define MACHINE_PAUSE_H

/* Starts the watcher thread; 0 on success. */
int machine_pause_start(void);
/* Seconds the machine stood still since the watcher started (gaps of
 * 0.5 s and more, less the watcher's own sleep), a gap under way included;
 * the difference of two readings is what a call between them lost. */
double machine_pause_total(void);
/* The longest single gap seen, seconds. */
double machine_pause_longest(void);

#endif
