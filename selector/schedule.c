#include "schedule.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "names.h"
#include "tokens.h"

typedef struct entry {
    long step;
    sc_mode mode;
    int k;                 /* quorum: ranks a round waits for */
    unsigned char *child;  /* groups: nranks flags */
} entry;

struct sc_schedule {
    int n, len, next;
    entry *e;
};

void sc_schedule_free(sc_schedule *s)
{
    if (!s) return;
    for (int i = 0; i < s->len; i++) free(s->e[i].child);
    free(s->e);
    free(s);
}

int sc_schedule_length(const sc_schedule *s) { return s ? s->len : 0; }

/* "7+3": ranks in [0, n), at least one, at most n-2 (a ring needs two). */
static int parse_children(char *arg, int n, unsigned char *child)
{
    int count = 0;
    for (char *save = NULL, *tok = strtok_r(arg, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
        long r;
        if (sc_token_long(tok, &r) != 0 || r < 0 || r >= n || child[r]) return -1;
        child[r] = 1;
        count++;
    }
    return count >= 1 && count <= n - 2 ? 0 : -1;
}

static int parse_entry(char *text, int n, long prev_step, entry *out)
{
    char *save = NULL;
    char *step = strtok_r(text, ":", &save), *mode = strtok_r(NULL, ":", &save), *arg = strtok_r(NULL, ":", &save);
    if (!step || !mode || strtok_r(NULL, ":", &save)) return -1;
    if (sc_token_long(step, &out->step) != 0 || out->step < 0 || out->step <= prev_step) return -1;
    if (sc_sel_mode_parse(mode, &out->mode) != 0 || out->mode == SC_MODE_AUTO) return -1;
    out->k = n;
    if (out->mode == SC_MODE_QUORUM) {
        long k = n - 1 > 0 ? n - 1 : 1;
        if (arg && (sc_token_long(arg, &k) != 0 || k < 1 || k > n)) return -1;
        out->k = (int)k;
    } else if (out->mode == SC_MODE_GROUPS) {
        out->child = calloc((size_t)n, 1);
        if (!out->child || !arg || parse_children(arg, n, out->child) != 0) return -1;
        int members = 0;
        for (int r = 0; r < n; r++) members += !out->child[r];
        out->k = members;
    } else if (arg) {
        return -1;
    }
    return 0;
}

sc_schedule *sc_schedule_parse(const char *text, int nranks, char *msg, size_t msglen)
{
    if (msg && msglen) msg[0] = '\0';
    sc_schedule *s = calloc(1, sizeof *s);
    char *copy = text ? strdup(text) : NULL;
    int cap = 1;
    for (const char *p = text; p && *p; p++) cap += *p == ',';
    if (s) s->e = calloc((size_t)cap, sizeof(entry));
    if (!s || !copy || !s->e || nranks < 1) {
        if (msg) snprintf(msg, msglen, "starcoll: STARCOLL_SCHEDULE: out of memory; the selector decides");
        free(copy);
        sc_schedule_free(s);
        return NULL;
    }
    s->n = nranks;
    long prev = -1;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char shown[64];
        snprintf(shown, sizeof shown, "%s", tok);
        entry *e = &s->e[s->len++];
        if (parse_entry(tok, nranks, prev, e) != 0) {
            if (msg)
                snprintf(msg, msglen,
                         "starcoll: STARCOLL_SCHEDULE entry '%s' is not valid for %d ranks (STEP:MODE[:ARG], steps "
                         "rising; quorum:K with 1<=K<=%d, groups:R+R children, sync, hier); the selector decides",
                         shown, nranks, nranks);
            free(copy);
            sc_schedule_free(s);
            return NULL;
        }
        prev = e->step;
    }
    free(copy);
    if (s->len == 0) {
        if (msg) snprintf(msg, msglen, "starcoll: STARCOLL_SCHEDULE is empty; the selector decides");
        sc_schedule_free(s);
        return NULL;
    }
    return s;
}

int sc_schedule_due(sc_schedule *s, long step, sc_decision *out)
{
    if (!s || s->next >= s->len || s->e[s->next].step > step) return 0;
    while (s->next + 1 < s->len && s->e[s->next + 1].step <= step) s->next++;
    const entry *e = &s->e[s->next++];
    out->mode = e->mode;
    out->quorum_k = e->k;
    out->nranks = s->n;
    if (out->parent) {
        int next_member = 0;
        for (int r = 0; r < s->n; r++) out->parent[r] = -1;
        for (int r = 0; r < s->n && e->child; r++) {
            if (!e->child[r]) continue;
            while (e->child[next_member % s->n]) next_member++;
            out->parent[r] = next_member % s->n;
            next_member++;
        }
    }
    snprintf(out->reason, sizeof out->reason, "STARCOLL_SCHEDULE: entry %d at step %ld", s->next, e->step);
    return 1;
}
