/* A small deterministic random generator for the training benchmark
 * (SplitMix64): identical streams on every rank and every libc, so weight
 * initialisation, the held-out split and the batch order are reproducible. */
#ifndef STARCOLL_TRAIN_RNG_H
#define STARCOLL_TRAIN_RNG_H

#include <stdint.h>

typedef struct train_rng {
    uint64_t state;
} train_rng;

static inline void train_rng_seed(train_rng *r, uint64_t seed)
{
    r->state = seed ^ 0x5DEECE66DULL;
}

static inline uint64_t train_rng_next(train_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform double in [0, 1). */
static inline double train_rng_uniform(train_rng *r)
{
    return (double)(train_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, n), n > 0 (modulo bias is negligible for the
 * small n used here). */
static inline uint32_t train_rng_below(train_rng *r, uint32_t n)
{
    return (uint32_t)(train_rng_next(r) % n);
}

/* Fisher-Yates shuffle of idx[0..n). */
static inline void train_rng_shuffle(train_rng *r, int *idx, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)train_rng_below(r, (uint32_t)i + 1);
        int t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
}

#endif
