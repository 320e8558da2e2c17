/*
 * Start-up: resolves the next definition of every wrapped entry point
 * (next.h). dlsym runs here only, never on the hot path.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include <mpi.h>

#include "core/core.h"
#include "next.h"

void *adt_mpi_next_symbol(const char *symbol)
{
    return dlsym(RTLD_NEXT, symbol);
}

/* The object that holds address, NULL where there is none. */
static const char *object_of(const void *address, const void **base)
{
    Dl_info info;
    if (address == NULL || dladdr(address, &info) == 0)
        return NULL;
    *base = info.dli_fbase;
    return info.dli_fname != NULL && info.dli_fname[0] != '\0' ? info.dli_fname : "the executable";
}

void adt_mpi_next_init_holder(char *file, size_t size)
{
    const void *next_base = NULL, *mpi_base = NULL;
    const char *next = object_of(dlsym(RTLD_NEXT, "MPI_Init"), &next_base);
    object_of((const void *)&PMPI_Init, &mpi_base);
    snprintf(file, size, "%s", next != NULL && next_base != mpi_base ? next : "");
}

static char ahead[ADT_PATH_MAX];

const char *adt_mpi_next_ahead(void)
{
    return ahead;
}

static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

static void resolve_all(void)
{
    adt_mpi_next_find_c();
#if ADT_WITH_FORTRAN
    adt_mpi_next_find_fortran();
    adt_mpi_next_find_f08();
#endif
    /* Inside the library, &MPI_Init would be the first definition too
     * (preemptible): compare objects instead. */
    const void *first_base = NULL, *own_base = NULL;
    const char *first = object_of(dlsym(RTLD_DEFAULT, "MPI_Init"), &first_base);
    object_of((const void *)adt_mpi_next_symbol, &own_base);
    if (first != NULL && first_base != own_base)
        snprintf(ahead, sizeof ahead, "%s", first);
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
