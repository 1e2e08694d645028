/* STARCOLL_INJECT parsing and the per-call delay decision (see inject.h). */
#include "inject.h"
#include "policy.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t len, const char *what, const char *item)
{
    snprintf(err, len, "%s in '%.40s%s'", what, item, strlen(item) > 40 ? "..." : "");
    return -1;
}

static int parse_ranks(const char *v, sc_inject *in)
{
    if (strcmp(v, "all") == 0) { in->all = 1; return 0; }
    if (strcmp(v, "rotate") == 0) { in->rotate = 1; return 0; }
    char buf[256];
    if (strlen(v) >= sizeof buf) return -1;
    strcpy(buf, v);
    char *save = NULL;
    for (char *t = strtok_r(buf, "+", &save); t; t = strtok_r(NULL, "+", &save)) {
        long r;
        if (in->nranks >= SC_INJECT_MAX_RANKS || sc_parse_int(t, 0, 1L << 30, &r) != 0) return -1;
        in->ranks[in->nranks++] = (int)r;
    }
    return in->nranks > 0 ? 0 : -1;
}

int sc_inject_parse(const char *spec, sc_inject *out, char *err, size_t errlen)
{
    sc_inject in;
    memset(&in, 0, sizeof in);
    in.prob = 1.0;
    in.every = 1;
    in.until = -1;
    in.period = 10;
    in.seed = 1;
    int have_rank = 0, have_delay = 0;
    char buf[512];
    if (strlen(spec) >= sizeof buf) return fail(err, errlen, "too long", "spec");
    strcpy(buf, spec);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) return fail(err, errlen, "expected key=value", item);
        *eq = '\0';
        const char *k = item, *v = eq + 1;
        long n;
        if (strcmp(k, "rank") == 0) {
            if (parse_ranks(v, &in) != 0) return fail(err, errlen, "rank takes R, R1+R2, all or rotate", v);
            have_rank = 1;
        } else if (strcmp(k, "delay") == 0) {
            if (sc_parse_duration(v, &in.delay_s) != 0) return fail(err, errlen, "delay takes a time such as 40ms, 500us or 1s", v);
            have_delay = 1;
        } else if (strcmp(k, "prob") == 0) {
            char *end;
            in.prob = strtod(v, &end);
            if (end == v || *end || !(in.prob >= 0 && in.prob <= 1)) return fail(err, errlen, "prob takes a number in [0,1]", v);
        } else if (strcmp(k, "every") == 0) {
            if (sc_parse_int(v, 1, 1L << 40, &n) != 0) return fail(err, errlen, "every takes a whole number >= 1", v);
            in.every = n;
        } else if (strcmp(k, "from") == 0) {
            if (sc_parse_int(v, 0, 1L << 40, &n) != 0) return fail(err, errlen, "from takes a call number >= 0", v);
            in.from = n;
        } else if (strcmp(k, "until") == 0) {
            if (sc_parse_int(v, 0, 1L << 40, &n) != 0) return fail(err, errlen, "until takes a call number >= 0", v);
            in.until = n;
        } else if (strcmp(k, "period") == 0) {
            if (sc_parse_int(v, 1, 1L << 40, &n) != 0) return fail(err, errlen, "period takes a whole number >= 1", v);
            in.period = n;
        } else if (strcmp(k, "seed") == 0) {
            if (sc_parse_int(v, 0, 1L << 40, &n) != 0) return fail(err, errlen, "seed takes a whole number >= 0", v);
            in.seed = (unsigned long)n;
        } else {
            return fail(err, errlen, "unknown key (rank, delay, prob, every, from, until, period, seed)", k);
        }
    }
    if (!have_rank) return fail(err, errlen, "rank= is required", spec);
    if (in.until >= 0 && in.until <= in.from) return fail(err, errlen, "until must be above from", spec);
    if (!have_delay) return fail(err, errlen, "delay= is required", spec);
    in.enabled = 1;
    *out = in;
    return 0;
}

/* splitmix64: a counter-based generator, so the draw for (seed, rank, call)
 * needs no state and is the same wherever it is computed. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

double sc_inject_delay(const sc_inject *in, int rank, int size, long call)
{
    if (!in->enabled || call < in->from || (in->until >= 0 && call >= in->until)) return 0;
    if ((call - in->from) % in->every != 0) return 0;
    int chosen = in->all;
    if (in->rotate) chosen = size > 0 && (int)((call / in->period) % size) == rank;
    for (int i = 0; i < in->nranks; i++) chosen |= in->ranks[i] == rank;
    if (!chosen) return 0;
    if (in->prob < 1) {
        uint64_t r = mix(mix(in->seed * 1000003ULL + (uint64_t)rank) ^ (uint64_t)call);
        if ((double)(r >> 11) / 9007199254740992.0 >= in->prob) return 0;
    }
    return in->delay_s;
}

void sc_inject_describe(const sc_inject *in, char *buf, size_t len)
{
    if (!in->enabled) { snprintf(buf, len, "off"); return; }
    char who[128] = "";
    if (in->all) snprintf(who, sizeof who, "all");
    else if (in->rotate) snprintf(who, sizeof who, "rotate/%ld", in->period);
    else
        for (int i = 0; i < in->nranks; i++) {
            size_t u = strlen(who);
            snprintf(who + u, sizeof who - u, "%s%d", i ? "+" : "", in->ranks[i]);
        }
    snprintf(buf, len, "rank=%s,delay=%gms,prob=%g,every=%ld,from=%ld,until=%ld,seed=%lu", who,
             in->delay_s * 1e3, in->prob, in->every, in->from, in->until, in->seed);
}
