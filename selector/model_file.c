/* Reading and writing the learned model file. */
#define _POSIX_C_SOURCE 200809L
#include "model_file.h"
#include "names.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokens.h"

#define MODEL_MAGIC "starcoll-model"
#define MODEL_VERSION 1

/* One "cell" line's tokens (after the keyword) into the model. */
static const char *parse_cell(sc_learned *m, char *rest)
{
    char *save = NULL;
    char *tok[5];
    int nt = 0;
    for (char *t = strtok_r(rest, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (nt == 5)
            return "too many fields (expected: cell CLASS MODE EPOCHS MEAN)";
        tok[nt++] = t;
    }
    if (nt != 4)
        return "too few fields (expected: cell CLASS MODE EPOCHS MEAN)";
    long cls;
    sc_mode mode;
    double count, mean;
    if (sc_token_long(tok[0], &cls) != 0 || cls < 0 || cls >= SC_LEARNED_CLASSES)
        return "class is not an integer in [0, 96)";
    if (sc_sel_mode_parse(tok[1], &mode) != 0 || mode >= SC_LEARNED_MODES)
        return "mode is not one of sync, hier, quorum, groups";
    if (sc_token_double(tok[2], &count) != 0 || count <= 0.0 || count > 1e9)
        return "epochs is not a positive number";
    if (sc_token_double(tok[3], &mean) != 0 || mean <= 0.0)
        return "mean is not a positive finite number";
    if (count > SC_LEARNED_MEMORY)
        count = SC_LEARNED_MEMORY;
    m->cell[cls][mode].count = count;
    m->cell[cls][mode].mean = mean;
    return NULL;
}

int sc_model_load(sc_learned *m, const char *path, char *msg, size_t msglen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(msg, msglen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    sc_learned *tmp = calloc(1, sizeof *tmp);
    if (!tmp) {
        fclose(f);
        snprintf(msg, msglen, "%s: out of memory", path);
        return -1;
    }
    sc_learned_init(tmp);
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int have_magic = 0, have_end = 0;
    const char *err = NULL;
    while (!err && getline(&line, &cap, f) >= 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        char *p = line + strspn(line, " \t");
        if (*p == '\0' || *p == '#')
            continue;
        if (have_end) {
            err = "text after the closing 'end' line";
        } else if (!have_magic) {
            char word[32];
            int ver;
            char extra;
            if (sscanf(p, "%31s %d %c", word, &ver, &extra) != 2 || strcmp(word, MODEL_MAGIC) != 0)
                err = "not a starcoll model file (first line must be 'starcoll-model 1')";
            else if (ver != MODEL_VERSION)
                err = "unsupported model version (this starcoll reads version 1)";
            have_magic = 1;
        } else if (strncmp(p, "cell", 4) == 0 && (p[4] == ' ' || p[4] == '\t')) {
            err = parse_cell(tmp, p + 5);
        } else if (strcmp(p, "end") == 0) {
            have_end = 1;
        } else {
            err = "unknown line (expected 'cell ...' or 'end')";
        }
    }
    int read_error = ferror(f);
    free(line);
    fclose(f);
    if (!err && read_error)
        err = "read error";
    if (!err && !have_magic) {
        err = "empty file";
        lineno = 0;
    }
    if (!err && !have_end) {
        err = "no closing 'end' line (truncated?)";
        lineno = 0;
    }
    if (err) {
        if (lineno > 0)
            snprintf(msg, msglen, "%s: line %ld: %s", path, lineno, err);
        else
            snprintf(msg, msglen, "%s: %s", path, err);
        free(tmp);
        return -1;
    }
    memcpy(m->cell, tmp->cell, sizeof m->cell);
    free(tmp);
    return 0;
}

int sc_model_save(const sc_learned *m, const char *path, const char *comment, char *msg, size_t msglen)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(msg, msglen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "%s %d\n", MODEL_MAGIC, MODEL_VERSION);
    if (comment)
        fprintf(f, "# %s\n", comment);
    fprintf(f, "# cell CLASS MODE EPOCHS MEAN: mean update interval / median compute time\n");
    for (int c = 0; c < SC_LEARNED_CLASSES; c++) {
        int first = 1;
        for (int md = 0; md < SC_LEARNED_MODES; md++) {
            const sc_learned_cell *cell = &m->cell[c][md];
            if (cell->count <= 0.0)
                continue;
            if (first) {
                char name[64];
                sc_learned_class_name(c, name, sizeof name);
                fprintf(f, "# class %d: %s\n", c, name);
                first = 0;
            }
            fprintf(f, "cell %d %s %.6g %.9g\n", c, sc_sel_mode_name((sc_mode)md), cell->count, cell->mean);
        }
    }
    fprintf(f, "end\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(msg, msglen, "%s: write failed: %s", path, strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}
