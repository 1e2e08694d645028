#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report_stragglers.h"
#include "runtime.h"
#include "names.h"

/* The coordinator's text, one line per watched communicator and per row,
 * fields separated by tabs (a signal holds no tab):
 *   W comm steps kept
 *   R comm world_rank comm_rank from to last_step slow_steps slowdown sync_cost child quorum_out cause signal */
void sc_report_stragglers(const char *comm, const sc_straggler_log *log, const int *world_rank)
{
    char *buf = sc_rt.stragglers;
    size_t cap = sizeof sc_rt.stragglers, used = strlen(buf);
    long steps = sc_straggler_log_steps(log);
    if (used + 64 >= cap) return;
    used += (size_t)snprintf(buf + used, cap - used, "W\t%s\t%ld\t%d\n", comm, steps, log != NULL);
    sc_straggler_row rows[SC_SLOG_MAX_ROWS];
    int n = sc_straggler_log_rows(log, rows, SC_SLOG_MAX_ROWS, NULL);
    for (int i = 0; i < n; i++) {
        const sc_straggler_row *r = &rows[i];
        if (used + 300 >= cap) break;   /* the first rows are kept */
        used += (size_t)snprintf(buf + used, cap - used, "R\t%s\t%d\t%d\t%ld\t%ld\t%ld\t%ld\t%.3f\t%.6f\t%ld\t%ld\t%s\t%s\n",
                                 comm, world_rank ? world_rank[r->rank] : -1, r->rank, r->from_step, r->to_step,
                                 steps - 1, r->slow_steps, r->slowdown, r->sync_cost_s, r->child_steps,
                                 r->quorum_out_steps, sc_sel_cause_name(r->cause), r->signal);
    }
}

typedef struct parsed {
    char comm[24];
    int world, rank;
    long from, to, last, slow, child, qout;
    double slowdown, cost;
    char cause[16], signal[100];
} parsed;

/* Splits a line in place at tabs; returns the number of fields. */
static int split(char *line, char **field, int max)
{
    int n = 0;
    for (char *p = line; n < max;) {
        field[n++] = p;
        p = strchr(p, '\t');
        if (!p) break;
        *p++ = '\0';
    }
    return n;
}

static int parse_row(char **f, int nf, parsed *p)
{
    if (nf != 14) return 0;
    snprintf(p->comm, sizeof p->comm, "%s", f[1]);
    p->world = atoi(f[2]);
    p->rank = atoi(f[3]);
    p->from = atol(f[4]);
    p->to = atol(f[5]);
    p->last = atol(f[6]);
    p->slow = atol(f[7]);
    p->slowdown = atof(f[8]);
    p->cost = atof(f[9]);
    p->child = atol(f[10]);
    p->qout = atol(f[11]);
    snprintf(p->cause, sizeof p->cause, "%s", f[12]);
    snprintf(p->signal, sizeof p->signal, "%s", f[13]);
    return 1;
}

static const char *host_of(const char *hosts, int host_len, int world)
{
    if (!hosts || world < 0 || world >= sc_rt.world_size) return "?";
    const char *h = hosts + (size_t)world * (size_t)host_len;
    return h[0] ? h : "?";
}

/* Calls row() for each row; returns the number of watched communicators,
 * *steps_out (may be NULL) the most steps one watched, *rows_out (may be
 * NULL) the rows. */
