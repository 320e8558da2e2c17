/* The cases that break a remembered call stack (sampler/region.c keeps the
 * callers of an MPI call per call site while their return addresses stay
 * in their stack slots): the same call site reached at the same depth
 * through another caller, after a longjmp, from a signal handler, on a
 * coroutine's stack (swapcontext). Each call asks for the context both
 * ways from one wrapper, so both have the same callers: remembered
 * (adt_sampler_region_context) and unwound (..._unwound); the test wants
 * them equal. */
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <ucontext.h>

#include "sampler/sampler_internal.h"
#include "support.h"

static void *case_location;
static uint32_t case_region;
static adt_test_context_pair *case_pairs;
static unsigned case_capacity, case_count;

void adt_test_region_cases_begin(void *location, uint32_t region, adt_test_context_pair *pairs, unsigned capacity)
{
    case_location = location;
    case_region = region;
    case_pairs = pairs;
    case_capacity = capacity;
    case_count = 0;
}

unsigned adt_test_region_cases_count(void)
{
    return case_count;
}

uint64_t adt_test_region_unwinds(void)
{
    return adt_sampler_current != NULL ? adt_sampler_current->region_unwinds : 0;
}

/* The wrapper: one call site for each way of asking. */
__attribute__((noipa)) void adt_test_region_pair(void)
{
    uint32_t remembered = adt_sampler_region_context(case_location, case_region);
    uint32_t unwound = adt_sampler_region_context_unwound(case_location, case_region);
    __asm__ volatile("" ::: "memory");
    if (case_count < case_capacity)
        case_pairs[case_count++] = (adt_test_context_pair){remembered, unwound};
}

/* Twelve wrappers, as a loop calling as many MPI functions has: each its
 * own call site of adt_sampler_region_context (not a tail call, which
 * would make the loop's call the site). */
#define WRAPPER(n)                                                                                                     \
    __attribute__((noipa)) static uint32_t wrapper_##n(void)                                                          \
    {                                                                                                                  \
        uint32_t context = adt_sampler_region_context(case_location, case_region);                                    \
        __asm__ volatile("" ::: "memory");                                                                             \
        return context;                                                                                                \
    }
WRAPPER(0) WRAPPER(1) WRAPPER(2) WRAPPER(3) WRAPPER(4) WRAPPER(5)
WRAPPER(6) WRAPPER(7) WRAPPER(8) WRAPPER(9) WRAPPER(10) WRAPPER(11)
#undef WRAPPER

unsigned adt_test_region_wrappers_loop(unsigned rounds, uint32_t *contexts)
{
    static uint32_t (*const wrappers[])(void) = { wrapper_0, wrapper_1, wrapper_2, wrapper_3, wrapper_4, wrapper_5,
                                                  wrapper_6, wrapper_7, wrapper_8, wrapper_9, wrapper_10, wrapper_11 };
    enum { WRAPPERS = sizeof wrappers / sizeof wrappers[0] };
    for (volatile unsigned round = 0; round < rounds; round++)
        for (unsigned i = 0; i < WRAPPERS; i++)
            contexts[round * WRAPPERS + i] = wrappers[i]();
    return WRAPPERS;
}

/* One call site of the wrapper, reached through two callers whose frames
 * are alike (the same code), so that it runs at the same stack depth. */
__attribute__((noipa)) static void shared_site(int work)
{
    volatile int keep = work;
    adt_test_region_pair();
    (void)keep;
}

__attribute__((noipa)) static void caller_a(int work)
{
    shared_site(work);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noipa)) static void caller_b(int work)
{
    shared_site(work);
    __asm__ volatile("" ::: "memory");
}

void adt_test_region_same_depth_other_caller(unsigned rounds)
{
    for (volatile unsigned i = 0; i < rounds; i++) {
        caller_a(1);
        caller_a(2);
        caller_b(3);
    }
}

static jmp_buf jump_back;
static volatile bool jump; /* always true: the compiler may not see the recursion end */

__attribute__((noipa)) static void call_then_jump(int depth)
{
    if (depth > 0) {
        call_then_jump(depth - 1);
        return;
    }
    shared_site(0);
    if (jump)
        longjmp(jump_back, 1);
}

void adt_test_region_after_longjmp(void)
{
    jump = true;
    if (setjmp(jump_back) == 0)
        call_then_jump(3);
    caller_a(4);
    caller_b(5);
    if (setjmp(jump_back) == 0)
        call_then_jump(3);
}

static void on_usr1(int signum)
{
    (void)signum;
    shared_site(6);
}

__attribute__((noipa)) static void raise_here(void)
{
    raise(SIGUSR1);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noipa)) static void raise_there(void)
{
    raise(SIGUSR1);
    __asm__ volatile("" ::: "memory");
}

void adt_test_region_in_signal_handler(void)
{
    struct sigaction action = {0}, previous;
    action.sa_handler = on_usr1;
    sigemptyset(&action.sa_mask);
    sigaction(SIGUSR1, &action, &previous);
    raise_here();
    raise_there();
    raise_here();
    sigaction(SIGUSR1, &previous, NULL);
}

static ucontext_t main_context, coroutine_context;

static void coroutine(void)
{
    caller_a(7);
    swapcontext(&coroutine_context, &main_context);
    caller_b(8);
}

void adt_test_region_on_coroutine(void)
{
    enum { STACK_BYTES = 256 * 1024 };
    void *stack = malloc(STACK_BYTES);
    getcontext(&coroutine_context);
    coroutine_context.uc_stack.ss_sp = stack;
    coroutine_context.uc_stack.ss_size = STACK_BYTES;
    coroutine_context.uc_link = &main_context;
    makecontext(&coroutine_context, coroutine, 0);
    swapcontext(&main_context, &coroutine_context);
    caller_a(9);
    swapcontext(&main_context, &coroutine_context);
    free(stack);
}
