/*
 * The rescue: a process whose run ends any way but the normal end saves
 * what it holds to its rescue file (layout: rescue.h), for
 * adaptrace-recover to make an archive of after the job.
 *
 * Execution contexts:
 * - adt_rescue_save runs in a signal handler (an ending signal, the
 *   snapshot signal) or in normal code that is ending the process
 *   (MPI_Abort, exit without MPI_Finalize). It is async-signal-safe
 *   throughout; each step says why.
 * - adt_rescue_init/set_*: start-up and MPI_Init (normal context); they
 *   fill the state the save reads, so that it never has to look anything
 *   up. adt_rescue_discard: the normal end.
 * - adt_rescue_encode_skeleton: normal code at an ending without a signal
 *   (MPI_Abort, exit without MPI_Finalize), before the save: the
 *   skeletons' encoder allocates, so their section is made there, and
 *   the save only writes its bytes. A save in an ending signal's handler
 *   stops the threads' folding (the encoder's close, async-signal-safe)
 *   and writes an image of the skeletons' share instead, which
 *   adaptrace-recover encodes; a snapshot's save writes neither.
 *
 * Why no step waits for the interrupted code: the save takes no lock and
 * calls nothing that could (no malloc, no stdio, no MPI). It reads memory
 * that stays mapped for the life of the process — the arena, the location
 * array, the calling-context tree, the definitions journal — while other
 * threads may go on writing it: the recovery validates every chain and
 * record (adt_buffer_image_read) and reads only whole journal entries.
 * Two waits, both bounded: for another thread's save of this process to
 * end (two threads that crash together must not both write the file, and
 * the process must not end while the first is half done); and, after the
 * save for a termination request, for the other ranks of the node to
 * finish theirs (adt_rescue_await_node_peers, ending.c says why).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h> /* rename(2), async-signal-safe; no stream is used */
#include <stdlib.h> /* malloc in adt_rescue_set_skeleton_encoder and adt_rescue_encode_skeleton only, normal context */
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime/rescue.h"
#include "runtime_internal.h"
#include "sampler/sampler.h"

/* ---- state filled in normal context, read by the save ------------------ */

static adt_run_sources sources;
static adt_defs *measured_defs;
static uint32_t initial_rate_hz;
static uint64_t start_time;
static char hostname[64] = "unknown host";
static _Atomic uint32_t world_rank = ADT_RESCUE_NO_RANK;
static _Atomic uint32_t world_size = 1;
static adt_clock_offset begin_offset;
static _Atomic int begin_offset_known;
static uint32_t node_peers[ADT_RESCUE_NODE_PEERS_MAX];
static _Atomic size_t node_peer_count;
static const adt_trace_result nothing_written;
static adt_runtime_skeleton_encoder skeleton_encoder; /* encode NULL: not folding */
/* The skeleton sections' head and function names, made with the encoder
 * (the image's head takes its part_bytes at the save). */
static uint8_t *skeleton_names;
static adt_rescue_skeleton_head skeleton_head;
/* Set once by adt_rescue_encode_skeleton, before the ending's save. */
static adt_skeleton_saved skeleton_saved = ADT_SKELETON_SAVED_NOT_FOLDING;
static uint8_t *skeleton_section;
static size_t skeleton_section_bytes;
/* Set once at MPI_Init where the online stream streams event chunks. */
static _Atomic(adt_runtime_undelivered_events) undelivered_events;

/* The thread (kernel tid) whose save runs, 0 when none. */
static _Atomic pid_t saving_thread;

/* Used by one save at a time (saving_thread): too large for a handler's
 * stack, which may be the application's small one. */
static adt_rescue_header header;
static adt_location_summary lines[ADT_RUNTIME_MAX_LOCATIONS];
static char copy_block[16384];
/* More than the stream ever has out of the buffer (its sends, and the
 * other threads' slots). */
#define UNDELIVERED_MAX 64
static adt_event_chunk undelivered[UNDELIVERED_MAX];

