/* STARCOLL_PAPI_EVENTS parsing: see papi_events.h. */
#define _GNU_SOURCE
#include "papi_events.h"

#include "notice.h"

#include <string.h>
#include <strings.h>

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Copies text[0..len) with surrounding blanks removed into out; returns
 * the trimmed length (which may exceed cap - 1: out is then not filled). */
static size_t trim_copy(const char *text, size_t len, char *out, size_t cap)
{
    while (len > 0 && is_blank(*text)) {
        text++;
        len--;
    }
    while (len > 0 && is_blank(text[len - 1]))
        len--;
    if (len < cap) {
        memcpy(out, text, len);
        out[len] = '\0';
    }
    return len;
}

static int already_listed(const sc_papi_spec *spec, const char *name)
{
    for (int i = 0; i < spec->n; i++)
        if (strcmp(spec->names[i], name) == 0)
            return 1;
    return 0;
}

void sc_papi_parse_spec(const char *text, sc_papi_spec *spec, char *msg, size_t msglen)
{
    memset(spec, 0, sizeof *spec);
    char word[SC_PAPI_NAME_MAX];
    size_t whole = text ? trim_copy(text, strlen(text), word, sizeof word) : 0;
    if (whole == 0 || (whole < sizeof word && strcasecmp(word, "auto") == 0)) {
        spec->kind = SC_PAPI_SPEC_AUTO;
        return;
    }
    if (whole < sizeof word && strcasecmp(word, "none") == 0) {
        spec->kind = SC_PAPI_SPEC_NONE;
        return;
    }
    spec->kind = SC_PAPI_SPEC_LIST;
    const char *p = text;
    for (;;) {
        size_t len = strcspn(p, ",");
        size_t trimmed = trim_copy(p, len, word, sizeof word);
        if (trimmed >= sizeof word)
            sc_notice(msg, msglen, "STARCOLL_PAPI_EVENTS: an event name of %zu characters is too long (at most %d); dropped",
                      trimmed, SC_PAPI_NAME_MAX - 1);
        else if (trimmed == 0)
            ;   /* "a,,b" or a trailing comma: nothing named */
        else if (already_listed(spec, word))
            sc_notice(msg, msglen, "STARCOLL_PAPI_EVENTS: event '%s' listed twice; counted once", word);
        else if (spec->n >= SC_PAPI_MAX_EVENTS)
            sc_notice(msg, msglen, "STARCOLL_PAPI_EVENTS: at most %d events; '%s' dropped",
                      SC_PAPI_MAX_EVENTS, word);
        else
            memcpy(spec->names[spec->n++], word, trimmed + 1);
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    if (spec->n == 0) {
        spec->kind = SC_PAPI_SPEC_NONE;
        sc_notice(msg, msglen, "STARCOLL_PAPI_EVENTS='%.60s' names no event (accepted: auto, none, or a comma list of PAPI event names); PAPI counters off",
                  text);
    }
}
