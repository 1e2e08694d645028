/* Option parsing for starcoll_train: see train_opts.h. */
#include "train_opts.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "set_err.h"


int train_parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    if (!s || *s < '0' || *s > '9')
        return -1;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v) || v < 0)
        return -1;
    double mult = 1;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': mult = 1024.0; end++; break;
    case 'm': case 'M': mult = 1024.0 * 1024; end++; break;
    case 'g': case 'G': mult = 1024.0 * 1024 * 1024; end++; break;
    default: return -1;
    }
    if (*end == 'i' && end[1] == 'B')  /* 25MiB */
        end += 2;
    else if (*end == 'B')              /* 25MB, 64KB, 100B */
        end++;
    if (*end != '\0' || v * mult > 64.0 * 1024 * 1024 * 1024)
        return -1;
    *out = (size_t)(v * mult);
    return 0;
}

static int parse_double(const char *v, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *end != '\0' || errno == ERANGE || !isfinite(d) || d < lo || d > hi)
        return -1;
    *out = d;
    return 0;
}

static int parse_long(const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno == ERANGE || n < lo || n > hi)
        return -1;
    *out = n;
    return 0;
}

static int copy_str(char *dst, size_t len, const char *src)
{
    if (strlen(src) >= len)
        return -1;
    strcpy(dst, src);
    return 0;
}

/* Label text goes into the one-line result; keep it one plain word. */
static int plain_word(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s <= ' ' || *s == '=' || *s > '~')
            return 0;
    return 1;
}

void train_opts_usage(const char *prog)
{
    printf("usage: mpirun -np N %s [options]\n"
           "Data-parallel SGD of an MLP on the handwritten digits; one MPI_Allreduce\n"
           "(SUM of floats) per layer and step; prints, last:\n"
           "  train: mode=M scenario=S ranks=N tta_s=T final_acc=A steps=K\n"
           "options:\n"
           "  --layers LIST        units per layer, input first (default 64,128,10)\n"
           "  --lr F               learning rate (default 0.003)\n"
           "  --momentum F         momentum, 0 for plain SGD (default 0.9)\n"
           "  --batch N            samples per rank and step (default 16)\n"
           "  --pad-bytes SIZE     pad each gradient buffer with zeros to SIZE (e.g. 25M)\n"
           "  --shape FILE         reduce the gradients split into a model's tensors (a .tensors\n"
           "                       file, benchmarks/models/), in backward order, zeros past the MLP's\n"
           "  --shape-scale N      that model's tensors over 16384 elements divided by N (default 1)\n"
           "  --compute-ms MS      emulated compute per step, a sleep (default 20)\n"
           "  --straggler SPEC     none, persistent[,rank=R,factor=F], jitter[,sigma=S],\n"
           "                       burst[,period=P,factor=F], onset[,rank=R,start=S,end=E] (default none)\n"
           "  --target ACC         held-out accuracy that ends the run (default 0.92)\n"
           "  --max-steps N        step budget per rank (default 3000)\n"
           "  --max-seconds S      time budget, decided on rank 0 (default 300)\n"
           "  --eval-every K       steps between evaluations on rank 0 (default 5)\n"
           "  --csv PATH           write time_s,step,accuracy,loss at every evaluation\n"
           "  --seed N             weights and batch order (default 1)\n"
           "  --data PATH          digits CSV (.gz or plain); default: python3-sklearn's copy\n"
           "  --mode-label M       mode named in the last line (default: from LD_PRELOAD/STARCOLL_MODE)\n"
           "  --scenario-label S   scenario named in the last line (default: the straggler pattern)\n"
           "  --uneven             uneven shards and step budgets: ranks end at different steps\n"
           "                       (needs a library that handles ragged ends, such as starcoll)\n"
           "  --stop-via flag|bcast how rank 0's stop decision reaches the others (default flag)\n"
           "  --device             the gradients in GPU memory, as a CUDA-aware code holds them: each\n"
           "                       layer's copied to the device, reduced there in place, read back\n"
           "                       (the CUDA runtime, or tests/fakecuda's stand-in, on LD_LIBRARY_PATH)\n"
           "  --verbose            one progress line per evaluation on stderr\n", prog);
}

