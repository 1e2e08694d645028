/* Command-line options of starcoll_train.  Plain C, no MPI: every rank
 * parses the same argv to the same result, so a bad option fails on all
 * ranks alike and nothing has to be broadcast. */
#ifndef STARCOLL_TRAIN_OPTS_H
#define STARCOLL_TRAIN_OPTS_H

#include <stddef.h>

typedef enum train_stop_via {
    TRAIN_STOP_FLAG = 0,  /* a stop word rides in the last gradient buffer */
    TRAIN_STOP_BCAST      /* MPI_Bcast from rank 0 at every evaluation */
} train_stop_via;

typedef struct train_opts {
    char layers[256];
    double lr;
    double momentum;
    int batch;               /* samples per rank and step */
    size_t pad_bytes;        /* each gradient buffer is at least this long */
    char shape[1024];        /* a .tensors file: the step is reduced as that model's tensors; "" none */
    long shape_scale;        /* --shape-scale: its tensors over 16384 elements divided by this */
    double compute_ms;       /* emulated compute per step */
    char straggler[512];
    double target;           /* accuracy that ends the run */
    long max_steps;
    double max_seconds;
    int eval_every;          /* steps between evaluations on rank 0 */
    char csv[1024];          /* empty: no CSV */
    unsigned long long seed;
    char data[1024];         /* empty: find the digits */
    char mode_label[64];     /* empty: from the environment */
    char scenario_label[64]; /* empty: the straggler pattern */
    int uneven;
    train_stop_via stop_via;
    int verbose;
    int device;              /* --device: gradients reduced in GPU memory */
    int help;
} train_opts;

/* Defaults, then argv.  0 on success, -1 with one line in err. */
int train_opts_parse(int argc, char **argv, train_opts *o, char *err, size_t errlen);

/* "25M", "64K", "1G", "4096": bytes, binary units.  0 or -1. */
int train_parse_size(const char *s, size_t *out);

void train_opts_usage(const char *prog);

#endif
