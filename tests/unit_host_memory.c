/* Unit tests of host memory known without asking the CUDA driver
 * (plugin/host_memory.c): the brk heap, the calling thread's stack and the
 * main program's segments are known; memory the driver may map (the
 * stand-in driver's device memory is mmap'ed, as a GPU's is mapped into
 * the address space) never is, whichever stack the question is asked on. */
#define _GNU_SOURCE
#include "cunit_main.h"
#include "host_memory.h"
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

static double static_data[512];
static const double static_const[4] = {1, 2, 3, 4};
static char *device_like;   /* mmap'ed PROT_NONE, as tests/fake_cuda.c maps "device memory" */

static int ask_from_a_deeper_frame(const void *p) __attribute__((noinline));
static int ask_from_a_deeper_frame(const void *p) { return sc_host_memory_known(p); }

static void test_stack(void)
{
    double grads[64] = {0};
    volatile char byte = 1;
    CU_ASSERT_EQUAL(sc_host_memory_known(grads), 1);
    CU_ASSERT_EQUAL(sc_host_memory_known((const void *)&byte), 1);
    CU_ASSERT_EQUAL(ask_from_a_deeper_frame(grads + 63), 1);   /* the caller's buffer, asked further down */
}

static void test_heap(void)
{
    char *old_break = sbrk(0), *p = sbrk(4096);   /* grown by hand: whatever malloc this build has */
    CU_ASSERT_FATAL(p != (char *)-1);
    /* Under valgrind the break is emulated, away from the kernel's heap:
     * then the heap must not be taken as known (the driver is asked). */
    const char *preload = getenv("LD_PRELOAD");
    int emulated = preload && strstr(preload, "vgpreload");
    CU_ASSERT_EQUAL(sc_host_memory_known(p), !emulated);
    CU_ASSERT_EQUAL(sc_host_memory_known(p + 4095), !emulated);
    CU_ASSERT_EQUAL(sc_host_memory_known((char *)sbrk(0)), 0);   /* the break itself is past the heap */
    CU_ASSERT(old_break <= p);
}

static void test_program_segments(void)
{
    CU_ASSERT_EQUAL(sc_host_memory_known(static_data), 1);
    CU_ASSERT_EQUAL(sc_host_memory_known(static_data + 511), 1);
    CU_ASSERT_EQUAL(sc_host_memory_known(static_const), 1);
}

static void test_not_known(void)
{
    CU_ASSERT_EQUAL(sc_host_memory_known(NULL), 0);
    CU_ASSERT_EQUAL(sc_host_memory_known(device_like), 0);
    CU_ASSERT_EQUAL(sc_host_memory_known(device_like + 4095), 0);
    char *rw = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CU_ASSERT_FATAL(rw != MAP_FAILED);
    CU_ASSERT_EQUAL(sc_host_memory_known(rw), 0);   /* mmap'ed: the driver is asked */
    munmap(rw, 1 << 20);
}

static void *in_a_thread(void *arg)
{
    double mine[16] = {0};
    int *answers = arg;
    answers[0] = sc_host_memory_known(mine);
    answers[1] = sc_host_memory_known(device_like);
    return NULL;
}

static void test_other_thread(void)
{
    int answers[2] = {-1, -1};
    pthread_t t;
    CU_ASSERT_FATAL(pthread_create(&t, NULL, in_a_thread, answers) == 0);
    CU_ASSERT_FATAL(pthread_join(t, NULL) == 0);
    CU_ASSERT_EQUAL(answers[0], 1);   /* a communication thread's own stack */
    CU_ASSERT_EQUAL(answers[1], 0);
}

/* On a fiber's stack (mmap'ed, below the thread's), nothing between the
 * fiber's frame and the thread's stack top may be taken for stack. */
static ucontext_t main_ctx, fiber_ctx;
static int fiber_answers[2] = {-1, -1};
static void fiber(void)
{
    char local[32] = {0};
    fiber_answers[0] = sc_host_memory_known(device_like);
    fiber_answers[1] = sc_host_memory_known(local);
}

static void test_fiber_stack(void)
{
    size_t bytes = 1 << 20;
    char *stack = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CU_ASSERT_FATAL(stack != MAP_FAILED);
    CU_ASSERT_FATAL(getcontext(&fiber_ctx) == 0);
    fiber_ctx.uc_stack.ss_sp = stack;
    fiber_ctx.uc_stack.ss_size = bytes;
    fiber_ctx.uc_link = &main_ctx;
    makecontext(&fiber_ctx, fiber, 0);
    CU_ASSERT_FATAL(swapcontext(&main_ctx, &fiber_ctx) == 0);
    CU_ASSERT_EQUAL(fiber_answers[0], 0);
    CU_ASSERT_EQUAL(fiber_answers[1], 0);   /* not known, so asked: safe */
    munmap(stack, bytes);
}

int main(void)
{
    device_like = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (device_like == MAP_FAILED || CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("host memory known without the driver", NULL, NULL);
    CU_add_test(s, "the caller's stack", test_stack);
    CU_add_test(s, "the brk heap, up to the break", test_heap);
    CU_add_test(s, "the main program's data and constants", test_program_segments);
    CU_add_test(s, "mmap'ed memory and NULL are not known", test_not_known);
    CU_add_test(s, "a thread's own stack", test_other_thread);
    CU_add_test(s, "a fiber's stack says nothing", test_fiber_stack);
    int rc = sc_cunit_run();
    munmap(device_like, 4096);
    return rc;
}