enum {
    OPT_LAYERS = 1, OPT_LR, OPT_MOMENTUM, OPT_BATCH, OPT_PAD, OPT_COMPUTE,
    OPT_STRAGGLER, OPT_TARGET, OPT_MAX_STEPS, OPT_MAX_SECONDS, OPT_EVAL_EVERY,
    OPT_CSV, OPT_SEED, OPT_DATA, OPT_MODE_LABEL, OPT_SCENARIO_LABEL, OPT_UNEVEN,
    OPT_STOP_VIA, OPT_VERBOSE, OPT_HELP, OPT_SHAPE, OPT_SHAPE_SCALE, OPT_DEVICE
};

static const struct {
    const char *name;
    int id;
    int has_arg;
} options[] = {
    {"layers", OPT_LAYERS, 1}, {"lr", OPT_LR, 1}, {"momentum", OPT_MOMENTUM, 1},
    {"batch", OPT_BATCH, 1}, {"pad-bytes", OPT_PAD, 1}, {"compute-ms", OPT_COMPUTE, 1},
    {"straggler", OPT_STRAGGLER, 1}, {"target", OPT_TARGET, 1},
    {"max-steps", OPT_MAX_STEPS, 1}, {"max-seconds", OPT_MAX_SECONDS, 1},
    {"eval-every", OPT_EVAL_EVERY, 1}, {"csv", OPT_CSV, 1}, {"seed", OPT_SEED, 1},
    {"data", OPT_DATA, 1}, {"mode-label", OPT_MODE_LABEL, 1},
    {"scenario-label", OPT_SCENARIO_LABEL, 1}, {"uneven", OPT_UNEVEN, 0},
    {"stop-via", OPT_STOP_VIA, 1}, {"verbose", OPT_VERBOSE, 0}, {"help", OPT_HELP, 0},
    {"shape", OPT_SHAPE, 1}, {"shape-scale", OPT_SHAPE_SCALE, 1}, {"device", OPT_DEVICE, 0},
};

static void set_defaults(train_opts *o)
{
    memset(o, 0, sizeof *o);
    strcpy(o->layers, "64,128,10");
    o->shape_scale = 1;
    o->lr = 0.003;
    o->momentum = 0.9;
    o->batch = 16;
    o->compute_ms = 20;
    strcpy(o->straggler, "none");
    o->target = 0.92;
    o->max_steps = 3000;
    o->max_seconds = 300;
    o->eval_every = 5;
    o->seed = 1;
    o->stop_via = TRAIN_STOP_FLAG;
}

