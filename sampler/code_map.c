/*
 * The code map: the loaded objects and their unwind tables, handed to
 * libunwind so that unwinding never needs the dynamic loader.
 *
 * Execution context: normal code only (start-up, thread start, the MPI
 * wrappers' calling-context unwind, the interposed dlclose). Nothing here
 * runs in a signal handler; the handler's side (reading the map) is in
 * paths.c.
 *
 * Why: on a miss in its caches, libunwind looks up the unwind table of an
 * address with dl_iterate_phdr, which takes the loader's lock (and blocks
 * every signal meanwhile). A sample that interrupts dlopen, dlclose,
 * dl_iterate_phdr or anything else that holds that lock (or a lock that
 * a loader-holding thread waits for, malloc's for instance) then waits
 * forever in its own handler. libunwind consults its list of dynamically
 * registered unwind tables (_U_dyn_register) before it asks the loader,
 * so every loaded object's .eh_frame_hdr search table is registered there,
 * behind one catch-all entry of an unknown format registered first (the
 * list is searched from its head, registration inserts at the head):
 * an address in no registered object hits the catch-all, whose lookup
 * fails with -UNW_EINVAL instead of falling through to the loader. The
 * unwinding then stops at that frame; the handler notices (the outermost
 * frame is in no known object), counts the path as cut and marks the map
 * stale, and the next refresh point (an MPI call, a new thread, a
 * dlclose) rebuilds it.
 *
 * Changing the map is exclusive: the writer raises adt_code_map_changing
 * and waits until no thread is unwinding (each thread's `unwinding` flag);
 * a handler that sees the flag raised skips its sample (counted) instead
 * of waiting. The same protects dlclose: the objects it unmaps may hold
 * the tables a handler reads, so the whole real dlclose runs inside an
 * exclusive section and the map is rebuilt before it ends.
 *
 * No lock of adaptrace is ever held while calling into the loader
 * (dl_iterate_phdr, the real dlclose): the loader may call application
 * code (constructors, destructors, dl_iterate_phdr callbacks) that comes
 * back here.
 */
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "sampler/sampler_internal.h"

_Atomic(adt_code_table *) adt_code_map_table;
_Atomic int adt_code_map_changing;
_Atomic int adt_code_map_stale;

/* Any format that libunwind does not know: its lookup fails with
 * -UNW_EINVAL, which stops the step instead of asking the loader. */
#define CATCH_ALL_FORMAT (-1)
static unw_dyn_info_t catch_all = {.start_ip = 0, .end_ip = ~(unw_word_t)0, .format = CATCH_ALL_FORMAT};

/* Serialises the writers (table swaps); never held across a loader call. */
static pthread_mutex_t writer_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int map_active;

/* ---- reading the loaded objects --------------------------------------- */

enum {
    DW_EH_PE_absptr = 0x00,
    DW_EH_PE_udata4 = 0x03,
    DW_EH_PE_udata8 = 0x04,
    DW_EH_PE_sdata4 = 0x0b,
    DW_EH_PE_sdata8 = 0x0c,
    DW_EH_PE_datarel_sdata4 = 0x3b,
    DW_EH_PE_omit = 0xff,
};

/* Size of a value in the given pointer encoding (its low nibble); 0 when
 * the form is not one a linker writes into .eh_frame_hdr. */
static size_t encoded_size(unsigned encoding)
{
    switch (encoding & 0x0f) {
    case DW_EH_PE_absptr:
    case DW_EH_PE_udata8:
    case DW_EH_PE_sdata8:
        return 8;
    case DW_EH_PE_udata4:
    case DW_EH_PE_sdata4:
        return 4;
    default:
        return 0;
    }
}

/* Fills object->unwind from the object's .eh_frame_hdr (the layout of the
 * LSB: version, three encodings, the encoded .eh_frame pointer, the FDE
 * count, then the binary search table of (initial location, FDE) pairs,
 * both relative to the header). Only the table form that libunwind
 * searches (datarel sdata4 entries) is registered. */
