/*
 * Memory the hot paths write into, mapped and touched before they run.
 */
#include "core/core.h"

#include <sys/mman.h>
#include <unistd.h>

void *adt_memory_map(size_t bytes)
{
    char *memory = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (memory == MAP_FAILED)
        return NULL;
    /* A write, not a read: a read may leave the page mapped read-only in
     * the hypervisor's shadow tables, and the first append would trap. */
    long page = sysconf(_SC_PAGESIZE);
    size_t step = page > 0 ? (size_t)page : 4096;
    for (size_t offset = 0; offset < bytes; offset += step)
        ((volatile char *)memory)[offset] = 0;
    return memory;
}

void adt_memory_unmap(void *memory, size_t bytes)
{
    if (memory != NULL)
        munmap(memory, bytes);
}
