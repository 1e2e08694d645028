/* PAPI counters: see papi_source.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "papi_source.h"

#include "notice.h"

#include <stdio.h>
#include <string.h>

#ifdef HAVE_PAPI
#include <papi.h>
#endif

const char *const sc_papi_auto_hardware[2] = {"PAPI_TOT_CYC", "PAPI_TOT_INS"};
const char *const sc_papi_auto_software[2] = {"perf::TASK-CLOCK", "perf::CONTEXT-SWITCHES"};

#ifdef HAVE_PAPI

/* Adds one event by name; on failure says why in msg unless quiet. */
static int add_event(sc_papi_source *s, const char *name, int quiet, char *msg, size_t msglen)
{
    int code;
    int rc = PAPI_event_name_to_code(name, &code);
    if (rc != PAPI_OK) {
        if (!quiet)
            sc_notice(msg, msglen, "papi: event '%s' unknown here (%s); dropped", name, PAPI_strerror(rc));
        return -1;
    }
    rc = PAPI_add_event(s->eventset, code);
    if (rc != PAPI_OK) {
        if (!quiet)
            sc_notice(msg, msglen, "papi: event '%s' cannot be counted here (%s); dropped", name, PAPI_strerror(rc));
        return -1;
    }
    snprintf(s->names[s->nevents], sizeof s->names[0], "%s", name);
    s->nevents++;
    return 0;
}

static void destroy_eventset(sc_papi_source *s)
{
    if (s->eventset != PAPI_NULL) {
        PAPI_cleanup_eventset(s->eventset);
        PAPI_destroy_eventset(&s->eventset);
        s->eventset = PAPI_NULL;
    }
    s->nevents = 0;
}

/* Builds an event set from names and starts it.  Returns 0 when at least
 * one event counts. */
static int start_events(sc_papi_source *s, const char *const *names, int n, int quiet,
                        char *msg, size_t msglen)
{
    int rc = PAPI_create_eventset(&s->eventset);
    if (rc != PAPI_OK) {
        s->eventset = PAPI_NULL;
        snprintf(s->why, sizeof s->why, "PAPI_create_eventset failed (%s)", PAPI_strerror(rc));
        return -1;
    }
    for (int i = 0; i < n; i++)
        add_event(s, names[i], quiet, msg, msglen);
    if (s->nevents == 0) {
        snprintf(s->why, sizeof s->why, "none of the requested events can be counted here");
        destroy_eventset(s);
        return -1;
    }
    rc = PAPI_start(s->eventset);
    if (rc == PAPI_OK)
        rc = PAPI_read(s->eventset, s->prev);
    if (rc != PAPI_OK) {
        /* Typically another event set already runs on this thread. */
        snprintf(s->why, sizeof s->why, "PAPI could not start or read the events (%s)", PAPI_strerror(rc));
        long long ignored[SC_PAPI_MAX_EVENTS];
        PAPI_stop(s->eventset, ignored);
        destroy_eventset(s);
        return -1;
    }
    return 0;
}

static int init_library(sc_papi_source *s)
{
    if (PAPI_is_initialized() != PAPI_NOT_INITED)
        return 0;    /* the application (or a tool) initialised PAPI already */
    int rc = PAPI_library_init(PAPI_VER_CURRENT);
    if (rc != PAPI_VER_CURRENT) {
        snprintf(s->why, sizeof s->why, "PAPI_library_init failed (%s)",
                 rc > 0 ? "header and library versions differ" : PAPI_strerror(rc));
        return -1;
    }
    return 0;
}

