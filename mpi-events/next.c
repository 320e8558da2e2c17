/*
 * Start-up: resolves the next definition of every wrapped entry point
 * (next.h). dlsym runs here only, never on the hot path.
 */
#include <dlfcn.h>
#include <pthread.h>

#include "next.h"

void *adt_mpi_next_symbol(const char *symbol)
{
    return dlsym(RTLD_NEXT, symbol);
}

static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

static void resolve_all(void)
{
    adt_mpi_next_find_c();
    adt_mpi_next_find_fortran();
    adt_mpi_next_find_f08();
}

void adt_mpi_next_resolve(void)
{
    pthread_once(&resolve_once, resolve_all);
}

/* Every process that loads the library, measured or inert: a stacked tool
 * sees the calls of a process adaptrace does not measure as well. */
__attribute__((constructor)) static void resolve_at_load(void)
{
    adt_mpi_next_resolve();
}
