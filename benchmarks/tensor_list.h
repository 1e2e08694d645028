/* A model's gradient tensors (benchmarks/models/, .tensors files: NAME COUNT per
 * line, registration order, '#' comments), for the benchmarks that reduce
 * steps of that shape. */
#ifndef STARCOLL_TENSOR_LIST_H
#define STARCOLL_TENSOR_LIST_H

/* Reads up to max counts into counts[], in backward order (the order
 * frameworks reduce them in); counts over 16384 elements are divided by
 * scale, never below 16384, so the small tensors keep their real sizes.
 * Returns how many, or -1 when the file cannot be read, holds more than
 * max tensors or a count that is not positive. */
int tensor_list_read(const char *path, long scale, long *counts, int max);

#endif