void sc_papi_open(sc_papi_source *s, const char *events, char *msg, size_t msglen)
{
    memset(s, 0, sizeof *s);
    s->eventset = PAPI_NULL;
    sc_papi_spec spec;
    sc_papi_parse_spec(events, &spec, msg, msglen);
    if (spec.kind == SC_PAPI_SPEC_NONE) {
        snprintf(s->why, sizeof s->why, "off: STARCOLL_PAPI_EVENTS='%.60s'", events ? events : "");
        return;
    }
    if (init_library(s) != 0) {
        sc_notice(msg, msglen, "papi: inactive: %s", s->why);
        return;
    }
    int rc;
    if (spec.kind == SC_PAPI_SPEC_AUTO) {
        rc = start_events(s, sc_papi_auto_hardware, 2, 1, msg, msglen);
        if (rc != 0) {
            /* Virtual machines often expose no hardware counters. */
            s->software_only = 1;
            rc = start_events(s, sc_papi_auto_software, 2, 1, msg, msglen);
            if (rc == 0) {
                snprintf(s->why, sizeof s->why,
                         "no hardware cycle or instruction counters here; software events only");
                sc_notice(msg, msglen, "papi: %s", s->why);
            } else {
                snprintf(s->why, sizeof s->why,
                         "neither hardware (PAPI_TOT_CYC, PAPI_TOT_INS) nor software (perf::TASK-CLOCK, perf::CONTEXT-SWITCHES) events can be counted here");
            }
        }
    } else {
        const char *names[SC_PAPI_MAX_EVENTS];
        for (int i = 0; i < spec.n; i++)
            names[i] = spec.names[i];
        rc = start_events(s, names, spec.n, 0, msg, msglen);
    }
    if (rc != 0) {
        sc_notice(msg, msglen, "papi: inactive: %s", s->why);
        return;
    }
    s->active = 1;
}

void sc_papi_sample(sc_papi_source *s, double *delta)
{
    for (int i = 0; i < SC_PAPI_MAX_EVENTS; i++)
        delta[i] = 0.0;
    if (!s->active)
        return;
    long long now[SC_PAPI_MAX_EVENTS];
    if (PAPI_read(s->eventset, now) != PAPI_OK)
        return;
    for (int i = 0; i < s->nevents; i++) {
        delta[i] = now[i] >= s->prev[i] ? (double)(now[i] - s->prev[i]) : 0.0;
        s->prev[i] = now[i];
    }
}

void sc_papi_close(sc_papi_source *s)
{
    if (s->active) {
        long long ignored[SC_PAPI_MAX_EVENTS];
        PAPI_stop(s->eventset, ignored);
    }
    destroy_eventset(s);
    /* PAPI_shutdown is left out on purpose: the application or another
     * monitor may still use PAPI, and re-initialising after it is fragile. */
    s->active = 0;
}

#else /* !HAVE_PAPI */

void sc_papi_open(sc_papi_source *s, const char *events, char *msg, size_t msglen)
{
    memset(s, 0, sizeof *s);
    sc_papi_spec spec;
    sc_papi_parse_spec(events, &spec, msg, msglen);
    snprintf(s->why, sizeof s->why, "starcoll was built without PAPI");
    /* Only a user who named events expects counters: tell that one. */
    if (spec.kind == SC_PAPI_SPEC_LIST)
        sc_notice(msg, msglen, "papi: STARCOLL_PAPI_EVENTS ignored: %s", s->why);
}

void sc_papi_sample(sc_papi_source *s, double *delta)
{
    (void)s;
    for (int i = 0; i < SC_PAPI_MAX_EVENTS; i++)
        delta[i] = 0.0;
}

void sc_papi_close(sc_papi_source *s)
{
    s->active = 0;
}

#endif /* HAVE_PAPI */

void sc_papi_describe(const sc_papi_source *s, char *buf, size_t len)
{
    if (!s->active) {
        sc_append(buf, len, "papi: inactive: %s\n", s->why);
        return;
    }
    sc_append(buf, len, "papi: active:");
    for (int i = 0; i < s->nevents; i++)
        sc_append(buf, len, "%s%s", i ? ", " : " ", s->names[i]);
    if (s->why[0])
        sc_append(buf, len, " (%s)", s->why);
    sc_append(buf, len, "\n");
}
