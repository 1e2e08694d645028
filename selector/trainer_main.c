/* starcoll-train: builds the learned selector's model file (STARCOLL_MODEL)
 * from telemetry traces recorded with STARCOLL_TRACE. */
#define _POSIX_C_SOURCE 200809L
#include "train.h"
#include "trace.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: starcoll-train [-o MODEL] [-e STEPS] [-q] (-p PREFIX | TRACE...)\n"
            "Builds the learned selector's model from telemetry traces recorded with\n"
            "STARCOLL_TRACE=PREFIX (one file per rank), for STARCOLL_SELECTOR=learned\n"
            "STARCOLL_MODEL=MODEL.\n"
            "  -o MODEL   model file to write (default: starcoll.model)\n"
            "  -e STEPS   steps per epoch (default: the traces' STARCOLL_EPOCH, else 20)\n"
            "  -p PREFIX  read every trace whose path starts with PREFIX\n"
            "  -q         print nothing but errors\n"
            "  -h         this help\n");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Regular files whose path starts with prefix and that begin with the trace
 * magic, sorted.  Returns their count (0: none) or -1 on an error. */
static int list_prefix(const char *prefix, char ***out, int quiet)
{
    char *copy = strdup(prefix);
    if (!copy)
        return -1;
    char *slash = strrchr(copy, '/');
    const char *dir = ".", *base = copy;
    if (slash) {
        *slash = '\0';
        dir = slash == copy ? "/" : copy;
        base = slash + 1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "starcoll-train: cannot read directory %s: %s\n", dir, strerror(errno));
        free(copy);
        return -1;
    }
    char **names = NULL;
    int n = 0, cap = 0;
    size_t blen = strlen(base);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, base, blen) != 0 || strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(len);
        if (!path)
            break;
        if (slash)
            snprintf(path, len, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, e->d_name);
        else
            snprintf(path, len, "%s", e->d_name);
        struct stat sb;
        char line[64] = "";
        FILE *f = stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? fopen(path, "r") : NULL;
        if (f) {
            if (!fgets(line, sizeof line, f))
                line[0] = '\0';
            fclose(f);
        }
        line[strcspn(line, "\r\n")] = '\0';
        if (strcmp(line, SC_TRACE_MAGIC) != 0) {
            if (!quiet && f)
                fprintf(stderr, "starcoll-train: skipping %s: not a starcoll trace\n", path);
            free(path);
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **grown = realloc(names, (size_t)cap * sizeof *names);
            if (!grown) {
                free(path);
                break;
            }
            names = grown;
        }
        names[n++] = path;
    }
    closedir(d);
    free(copy);
    if (n > 1)
        qsort(names, (size_t)n, sizeof *names, cmp_str);
    *out = names;
    return n;
}

int main(int argc, char **argv)
{
    const char *model = "starcoll.model", *prefix = NULL;
    int epoch = 0, quiet = 0, opt;
    while ((opt = getopt(argc, argv, "o:e:p:qh")) != -1) {
        switch (opt) {
        case 'o':
            model = optarg;
            break;
        case 'e': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end != '\0' || v < 1 || v > 1000000) {
                fprintf(stderr, "starcoll-train: -e %s: give a whole number of steps from 1 to 1000000\n", optarg);
                return 2;
            }
            epoch = (int)v;
            break;
        }
        case 'p':
            prefix = optarg;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    int nfiles = argc - optind;
    if ((prefix && nfiles > 0) || (!prefix && nfiles == 0)) {
        fprintf(stderr, "starcoll-train: give either -p PREFIX or trace files\n");
        usage(stderr);
        return 2;
    }
    char **listed = NULL;
    const char *const *paths = (const char *const *)(argv + optind);
    if (prefix) {
        nfiles = list_prefix(prefix, &listed, quiet);
        if (nfiles < 0)
            return 1;
        if (nfiles == 0) {
            fprintf(stderr, "starcoll-train: no trace files start with %s\n", prefix);
            free(listed);
            return 1;
        }
        paths = (const char *const *)listed;
    }
    sc_train_summary sum;
    char msg[600];
    int rc = sc_train_from_traces(paths, nfiles, epoch, model, &sum, msg, sizeof msg);
    if (rc != 0)
        fprintf(stderr, "starcoll-train: %s\n", msg);
    else if (!quiet)
        printf("starcoll-train: %s: %d cells from %d files, %d ranks, %ld steps in %ld epochs"
               "; %ld steps skipped (missing ranks), %d truncated files\n",
               model, sum.cells, sum.files, sum.nranks, sum.steps, sum.epochs, sum.skipped_steps,
               sum.truncated);
    for (int i = 0; listed && i < nfiles; i++)
        free(listed[i]);
    free(listed);
    return rc == 0 ? 0 : 1;
}