void adt_rescue_init(const adt_run_sources *run, adt_defs *defs, uint32_t rate_hz, uint64_t started)
{
    sources = *run;
    sources.written = &nothing_written;
    measured_defs = defs;
    initial_rate_hz = rate_hz;
    start_time = started;
    gethostname(hostname, sizeof hostname - 1);
}

void adt_rescue_set_rank(uint32_t rank, uint32_t size)
{
    atomic_store(&world_size, size);
    atomic_store(&world_rank, rank);
}

void adt_rescue_set_clock_offset(const adt_clock_offset *offset)
{
    begin_offset = *offset;
    atomic_store(&begin_offset_known, 1);
}

void adt_rescue_set_node_peers(const int *world_ranks, size_t count)
{
    if (count > ADT_RESCUE_NODE_PEERS_MAX)
        count = ADT_RESCUE_NODE_PEERS_MAX;
    for (size_t i = 0; i < count; i++)
        node_peers[i] = (uint32_t)world_ranks[i];
    atomic_store_explicit(&node_peer_count, count, memory_order_release);
}

void adt_rescue_set_undelivered_events(adt_runtime_undelivered_events list)
{
    atomic_store(&undelivered_events, list);
}

void adt_rescue_set_skeleton_encoder(const adt_runtime_skeleton_encoder *encoder)
{
    size_t names_bytes = 0;
    for (uint32_t f = 0; f < encoder->function_count; f++)
        names_bytes += strlen(encoder->function_names[f]) + 1;
    uint8_t *names = malloc(names_bytes ? names_bytes : 1);
    if (names == NULL)
        return; /* then not folding, as far as the rescue knows */
    uint8_t *at = names;
    for (uint32_t f = 0; f < encoder->function_count; f++) {
        size_t length = strlen(encoder->function_names[f]) + 1;
        memcpy(at, encoder->function_names[f], length);
        at += length;
    }
    skeleton_names = names;
    skeleton_head = (adt_rescue_skeleton_head){ .function_count = encoder->function_count,
                                                .names_bytes = (uint32_t)names_bytes };
    skeleton_encoder = *encoder;
}

void adt_rescue_encode_skeleton(void)
{
    if (skeleton_encoder.encode == NULL || skeleton_section != NULL)
        return;
    uint32_t rank = atomic_load(&world_rank);
    size_t part_bytes = 0;
    adt_skeleton_saved why_not = ADT_SKELETON_NOT_SAVED_MEMORY;
    uint8_t *part = skeleton_encoder.encode(rank == ADT_RESCUE_NO_RANK ? 0 : rank, &part_bytes, &why_not);
    if (part == NULL) {
        skeleton_saved = why_not;
        return;
    }
    adt_rescue_skeleton_head head = skeleton_head;
    head.part_bytes = part_bytes;
    uint8_t *section = malloc(sizeof head + head.names_bytes + part_bytes);
    if (section == NULL) {
        free(part);
        skeleton_saved = ADT_SKELETON_NOT_SAVED_MEMORY;
        return;
    }
    memcpy(section, &head, sizeof head);
    memcpy(section + sizeof head, skeleton_names, head.names_bytes);
    memcpy(section + sizeof head + head.names_bytes, part, part_bytes);
    free(part);
    skeleton_section_bytes = sizeof head + head.names_bytes + part_bytes;
    skeleton_saved = ADT_SKELETON_SAVED;
    /* Published before the save reads it: the same thread, in order. */
    skeleton_section = section;
}

/* ---- writing (async-signal-safe: write/pwrite/read/open only) --------- */

typedef struct rescue_file {
    int fd;
    uint64_t bytes;
    bool failed;
    int error;           /* errno of the first failure */
    const char *step;    /* what was being saved then */
} rescue_file;

static void note_failure(rescue_file *file, const char *step)
{
    if (!file->failed) {
        file->failed = true;
        file->error = errno;
        file->step = step;
    }
}

