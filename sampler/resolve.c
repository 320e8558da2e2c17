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
 *
 * A module whose file was deleted or replaced during the run (a rebuild
 * unlinks the old file and writes a new one; /proc/self/maps then says
 * "(deleted)") is read from /proc/self/map_files/<range>, which opens the
 * file that is actually mapped. Where that cannot be opened, its functions
 * keep their addresses and the end of the run says so once per module.
 *
 * The modules of a process that has ended (saved maps: adaptrace-recover,
 * adaptrace-analyzer) are read from their files; its vDSO, which has no
 * file, is read as this process's own (the same kernel's code).
 */
#include "sampler/resolve.h"

#include <dlfcn.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "core/core.h"
#include "sampler/sampler_internal.h"

typedef char *(*demangle_fn)(const char *mangled, char *output, size_t *length, int *status);

#define DELETED_SUFFIX " (deleted)"

/* A mapping of a file that is no longer at its path. */
typedef struct deleted_mapping {
    uintptr_t start, end;
    char path[512]; /* without the suffix */
} deleted_mapping;

struct adt_resolver {
    Dwfl *dwfl;
    demangle_fn demangle;
    deleted_mapping *deleted;
    size_t deleted_count;
    bool saved; /* the modules of a process that is gone: dladdr would look in this one */
    /* A saved process's vDSO (the kernel's code mapped into it, no file
     * on disk): its range, looked up in this process's own vDSO (the same
     * kernel's) through `own`, opened at the first such address. */
    uintptr_t vdso_start, vdso_end;
    adt_resolver *own;
};

/* The resolver whose modules dwfl is reporting (one at a time, at the end
 * of the run). */
static adt_resolver *reporting;

/* The mappings of deleted files in /proc/self/maps. */
static void read_deleted_mappings(adt_resolver *resolver)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (maps == NULL)
        return;
    char line[1024];
    size_t capacity = 0;
    while (fgets(line, sizeof line, maps) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        size_t length = strlen(line), suffix = sizeof DELETED_SUFFIX - 1;
        char *path = strchr(line, '/');
        unsigned long start, end;
        if (path == NULL || length < suffix || strcmp(line + length - suffix, DELETED_SUFFIX) != 0 ||
            sscanf(line, "%lx-%lx", &start, &end) != 2)
            continue;
        line[length - suffix] = '\0';
        if (resolver->deleted_count == capacity) {
            size_t grown_capacity = capacity ? 2 * capacity : 8;
            deleted_mapping *grown = realloc(resolver->deleted, grown_capacity * sizeof *grown);
            if (grown == NULL)
                break;
            resolver->deleted = grown;
            capacity = grown_capacity;
        }
        deleted_mapping *mapping = &resolver->deleted[resolver->deleted_count++];
        mapping->start = start;
        mapping->end = end;
        snprintf(mapping->path, sizeof mapping->path, "%s", path);
    }
    fclose(maps);
}

/* dwfl's find_elf: a module whose file was deleted is opened through the
 * mapping itself; every other module the usual way. */
static int find_mapped_elf(Dwfl_Module *module, void **userdata, const char *module_name, Dwarf_Addr base,
                           char **file_name, Elf **elf)
{
    size_t suffix = sizeof DELETED_SUFFIX - 1, name_length = strlen(module_name);
    if (name_length >= suffix && strcmp(module_name + name_length - suffix, DELETED_SUFFIX) == 0)
        name_length -= suffix;
    for (size_t i = 0; reporting != NULL && i < reporting->deleted_count; i++) {
        const deleted_mapping *mapping = &reporting->deleted[i];
        if (strlen(mapping->path) != name_length || strncmp(mapping->path, module_name, name_length) != 0)
            continue;
        char mapped[64];
        snprintf(mapped, sizeof mapped, "/proc/self/map_files/%lx-%lx", (unsigned long)mapping->start,
                 (unsigned long)mapping->end);
        int fd = open(mapped, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            adt_log("calling contexts: %s was deleted or replaced during the run, and the file mapped from it "
                    "cannot be opened (%s: %m); its functions are named by address",
                    mapping->path, mapped);
            break;
        }
        *file_name = strdup(mapped);
        *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        return fd;
    }
    return dwfl_linux_proc_find_elf(module, userdata, module_name, base, file_name, elf);
}

static const Dwfl_Callbacks proc_callbacks = {
    .find_elf = find_mapped_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
};

adt_resolver *adt_resolver_open(void)
{
    adt_resolver *resolver = calloc(1, sizeof *resolver);
    if (resolver == NULL)
        return NULL;
    resolver->demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    read_deleted_mappings(resolver);
    reporting = resolver;
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

/* A saved process's modules: the files named in its maps are opened from
 * disk (they must still be there; /proc of that process is gone). */
static const Dwfl_Callbacks saved_callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
};

