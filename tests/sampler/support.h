/*
 * C helpers of the sampler tests: compute kernels whose samples the tests
 * look for (noipa: neither inlined nor merged with one another), and read
 * access to the sampler's calling-context tree, which the C++ tests cannot
 * include (C11 atomics).
 */
#ifndef ADAPTRACE_TESTS_SAMPLER_SUPPORT_H
#define ADAPTRACE_TESTS_SAMPLER_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A fixed amount of CPU-bound work: units * a fixed number of iterations. */
double adt_test_work_a(uint64_t units);
double adt_test_work_b(uint64_t units);
double adt_test_work_c(uint64_t units);
/* Recurses depth levels, then works units at the bottom. */
double adt_test_recurse(unsigned depth, uint64_t units);
/* Calls adt_test_region_wrapper, which asks for a region context. */
uint32_t adt_test_region_caller(void *location, uint32_t region);
/* count region contexts asked from one call site. */
void adt_test_region_repeated(void *location, uint32_t region, uint32_t *nodes, unsigned count);

/* The rings of other threads' samples without signals (thread_rings.c):
 * a thread state of the sampler's own kind, not sampled, whose ring is
 * claimed at its first push (free it with free()); a push as its handler
 * makes it (no counters); its retirement at its stop. */
void *adt_test_ring_thread(void);
bool adt_test_ring_push(void *thread, uint32_t context, uint64_t time);
void adt_test_ring_retire(void *thread);
/* The rings closed (adt_sampler_shutdown's part of them). */
void adt_test_rings_close(void);

/* The thread's CPU time in ns. */
uint64_t adt_test_thread_cpu_ns(void);
/* An independent probe of the calling thread's perf task clock
 * (perf_event_open, PERF_COUNT_SW_TASK_CLOCK, counting from now): its fd,
 * or -1. The task clock is not the CPU time above: on a virtual machine
 * it also counts the time the host took the CPU away (steal), so a
 * sampled perf::TASK-CLOCK is checked against this probe. */
int adt_test_task_clock_open(void);
/* Its count in ns so far (0 where it cannot be read); closes nothing. */
uint64_t adt_test_task_clock_ns(int fd);

/* region_cases.c: one MPI-like call asks for its context remembered and
 * unwound; the cases record each pair. */
typedef struct adt_test_context_pair {
    uint32_t remembered;
    uint32_t unwound;
} adt_test_context_pair;
void adt_test_region_cases_begin(void *location, uint32_t region, adt_test_context_pair *pairs, unsigned capacity);
unsigned adt_test_region_cases_count(void);
/* The calls whose callers were unwound so far on this thread. */
uint64_t adt_test_region_unwinds(void);
void adt_test_region_pair(void);
void adt_test_region_same_depth_other_caller(unsigned rounds);
/* rounds of a loop calling each of a dozen wrappers (distinct call sites)
 * once, their contexts in contexts (rounds * the count returned, at most
 * 12 per round). */
unsigned adt_test_region_wrappers_loop(unsigned rounds, uint32_t *contexts);
void adt_test_region_after_longjmp(void);
void adt_test_region_in_signal_handler(void);
void adt_test_region_on_coroutine(void);

/* Calling-context tree read-out. */
uint32_t adt_test_cc_count(void);
uint32_t adt_test_cc_parent(uint32_t node);
/* Nodes from node up to its root, node included. */
unsigned adt_test_cc_depth(uint32_t node);
/* Region id if node is a region leaf, UINT32_MAX otherwise. */
uint32_t adt_test_cc_region(uint32_t node);
/* The function node stands for (libdw, as adt_sampler_write_definitions
 * resolves it); "" for a region leaf or the reserved node. */
void adt_test_cc_function(uint32_t node, char *name, size_t size);

/* A calling-context tree of its own (not the sampler's), for the
 * concurrency test; NULL if it cannot be created. */
void *adt_test_cct_create(uint64_t bytes);
void adt_test_cct_destroy(void *tree);
uint32_t adt_test_cct_intern(void *tree, uint32_t parent, uint64_t key);
uint32_t adt_test_cct_count(void *tree);
uint32_t adt_test_cct_parent(void *tree, uint32_t node);
/* Nodes left unreferenced by inserts that lost a race to the same node. */
uint64_t adt_test_cct_lost_races(void *tree);

#ifdef __cplusplus
}
#endif

#endif