static void put(rescue_file *file, const void *data, size_t bytes, const char *step)
{
    if (file->failed)
        return;
    if (adt_write_all(file->fd, data, bytes) != 0) {
        note_failure(file, step);
        return;
    }
    file->bytes += bytes;
}

static void pad_to_8(rescue_file *file, const char *step)
{
    static const char zeros[8];
    if (file->bytes % 8 != 0)
        put(file, zeros, 8 - file->bytes % 8, step);
}

static void put_section(rescue_file *file, uint32_t tag, const void *data, size_t bytes, const char *step)
{
    uint64_t content = adt_rescue_section_hashed(tag) ? adt_rescue_hash(ADT_RESCUE_HASH_START, data, bytes)
                                                      : ADT_RESCUE_HASH_START;
    adt_rescue_section section = {
        .tag = tag, .check = adt_rescue_section_check(tag, bytes, content), .bytes = bytes
    };
    put(file, &section, sizeof section, step);
    put(file, data, bytes, step);
    pad_to_8(file, step);
}

/* A section whose length is known only once written: its header is
 * rewritten in place afterwards (pwrite leaves the file offset alone). */
static off_t begin_open_section(rescue_file *file, uint32_t tag, const char *step)
{
    off_t at = (off_t)file->bytes;
    adt_rescue_section section = { .tag = tag, .bytes = 0 };
    put(file, &section, sizeof section, step);
    return at;
}

static void end_open_section(rescue_file *file, off_t at, uint32_t tag, uint64_t bytes, uint64_t content,
                             const char *step)
{
    adt_rescue_section section = {
        .tag = tag, .check = adt_rescue_section_check(tag, bytes, content), .bytes = bytes
    };
    if (!file->failed && pwrite(file->fd, &section, sizeof section, at) != (ssize_t)sizeof section)
        note_failure(file, step);
    pad_to_8(file, step);
}

static void put_buffer(rescue_file *file)
{
    const char *step = "the buffer";
    off_t at = begin_open_section(file, ADT_RESCUE_SECTION_BUFFER, step);
    if (file->failed)
        return;
    int64_t written = adt_buffer_image_write(sources.buffer, file->fd);
    if (written < 0) {
        note_failure(file, step);
        return;
    }
    file->bytes += (uint64_t)written;
    end_open_section(file, at, ADT_RESCUE_SECTION_BUFFER, (uint64_t)written, ADT_RESCUE_HASH_START, step);
}

/* The event chunks the online stream had out of the buffer and may not
 * have delivered (rescue.h), each as it is in memory: MPI only reads a
 * chunk whose send is in flight, and a copy torn by the streaming thread
 * giving its chunk back meanwhile is one the analyzer's file holds, which
 * the recovery keeps. The list reads the stream's slots (async-signal-
 * safe, runtime.h); write(2) the rest. */
static void put_undelivered(rescue_file *file)
{
    adt_runtime_undelivered_events list = atomic_load(&undelivered_events);
    size_t count = list != NULL ? list(undelivered, UNDELIVERED_MAX) : 0;
    if (count == 0)
        return;
    const char *step = "the event chunks streamed";
    off_t at = begin_open_section(file, ADT_RESCUE_SECTION_UNDELIVERED, step);
    uint64_t bytes = 0;
    for (size_t i = 0; i < count; i++) {
        adt_rescue_undelivered_head head = { .position = undelivered[i].position, .bytes = undelivered[i].size };
        put(file, &head, sizeof head, step);
        put(file, undelivered[i].bytes, head.bytes, step);
        bytes += sizeof head + head.bytes;
    }
    end_open_section(file, at, ADT_RESCUE_SECTION_UNDELIVERED, bytes, ADT_RESCUE_HASH_START, step);
}

/* The module list, for resolving the calling contexts' addresses later:
 * /proc/self/maps read with read(2) (the kernel builds the text; no
 * user-space lock is involved). */
