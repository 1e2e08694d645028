/* starcoll-plot: one PNG from a job's STARCOLL_TRACE files, so a person
 * sees the straggler and the switch at a glance.
 *
 *   starcoll-plot [-o OUT.png] [-s WIDTHxHEIGHT] [-c COMM] [--allow-partial] -p PREFIX
 *   starcoll-plot [options] FILE...
 *
 * Top panel: each rank's time outside starcoll per step (its way to the
 * next collective: a straggler arrives late, so it shows here, where an
 * exact collective makes every rank's step look alike); a child's steps are
 * marked with grey discs.  Bottom panel: each rank's time inside starcoll.
 * The mode in force (rank 0's, or the lowest rank's) colours the
 * background; a dashed line marks each decision (a change of mode or of
 * children).  Past 16 ranks the plot shows the median rank and the 8 ranks
 * slowest on average.  -c COMM plots the traces of the communicator the
 * report calls COMM (PREFIX.RANK.cCOMM: "1", "1@4") instead of the
 * world's (PREFIX.RANK).
 *
 * gnuplot (Debian's gnuplot-nox) draws it; a trace that ends in a partial
 * line (a job killed while writing) is an error unless --allow-partial. */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "names.h"
#include "trace.h"

#define MAX_SHOWN 16

typedef struct series {
    int rank;
    long n, cap;
    long *step;
    double *outside_ms, *inside_ms;
    int *parent;
    sc_mode *mode;
    double mean_outside;
} series;

static const char *mode_colour[] = {"#1f77b4", "#9467bd", "#ff7f0e", "#2ca02c", "#7f7f7f"};

static void usage(void)
{
    fprintf(stderr, "usage: starcoll-plot [-o OUT.png] [-s WIDTHxHEIGHT] [-c COMM] [--allow-partial] (-p PREFIX | FILE...)\n");
}

static int push(series *s, const sc_trace_row *row)
{
    if (s->n == s->cap) {
        long cap = s->cap ? 2 * s->cap : 256;
        long *st = realloc(s->step, sizeof(long) * (size_t)cap);
        if (st) s->step = st;
        double *o = realloc(s->outside_ms, sizeof(double) * (size_t)cap);
        if (o) s->outside_ms = o;
        double *i = realloc(s->inside_ms, sizeof(double) * (size_t)cap);
        if (i) s->inside_ms = i;
        int *p = realloc(s->parent, sizeof(int) * (size_t)cap);
        if (p) s->parent = p;
        sc_mode *m = realloc(s->mode, sizeof(sc_mode) * (size_t)cap);
        if (m) s->mode = m;
        if (!st || !o || !i || !p || !m) return -1;
        s->cap = cap;
    }
    s->step[s->n] = row->step;
    s->outside_ms[s->n] = 1e3 * row->feat[SC_F_COMPUTE_S];
    s->inside_ms[s->n] = 1e3 * row->feat[SC_F_WAIT_S];
    s->parent[s->n] = row->parent;
    s->mode[s->n] = row->mode;
    s->n++;
    return 0;
}

/* Reads one trace file into s.  Returns 0, or -1 with one line said. */
static int read_trace(const char *path, series *s, int allow_partial)
{
    char msg[512] = "";
    sc_trace_reader *r = sc_trace_open(path, msg, sizeof msg);
    if (!r) {
        fprintf(stderr, "starcoll-plot: %s\n", msg);
        return -1;
    }
    s->rank = sc_trace_rank(r);
    sc_trace_row row;
    int got;
    while ((got = sc_trace_next(r, &row, msg, sizeof msg)) == 1)
        if (push(s, &row) != 0) {
            fprintf(stderr, "starcoll-plot: out of memory reading %s\n", path);
            got = -2;
            break;
        }
    if (got == -1) fprintf(stderr, "starcoll-plot: %s\n", msg);
    int partial = got == 0 && sc_trace_truncated(r);
    sc_trace_close(r);
    if (got < 0) return -1;
    if (partial && !allow_partial) {
        fprintf(stderr, "starcoll-plot: %s ends in a partial line (was the job killed while writing?); "
                        "--allow-partial plots up to its last complete line\n", path);
        return -1;
    }
    if (s->rank < 0 && s->n > 0) s->rank = 0;
    double sum = 0;
    for (long i = 0; i < s->n; i++) sum += s->outside_ms[i];
    s->mean_outside = s->n ? sum / (double)s->n : 0;
    return 0;
}

/* PREFIX.RANK (comm 0) or PREFIX.RANK.cCOMM: the part after the prefix. */
static int wanted(const char *path, size_t plen, const char *comm)
{
    const char *p = path + plen;
    if (*p != '.' || !p[1]) return 0;
    char *end;
    strtol(p + 1, &end, 10);
    if (end == p + 1) return 0;
    if (!comm) return *end == '\0';
    char want[64];
    snprintf(want, sizeof want, ".c%s", comm);
    return strcmp(end, want) == 0;
}

