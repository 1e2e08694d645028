#include "kernels.h"

void sc_sum_into(void *dst, const void *src, size_t count, sc_dkind k)
{
    if (k == SC_DK_FLOAT) {
        float *restrict d = dst;
        const float *restrict s = src;
        for (size_t i = 0; i < count; i++) d[i] += s[i];
    } else if (k == SC_DK_DOUBLE) {
        double *restrict d = dst;
        const double *restrict s = src;
        for (size_t i = 0; i < count; i++) d[i] += s[i];
    }
}

void sc_scale(void *buf, size_t count, sc_dkind k, double factor)
{
    if (k == SC_DK_FLOAT) {
        float *b = buf;
        float f = (float)factor;
        for (size_t i = 0; i < count; i++) b[i] *= f;
    } else if (k == SC_DK_DOUBLE) {
        double *b = buf;
        for (size_t i = 0; i < count; i++) b[i] *= factor;
    }
}

double sc_sqnorm(const void *buf, size_t count, sc_dkind k)
{
    double s = 0;
    if (k == SC_DK_FLOAT) {
        const float *b = buf;
        for (size_t i = 0; i < count; i++) s += (double)b[i] * b[i];
    } else if (k == SC_DK_DOUBLE) {
        const double *b = buf;
        for (size_t i = 0; i < count; i++) s += b[i] * b[i];
    }
    return s;
}
