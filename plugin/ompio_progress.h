/* Open MPI's file I/O progress, kept to the application's threads. */
#ifndef STARCOLL_OMPIO_PROGRESS_H
#define STARCOLL_OMPIO_PROGRESS_H
/* The calling thread is one of starcoll's: MPI's progress made there never
 * runs Open MPI's ompio callback (ompio_progress.c). */
void sc_ompio_progress_not_here(void);
#endif
