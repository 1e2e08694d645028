/* Names of modes, causes and feature columns, as users and traces spell
 * them.  Shared by the report, the trace format and the trainer. */
#ifndef STARCOLL_SELECTOR_NAMES_H
#define STARCOLL_SELECTOR_NAMES_H
#include "sc_features.h"

/* "sync", "hier", "quorum", "groups", "auto"; "?" when out of range. */
const char *sc_sel_mode_name(sc_mode mode);
/* Parses a mode name (exact, lower case).  Returns 0 and sets *out, or -1. */
int sc_sel_mode_parse(const char *name, sc_mode *out);
/* "none", "cpu", "network", "work"; "?" when out of range. */
const char *sc_sel_cause_name(sc_cause cause);
/* Trace column name of feature idx ("step_s", ...); NULL when out of range. */
const char *sc_sel_feature_name(int idx);
/* Feature index of a column name, or -1 when unknown. */
int sc_sel_feature_parse(const char *name);

#endif
