/* Per-rank telemetry traces: writer and reader. */
#define _POSIX_C_SOURCE 200809L
#include "trace.h"
#include "names.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tokens.h"

#define MAX_COLUMNS 64
/* Column roles besides feature indices. */
enum { COL_IGNORED = -1, COL_RANK = -2, COL_STEP = -3, COL_MODE = -4, COL_PARENT = -5 };

int sc_trace_write_header(FILE *f, int rank, int nranks, int epoch_steps, const char *papi_events)
{
    if (!f)
        return -1;
    fprintf(f, "%s\n", SC_TRACE_MAGIC);
    fprintf(f, "# rank %d\n# nranks %d\n# epoch %d\n", rank, nranks, epoch_steps);
    if (papi_events && papi_events[0]) {
        /* One token: the events list must not break the key/value line. */
        fputs("# papi ", f);
        for (const char *p = papi_events; *p; p++)
            fputc(*p == ' ' || *p == '\t' || *p == '\n' ? ',' : *p, f);
        fputc('\n', f);
    }
    fputs("# units: seconds, bytes per second, counts per step (see TRACE.md)\n", f);
    fputs("rank step mode parent", f);
    for (int i = 0; i < SC_NFEAT; i++)
        fprintf(f, " %s", sc_sel_feature_name(i));
    fputc('\n', f);
    return ferror(f) ? -1 : 0;
}

int sc_trace_write_step(FILE *f, int rank, long step, sc_mode mode, int parent, const double *feat)
{
    if (!f || !feat)
        return -1;
    fprintf(f, "%d %ld %s %d", rank, step, sc_sel_mode_name(mode), parent >= 0 ? parent : -1);
    for (int i = 0; i < SC_NFEAT; i++) {
        double v = isfinite(feat[i]) && feat[i] > 0.0 ? feat[i] : 0.0;
        fprintf(f, " %.9g", v);
    }
    fputc('\n', f);
    return ferror(f) ? -1 : 0;
}

struct sc_trace_reader {
    FILE *f;
    char *path;
    long lineno;
    int rank, nranks, epoch;
    char papi[256];
    int ncols;
    int role[MAX_COLUMNS];
    char *line;
    size_t cap;
    int truncated;
};

int sc_trace_rank(const sc_trace_reader *r) { return r->rank; }
int sc_trace_nranks(const sc_trace_reader *r) { return r->nranks; }
int sc_trace_epoch(const sc_trace_reader *r) { return r->epoch; }
const char *sc_trace_papi(const sc_trace_reader *r) { return r->papi; }
int sc_trace_truncated(const sc_trace_reader *r) { return r->truncated; }

void sc_trace_close(sc_trace_reader *r)
{
    if (!r)
        return;
    if (r->f)
        fclose(r->f);
    free(r->path);
    free(r->line);
    free(r);
}

/* Reads a line without its newline; returns its length, or -1 at the end.
 * *complete is 0 when the line had no newline (the file ends mid-line). */
static long read_line(sc_trace_reader *r, int *complete)
{
    ssize_t len = getline(&r->line, &r->cap, r->f);
    if (len < 0)
        return -1;
    r->lineno++;
    *complete = len > 0 && r->line[len - 1] == '\n';
    r->line[strcspn(r->line, "\r\n")] = '\0';
    return (long)strlen(r->line);
}


/* "# key value" header line. */
static void header_line(sc_trace_reader *r, char *p)
{
    char *save = NULL;
    char *key = strtok_r(p + 1, " \t", &save);
    char *val = key ? strtok_r(NULL, " \t", &save) : NULL;
    if (!key || !val)
        return;
    long v;
    if (strcmp(key, "rank") == 0 && sc_token_long(val, &v) == 0 && v >= 0 && v < 1 << 30)
        r->rank = (int)v;
    else if (strcmp(key, "nranks") == 0 && sc_token_long(val, &v) == 0 && v >= 1 && v < 1 << 30)
        r->nranks = (int)v;
    else if (strcmp(key, "epoch") == 0 && sc_token_long(val, &v) == 0 && v >= 1 && v < 1 << 30)
        r->epoch = (int)v;
    else if (strcmp(key, "papi") == 0)
        snprintf(r->papi, sizeof r->papi, "%s", val);
}

