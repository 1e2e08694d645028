/* STARCOLL_PAPI_EVENTS: "auto" (or unset), "none", or a comma list of at
 * most SC_PAPI_MAX_EVENTS PAPI event names (presets such as PAPI_TOT_CYC or
 * native names such as perf::TASK-CLOCK).  Parsing is separate from PAPI so
 * that it is tested, and behaves the same, on builds without PAPI. */
#ifndef STARCOLL_PAPI_EVENTS_H
#define STARCOLL_PAPI_EVENTS_H

#include <stddef.h>

/* Matches SC_F_PAPI0..SC_F_PAPI3 in sc_features.h. */
#define SC_PAPI_MAX_EVENTS 4
#define SC_PAPI_NAME_MAX 128

typedef enum sc_papi_spec_kind {
    SC_PAPI_SPEC_NONE = 0,   /* "none", or nothing usable was named */
    SC_PAPI_SPEC_AUTO,       /* hardware cycles and instructions, else software events */
    SC_PAPI_SPEC_LIST        /* the names below, in order */
} sc_papi_spec_kind;

typedef struct sc_papi_spec {
    sc_papi_spec_kind kind;
    int n;
    char names[SC_PAPI_MAX_EVENTS][SC_PAPI_NAME_MAX];
} sc_papi_spec;

/* Parses text (NULL or blank: auto).  Blanks around names are ignored,
 * empty items skipped; a name too long, repeated, or past the fourth is
 * dropped with one notice in msg.  Never fails. */
void sc_papi_parse_spec(const char *text, sc_papi_spec *spec, char *msg, size_t msglen);

#endif
