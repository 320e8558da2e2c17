#include "support.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sampler/resolve.h"
#include "sampler/sampler_internal.h"

/* Each kernel has its own constants so that the compiler cannot fold
 * them into one function. */
#define ITERATIONS_PER_UNIT 20000u

__attribute__((noipa)) double adt_test_work_a(uint64_t units)
{
    double x = 1.0;
    for (uint64_t i = 0; i < units * ITERATIONS_PER_UNIT; ++i)
        x = x * 1.0000001 + 0.5;
    return x;
}

__attribute__((noipa)) double adt_test_work_b(uint64_t units)
{
    double x = 2.0;
    for (uint64_t i = 0; i < units * ITERATIONS_PER_UNIT; ++i)
        x = x * 0.9999999 + 0.25;
    return x;
}

__attribute__((noipa)) double adt_test_work_c(uint64_t units)
{
    double x = 3.0;
    for (uint64_t i = 0; i < units * ITERATIONS_PER_UNIT; ++i)
        x = x * 1.0000002 - 0.125;
    return x;
}

__attribute__((noipa)) double adt_test_recurse(unsigned depth, uint64_t units)
{
    if (depth == 0)
        return adt_test_work_a(units);
    /* Work after the call keeps it from being a tail call. */
    return adt_test_recurse(depth - 1, units) * 0.5 + 1.0;
}

__attribute__((noipa)) static uint32_t adt_test_region_wrapper(void *location, uint32_t region)
{
    uint32_t node = adt_sampler_region_context(location, region);
    __asm__ volatile("" ::: "memory");
    return node;
}

__attribute__((noipa)) uint32_t adt_test_region_caller(void *location, uint32_t region)
{
    uint32_t node = adt_test_region_wrapper(location, region);
    __asm__ volatile("" ::: "memory");
    return node;
}

__attribute__((noipa)) void adt_test_region_repeated(void *location, uint32_t region, uint32_t *nodes, unsigned count)
{
    /* volatile: one call site, not unrolled into several. */
    for (volatile unsigned i = 0; i < count; ++i)
        nodes[i] = adt_test_region_caller(location, region);
}

int adt_test_task_clock_open(void)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

uint64_t adt_test_task_clock_ns(int fd)
{
    uint64_t count = 0;
    return read(fd, &count, sizeof count) == (ssize_t)sizeof count ? count : 0;
}

uint64_t adt_test_thread_cpu_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

uint32_t adt_test_cc_count(void)
{
    return adt_cct_count(&adt_sampler.tree);
}

uint32_t adt_test_cc_parent(uint32_t node)
{
    return adt_sampler.tree.nodes[node].parent;
}

unsigned adt_test_cc_depth(uint32_t node)
{
    unsigned depth = 0;
    for (; node != ADT_UNDEFINED_ID; node = adt_sampler.tree.nodes[node].parent)
        depth++;
    return depth;
}

uint32_t adt_test_cc_region(uint32_t node)
{
    uint64_t key = adt_sampler.tree.nodes[node].key;
    return (key & ADT_CCT_KEY_REGION) ? (uint32_t)(key & UINT32_MAX) : UINT32_MAX;
}

void adt_test_cc_function(uint32_t node, char *name, size_t size)
{
    uint64_t key = adt_sampler.tree.nodes[node].key;
    if (node == ADT_CCT_NODE_FULL || (key & ADT_CCT_KEY_REGION)) {
        snprintf(name, size, "%s", "");
        return;
    }
    static adt_resolver *resolver;
    if (resolver == NULL)
        resolver = adt_resolver_open();
    adt_symbol symbol;
    adt_resolver_lookup(resolver, adt_resolver_key_address(key), &symbol);
    snprintf(name, size, "%s", symbol.function);
}

void *adt_test_cct_create(uint64_t bytes)
{
    adt_cct *tree = calloc(1, sizeof *tree);
    if (tree != NULL && adt_cct_create(tree, bytes) != 0) {
        free(tree);
        tree = NULL;
    }
    return tree;
}

void adt_test_cct_destroy(void *tree)
{
    adt_cct_destroy(tree);
    free(tree);
}

uint32_t adt_test_cct_intern(void *tree, uint32_t parent, uint64_t key)
{
    return adt_cct_intern(tree, parent, key);
}

uint32_t adt_test_cct_count(void *tree)
{
    return adt_cct_count(tree);
}

uint32_t adt_test_cct_parent(void *tree, uint32_t node)
{
    return ((adt_cct *)tree)->nodes[node].parent;
}

uint64_t adt_test_cct_lost_races(void *tree)
{
    return atomic_load(&((adt_cct *)tree)->lost_races);
}

void *adt_test_ring_thread(void)
{
    adt_sampler_thread *thread = calloc(1, sizeof *thread);
    if (thread != NULL)
        thread->ring = ADT_SAMPLER_RING_UNCLAIMED;
    return thread;
}

bool adt_test_ring_push(void *thread, uint32_t context, uint64_t time)
{
    return adt_sampler_thread_ring_push(thread, context, 0, time, false, NULL);
}

void adt_test_ring_retire(void *thread)
{
    adt_sampler_thread_ring_retire(thread);
}

void adt_test_rings_close(void)
{
    adt_sampler_thread_rings_close();
}