typedef void (*row_fn)(void *ctx, const parsed *p, const char *host);
static int walk(void *ctx, const char *text, const char *hosts, int host_len, row_fn row, long *steps_out, int *rows_out)
{
    int rows = 0;
    char *copy = text ? strdup(text) : NULL;
    int watched = 0;
    long steps = 0;
    for (char *save = NULL, *line = copy ? strtok_r(copy, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
        char *fld[16];
        int nf = split(line, fld, 16);
        parsed p;
        if (fld[0][0] == 'W' && nf == 4) {
            watched++;
            if (atol(fld[2]) > steps) steps = atol(fld[2]);
        } else if (fld[0][0] == 'R' && parse_row(fld, nf, &p)) {
            rows++;
            if (row) row(ctx, &p, host_of(hosts, host_len, p.world));
        }
    }
    free(copy);
    if (steps_out) *steps_out = steps;
    if (rows_out) *rows_out = rows;
    return watched;
}

/* The table has one row per rank and communicator, its episodes summed. */
typedef struct per_rank {
    parsed sum;       /* from: the first onset; to: the last slow step (-1: the end); cause and signal: the costliest episode's */
    double top_cost;
    int episodes;
    char host[64];
} per_rank;

typedef struct table {
    per_rank *r;
    int n, cap;
} table;

static void add_episode(void *ctx, const parsed *p, const char *host)
{
    table *t = ctx;
    per_rank *r = NULL;
    for (int i = 0; i < t->n && !r; i++)
        if (strcmp(t->r[i].sum.comm, p->comm) == 0 && t->r[i].sum.rank == p->rank) r = &t->r[i];
    if (!r) {
        if (t->n == t->cap) {
            int cap = t->cap ? 2 * t->cap : 16;
            per_rank *grown = realloc(t->r, sizeof *grown * (size_t)cap);
            if (!grown) return;
            t->r = grown;
            t->cap = cap;
        }
        r = &t->r[t->n++];
        memset(r, 0, sizeof *r);
        r->sum = *p;
        r->sum.slowdown = 0;
        r->sum.slow = r->sum.child = r->sum.qout = 0;
        r->sum.cost = 0;
        r->top_cost = -1;
        snprintf(r->host, sizeof r->host, "%s", host);
    }
    parsed *s = &r->sum;
    if (p->from < s->from) s->from = p->from;
    if (s->to >= 0 && (p->to < 0 || p->to > s->to)) s->to = p->to;
    s->slowdown = (s->slowdown * (double)s->slow + p->slowdown * (double)p->slow) / (double)(s->slow + p->slow > 0 ? s->slow + p->slow : 1);
    s->slow += p->slow;
    s->child += p->child;
    s->qout += p->qout;
    s->cost += p->cost;
    if (p->cost > r->top_cost) {
        r->top_cost = p->cost;
        memcpy(s->cause, p->cause, sizeof s->cause);
        memcpy(s->signal, p->signal, sizeof s->signal);
    }
    r->episodes++;
}

static int by_cost(const void *a, const void *b)
{
    const per_rank *x = a, *y = b;
    return (x->sum.cost < y->sum.cost) - (x->sum.cost > y->sum.cost);
}

/* Brief: slow for fewer than SC_TABLE_BRIEF_STEPS steps, or fewer than
 * SC_TABLE_BRIEF of the steps watched (a pause or two, not a straggler). */
#define SC_TABLE_BRIEF 0.02
#define SC_TABLE_BRIEF_STEPS 10
static int brief(const per_rank *r, long steps)
{
    return r->sum.slow < SC_TABLE_BRIEF_STEPS || (double)r->sum.slow < SC_TABLE_BRIEF * (double)steps;
}

void sc_stragglers_write(FILE *f, const char *text, const char *hosts, int host_len)
{
    fprintf(f, "@--- Stragglers: ranks slower than %.1fx the median, by arrival at the collectives"
               " (steps counted by each communicator's coordinator) ---\n", SC_STRAGGLER_RATIO);
    long steps = 0;
    table t = {0};
    if (walk(&t, text, hosts, host_len, add_episode, &steps, NULL) == 0) {
        fprintf(f, "@ Not watched: %s\n", sc_rt.policy.mode == SC_MODE_AUTO
                                              ? "no communicator ran the selector (see the calls above)"
                                              : "ranks are watched for stragglers under STARCOLL_MODE=auto only");
        return;
    }
    if (t.n > 1) qsort(t.r, (size_t)t.n, sizeof *t.r, by_cost);
    int listed = 0, nbrief = 0;
    char briefs[256] = "";
    for (int i = 0; i < t.n; i++) {
        const per_rank *r = &t.r[i];
        const parsed *p = &r->sum;
        char who[16];
        snprintf(who, sizeof who, "%d", p->world >= 0 ? p->world : p->rank);
        if (brief(r, steps)) {
            size_t used = strlen(briefs);
            if (used + 40 < sizeof briefs)
                snprintf(briefs + used, sizeof briefs - used, "%s%s (%ld steps)", nbrief ? ", " : "", who, p->slow);
            nbrief++;
            continue;
        }
        if (listed++ == 0)
            fprintf(f, "%4s %5s %-16s %8s %13s %5s %6s %-8s %7s %9s %12s  %s\n", "comm", "rank", "host", "slower",
                    "steps", "times", "slow", "cause", "child", "no-quorum", "sync-wait(s)", "signal");
        char span[48];
        if (p->to < 0) snprintf(span, sizeof span, "%ld-end", p->from);
        else snprintf(span, sizeof span, "%ld-%ld", p->from, p->to);
        fprintf(f, "%4s %5s %-16.16s %7.2fx %13s %5d %6ld %-8s %7ld %9ld %12.3f  %s\n", p->comm, who, r->host, p->slowdown,
                span, r->episodes, p->slow, p->cause, p->child, p->qout, p->cost, p->signal);
    }
    if (listed == 0)
        fprintf(f, "@ Nobody straggled: no rank was %.1fx slower than the median for %d steps, and %.0f%% of the %ld"
                   " steps watched\n", SC_STRAGGLER_RATIO, SC_TABLE_BRIEF_STEPS, 100.0 * SC_TABLE_BRIEF, steps);
    else
        fprintf(f, "@ rank: world rank; slower: own step time over the median's while slow; steps: first to last slow"
                   " step (end: still slow); times: episodes; slow: slow steps; child, no-quorum: steps it was a"
                   " child, or slow while quorum rounds went without it; sync-wait: seconds every other rank would"
                   " have waited for it under sync; cause and signal: its costliest episode's\n");
    if (nbrief)
        fprintf(f, "@ Slow only briefly (under %d steps or %.0f%% of them; in the CSV): rank%s %s\n",
                SC_TABLE_BRIEF_STEPS, 100.0 * SC_TABLE_BRIEF, nbrief > 1 ? "s" : "", briefs);
    free(t.r);
}

static void csv_field(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The signal last, so the fields before it split at commas. */
static void csv_row(void *ctx, const parsed *p, const char *host)
{
    FILE *f = ctx;
    fprintf(f, "%s,%d,", p->comm, p->world);
    csv_field(f, host);
    fprintf(f, ",%d,%.3f,%ld,%ld,%d,%ld,%s,%ld,%ld,%.6f,", p->rank, p->slowdown, p->from, p->to < 0 ? p->last : p->to,
            p->to < 0, p->slow, p->cause, p->child, p->qout, p->cost);
    csv_field(f, p->signal);
    fputc('\n', f);
}

int sc_stragglers_write_csv(FILE *f, const char *text, const char *hosts, int host_len)
{
    if (walk(NULL, text, hosts, host_len, NULL, NULL, NULL) == 0) return -1;
    fprintf(f, "comm,rank,host,comm_rank,slowdown,from_step,to_step,until_end,slow_steps,cause,child_steps,"
               "quorum_out_steps,sync_wait_s,signal\n");
    walk(f, text, hosts, host_len, csv_row, NULL, NULL);
    return 0;
}