/* The [vdso] line of a saved maps text, if any. */
static void find_saved_vdso(adt_resolver *resolver, const char *maps, size_t length)
{
    static const char tag[] = "[vdso]";
    for (const char *line = maps; line < maps + length;) {
        const char *end = memchr(line, '\n', (size_t)(maps + length - line));
        size_t line_length = end != NULL ? (size_t)(end - line) : (size_t)(maps + length - line);
        unsigned long start, stop;
        if (line_length >= sizeof tag - 1 && memcmp(line + line_length - (sizeof tag - 1), tag, sizeof tag - 1) == 0 &&
            sscanf(line, "%lx-%lx", &start, &stop) == 2) {
            resolver->vdso_start = start;
            resolver->vdso_end = stop;
            return;
        }
        line += line_length + 1;
    }
}

adt_resolver *adt_resolver_open_saved(const char *maps, size_t length)
{
    adt_resolver *resolver = calloc(1, sizeof *resolver);
    if (resolver == NULL)
        return NULL;
    resolver->demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    resolver->saved = true;
    FILE *text = length > 0 ? fmemopen((void *)maps, length, "r") : NULL;
    resolver->dwfl = text != NULL ? dwfl_begin(&saved_callbacks) : NULL;
    if (resolver->dwfl != NULL) {
        dwfl_report_begin(resolver->dwfl);
        if (dwfl_linux_proc_maps_report(resolver->dwfl, text) != 0 ||
            dwfl_report_end(resolver->dwfl, NULL, NULL) != 0) {
            adt_log("calling contexts: libdw cannot read the saved module list (%s); functions are named by address",
                    dwfl_errmsg(-1));
            dwfl_end(resolver->dwfl);
            resolver->dwfl = NULL;
        }
    }
    if (text != NULL)
        fclose(text);
    find_saved_vdso(resolver, maps, length);
    return resolver;
}

void adt_resolver_close(adt_resolver *resolver)
{
    if (resolver == NULL)
        return;
    if (resolver->dwfl != NULL)
        dwfl_end(resolver->dwfl);
    adt_resolver_close(resolver->own);
    if (reporting == resolver)
        reporting = NULL;
    free(resolver->deleted);
    free(resolver);
}

