/*
 * next.c: where each wrapper passes its call on. Every entry point
 * (MPI_Send, mpi_send_, mpi_send_f08_) calls the next definition of its
 * own symbol in the loader's search order: a tool stacked behind
 * adaptrace (`adaptrace --stack`, or linked after libadaptrace), else the
 * MPI library's own. adaptrace's own MPI traffic calls PMPI_* directly
 * and never passes through here, so a stacked tool sees only the
 * application's calls.
 *
 * Each wrapper's pointer starts at its PMPI twin, so that a call arriving
 * before the resolution (another library's constructor calling MPI) goes
 * where it went before stacking existed, and is replaced once, at start-up
 * (the constructor; MPI_Init makes sure of it), by the next definition
 * where the loader has one (none: a program linked with adaptrace ahead of
 * an MPI that has only PMPI_* symbols keeps PMPI).
 *
 * Hot path: ADT_MPI_NEXT is one relaxed atomic load (a plain load) and the
 * wrapper makes one indirect call through it: no lock, no branch.
 */
#ifndef ADAPTRACE_MPI_NEXT_H
#define ADAPTRACE_MPI_NEXT_H

#include <stdatomic.h>
#include <stddef.h>

/* The pointer to a wrapper's next definition, typed after its PMPI twin
 * (the same signature) and starting there. */
#define ADT_MPI_NEXT_DEFINE(symbol, pmpi) static _Atomic(__typeof__(&pmpi)) adt_mpi_next_##symbol = &pmpi

/* Hot path: the next definition of symbol. */
#define ADT_MPI_NEXT(symbol) atomic_load_explicit(&adt_mpi_next_##symbol, memory_order_relaxed)

/* Start-up: points symbol's wrapper at the next definition, if any. */
#define ADT_MPI_NEXT_FIND(symbol, pmpi)                                                                          \
    do {                                                                                                         \
        void *found = adt_mpi_next_symbol(#symbol);                                                              \
        if (found)                                                                                               \
            atomic_store_explicit(&adt_mpi_next_##symbol, (__typeof__(&pmpi))found, memory_order_relaxed);     \
    } while (0)

/* The next definition of symbol after libadaptrace, NULL where there is
 * none. Start-up only (dlsym). */
void *adt_mpi_next_symbol(const char *symbol);

/* Resolves every wrapper's next definition, once; called by the library
 * constructor and by MPI_Init's wrappers before they pass the call on. */
void adt_mpi_next_resolve(void);

/* Slow path (MPI_Init, its absence): the file of the object that holds
 * the next definition of MPI_Init, "" when it is the MPI library's own
 * (nothing stacked behind adaptrace). */
void adt_mpi_next_init_holder(char *file, size_t size);

/* The file of the object whose MPI_Init the loader finds first when it is
 * not libadaptrace's (a tool preloaded ahead of adaptrace, the executable),
 * "" otherwise; found at start-up. */
const char *adt_mpi_next_ahead(void);

/* Generated with the wrappers of each binding (wrappers_c.c,
 * wrappers_fortran.c, wrappers_f08.c): ADT_MPI_NEXT_FIND of each of them. */
void adt_mpi_next_find_c(void);
void adt_mpi_next_find_fortran(void);
void adt_mpi_next_find_f08(void);

#endif