static int by_rank(const void *a, const void *b)
{
    const series *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int by_mean_desc(const void *a, const void *b)
{
    const series *x = *(series *const *)a, *y = *(series *const *)b;
    return (x->mean_outside < y->mean_outside) - (x->mean_outside > y->mean_outside);
}

static int write_data(const char *dir, const series *s)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/rank%d.dat", dir, s->rank);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    for (long i = 0; i < s->n; i++)
        fprintf(f, "%ld %.4f %.4f %d\n", s->step[i], s->outside_ms[i], s->inside_ms[i], s->parent[i]);
    return fclose(f) == 0 ? 0 : -1;
}

/* Mode bands and decision lines from the reference rank's steps. */
static void write_bands(FILE *g, const series *ref, const series *all, int n)
{
    long start = 0;
    for (long i = 1; i <= ref->n; i++) {
        if (i < ref->n && ref->mode[i] == ref->mode[start]) continue;
        long x0 = ref->step[start], x1 = i < ref->n ? ref->step[i] : ref->step[i - 1] + 1;
        int m = ref->mode[start] >= 0 && ref->mode[start] < SC_NMODES ? (int)ref->mode[start] : SC_MODE_AUTO;
        fprintf(g, "set object rect from %ld, graph 0 to %ld, graph 1 behind fc rgb '%s' fs transparent solid 0.12 noborder\n",
                x0, x1, mode_colour[m]);
        if (start > 0) fprintf(g, "set arrow from %ld, graph 0 to %ld, graph 1 nohead dt 2 lw 1.5 lc rgb 'black'\n", x0, x0);
        start = i;
    }
    /* a change of children without a change of mode is a decision too */
    for (int r = 0; r < n; r++)
        for (long i = 1; i < all[r].n; i++)
            if ((all[r].parent[i] >= 0) != (all[r].parent[i - 1] >= 0) && all[r].mode[i] == all[r].mode[i - 1])
                fprintf(g, "set arrow from %ld, graph 0 to %ld, graph 1 nohead dt 3 lw 1 lc rgb '#555555'\n",
                        all[r].step[i], all[r].step[i]);
}

static void plot_panel(FILE *g, const char *dir, series **shown, int nshown, int column, int with_modes)
{
    fprintf(g, "plot ");
    for (int i = 0; i < nshown; i++)
        fprintf(g, "%s'%s/rank%d.dat' using 1:%d with lines lw 1.5 title 'rank %d'", i ? ", \\\n  " : "", dir,
                shown[i]->rank, column, shown[i]->rank);
    for (int i = 0; i < nshown; i++)
        fprintf(g, ", \\\n  '%s/rank%d.dat' using 1:($4 >= 0 ? $%d : 1/0) with points pt 7 ps 0.9 lc rgb '#999999' %s",
                dir, shown[i]->rank, column, i == 0 ? "title 'child'" : "notitle");
    if (with_modes)
        for (int m = 0; m < SC_NMODES; m++)
            fprintf(g, ", \\\n  NaN with boxes fs transparent solid 0.3 fc rgb '%s' title '%s'", mode_colour[m],
                    sc_sel_mode_name((sc_mode)m));
    fprintf(g, "\n");
}