static void put_maps(rescue_file *file)
{
    const char *step = "the module list";
    off_t at = begin_open_section(file, ADT_RESCUE_SECTION_MAPS, step);
    int maps = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    uint64_t copied = 0, content = ADT_RESCUE_HASH_START;
    while (maps >= 0 && !file->failed) {
        ssize_t got = read(maps, copy_block, sizeof copy_block);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        put(file, copy_block, (size_t)got, step);
        content = adt_rescue_hash(content, copy_block, (size_t)got);
        copied += (uint64_t)got;
    }
    if (maps >= 0)
        close(maps);
    end_open_section(file, at, ADT_RESCUE_SECTION_MAPS, copied, content, step);
}

/* The skeletons' image (rescue.h), for a save in an ending signal's
 * handler after the threads' folding stopped: copied out of the share
 * into copy_block and written block by block (memcpy, write), each block
 * hashed as written, so that the check agrees with the file whatever
 * the encoder's room in the slabs (still changing) held. */
static void put_skeleton_image(rescue_file *file)
{
    const char *step = "the skeleton";
    off_t at = begin_open_section(file, ADT_RESCUE_SECTION_SKELETON_IMAGE, step);
    adt_skeleton_image_cursor cursor;
    adt_skeleton_image_begin(&cursor);
    adt_rescue_skeleton_head head = skeleton_head;
    head.part_bytes = cursor.total_bytes;
    put(file, &head, sizeof head, step);
    put(file, skeleton_names, head.names_bytes, step);
    uint64_t content = adt_rescue_hash(ADT_RESCUE_HASH_START, &head, sizeof head);
    content = adt_rescue_hash(content, skeleton_names, head.names_bytes);
    for (size_t got; !file->failed && (got = adt_skeleton_image_next(&cursor, copy_block, sizeof copy_block)) != 0;) {
        put(file, copy_block, got, step);
        content = adt_rescue_hash(content, copy_block, got);
    }
    end_open_section(file, at, ADT_RESCUE_SECTION_SKELETON_IMAGE, sizeof head + head.names_bytes + cursor.total_bytes,
                     content, step);
}

/* Whether this save holds the skeletons, or why not. An ending signal's
 * handler stops every thread's folding and waits for the folds under way
 * (the encoder's close: async-signal-safe) and then writes an image of
 * them; a snapshot must leave the process folding, so it has none; an
 * ending in normal code encoded them before the save. */
static adt_skeleton_saved skeleton_state(adt_rescue_kind kind)
{
    if (skeleton_encoder.encode == NULL)
        return ADT_SKELETON_SAVED_NOT_FOLDING;
    if (kind == ADT_RESCUE_SNAPSHOT)
        return ADT_SKELETON_NOT_SAVED_SNAPSHOT;
    if (kind == ADT_RESCUE_SIGNAL)
        return skeleton_encoder.close();
    return skeleton_saved;
}

static void fill_header(adt_rescue_kind kind, int signum, const char *archive_dir, bool journal_complete)
{
    memset(&header, 0, sizeof header);
    header.magic = ADT_RESCUE_MAGIC;
    header.version = ADT_RESCUE_VERSION;
    header.kind = (uint32_t)kind;
    header.signal = signum;
    header.pid = (int32_t)getpid();
    header.rank = atomic_load(&world_rank);
    header.size = header.rank == ADT_RESCUE_NO_RANK ? 1 : atomic_load(&world_size);
    header.sampling = sources.sampling;
    header.initial_rate_hz = initial_rate_hz;
    header.defs_complete = journal_complete;
    header.has_clock_offset = (uint32_t)atomic_load(&begin_offset_known);
    header.skeleton_saved = skeleton_state(kind);
    if (header.has_clock_offset)
        header.clock_offset = begin_offset;
    header.start_time = start_time;
    header.end_time = adt_clock_now();
    header.timer_resolution = adt_clock_resolution_now();
    memcpy(header.hostname, hostname, sizeof header.hostname);
    size_t length = strlen(archive_dir);
    memcpy(header.archive_dir, archive_dir, length < sizeof header.archive_dir ? length : sizeof header.archive_dir - 1);
    header.check = adt_rescue_hash(ADT_RESCUE_HASH_START, &header, sizeof header);
}

