/* Policy: every STARCOLL_* variable of DESIGN.md, parsed by one parser.
 * Pure C (no MPI) so unit tests can feed it synthetic environments. */
#ifndef STARCOLL_POLICY_H
#define STARCOLL_POLICY_H
#include <stddef.h>
#include <stdint.h>
#include "sc_features.h"
#include "inject.h"
#include "eligibility.h"

#define SC_PATH_LEN 512
/* Calls under STARCOLL_MIN_BYTES stay exact.  256 bytes (64 floats, 32
 * doubles) keeps a loss or a few metric values exact and lets a model's
 * small gradient tensors (biases and norms: 64 elements and up in ResNet-50,
 * 768 in GPT-2) ride with the step (README, "Which calls are touched"). */
#define SC_MIN_BYTES_DEFAULT 256

/* Tolerated tensors under STARCOLL_FUSE_BYTES ride in fused rounds, a
 * few per step instead of one per tensor (README, "Fused rounds").  1 MiB:
 * the model-shaped steps, fused whole, took a 2x straggler's cost from 1.24
 * and 1.36 of sync's step without one (64 KiB) to 1.10 and 1.13 (1.14 and
 * 1.20 under the share below). */
#define SC_FUSE_BYTES_DEFAULT (1024 * 1024)

/* ... and together they carry at most STARCOLL_FUSE_SHARE of the step's
 * bytes, smallest first.  A fused tensor's sum comes a step late on every
 * rank, straggler or not: for a model whose tensors are all small that is
 * the whole gradient, a delayed optimizer rather than a tolerant one (a
 * 3-layer MLP's loss after 140 steps: 1.54 fused whole, 0.70 exact).  1/8
 * leaves real models as they were (ResNet-50's 132 small tensors are 6.3%
 * of its bytes, GPT-2 small's 98 are 0.1%). */
#define SC_FUSE_SHARE_DEFAULT 0.125

/* Communicators as the report numbers them (its rows, runtime.h): 0 to
 * SC_COMM_NUMBERS - 2 apart, the last number for every one after. */
#define SC_COMM_NUMBERS 16

typedef enum { SC_SELECTOR_HEURISTIC = 0, SC_SELECTOR_LEARNED = 1 } sc_selector_kind;
typedef enum { SC_REPORT_STDERR = 0, SC_REPORT_NONE, SC_REPORT_FILE } sc_report_kind;
/* STARCOLL_COLL_WAIT: how starcoll's own collectives wait (polled_coll.h);
 * auto: polled while a rank of the communicator runs another engine
 * (engine_crowd.c). */
typedef enum { SC_WAIT_AUTO = 0, SC_WAIT_BLOCKING, SC_WAIT_POLLED } sc_coll_wait;

typedef struct sc_policy {
    sc_mode mode;                 /* STARCOLL_MODE */
    sc_selector_kind selector;    /* STARCOLL_SELECTOR */
    char model[SC_PATH_LEN];      /* STARCOLL_MODEL, "" = none */
    size_t min_bytes;             /* STARCOLL_MIN_BYTES */
    sc_exact_list exact;          /* STARCOLL_EXACT: shapes kept exact whatever their size */
    /* STARCOLL_EXACT_COMMS: bit N, the report's communicator N (every N@W)
     * keeps its calls exact: one whose sums are no gradients (a
     * tensor-parallel group's activations), which no size or shape tells */
    unsigned exact_comms;
    int exact_comms_set;          /* ... given, "none" too: crossing communicators are then not kept exact */
    size_t fuse_bytes;            /* STARCOLL_FUSE_BYTES, 0 = no fusion */
    double fuse_share;            /* STARCOLL_FUSE_SHARE: most of a step's bytes fused, (0,1] */
    double quorum;                /* STARCOLL_QUORUM: 0 = selector chooses; >= 1 a count; (0,1) a fraction */
    int staleness;                /* STARCOLL_STALENESS, rounds */
    int scale_fresh;              /* STARCOLL_SCALE: 0 none, 1 fresh */
    int group_size;               /* STARCOLL_GROUP: 0 = node, else ranks per group */
    int epoch;                    /* STARCOLL_EPOCH, steps */
    char papi_events[256];        /* STARCOLL_PAPI_EVENTS */
    char nic[256];                /* STARCOLL_NIC */
    char trace[SC_PATH_LEN];      /* STARCOLL_TRACE, "" = none */
    sc_report_kind report;        /* STARCOLL_REPORT */
    char report_path[SC_PATH_LEN];
    sc_inject inject;             /* STARCOLL_INJECT */
    char schedule[4096];          /* STARCOLL_SCHEDULE (auto: decisions at fixed steps), "" = none */
    double stall_s;               /* STARCOLL_STALL: seconds a call waits before the watchdog speaks; 0 off */
    int verbose;                  /* STARCOLL_VERBOSE */
    int cuda_off;                 /* STARCOLL_CUDA=off: device buffers are not looked for (device.h) */
    sc_coll_wait coll_wait;       /* STARCOLL_COLL_WAIT */
} sc_policy;

typedef const char *(*sc_getenv_fn)(const char *name);

/* Fill *p from the environment read through get (getenv when NULL).  Every
 * bad value appends one line to msgs (naming the variable, the value and
 * what is accepted) and leaves the safe default in place.  Returns the number
 * of bad values. */
int sc_policy_parse(sc_policy *p, sc_getenv_fn get, char *msgs, size_t msglen);
void sc_policy_defaults(sc_policy *p);

/* Stable hash of the parsed policy, compared across ranks at init. */
uint64_t sc_policy_hash(const sc_policy *p);
/* FNV-1a of len bytes, continuing from h (start from SC_HASH_SEED). */
#define SC_HASH_SEED 1469598103934665603ULL
uint64_t sc_hash_bytes(uint64_t h, const void *data, size_t len);

/* One line describing the policy, for the report and starcoll-info. */
void sc_policy_describe(const sc_policy *p, char *buf, size_t len);

const char *sc_mode_name(sc_mode m);
int sc_mode_from_name(const char *s, sc_mode *out);

/* Size with optional K/M/G suffix (powers of 1024, optional trailing B).
 * Returns 0 on success, -1 on garbage, negative or overflow. */
int sc_parse_size(const char *s, size_t *out);

/* Duration with optional us/ms/s suffix (plain number = ms), into seconds. */
int sc_parse_duration(const char *s, double *out_s);

/* Whole number in [lo, hi]. */
int sc_parse_int(const char *s, long lo, long hi, long *out);
#endif