int main(int argc, char **argv)
{
    const char *out = "starcoll-plot.png", *prefix = NULL;
    const char *comm = NULL;   /* NULL: the world */
    int width = 1200, height = 800, allow_partial = 0, first_file = argc;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-o") && next) out = argv[++i];
        else if (!strcmp(a, "-p") && next) prefix = argv[++i];
        else if (!strcmp(a, "-c") && next) {
            comm = argv[++i];
            if (!strcmp(comm, "0")) comm = NULL;
        }
        else if (!strcmp(a, "-s") && next) {
            if (sscanf(argv[++i], "%dx%d", &width, &height) != 2 || width < 200 || height < 200 || width > 10000 ||
                height > 10000) {
                fprintf(stderr, "starcoll-plot: -s wants WIDTHxHEIGHT, 200 to 10000 pixels each, not '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--allow-partial")) allow_partial = 1;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage();
            return 0;
        } else if (a[0] == '-') {
            usage();
            return 2;
        } else {
            first_file = i;
            break;
        }
    }
    if ((prefix != NULL) == (first_file < argc)) {
        usage();
        return 2;
    }
    if (strchr(out, '\'') || strchr(out, '\n')) {   /* it goes into gnuplot's script between quotes */
        fprintf(stderr, "starcoll-plot: -o: a file name with a quote or a newline is not supported\n");
        return 2;
    }
    glob_t gl = {0};
    char **files = argv + first_file;
    int nfiles = argc - first_file;
    if (prefix) {
        char pattern[4200];
        snprintf(pattern, sizeof pattern, "%s.*", prefix);
        if (glob(pattern, 0, NULL, &gl) != 0) gl.gl_pathc = 0;
        nfiles = 0;
        for (size_t i = 0; i < gl.gl_pathc; i++)
            if (wanted(gl.gl_pathv[i], strlen(prefix), comm)) gl.gl_pathv[nfiles++] = gl.gl_pathv[i];
        files = gl.gl_pathv;
        if (nfiles == 0) {
            fprintf(stderr, "starcoll-plot: no trace files %s.RANK%s\n", prefix, comm ? ".cCOMM" : "");
            globfree(&gl);
            return 1;
        }
    }
    series *all = calloc((size_t)nfiles, sizeof *all);
    int n = 0, rc = 0;
    for (int i = 0; all && i < nfiles && rc == 0; i++) {
        if (read_trace(files[i], &all[n], allow_partial) != 0) rc = 1;
        else if (all[n].n > 0) n++;
    }
    if (!all || (rc == 0 && n == 0)) {
        fprintf(stderr, "starcoll-plot: %s\n", all ? "the traces hold no steps" : "out of memory");
        rc = 1;
    }
    char dir[] = "/tmp/starcoll-plot.XXXXXX";
    if (rc == 0 && !mkdtemp(dir)) {
        fprintf(stderr, "starcoll-plot: cannot make a temporary folder: %s\n", strerror(errno));
        rc = 1;
    }
    if (rc == 0) {
        qsort(all, (size_t)n, sizeof *all, by_rank);
        /* Up to MAX_SHOWN ranks; past that, the median and the slowest 8. */
        series **shown = malloc(sizeof(series *) * (size_t)(n + 1));
        int nshown = 0;
        if (shown && n <= MAX_SHOWN) {
            for (int i = 0; i < n; i++) shown[nshown++] = &all[i];
        } else if (shown) {
            for (int i = 0; i < n; i++) shown[i] = &all[i];
            qsort(shown, (size_t)n, sizeof *shown, by_mean_desc);
            shown[8] = shown[n / 2];   /* the median rank, never among the 8 slowest of more than 16 */
            nshown = 9;
        }
        for (int i = 0; shown && i < nshown && rc == 0; i++)
            if (write_data(dir, shown[i]) != 0) rc = 1;
        char script[4200];
        snprintf(script, sizeof script, "%s/plot.gp", dir);
        FILE *g = rc == 0 && shown ? fopen(script, "w") : NULL;
        if (!g) {
            fprintf(stderr, "starcoll-plot: cannot write in %s\n", dir);
            rc = 1;
        } else {
            fprintf(g, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n  set terminal pngcairo size %d,%d font ',10'\n"
                       "} else {\n  set terminal png size %d,%d\n}\nset output '%s'\n", width, height, width, height, out);
            fprintf(g, "set multiplot layout 2,1 title 'starcoll: %d ranks%s%s'\n", n,
                    n > MAX_SHOWN ? " (the median rank and the 8 slowest shown)" : "",
                    comm ? ", one communicator" : "");
            fprintf(g, "set key outside right top vertical\nset grid\nset xlabel 'step (each rank''s own)'\n");
            write_bands(g, &all[0], all, n);
            fprintf(g, "set ylabel 'outside starcoll (ms): time to arrive'\n");
            plot_panel(g, dir, shown, nshown, 2, 1);
            fprintf(g, "set ylabel 'inside starcoll (ms)'\n");
            plot_panel(g, dir, shown, nshown, 3, 0);
            fprintf(g, "unset multiplot\n");
            if (fclose(g) != 0) rc = 1;
        }
        free(shown);
        if (rc == 0) {
            pid_t pid = fork();
            if (pid == 0) {
                execlp("gnuplot", "gnuplot", script, (char *)NULL);
                fprintf(stderr, "starcoll-plot: cannot run gnuplot (%s); install gnuplot-nox\n", strerror(errno));
                _exit(127);
            }
            int status = 0;
            if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 127)
                    fprintf(stderr, "starcoll-plot: gnuplot failed; its script is %s\n", script);
                rc = 1;
            }
            struct stat sb;
            if (rc == 0 && (stat(out, &sb) != 0 || sb.st_size == 0)) {
                fprintf(stderr, "starcoll-plot: gnuplot wrote no %s\n", out);
                rc = 1;
            }
        }
        if (rc == 0) {   /* the data served their purpose; on failure they stay, for a look */
            char path[4300];
            for (int i = 0; i < n; i++) {
                snprintf(path, sizeof path, "%s/rank%d.dat", dir, all[i].rank);
                unlink(path);
            }
            unlink(script);
            rmdir(dir);
            printf("starcoll-plot: wrote %s (%d ranks)\n", out, n);
        }
    }
    for (int i = 0; all && i < nfiles; i++) {
        free(all[i].step);
        free(all[i].outside_ms);
        free(all[i].inside_ms);
        free(all[i].parent);
        free(all[i].mode);
    }
    free(all);
    if (prefix) globfree(&gl);
    return rc;
}
