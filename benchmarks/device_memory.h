/* Device memory for the benchmarks' and tests' --device options, the way a
 * GPU code holds its gradients: the CUDA runtime's cudaMalloc and
 * cudaMemcpy (libcudart loaded at run time, so nothing links CUDA), or,
 * where tests/fakecuda/libcuda.so.1 is loaded in its place, the stand-in
 * driver's pages the CPU cannot touch.  Plain C, no MPI. */
#ifndef STARCOLL_DEVICE_MEMORY_H
#define STARCOLL_DEVICE_MEMORY_H
#include <stddef.h>

/* Finds a way to device memory: 0, or -1 with why (len) said. */
int devmem_open(char *why, size_t len);
/* "CUDA runtime" or "the stand-in driver", after devmem_open. */
const char *devmem_kind(void);
void *devmem_alloc(size_t bytes);
void devmem_free(void *p);
/* Copies between host and device memory: 0 on success. */
int devmem_write(void *dev, const void *host, size_t bytes);
int devmem_read(void *host, const void *dev, size_t bytes);
#endif