uintptr_t adt_resolver_key_address(uint64_t key)
{
    uintptr_t address = (uintptr_t)(key & ADT_CCT_KEY_ADDRESS_MASK);
    return (key & ADT_CCT_KEY_EXACT) ? address : address - 1;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* The length of name without a symbol version ("clock_gettime@@GLIBC_2.17",
 * "memcpy@GLIBC_2.2.5"): noise in a profile, though the archive's
 * canonical name keeps it. */
static size_t unversioned_length(const char *name)
{
    const char *at = strchr(name, '@');
    if (at == NULL || at == name)
        return strlen(name);
    const char *version = at + (at[1] == '@' ? 2 : 1);
    if (*version == '\0' || version[strspn(version, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.")])
        return strlen(name);
    return (size_t)(at - name);
}

/* The start of the function holding address, from the call-frame
 * information that even a stripped file keeps (.eh_frame, for unwinding):
 * its entry's first address. address itself where there is none. */
static uintptr_t function_start(Dwfl_Module *module, uintptr_t address)
{
    Dwarf_Addr bias = 0;
    Dwarf_CFI *cfi = module != NULL ? dwfl_module_eh_cfi(module, &bias) : NULL;
    Dwarf_Frame *frame = NULL;
    if (cfi == NULL || dwarf_cfi_addrframe(cfi, address - bias, &frame) != 0)
        return address;
    Dwarf_Addr start = 0, end = 0;
    bool known = dwarf_frame_info(frame, &start, &end, NULL) >= 0;
    free(frame);
    return known ? (uintptr_t)(start + bias) : address;
}

void adt_resolver_lookup(adt_resolver *resolver, uintptr_t address, adt_symbol *symbol)
{
    uintptr_t own_vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    if (resolver->saved && address >= resolver->vdso_start && address < resolver->vdso_end && own_vdso != 0) {
        if (resolver->own == NULL)
            resolver->own = adt_resolver_open();
        if (resolver->own != NULL) {
            adt_resolver_lookup(resolver->own, address - resolver->vdso_start + own_vdso, symbol);
            return;
        }
    }
    const char *name = NULL;
    int line = 0;
    symbol->module = NULL;
    symbol->file = NULL;
    /* Where the module's file was loaded (its load bias): an address less
     * it is the file's own address, the same in every process whatever
     * address-space randomisation did. */
    bool loaded_known = false;
    uintptr_t load_bias = 0;
    Dwfl_Module *module = resolver->dwfl != NULL ? dwfl_addrmodule(resolver->dwfl, address) : NULL;
    if (module != NULL) {
        symbol->module = dwfl_module_info(module, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
        name = dwfl_module_addrname(module, address);
        Dwfl_Line *source = dwfl_module_getsrc(module, address);
        if (source != NULL)
            symbol->file = dwfl_lineinfo(source, NULL, &line, NULL, NULL, NULL);
        Dwarf_Addr bias = 0;
        loaded_known = dwfl_module_getelf(module, &bias) != NULL;
        load_bias = (uintptr_t)bias;
    }
    Dl_info info;
    if (!resolver->saved && (name == NULL || symbol->module == NULL) && dladdr((void *)address, &info) != 0) {
        if (name == NULL)
            name = info.dli_sname;
        if (symbol->module == NULL)
            symbol->module = info.dli_fname;
        if (!loaded_known && info.dli_fbase != NULL) {
            load_bias = (uintptr_t)info.dli_fbase;
            loaded_known = true;
        }
    }
    symbol->line = symbol->file != NULL && line > 0 ? (uint32_t)line : 0;
    if (name != NULL)
        snprintf(symbol->symbol, sizeof symbol->symbol, "%s", name);
    else if (symbol->module != NULL && loaded_known)
        snprintf(symbol->symbol, sizeof symbol->symbol, "%s+0x%" PRIxPTR, base_name(symbol->module),
                 function_start(module, address) - load_bias);
    else
        snprintf(symbol->symbol, sizeof symbol->symbol, "0x%" PRIxPTR, address);
    if (symbol->module == NULL)
        symbol->module = "[unknown module]";
    if (name == NULL)
        name = symbol->symbol;
    char *demangled = NULL;
    if (resolver->demangle != NULL && strncmp(name, "_Z", 2) == 0) {
        int status = -1;
        demangled = resolver->demangle(name, NULL, NULL, &status);
        if (status != 0) {
            free(demangled);
            demangled = NULL;
        }
    }
    if (demangled != NULL)
        snprintf(symbol->function, sizeof symbol->function, "%s", demangled);
    else
        snprintf(symbol->function, sizeof symbol->function, "%.*s", (int)unversioned_length(symbol->symbol),
                 symbol->symbol);
    free(demangled);
}

/* The region of the reserved node (samples whose path did not fit). */
#define TREE_FULL_FRAME "[adaptrace: calling-context tree full]"

/* Whose code a frame is, for the fold of the measurement's frames. */
typedef enum frame_owner {
    OWNER_OTHER,       /* the application, libc, MPI, ... */
    OWNER_ADAPTRACE,   /* libadaptrace.so */
    OWNER_DEPENDENCY,  /* what only adaptrace calls: libunwind, libdw, libelf, PAPI */
} frame_owner;

/* Known by the module's file name, so that the saved modules of a process
 * that is gone tell it too. */
static frame_owner owner_of(const char *module)
{
    static const char *const dependencies[] = {"libunwind", "libdw", "libelf", "libpapi"};
    const char *name = base_name(module);
    if (strncmp(name, "libadaptrace.so", strlen("libadaptrace.so")) == 0)
        return OWNER_ADAPTRACE;
    for (size_t i = 0; i < sizeof dependencies / sizeof dependencies[0]; i++)
        if (strncmp(name, dependencies[i], strlen(dependencies[i])) == 0)
            return OWNER_DEPENDENCY;
    return OWNER_OTHER;
}

/* Whether a frame of owner is folded into adaptrace's own frame. */
static bool is_measurement(frame_owner owner, bool below_measurement)
{
    return owner == OWNER_ADAPTRACE || (below_measurement && owner == OWNER_DEPENDENCY);
}

/* Defines node's region and source location from its address; whose code
 * the address is. */
static frame_owner define_address(adt_resolver *resolver, adt_defs *defs, uint64_t key, adt_cc_node *node)
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
    return owner_of(symbol.module);
}

/* Defines the calling contexts of a tree's nodes (count of them) in defs.
 * A node of a saved tree may have been caught half-written: a parent that
 * does not come before it makes it a root.
 *
 * adaptrace's own frames (a wrapper at work before or after its MPI call,
 * the end of the run inside MPI_Finalize), one after the other on a path,
 * with the frames of what only adaptrace calls below them (libunwind,
 * libdw, PAPI), are one frame, ADT_MEASUREMENT_FRAME, where the
 * application entered adaptrace: such a node takes the measurement's
 * region, no source location, and the parent of the first of them on its
 * path, so that all of them are one calling context once the definitions
 * are unified (identical definitions merge). Any other frame below them
 * stays itself: the application's thread function below adaptrace's
 * thread start, MPI below a wrapper, an MPI call from a callback the MPI
 * library runs. */
static int define_contexts(adt_defs *defs, const adt_cct_node *nodes, uint32_t count, adt_resolver *resolver)
{
    adt_cc_node *table = calloc(count ? count : 1, sizeof *table);
    bool *measurement = calloc(count ? count : 1, sizeof *measurement);
    if (table == NULL || measurement == NULL || resolver == NULL) {
        adt_log("calling contexts: out of memory for %u nodes", count);
        free(table);
        free(measurement);
        return -1;
    }
    uint32_t measurement_region = adt_defs_region(defs, ADT_MEASUREMENT_FRAME, "adaptrace@measurement",
                                                  ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING, "", 0, 0);
    for (uint32_t id = 0; id < count; ++id) {
        const adt_cct_node *source = &nodes[id];
        adt_cc_node *node = &table[id];
        node->parent = source->parent < id ? source->parent : ADT_UNDEFINED_ID;
        node->source_location = ADT_UNDEFINED_ID;
        bool below_measurement = node->parent != ADT_UNDEFINED_ID && measurement[node->parent];
        frame_owner owner = OWNER_OTHER;
        if (id == ADT_CCT_NODE_FULL)
            node->region = adt_defs_region(defs, TREE_FULL_FRAME, "adaptrace@cct_full",
                                           ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING, "", 0, 0);
        else if (source->key & ADT_CCT_KEY_REGION)
            node->region = (uint32_t)(source->key & UINT32_MAX);
        else
            owner = define_address(resolver, defs, source->key, node);
        measurement[id] = is_measurement(owner, below_measurement);
        if (measurement[id]) {
            node->region = measurement_region;
            node->source_location = ADT_UNDEFINED_ID;
            if (below_measurement)
                node->parent = table[node->parent].parent;
        }
    }
    int status = adt_defs_set_calling_contexts(defs, table, count);
    free(table);
    free(measurement);
    return status;
}

int adt_sampler_resolve(adt_defs *defs)
{
    adt_resolver *resolver = adt_resolver_open();
    int status = define_contexts(defs, adt_sampler.tree.nodes, adt_cct_count(&adt_sampler.tree), resolver);
    adt_resolver_close(resolver);
    return status;
}

const void *adt_sampler_tree_image(size_t *bytes)
{
    *bytes = adt_sampler.tree.nodes != NULL ? (size_t)adt_cct_count(&adt_sampler.tree) * sizeof(adt_cct_node) : 0;
    return adt_sampler.tree.nodes;
}

int adt_sampler_define_saved_contexts(adt_defs *defs, const void *tree_image, size_t bytes, const char *maps,
                                      size_t maps_length)
{
    uint32_t count = (uint32_t)(bytes / sizeof(adt_cct_node));
    adt_cct_node *nodes = malloc(count ? (size_t)count * sizeof *nodes : 1);
    adt_resolver *resolver = adt_resolver_open_saved(maps, maps_length);
    int status = -1;
    if (nodes != NULL) {
        if (count > 0)
            memcpy(nodes, tree_image, (size_t)count * sizeof *nodes);
        status = define_contexts(defs, nodes, count, resolver);
    }
    free(nodes);
    adt_resolver_close(resolver);
    return status;
}

struct adt_sampler_namer {
    adt_resolver *resolver;
    adt_symbol symbol;
};

adt_sampler_namer *adt_sampler_namer_open(const char *maps, size_t length)
{
    adt_sampler_namer *namer = malloc(sizeof *namer);
    if (namer == NULL)
        return NULL;
    namer->resolver = adt_resolver_open_saved(maps, length);
    if (namer->resolver == NULL) {
        free(namer);
        return NULL;
    }
    return namer;
}

void adt_sampler_namer_close(adt_sampler_namer *namer)
{
    if (namer == NULL)
        return;
    adt_resolver_close(namer->resolver);
    free(namer);
}

/* define_contexts' naming, for one node of a tree streamed by another
 * process. */
const char *adt_sampler_frame_name(adt_sampler_namer *namer, uint32_t id, uint64_t key, bool below_measurement,
                                   bool *measurement, uint32_t *region)
{
    *measurement = false;
    if (id == ADT_CCT_NODE_FULL)
        return TREE_FULL_FRAME;
    if (key & ADT_CCT_KEY_REGION) {
        *region = (uint32_t)(key & UINT32_MAX);
        return NULL;
    }
    adt_resolver_lookup(namer->resolver, adt_resolver_key_address(key), &namer->symbol);
    *measurement = is_measurement(owner_of(namer->symbol.module), below_measurement);
    return *measurement ? ADT_MEASUREMENT_FRAME : namer->symbol.function;
}
