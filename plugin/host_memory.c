/* Memory the process maps as host memory: see host_memory.h. */
#define _GNU_SOURCE
#include "host_memory.h"
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Looked up once: where the brk heap starts and the main program's
 * segments.  A field left 0 turns that test off (the driver is asked). */
#define SC_PROGRAM_SEGMENTS 8
static struct {
    uintptr_t heap_start;
    int nsegments;
    struct { uintptr_t lo, hi; } segment[SC_PROGRAM_SEGMENTS];
} known;
static pthread_once_t known_once = PTHREAD_ONCE_INIT;

/* start_brk, field 47 of /proc/self/stat (Linux 3.5 on): the fields after
 * the command's closing parenthesis start at field 3.  0 when unreadable. */
static uintptr_t read_heap_start(void)
{
    char buf[2048];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *s = strrchr(buf, ')');
    if (!s) return 0;
    unsigned long long v = 0;
    int field = 2;
    char *save = NULL;
    for (char *tok = strtok_r(s + 1, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
        if (++field == 47) {
            if (sscanf(tok, "%llu", &v) != 1) v = 0;
            break;
        }
    return (uintptr_t)v;
}

/* The main program is the first object the dynamic linker lists; it is
 * never unloaded, so its segments stay host memory for the process's life. */
static int main_program_segments(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    for (int i = 0; i < info->dlpi_phnum && known.nsegments < SC_PROGRAM_SEGMENTS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || ph->p_memsz == 0) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        known.segment[known.nsegments].lo = lo;
        known.segment[known.nsegments++].hi = lo + ph->p_memsz;
    }
    return 1;
}

/* Whether the kernel's heap and the break glibc reports are the same: the
 * mapping that holds the last byte below the break is "[heap]", starting at
 * start_brk, or the heap is empty at start_brk.  Not so under a tool that
 * emulates the break (valgrind), where the range would mean nothing. */
static int break_is_the_kernels(uintptr_t heap_start)
{
    uintptr_t brk_now = (uintptr_t)sbrk(0);
    if (!heap_start || brk_now == (uintptr_t)-1 || brk_now < heap_start) return 0;
    if (brk_now == heap_start) return 1;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return 0;
    char line[512];
    int agree = 0;
    int line_start = 1;   /* a line longer than the buffer: its rest is not a line */
    while (fgets(line, sizeof line, f)) {
        int at_start = line_start;
        line_start = strchr(line, '\n') != NULL;
        if (!at_start) continue;
        unsigned long long lo, hi;
        char path[32] = "";
        if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %31s", &lo, &hi, path) < 2) continue;
        if (brk_now - 1 < lo || brk_now - 1 >= hi) continue;
        agree = lo == heap_start && strcmp(path, "[heap]") == 0;
        break;
    }
    fclose(f);
    return agree;
}

static void look_up(void)
{
    uintptr_t heap_start = read_heap_start();
    known.heap_start = break_is_the_kernels(heap_start) ? heap_start : 0;
    dl_iterate_phdr(main_program_segments, NULL);
}

/* The calling thread's stack, looked up on its first call. */
static __thread struct {
    int looked;
    uintptr_t lo, hi;   /* hi 0: unknown */
} stack;

static int on_my_stack(uintptr_t p)
{
    if (!stack.looked) {
        stack.looked = 1;
        pthread_attr_t attr;
        void *lo;
        size_t bytes;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            if (pthread_attr_getstack(&attr, &lo, &bytes) == 0) {
                stack.lo = (uintptr_t)lo;
                stack.hi = (uintptr_t)lo + bytes;
            }
            pthread_attr_destroy(&attr);
        }
    }
    /* From this frame up is the stack in use, mapped: the caller's buffers
     * live there.  A frame outside the thread's stack (a fiber's or a
     * signal stack) says nothing, and the driver is asked. */
    uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
    if (!stack.hi || frame < stack.lo || frame >= stack.hi) return 0;
    return p >= frame && p < stack.hi;
}

int sc_host_memory_known(const void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;
    if (!p) return 0;
    if (on_my_stack(p)) return 1;
    pthread_once(&known_once, look_up);
    /* The brk heap is one mapping from its start to the current break;
     * sbrk(0) reads glibc's copy of the break.  A break read stale by a
     * race with another thread's malloc only makes the answer 0. */
    if (known.heap_start) {
        uintptr_t brk_now = (uintptr_t)sbrk(0);
        if (brk_now != (uintptr_t)-1 && p >= known.heap_start && p < brk_now) return 1;
    }
    for (int i = 0; i < known.nsegments; i++)
        if (p >= known.segment[i].lo && p < known.segment[i].hi) return 1;
    return 0;
}