/* The column line: names every field.  Returns NULL or what is wrong. */
static const char *column_line(sc_trace_reader *r, char *p)
{
    char *save = NULL;
    int have_rank = 0, have_step = 0, have_mode = 0;
    for (char *t = strtok_r(p, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (r->ncols == MAX_COLUMNS)
            return "too many columns";
        int role = COL_IGNORED; /* unknown columns are skipped: newer writers may add some */
        if (strcmp(t, "rank") == 0)
            role = COL_RANK, have_rank = 1;
        else if (strcmp(t, "step") == 0)
            role = COL_STEP, have_step = 1;
        else if (strcmp(t, "mode") == 0)
            role = COL_MODE, have_mode = 1;
        else if (strcmp(t, "parent") == 0)
            role = COL_PARENT;
        else if (sc_sel_feature_parse(t) >= 0)
            role = sc_sel_feature_parse(t);
        r->role[r->ncols++] = role;
    }
    if (!have_rank || !have_step || !have_mode)
        return "the column line must name rank, step and mode";
    return NULL;
}

sc_trace_reader *sc_trace_open(const char *path, char *msg, size_t msglen)
{
    sc_trace_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        snprintf(msg, msglen, "%s: out of memory", path);
        return NULL;
    }
    r->rank = r->nranks = r->epoch = -1;
    r->f = fopen(path, "r");
    if (!r->f) {
        snprintf(msg, msglen, "%s: cannot open: %s", path, strerror(errno));
        sc_trace_close(r);
        return NULL;
    }
    int complete;
    if (read_line(r, &complete) < 0 || strcmp(r->line, SC_TRACE_MAGIC) != 0) {
        snprintf(msg, msglen, "%s: not a starcoll trace (the first line must be '%s')", path, SC_TRACE_MAGIC);
        sc_trace_close(r);
        return NULL;
    }
    for (;;) {
        if (read_line(r, &complete) < 0) {
            snprintf(msg, msglen, "%s: the header has no column line", path);
            sc_trace_close(r);
            return NULL;
        }
        char *p = r->line + strspn(r->line, " \t");
        if (*p == '\0')
            continue;
        if (*p == '#') {
            header_line(r, p);
            continue;
        }
        const char *err = column_line(r, p);
        if (err) {
            snprintf(msg, msglen, "%s: line %ld: %s", path, r->lineno, err);
            sc_trace_close(r);
            return NULL;
        }
        return r;
    }
}

int sc_trace_next(sc_trace_reader *r, sc_trace_row *row, char *msg, size_t msglen)
{
    for (;;) {
        int complete;
        if (read_line(r, &complete) < 0) {
            if (ferror(r->f)) {
                snprintf(msg, msglen, "%s: read error after line %ld", r->path, r->lineno);
                return -1;
            }
            return 0;
        }
        char *p = r->line + strspn(r->line, " \t");
        if (*p == '\0' || *p == '#')
            continue;
        memset(row, 0, sizeof *row);
        row->parent = -1;
        char *save = NULL;
        int col = 0;
        const char *err = NULL;
        for (char *t = strtok_r(p, " \t", &save); t && !err; t = strtok_r(NULL, " \t", &save), col++) {
            if (col >= r->ncols) {
                err = "more fields than the column line names";
                break;
            }
            int role = r->role[col];
            long v;
            if (role == COL_RANK) {
                if (sc_token_long(t, &v) != 0 || v < 0 || v >= 1 << 30)
                    err = "rank is not a non-negative integer";
                else
                    row->rank = (int)v;
            } else if (role == COL_STEP) {
                if (sc_token_long(t, &v) != 0 || v < 0)
                    err = "step is not a non-negative integer";
                else
                    row->step = v;
            } else if (role == COL_MODE) {
                if (sc_sel_mode_parse(t, &row->mode) != 0)
                    err = "mode is not one of sync, hier, quorum, groups, auto";
            } else if (role == COL_PARENT) {
                if (sc_token_long(t, &v) != 0 || v < -1 || v >= 1 << 30)
                    err = "parent is not a rank or -1";
                else
                    row->parent = (int)v;
            } else if (role >= 0) {
                char *end;
                errno = 0;
                double d = strtod(t, &end);
                if (end == t || *end != '\0' || !isfinite(d))
                    err = "a value is not a finite number";
                else
                    row->feat[role] = d;
            }
        }
        if (!err && col < r->ncols)
            err = "fewer fields than the column line names";
        if (err) {
            if (!complete) {
                r->truncated = 1; /* the writer was killed mid-line: drop it */
                return 0;
            }
            snprintf(msg, msglen, "%s: line %ld: %s", r->path, r->lineno, err);
            return -1;
        }
        return 1;
    }
}
