/* Reduction kernels on float and double buffers. */
#ifndef STARCOLL_KERNELS_H
#define STARCOLL_KERNELS_H
#include <stddef.h>
#include "eligibility.h"

void sc_sum_into(void *dst, const void *src, size_t count, sc_dkind k);   /* dst += src */
void sc_scale(void *buf, size_t count, sc_dkind k, double factor);       /* buf *= factor */
double sc_sqnorm(const void *buf, size_t count, sc_dkind k);              /* sum of squares */
#endif
