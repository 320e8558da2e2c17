/*
 * Address resolution (normal context, end of run): instruction address →
 * function, module, file:line. Used by adt_sampler_write_definitions and
 * by the tests.
 */
#ifndef ADAPTRACE_SAMPLER_RESOLVE_H
#define ADAPTRACE_SAMPLER_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

typedef struct adt_resolver adt_resolver;

typedef struct adt_symbol {
    /* demangled where possible, without a symbol version (@@GLIBC_2.34) */
    char function[1024];
    /* as in the symbol table; without one, "module+0xOFFSET" (the file's
     * base name and the address in the file, the same on every rank and
     * run), "0x…" outside every known module */
    char symbol[1024];
    const char *module;   /* path of the executable or library */
    const char *file;     /* source file, or NULL */
    uint32_t line;        /* 0 when unknown */
} adt_symbol;

/* Reads the modules of this process. Never NULL unless out of memory; a
 * process libdw cannot read falls back to dladdr (reported once). */
adt_resolver *adt_resolver_open(void);
/* The modules of a process that has ended, from the text of its
 * /proc/<pid>/maps saved at its end: the files are read from disk. */
adt_resolver *adt_resolver_open_saved(const char *maps, size_t length);
/* address: the instruction to describe (callers pass return address - 1).
 * The strings stay valid until adt_resolver_close. */
void adt_resolver_lookup(adt_resolver *resolver, uintptr_t address, adt_symbol *symbol);
void adt_resolver_close(adt_resolver *resolver);

/* The instruction an interned key stands for (the leaf's own address, or
 * the call before a return address). */
uintptr_t adt_resolver_key_address(uint64_t key);

#endif