static void write_rescue(rescue_file *file, adt_rescue_kind kind, int signum, const char *archive_dir)
{
    size_t journal_bytes;
    bool journal_complete;
    const void *journal = adt_defs_journal(measured_defs, &journal_bytes, &journal_complete);
    fill_header(kind, signum, archive_dir, journal_complete);
    put(file, &header, sizeof header, "the header");
    put_section(file, ADT_RESCUE_SECTION_DEFS, journal, journal_bytes, "the definitions");
    put_buffer(file);
    put_undelivered(file);
    if (sources.sampling) {
        size_t tree_bytes;
        const void *tree = adt_sampler_tree_image(&tree_bytes);
        put_section(file, ADT_RESCUE_SECTION_CONTEXTS, tree, tree_bytes, "the calling contexts");
        put_maps(file);
    }
    /* Counters: relaxed reads of fields their owners keep updating, and
     * the static lines array (adt_summary_count allocates nothing). */
    adt_run_counters counters;
    size_t line_count = adt_summary_count(&sources, header.rank == ADT_RESCUE_NO_RANK ? 0 : header.rank,
                                          &counters, lines, ADT_RUNTIME_MAX_LOCATIONS);
    put_section(file, ADT_RESCUE_SECTION_COUNTERS, &counters, sizeof counters, "the counters");
    put_section(file, ADT_RESCUE_SECTION_LOCATION_LINES, lines, line_count * sizeof lines[0], "the counters");
    /* Made before the save, in normal code (adt_rescue_encode_skeleton);
     * nothing changes it while it is written. In an ending signal's
     * handler, the image of the skeletons, folding stopped. */
    if (header.skeleton_saved == ADT_SKELETON_SAVED && kind == ADT_RESCUE_SIGNAL)
        put_skeleton_image(file);
    else if (header.skeleton_saved == ADT_SKELETON_SAVED)
        put_section(file, ADT_RESCUE_SECTION_SKELETON, skeleton_section, skeleton_section_bytes, "the skeleton");
    put_section(file, ADT_RESCUE_SECTION_END, NULL, 0, "the end mark");
}

/* ---- paths ------------------------------------------------------------- */

static void rescue_directory(const char *archive_dir, adt_text *path)
{
    path->length = 0;
    adt_text_add(path, archive_dir);
    adt_text_add(path, ADT_RESCUE_SUFFIX);
}

/* rank-<rank>.adtr, or pid-<pid>.adtr for ADT_RESCUE_NO_RANK. */
static void rescue_file_name(const char *archive_dir, uint32_t rank, adt_text *path)
{
    rescue_directory(archive_dir, path);
    if (rank != ADT_RESCUE_NO_RANK) {
        adt_text_add(path, "/rank-");
        adt_text_add_number(path, rank);
    } else {
        adt_text_add(path, "/pid-");
        adt_text_add_number(path, (uint64_t)getpid());
    }
    adt_text_add(path, ".adtr");
}

/* ---- one save at a time ------------------------------------------------ */

#define OTHER_SAVE_WAIT_STEPS 6000 /* × 10 ms: a minute at most */

/* True when this thread may save; false when it is already saving (a
 * fault inside the save itself) or another thread's save did not end in
 * time. Waits (nanosleep, async-signal-safe) while another thread saves. */
