/*
 * End of run: instruction addresses of the calling-context tree become
 * regions (one per function name and module, paradigm SAMPLING, role
 * FUNCTION) and source code locations (file:line), and the tree goes to
 * the definitions.
 *
 * libdw reads the process's modules from /proc/self/maps; each module's
 * load bias is applied by dwfl, which handles address-space
 * randomisation. A return address is looked up at address - 1 (the call
 * instruction, not the one after it, which may belong to the next line or
 * even the next function); a sample's leaf is the interrupted instruction
 * itself. Where libdw knows no symbol, dladdr (the dynamic symbol table)
 * is tried; a C++ name is demangled when the process has __cxa_demangle
 * (it does whenever it runs C++).
 */
#include "sampler/resolve.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "sampler/sampler_internal.h"

typedef char *(*demangle_fn)(const char *mangled, char *output, size_t *length, int *status);

struct adt_resolver {
    Dwfl *dwfl;
    demangle_fn demangle;
};

static const Dwfl_Callbacks proc_callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
};

adt_resolver *adt_resolver_open(void)
{
    adt_resolver *resolver = calloc(1, sizeof *resolver);
    if (resolver == NULL)
        return NULL;
    resolver->demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    resolver->dwfl = dwfl_begin(&proc_callbacks);
    if (resolver->dwfl != NULL) {
        dwfl_report_begin(resolver->dwfl);
        if (dwfl_linux_proc_report(resolver->dwfl, getpid()) != 0 ||
            dwfl_report_end(resolver->dwfl, NULL, NULL) != 0) {
            adt_log("calling contexts: libdw cannot read the modules of process %d (%s); using dladdr only",
                    (int)getpid(), dwfl_errmsg(-1));
            dwfl_end(resolver->dwfl);
            resolver->dwfl = NULL;
        }
    }
    return resolver;
}

void adt_resolver_close(adt_resolver *resolver)
{
    if (resolver == NULL)
        return;
    if (resolver->dwfl != NULL)
        dwfl_end(resolver->dwfl);
    free(resolver);
}

uintptr_t adt_resolver_key_address(uint64_t key)
{
    uintptr_t address = (uintptr_t)(key & ADT_CCT_KEY_ADDRESS_MASK);
    return (key & ADT_CCT_KEY_EXACT) ? address : address - 1;
}

void adt_resolver_lookup(adt_resolver *resolver, uintptr_t address, adt_symbol *symbol)
{
    const char *name = NULL;
    int line = 0;
    symbol->module = NULL;
    symbol->file = NULL;
    Dwfl_Module *module = resolver->dwfl != NULL ? dwfl_addrmodule(resolver->dwfl, address) : NULL;
    if (module != NULL) {
        symbol->module = dwfl_module_info(module, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
        name = dwfl_module_addrname(module, address);
        Dwfl_Line *source = dwfl_module_getsrc(module, address);
        if (source != NULL)
            symbol->file = dwfl_lineinfo(source, NULL, &line, NULL, NULL, NULL);
    }
    Dl_info info;
    if ((name == NULL || symbol->module == NULL) && dladdr((void *)address, &info) != 0) {
        if (name == NULL)
            name = info.dli_sname;
        if (symbol->module == NULL)
            symbol->module = info.dli_fname;
    }
    if (symbol->module == NULL)
        symbol->module = "[unknown module]";
    symbol->line = symbol->file != NULL && line > 0 ? (uint32_t)line : 0;
    if (name == NULL) {
        snprintf(symbol->symbol, sizeof symbol->symbol, "0x%" PRIxPTR, address);
        name = symbol->symbol;
    } else {
        snprintf(symbol->symbol, sizeof symbol->symbol, "%s", name);
    }
    char *demangled = NULL;
    if (resolver->demangle != NULL && strncmp(name, "_Z", 2) == 0) {
        int status = -1;
        demangled = resolver->demangle(name, NULL, NULL, &status);
        if (status != 0) {
            free(demangled);
            demangled = NULL;
        }
    }
    snprintf(symbol->function, sizeof symbol->function, "%s", demangled != NULL ? demangled : symbol->symbol);
    free(demangled);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

static void define_address(adt_resolver *resolver, adt_defs *defs, uint64_t key, adt_cc_node *node)
{
    adt_symbol symbol;
    adt_resolver_lookup(resolver, adt_resolver_key_address(key), &symbol);
    /* The module's file name in the canonical name keeps functions of the
     * same name in different modules apart; identical definitions merge,
     * so every address of one function yields the same region. */
    char canonical[sizeof symbol.symbol + 256];
    snprintf(canonical, sizeof canonical, "%s@%s", symbol.symbol, base_name(symbol.module));
    node->region = adt_defs_region(defs, symbol.function, canonical, ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING,
                                   symbol.module, 0, 0);
    node->source_location =
        symbol.line > 0 ? adt_defs_source_location(defs, symbol.file, symbol.line) : ADT_UNDEFINED_ID;
}

int adt_sampler_resolve(adt_defs *defs)
{
    uint32_t count = adt_cct_count(&adt_sampler.tree);
    adt_cc_node *table = calloc(count, sizeof *table);
    adt_resolver *resolver = adt_resolver_open();
    if (table == NULL || resolver == NULL) {
        adt_log("calling contexts: out of memory for %u nodes", count);
        free(table);
        adt_resolver_close(resolver);
        return -1;
    }
    for (uint32_t id = 0; id < count; ++id) {
        const adt_cct_node *source = &adt_sampler.tree.nodes[id];
        adt_cc_node *node = &table[id];
        node->parent = source->parent;
        node->source_location = ADT_UNDEFINED_ID;
        if (id == ADT_CCT_NODE_FULL)
            node->region = adt_defs_region(defs, "[adaptrace: calling-context tree full]", "adaptrace@cct_full",
                                           ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING, "", 0, 0);
        else if (source->key & ADT_CCT_KEY_REGION)
            node->region = (uint32_t)(source->key & UINT32_MAX);
        else
            define_address(resolver, defs, source->key, node);
    }
    adt_resolver_close(resolver);
    int status = adt_defs_set_calling_contexts(defs, table, count);
    free(table);
    return status;
}
