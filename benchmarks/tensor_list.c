#include "tensor_list.h"
#include <stdio.h>

int tensor_list_read(const char *path, long scale, long *counts, int max)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    if (scale < 1) scale = 1;
    char line[512];
    int n = 0;
    long c;
    while (fgets(line, sizeof line, f)) {
        char name[256];
        if (line[0] == '#' || sscanf(line, "%255s %ld", name, &c) != 2) continue;
        if (n == max || c <= 0) {
            n = -1;
            break;
        }
        if (c > 16384) c = c / scale > 16384 ? c / scale : 16384;
        counts[n++] = c;
    }
    fclose(f);
    for (int i = 0; i < n / 2; i++) {
        long t = counts[i];
        counts[i] = counts[n - 1 - i];
        counts[n - 1 - i] = t;
    }
    return n;
}