static bool read_search_table(adt_code_object *object, const unsigned char *header)
{
    unsigned version = header[0], frame_encoding = header[1], count_encoding = header[2],
             table_encoding = header[3];
    size_t frame_size = encoded_size(frame_encoding), count_size = encoded_size(count_encoding);
    if (version != 1 || frame_encoding == DW_EH_PE_omit || frame_size == 0 || count_size == 0 ||
        (count_encoding & 0x70) != 0 || table_encoding != DW_EH_PE_datarel_sdata4)
        return false;
    const unsigned char *count_field = header + 4 + frame_size;
    uint64_t fde_count = 0;
    if (count_size == 4) {
        uint32_t value;
        memcpy(&value, count_field, sizeof value);
        fde_count = value;
    } else {
        memcpy(&fde_count, count_field, sizeof fde_count);
    }
    if (fde_count == 0)
        return false;
    const unsigned char *table = count_field + count_size;
    memset(&object->unwind, 0, sizeof object->unwind);
    object->unwind.start_ip = object->start;
    object->unwind.end_ip = object->end;
    object->unwind.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    object->unwind.u.rti.segbase = (unw_word_t)(uintptr_t)header;
    object->unwind.u.rti.table_data = (unw_word_t)(uintptr_t)table;
    /* In words: each entry is two 32-bit offsets, one unw_word_t. */
    object->unwind.u.rti.table_len = (unw_word_t)(fde_count * 2 * sizeof(int32_t) / sizeof(unw_word_t));
    return true;
}

typedef struct collection {
    adt_code_table *table;
    size_t capacity;
    unsigned long long adds, subs;
    bool out_of_memory;
} collection;

/* The loader's counts of objects added and removed so far (the same in
 * every callback of one dl_iterate_phdr). */
static void note_loader_counters(const struct dl_phdr_info *info, size_t size, collection *into)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        into->adds = info->dlpi_adds;
        into->subs = info->dlpi_subs;
    }
}

static int collect_object(struct dl_phdr_info *info, size_t size, void *data)
{
    collection *into = data;
    note_loader_counters(info, size, into);
    uintptr_t start = UINTPTR_MAX, end = 0;
    const unsigned char *header = NULL;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        uintptr_t address = info->dlpi_addr + segment->p_vaddr;
        if (segment->p_type == PT_LOAD) {
            if (address < start)
                start = address;
            if (address + segment->p_memsz > end)
                end = address + segment->p_memsz;
        } else if (segment->p_type == PT_GNU_EH_FRAME) {
            header = (const unsigned char *)address;
        }
    }
    if (start >= end)
        return 0;
    if (into->table == NULL || into->table->count == into->capacity) {
        size_t capacity = into->capacity ? 2 * into->capacity : 64;
        adt_code_table *grown = realloc(into->table, sizeof *grown + capacity * sizeof grown->objects[0]);
        if (grown == NULL) {
            into->out_of_memory = true;
            return 1;
        }
        if (into->table == NULL)
            grown->count = 0;
        into->table = grown;
        into->capacity = capacity;
    }
    adt_code_object *object = &into->table->objects[into->table->count++];
    object->start = start;
    object->end = end;
    object->has_table = header != NULL && read_search_table(object, header);
    return 0;
}

static int compare_objects(const void *a, const void *b)
{
    const adt_code_object *left = a, *right = b;
    return left->start < right->start ? -1 : left->start > right->start;
}

/* The loaded objects now, sorted by address, with the loader's counters
 * of that moment; NULL when out of memory. */
static adt_code_table *collect_objects(void)
{
    collection into = {0};
    dl_iterate_phdr(collect_object, &into);
    if (into.out_of_memory || into.table == NULL) {
        free(into.table);
        return NULL;
    }
    qsort(into.table->objects, into.table->count, sizeof into.table->objects[0], compare_objects);
    into.table->adds = into.adds;
    into.table->subs = into.subs;
    return into.table;
}

static int read_counters(struct dl_phdr_info *info, size_t size, void *data)
{
    note_loader_counters(info, size, data);
    return 1; /* one object is enough */
}

/* ---- exclusive sections ------------------------------------------------ */

/* Raises the flag, then waits for the threads that were already unwinding
 * (a handler or an MPI call's unwind, neither of which ever waits, so this
 * ends). seq_cst on both sides: a thread either sees the flag, or its
 * `unwinding` store is seen here. */
static void begin_change(void)
{
    atomic_fetch_add(&adt_code_map_changing, 1);
    for (adt_sampler_thread *thread = atomic_load(&adt_sampler.threads); thread != NULL; thread = thread->next)
        while (atomic_load(&thread->unwinding))
            sched_yield();
}

static void end_change(void)
{
    atomic_fetch_sub(&adt_code_map_changing, 1);
}

/* Cancels every registration of the installed table and installs none
 * (inside an exclusive section, writer_lock held): unwinding then stops in
 * the handler's own frames, and no table of an unmapped object is read. */