/* Apply one option; -1 with err set on a bad value. */
static int apply(train_opts *o, int id, const char *name, const char *v, char *err, size_t errlen)
{
    long n;
    switch (id) {
    case OPT_LAYERS:
        if (copy_str(o->layers, sizeof o->layers, v) == 0)
            return 0;
        break;
    case OPT_LR:
        if (parse_double(v, 1e-9, 100, &o->lr) == 0)
            return 0;
        set_err(err, errlen, "--lr %s: expected a learning rate > 0", v);
        return -1;
    case OPT_MOMENTUM:
        if (parse_double(v, 0, 0.9999, &o->momentum) == 0)
            return 0;
        set_err(err, errlen, "--momentum %s: expected a value in [0, 1)", v);
        return -1;
    case OPT_BATCH:
        if (parse_long(v, 1, 65536, &n) == 0) {
            o->batch = (int)n;
            return 0;
        }
        set_err(err, errlen, "--batch %s: expected samples per rank, 1 to 65536", v);
        return -1;
    case OPT_PAD:
        if (train_parse_size(v, &o->pad_bytes) == 0)
            return 0;
        set_err(err, errlen, "--pad-bytes %s: expected a size such as 4096, 64K, 25M or 1G (at most 64G)", v);
        return -1;
    case OPT_SHAPE:
        if (copy_str(o->shape, sizeof o->shape, v) == 0)
            return 0;
        break;
    case OPT_SHAPE_SCALE:
        if (parse_long(v, 1, 1L << 20, &o->shape_scale) == 0)
            return 0;
        set_err(err, errlen, "--shape-scale %s: expected a divisor >= 1", v);
        return -1;
    case OPT_COMPUTE:
        if (parse_double(v, 0, 3.6e6, &o->compute_ms) == 0)
            return 0;
        set_err(err, errlen, "--compute-ms %s: expected milliseconds >= 0", v);
        return -1;
    case OPT_STRAGGLER:
        if (copy_str(o->straggler, sizeof o->straggler, v) == 0)
            return 0;
        break;
    case OPT_TARGET:
        if (parse_double(v, 0, 1, &o->target) == 0)
            return 0;
        set_err(err, errlen, "--target %s: expected an accuracy between 0 and 1, e.g. 0.92", v);
        return -1;
    case OPT_MAX_STEPS:
        if (parse_long(v, 1, 1L << 40, &o->max_steps) == 0)
            return 0;
        set_err(err, errlen, "--max-steps %s: expected a step count >= 1", v);
        return -1;
    case OPT_MAX_SECONDS:
        if (parse_double(v, 0.001, 1e7, &o->max_seconds) == 0)
            return 0;
        set_err(err, errlen, "--max-seconds %s: expected seconds > 0", v);
        return -1;
    case OPT_EVAL_EVERY:
        if (parse_long(v, 1, 1000000, &n) == 0) {
            o->eval_every = (int)n;
            return 0;
        }
        set_err(err, errlen, "--eval-every %s: expected a step count >= 1", v);
        return -1;
    case OPT_CSV:
        if (copy_str(o->csv, sizeof o->csv, v) == 0)
            return 0;
        break;
    case OPT_SEED:
        if (parse_long(v, 0, 1L << 62, &n) == 0) {
            o->seed = (unsigned long long)n;
            return 0;
        }
        set_err(err, errlen, "--seed %s: expected an integer >= 0", v);
        return -1;
    case OPT_DATA:
        if (copy_str(o->data, sizeof o->data, v) == 0)
            return 0;
        break;
    case OPT_MODE_LABEL:
        if (plain_word(v) && copy_str(o->mode_label, sizeof o->mode_label, v) == 0)
            return 0;
        set_err(err, errlen, "--mode-label '%s': expected one word without spaces or '=' (at most 63 characters)", v);
        return -1;
    case OPT_SCENARIO_LABEL:
        if (plain_word(v) && copy_str(o->scenario_label, sizeof o->scenario_label, v) == 0)
            return 0;
        set_err(err, errlen, "--scenario-label '%s': expected one word without spaces or '=' (at most 63 characters)", v);
        return -1;
    case OPT_STOP_VIA:
        if (strcmp(v, "flag") == 0) {
            o->stop_via = TRAIN_STOP_FLAG;
            return 0;
        }
        if (strcmp(v, "bcast") == 0) {
            o->stop_via = TRAIN_STOP_BCAST;
            return 0;
        }
        set_err(err, errlen, "--stop-via %s: expected flag or bcast", v);
        return -1;
    default:
        break;
    }
    set_err(err, errlen, "--%s: value too long", name);
    return -1;
}

int train_opts_parse(int argc, char **argv, train_opts *o, char *err, size_t errlen)
{
    set_defaults(o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            set_err(err, errlen, "unexpected argument '%s' (options start with --; see --help)", a);
            return -1;
        }
        /* --name value  or  --name=value */
        char name[64];
        const char *eq = strchr(a + 2, '=');
        size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        if (len >= sizeof name) {
            set_err(err, errlen, "unknown option '%s' (see --help)", a);
            return -1;
        }
        memcpy(name, a + 2, len);
        name[len] = '\0';
        size_t k;
        for (k = 0; k < sizeof options / sizeof options[0]; k++)
            if (strcmp(name, options[k].name) == 0)
                break;
        if (k == sizeof options / sizeof options[0]) {
            set_err(err, errlen, "unknown option '--%s' (see --help)", name);
            return -1;
        }
        const char *value = NULL;
        if (options[k].has_arg) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else {
                set_err(err, errlen, "--%s needs a value (see --help)", name);
                return -1;
            }
        } else if (eq) {
            set_err(err, errlen, "--%s takes no value", name);
            return -1;
        }
        switch (options[k].id) {
        case OPT_UNEVEN: o->uneven = 1; break;
        case OPT_VERBOSE: o->verbose = 1; break;
        case OPT_DEVICE: o->device = 1; break;
        case OPT_HELP: o->help = 1; break;
        default:
            if (apply(o, options[k].id, name, value, err, errlen) != 0)
                return -1;
        }
    }
    return 0;
}
