/* The learned model's file (STARCOLL_MODEL, written by starcoll-train):
 * plain text, one cell per line, so a person can read and diff it.
 *
 *   starcoll-model 1
 *   # comments and blank lines are ignored
 *   cell <class> <mode> <epochs> <mean interval / median compute>
 *   ...
 *   end
 *
 * class is in [0, SC_LEARNED_CLASSES) (see learned.h), mode one of sync,
 * hier, quorum, groups; epochs > 0; the mean a positive finite number.  The
 * closing `end` line catches truncated files. */
#ifndef STARCOLL_SELECTOR_MODEL_FILE_H
#define STARCOLL_SELECTOR_MODEL_FILE_H

#include <stddef.h>

#include "learned.h"

/* Loads path into m (its cells replaced only on success).  Returns 0, or -1
 * with one line in msg naming the file, the line and what is wrong. */
int sc_model_load(sc_learned *m, const char *path, char *msg, size_t msglen);

/* Writes m's learned cells to path, `comment` (may be NULL) as a comment
 * line.  Returns 0, or -1 with one line in msg. */
int sc_model_save(const sc_learned *m, const char *path, const char *comment, char *msg, size_t msglen);

#endif