static adt_code_table *retire_all(void)
{
    adt_code_table *current = atomic_exchange(&adt_code_map_table, NULL);
    if (current != NULL)
        for (size_t i = 0; i < current->count; i++)
            if (current->objects[i].has_table)
                _U_dyn_cancel(&current->objects[i].unwind);
    return current;
}

/* Swaps in `fresh` (inside an exclusive section, writer_lock held) unless
 * the installed table is as new: two refreshes may collect concurrently,
 * and only the later snapshot of the loader's counters may win. Returns
 * the table to free. */
static adt_code_table *install(adt_code_table *fresh)
{
    adt_code_table *current = atomic_load(&adt_code_map_table);
    if (current != NULL && fresh->adds + fresh->subs <= current->adds + current->subs)
        return fresh;
    retire_all();
    /* Registered from the last to the first: each goes to the head of the
     * list, which then runs in address order, the catch-all last. */
    for (size_t i = fresh->count; i-- > 0;)
        if (fresh->objects[i].has_table)
            _U_dyn_register(&fresh->objects[i].unwind);
    atomic_store(&adt_code_map_table, fresh);
    /* Cached frame descriptions of unloaded code must not describe code
     * loaded at the same address later. */
    unw_flush_cache(unw_local_addr_space, 0, 0);
    return current;
}

/* Collects and installs. `exclusive`: the caller already holds an
 * exclusive section (dlclose). */
static void rebuild(bool exclusive)
{
    adt_code_table *fresh = collect_objects();
    pthread_mutex_lock(&writer_lock);
    if (!exclusive)
        begin_change();
    adt_code_table *retired;
    if (fresh != NULL) {
        atomic_store(&adt_code_map_stale, 0);
        retired = install(fresh);
    } else {
        /* Out of memory: the old table may name objects that are gone. */
        retired = retire_all();
        atomic_store(&adt_code_map_stale, 1);
    }
    if (!exclusive)
        end_change();
    pthread_mutex_unlock(&writer_lock);
    /* No thread reads a table outside its `unwinding` window, and none
     * was open during the swap. */
    free(retired);
}

/* ---- life cycle --------------------------------------------------------- */

int adt_code_map_init(void)
{
    static bool catch_all_registered;
    if (!catch_all_registered) {
        _U_dyn_register(&catch_all);
        catch_all_registered = true;
    }
    rebuild(false);
    if (atomic_load(&adt_code_map_table) == NULL) {
        adt_log("sampler: out of memory for the table of loaded objects");
        return -1;
    }
    atomic_store(&map_active, 1);
    return 0;
}

void adt_code_map_refresh_if_stale(void)
{
    if (!atomic_load_explicit(&adt_code_map_stale, memory_order_relaxed) || !atomic_load(&map_active))
        return;
    /* A cut path may come from code that is in no object at all (JIT code):
     * rebuild only when the loader's counters moved. */
    collection counters = {0};
    dl_iterate_phdr(read_counters, &counters);
    adt_code_table *current = atomic_load(&adt_code_map_table);
    if (current != NULL && counters.adds == current->adds && counters.subs == current->subs) {
        atomic_store(&adt_code_map_stale, 0);
        return;
    }
    rebuild(false);
}

void adt_code_map_shutdown(void)
{
    atomic_store(&map_active, 0);
    pthread_mutex_lock(&writer_lock);
    begin_change();
    adt_code_table *current = retire_all();
    end_change();
    pthread_mutex_unlock(&writer_lock);
    free(current);
}

void adt_code_map_forget_in_child(void)
{
    /* A forked child keeps the parent's map (same mappings) but no other
     * thread: the writer lock may have been copied held. */
    atomic_store(&map_active, 0);
    pthread_mutex_t unlocked = PTHREAD_MUTEX_INITIALIZER;
    writer_lock = unlocked;
}

/* ---- behind the interposed dlclose (runtime/interpose.c) --------------- */

/* Samples meanwhile are skipped and counted. dlopen is not interposed: the
 * loader resolves a dlopen'ed name with the RUNPATH and $ORIGIN of the
 * calling object, which a wrapper would replace by its own. Objects it
 * adds are picked up by the next refresh. */
int adt_sampler_dlclose(int (*real_dlclose)(void *), void *handle)
{
    if (!atomic_load(&map_active))
        return real_dlclose(handle);
    begin_change();
    int status = real_dlclose(handle);
    rebuild(true);
    end_change();
    return status;
}