static bool claim_save(void)
{
    pid_t self = (pid_t)syscall(SYS_gettid);
    for (unsigned step = 0; step < OTHER_SAVE_WAIT_STEPS; step++) {
        pid_t expected = 0;
        if (atomic_compare_exchange_strong(&saving_thread, &expected, self))
            return true;
        if (expected == self)
            return false;
        struct timespec pause = { .tv_sec = 0, .tv_nsec = 10000000 };
        nanosleep(&pause, NULL);
    }
    return false;
}

int adt_rescue_save(const char *archive_dir, adt_rescue_kind kind, int signum, adt_rescue_result *result)
{
    memset(result, 0, sizeof *result);
    rescue_directory(archive_dir, &result->directory);
    if (sources.buffer == NULL || measured_defs == NULL) {
        result->step = "the start (the measurement was not set up)";
        return -1;
    }
    if (!claim_save()) {
        result->step = "the start (another save of this process did not end)";
        return -1;
    }
    int saved_errno = errno;
    /* Samples on this thread would append beside the save; the ending
     * signals are blocked already while their handler runs. */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous);
    if (kind != ADT_RESCUE_SNAPSHOT)
        adt_sampler_halt();
    adt_text path, partial;
    rescue_file_name(archive_dir, atomic_load(&world_rank), &path);
    partial = path;
    adt_text_add(&partial, ".partial");
    rescue_file file = { .fd = -1 };
    if (mkdir(result->directory.bytes, 0755) != 0 && errno != EEXIST)
        note_failure(&file, "the rescue directory");
    if (!file.failed) {
        file.fd = open(partial.bytes, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (file.fd < 0)
            note_failure(&file, "the rescue file");
    }
    if (!file.failed)
        write_rescue(&file, kind, signum, archive_dir);
    if (file.fd >= 0 && close(file.fd) != 0)
        note_failure(&file, "the rescue file");
    if (!file.failed && rename(partial.bytes, path.bytes) != 0)
        note_failure(&file, "the rescue file");
    if (file.failed)
        unlink(partial.bytes);
    result->bytes = file.bytes;
    result->error = file.failed ? file.error : 0;
    result->step = file.step;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    atomic_store(&saving_thread, 0);
    errno = saved_errno;
    return file.failed ? -1 : 0;
}

/* ---- waiting for the node's other saves (async-signal-safe: access,
 * nanosleep) ------------------------------------------------------------ */

/* Whether rank's save is on disk: its file exists, and no later save of
 * it (the ending after a snapshot) is half-written. */
static bool peer_saved(const char *archive_dir, uint32_t rank)
{
    adt_text path;
    rescue_file_name(archive_dir, rank, &path);
    if (access(path.bytes, F_OK) != 0)
        return false;
    adt_text_add(&path, ".partial");
    return access(path.bytes, F_OK) != 0;
}

#define PEER_WAIT_STEP_MS 10

void adt_rescue_await_node_peers(const char *archive_dir)
{
    size_t count = atomic_load_explicit(&node_peer_count, memory_order_acquire);
    uint32_t self = atomic_load(&world_rank);
    size_t saved = 0; /* node_peers[0 .. saved) are on disk */
    for (unsigned waited_ms = 0; waited_ms < ADT_RESCUE_PEER_WAIT_MS; waited_ms += PEER_WAIT_STEP_MS) {
        while (saved < count && (node_peers[saved] == self || peer_saved(archive_dir, node_peers[saved])))
            saved++;
        if (saved == count)
            return;
        struct timespec pause = { .tv_sec = 0, .tv_nsec = PEER_WAIT_STEP_MS * 1000000L };
        nanosleep(&pause, NULL);
    }
}

void adt_rescue_discard(const char *archive_dir)
{
    adt_text directory, path;
    rescue_directory(archive_dir, &directory);
    rescue_file_name(archive_dir, atomic_load(&world_rank), &path);
    unlink(path.bytes);
    /* A snapshot taken before MPI_Init named this process by its pid. */
    rescue_file_name(archive_dir, ADT_RESCUE_NO_RANK, &path);
    unlink(path.bytes);
    rmdir(directory.bytes);
}
