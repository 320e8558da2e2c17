/*
 * buffer: the hierarchical memory buffer.
 *
 * One arena of a fixed number of bytes per process, cut into fixed-size
 * chunks held on a lock-free free list. Each location (thread) owns one
 * event chain, never removed, and one chain per λ-level for samples:
 * sample number n goes to level λ(n) = trailing zeros of n. When no chunk
 * is free the registered pre-flush callback runs (flush/ provides it); it
 * usually drops the lowest level of some location, which gives every chunk
 * of that level back in constant time.
 *
 * Concurrency contract:
 * - Event appends of a location come from its own thread only, in normal
 *   (non-signal) context.
 * - Sample appends of a location come from its own thread, usually from a
 *   signal handler that may interrupt an event append of the same thread.
 *   They do not nest (the handler runs with its own signal blocked, i.e.
 *   without SA_NODEFER): the sample counter is advanced without a lock.
 * - The free list is shared by all threads and handlers (lock-free).
 * - Each location has a sample guard. A sample append takes it with a
 *   compare-and-swap and never waits: if it is taken, the sample is
 *   counted as skipped. A level removal of another location takes the same
 *   guard and waits (yielding) for a running sample append to finish, so
 *   removals of other locations happen only from normal context.
 * - Readers (adt_reader_*) run when appends of that location have stopped.
 *
 * Hot path (no malloc, no lock, no stdio, async-signal-safe):
 * adt_lambda32/64, adt_buffer_append_event, adt_buffer_append_sample.
 */
#ifndef ADAPTRACE_BUFFER_H
#define ADAPTRACE_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* λ(n): number of trailing zeros of n, by de Bruijn multiply-and-lookup:
 * isolate the lowest set bit, multiply by a de Bruijn constant, the top
 * bits index a table. No loop, no branch on the value.
 * λ(0) is defined as the bit width (32 resp. 64): 0 has no set bit, so it
 * belongs below every level; the runtime never numbers a sample 0.
 * One index bit more than the classic 32/64-entry lookup (tables of 64/128
 * entries) costs nothing per call and handles 0 for free: every power of
 * two then lands on a nonzero index, while 0 * constant = 0 reads entry 0,
 * which holds the bit width. */
extern const uint8_t adt_debruijn_table32[64];
extern const uint8_t adt_debruijn_table64[128];
#define ADT_DEBRUIJN32 0x077CB531u
#define ADT_DEBRUIJN64 0x03F79D71B4CB0A89ull

static inline unsigned adt_lambda32(uint32_t n)
{
    uint32_t lowest = n & (0u - n);
    return adt_debruijn_table32[(uint32_t)(lowest * ADT_DEBRUIJN32) >> 26];
}

static inline unsigned adt_lambda64(uint64_t n)
{
    uint64_t lowest = n & (0ull - n);
    return adt_debruijn_table64[(lowest * ADT_DEBRUIJN64) >> 57];
}

#define ADT_BUFFER_LEVELS 64     /* one per bit of the 64-bit sample counter */
#define ADT_EVENT_LEVEL 0xff     /* adt_record_view.level of event records */
#define ADT_BUFFER_CHUNK_DEFAULT (64u * 1024u)

typedef struct adt_buffer adt_buffer;
typedef struct adt_location adt_location;

/* Creates the arena (mmap'd, pre-faulted) of arena_bytes rounded down to a
 * whole number of chunks; chunk_bytes 0 means ADT_BUFFER_CHUNK_DEFAULT.
 * max_locations bounds the per-thread bookkeeping (fixed part, allocated
 * here). Returns NULL with errno set on failure. */
adt_buffer *adt_buffer_create(size_t arena_bytes, size_t chunk_bytes, size_t max_locations);
void adt_buffer_destroy(adt_buffer *buffer);

/* Adds a location (one per thread). Thread-safe, not async-signal-safe.
 * Returns NULL when max_locations is reached. */
adt_location *adt_buffer_add_location(adt_buffer *buffer, uint64_t location_id);
size_t adt_buffer_location_count(const adt_buffer *buffer);
adt_location *adt_buffer_location_at(adt_buffer *buffer, size_t index);
/* The location of that id, or NULL. */
adt_location *adt_buffer_find_location(const adt_buffer *buffer, uint64_t location_id);
uint64_t adt_location_id(const adt_location *location);
adt_buffer *adt_location_buffer(const adt_location *location);

/* A pointer the owner of the location keeps with it (the sampler stores
 * its per-thread state here). */
void adt_location_set_user(adt_location *location, void *user);
void *adt_location_user(const adt_location *location);

/* ---- pre-flush callback ------------------------------------------------ */

/* Handed to the callback; says who ran out of chunks and from where. */
typedef struct adt_preflush_request {
    adt_location *requester;
    bool from_sample;   /* true: inside a sample append (signal context),
                           the requester's sample guard is held */
    size_t bytes_needed;
    uint64_t time;      /* timestamp of the record waiting for the chunk:
                           a record the callback appends to the requester's
                           event chain must not be later than it */
} adt_preflush_request;

/* Return true to retry taking a chunk, false to give up: the event or
 * sample that needed it is then counted as dropped. Runs in the context of
 * the failing append (possibly a signal handler when from_sample). */
typedef bool (*adt_preflush_fn)(adt_buffer *buffer, const adt_preflush_request *request, void *arg);
void adt_buffer_set_preflush(adt_buffer *buffer, adt_preflush_fn callback, void *arg);

/* Drops every sample level of location below and including its lowest
 * non-empty level, so that afterwards it holds exactly the samples with
 * n ≡ 0 mod 2^k (k = the returned new shift), and later samples are
 * numbered in steps of 2^k. Its chunks go back to the free list in time
 * independent of the bytes stored. Returns -1 (nothing changed) if the
 * location holds no sample.
 * request: the current pre-flush request, or NULL outside a callback
 * (tests, benchmarks). Inside a callback always pass the request: from a
 * sample append the requester's guard is already held, and NULL would wait
 * for it forever. Dropping a location other than the requester from a
 * request with from_sample set is refused (-1): a signal handler never
 * waits for another thread. */
int adt_buffer_drop_lowest_level(adt_location *location, const adt_preflush_request *request);

/* The same drop for the location's own signal handler (the sampler's
 * overload protection), outside any pre-flush callback. The handler may
 * have interrupted its own thread while that thread holds the guard (an
 * event append's refill, a removal by the flush policy), so the guard is
 * taken with one compare-and-swap, as a sample append takes it, and never
 * awaited: -1 (nothing changed) when it is busy; the caller tries again
 * later. A location that holds no sample has its empty level `shift`
 * dropped (the shift goes up by one), so the caller can always slow down.
 * Returns the new shift, or -1 when the guard is busy or the 64-bit sample
 * counter would be used up; *old_shift (if not NULL) receives the shift
 * the drop started from. Async-signal-safe. */
int adt_buffer_drop_own_level(adt_location *location, unsigned *old_shift);

/* The location is sampled from time on (trace clock), at its current
 * shift, normally 0: stamps that shift's entry of shift_reached_at unless
 * it has its stamp already, so that the location's rate history starts
 * when its sampling did, before any record it keeps. The sampler calls it
 * on the thread before its timer is armed. Normal context only: it awaits
 * the location's guard, as a removal from another thread does. */
void adt_buffer_sampling_started(adt_location *location, uint64_t time);

/* ---- appends (hot path) ------------------------------------------------ */

typedef enum adt_append_status {
    ADT_APPEND_OK = 0,
    ADT_APPEND_DROPPED,   /* no chunk and the callback gave up */
    ADT_APPEND_SKIPPED,   /* sample only: the location's guard was taken */
    ADT_APPEND_STOPPED,   /* event only: recording of events was stopped */
    ADT_APPEND_TOO_LARGE  /* record larger than a chunk can hold */
} adt_append_status;

/* Appends one event record (kind and payload are opaque to the buffer;
 * format/ defines them). Records are 8-byte aligned; payload_size need not
 * be a multiple of 8. */
adt_append_status adt_buffer_append_event(adt_location *location, uint16_t kind, uint64_t time,
                                          const void *payload, uint32_t payload_size);

/* Takes the next sample number n (the previous one plus 2^shift; the first
 * is 2^shift) and appends the record to level λ(n). The number is used up
 * even when the sample is skipped or dropped, so that numbers stay
 * proportional to time; *number (if not NULL) receives it. */
adt_append_status adt_buffer_append_sample(adt_location *location, uint16_t kind, uint64_t time,
                                           const void *payload, uint32_t payload_size,
                                           uint64_t *number);

/* ---- records kept for another location (its guest) --------------------- */

/* A location's event chain may hold records of another location, its
 * guest: samples of a thread that cannot append them to its own event
 * chain (its signal handler may interrupt an append there), which the
 * host's thread keeps in its own chain instead, whose full chunks are
 * streamed (issue #28: other threads' samples in an online run,
 * sampler/tap.c). Such a record has kind ADT_GUEST_RECORD_KIND and the
 * host's time, so that the host's chain stays in time order; its payload
 * is an adt_guest_record (the guest, and the record's own time and kind)
 * followed by the guest's payload. The reader gives it to the guest's
 * read-out, with the guest's time and kind, and leaves it out of the
 * host's. */
#define ADT_GUEST_RECORD_KIND UINT16_MAX
typedef struct adt_guest_record {
    uint64_t guest; /* adt_location_id of the guest */
    uint64_t time;  /* the record's own time */
    uint16_t kind;  /* the record's own kind */
    uint16_t reserved[3];
} adt_guest_record;

/* Appends to host's event chain, at host_time, a record of guest (record:
 * an adt_guest_record, then the guest's payload; record_size bytes in
 * all), as adt_buffer_append_event does, and counts it: guest_records for
 * the host, hosted_records for the guest, whose hosted_in becomes the
 * host's id (a guest has one host). Normal context of the host's own
 * thread only, which alone writes these counters. */
adt_append_status adt_buffer_append_guest_event(adt_location *host, adt_location *guest, uint64_t host_time,
                                                const void *record, uint32_t record_size);

/* ---- the unavoidable fallbacks (flush/ decides when) ------------------- */

/* Writes all event chunks of location but the one being filled to fd
 * (shared by the process; the buffer keeps the file offsets) and frees
 * them. The reader yields the spilled records first, in order. The file
 * may have holes: places of chunks streamed (adt_buffer_take_event_chunks)
 * and each list's reserved next place. Normal
 * context of the location's own thread only. Returns bytes written or -1. */
int64_t adt_buffer_spill_events(adt_location *location, int fd);

/* ---- streaming full event chunks (the online stream, issue #28) -------- */

/* A full event chunk taken out of its location's chain: its bytes (size
 * bytes, header included, its link to the next chunk of the list set),
 * its index in the arena (for adt_buffer_give_back_chunk), its place in
 * the spill file's layout (in chunks) and its records. */
typedef struct adt_event_chunk {
    const void *bytes;
    uint32_t size;
    uint32_t index;
    uint32_t position;
    uint64_t records;
} adt_event_chunk;

/* Takes at most max of the location's full event chunks (all but the one
 * being filled), oldest first, out of its chain into taken, in the spill
 * file's layout: each chunk gets its place in the location's list of
 * chunks that left the arena (adt_buffer_spill_events' list, which the
 * reader and the image follow), its header the link to the next place.
 * Nothing is written: the caller takes each chunk to position *
 * chunk_bytes of a file that a reader of this location (or of its image)
 * is later given as its spill file, and gives it back afterwards. Until
 * then the chunk is in no chain: the buffer never touches it. Returns the
 * chunks taken; 0 also where a place would not be below places_below (the
 * receiver's limit) or the file's places are used up. Normal
 * context of the location's own thread only; no malloc, lock or stdio. */
size_t adt_buffer_take_event_chunks(adt_location *location, adt_event_chunk *taken, size_t max,
                                    uint32_t places_below);

/* A chunk taken by adt_buffer_take_event_chunks goes back to the free
 * list (lock-free; any thread). */
void adt_buffer_give_back_chunk(adt_location *location, uint32_t index);

/* From now on event appends of location return ADT_APPEND_STOPPED. */
void adt_buffer_stop_events(adt_location *location, uint64_t time);

/* ADAPTRACE_ON_FULL=fold: the thread's skeleton holds its MPI calls, so
 * from time on (folding_began_at) event appends of location store nothing
 * and return ADT_APPEND_STOPPED, counted as folded (events_folded), not as
 * lost; the events already held stay. Nothing happens when the location's
 * events were stopped already. Normal context of the location's own
 * thread (the flush policy's callback). */
void adt_buffer_fold_events(adt_location *location, uint64_t time);

/* Of the events counted as folded, the latest `count` are not in the
 * skeleton after all (appended outside MPI calls, or in the call during
 * which the thread's skeleton stopped): they move to
 * events_lost[NOT_FOLDED]. for_good: so do all later events (the skeleton
 * stopped). Normal context of the location's own thread only; no lock. */
void adt_buffer_unfold_events(adt_location *location, uint64_t count, bool for_good);

/* events_folded of the location, read on its own thread (one load). */
uint64_t adt_location_events_folded(const adt_location *location);

/* Whether the location's event appends store nothing any more (stopped or
 * folded): one relaxed load, any context. */
bool adt_location_events_stopped(const adt_location *location);

/* ---- accounting -------------------------------------------------------- */

typedef struct adt_chain_stats {
    uint64_t bytes;    /* record bytes stored, headers included */
    uint64_t chunks;
    uint64_t records;
} adt_chain_stats;

/* Why an event record was not stored, each cause counted apart, one row
 * per cause: X(CAUSE, key, words) gives ADT_EVENT_LOST_<CAUSE>, the key
 * that names it (summary.json) and the words that say it (after "n"). */
#define ADT_EVENT_LOSSES(X)                                                            \
    /* events were stopped: by the flush policy's last resort, or after an   */      \
    /* event lost for want of a chunk                                         */      \
    X(STOPPED, "stopped", "after events were stopped")                                 \
    /* the record is larger than a chunk */                                            \
    X(TOO_LARGE, "too_large", "larger than a chunk")                                   \
    /* no free chunk, and the callback gave up: the location's events stop there */    \
    X(NO_CHUNK, "no_chunk", "no free chunk")                                           \
    /* events were folded (ADAPTRACE_ON_FULL=fold), but these are not in the thread's */ \
    /* skeleton: made outside MPI calls, or after the skeleton stopped               */ \
    X(NOT_FOLDED, "not_folded", "while folding, not in the skeleton (outside MPI calls or after it stopped)")

/* Why a sample that was taken (numbered) was not stored; rows as above. */
#define ADT_SAMPLE_LOSSES(X)                                                           \
    /* the record is larger than a chunk */                                            \
    X(TOO_LARGE, "too_large", "larger than a chunk")                                   \
    /* no free chunk, and the callback gave up */                                      \
    X(NO_CHUNK, "no_chunk", "no free chunk")                                           \
    /* the callback's removal left it no survivor */                                   \
    X(HALVED, "halved_meanwhile", "no survivor of a halving during their append")      \
    /* the 64-bit sample numbers are used up */                                        \
    X(NUMBERS_SPENT, "numbers_used_up", "sample numbers used up")                      \
    /* recovery: cut off by a save during its append */                                \
    X(CUT, "cut_at_the_ending", "cut by the save at the ending")

#define ADT_EVENT_LOSS_ENUM(cause, key, words) ADT_EVENT_LOST_##cause,
typedef enum adt_event_loss { ADT_EVENT_LOSSES(ADT_EVENT_LOSS_ENUM) ADT_EVENT_LOSS_CAUSES } adt_event_loss;
#undef ADT_EVENT_LOSS_ENUM

#define ADT_SAMPLE_LOSS_ENUM(cause, key, words) ADT_SAMPLE_LOST_##cause,
typedef enum adt_sample_loss { ADT_SAMPLE_LOSSES(ADT_SAMPLE_LOSS_ENUM) ADT_SAMPLE_LOSS_CAUSES } adt_sample_loss;
#undef ADT_SAMPLE_LOSS_ENUM

/* A location's plain 64-bit counts (and the time its events stopped), kept
 * under the same name in the location and in its statistics, which copy
 * them one for one: X(field). */
#define ADT_LOCATION_COUNTERS(X)                                                       \
    X(samples_taken)     /* numbers handed out */                                      \
    X(samples_kept)      /* records now in the levels */                               \
    X(samples_removed)   /* records freed by level removals */                         \
    X(samples_skipped)   /* guard taken: arrived while adaptrace was busy */           \
    X(removals)          /* drops that raised the shift (lowest or own level) */       \
    X(spilled_bytes)                                                                   \
    X(spilled_records)   /* event records moved to the spill file */                   \
    X(streamed_records)  /* in chunks taken to be streamed (adt_buffer_take_event_chunks) */ \
    X(spills)                                                                          \
    X(events_stopped_at)                                                               \
    X(events_folded)     /* not stored: in the thread's skeleton (adt_buffer_fold_events) */ \
    X(folding_began_at)  /* trace clock; 0: never folded */                         \
    X(guest_records)     /* records of other locations its event chain took (adt_buffer_append_guest_event) */ \
    X(hosted_records)    /* its records another location's event chain took */      \
    X(hosted_in)         /* the id of that location (valid where hosted_records > 0) */

#define ADT_LOCATION_COUNTER_FIELD(field) uint64_t field;

typedef struct adt_location_stats {
    adt_chain_stats events;
    adt_chain_stats levels[ADT_BUFFER_LEVELS];
    ADT_LOCATION_COUNTERS(ADT_LOCATION_COUNTER_FIELD)
    uint64_t last_sample_number; /* the latest number taken: Σ 2^j over the
                                    samples taken at shift j, i.e. the initial
                                    periods the location was sampled for */
    uint64_t samples_dropped;   /* Σ samples_lost: taken, not stored */
    uint64_t samples_lost[ADT_SAMPLE_LOSS_CAUSES];
    uint64_t events_dropped;    /* Σ events_lost */
    uint64_t events_lost[ADT_EVENT_LOSS_CAUSES];
    unsigned shift;             /* k: samples kept are n ≡ 0 mod 2^k */
    /* When each shift was reached (trace clock, adt_clock_now; 0: never):
     * entry 0 (the initial shift) when sampling started
     * (adt_buffer_sampling_started), entry k by the drop that raised the
     * shift to k, once, under the location's guard, so the stamps grow
     * with k. A drop of several levels at once stamps every shift it
     * passed with the same time: each shift up to the current one has a
     * stamp, entry 0 once sampling started. */
    uint64_t shift_reached_at[ADT_BUFFER_LEVELS];
    /* The arena's bytes in use (chunks of all locations) just before
     * ([k][0]) and just after ([k][1]) the drop that stamped shift k, read
     * with the stamp; 0 where shift_reached_at[k] is 0. Other threads
     * take and give back chunks meanwhile: a snapshot, not a sum. */
    uint64_t bytes_in_use_at_shift[ADT_BUFFER_LEVELS][2];
    bool events_stopped;
} adt_location_stats;

void adt_location_get_stats(const adt_location *location, adt_location_stats *stats);

typedef struct adt_buffer_stats {
    uint64_t arena_bytes;
    uint64_t chunk_bytes;
    uint64_t chunks_total;
    uint64_t chunks_free;
    uint64_t chunks_high_water;  /* most chunks ever in use at once */
    uint64_t fixed_bytes;        /* bookkeeping outside the arena */
    uint64_t locations;
} adt_buffer_stats;

void adt_buffer_get_stats(const adt_buffer *buffer, adt_buffer_stats *stats);

/* ---- in-order read-out ------------------------------------------------- */

typedef struct adt_record_view {
    uint64_t time;
    uint16_t kind;
    uint8_t level;            /* ADT_EVENT_LEVEL, or the sample's λ(n) */
    uint64_t sample_number;   /* n for samples, 0 for events */
    const void *payload;      /* valid until the next adt_reader_next */
    uint32_t payload_size;    /* as appended */
} adt_record_view;

typedef struct adt_reader adt_reader;

/* Merges the event chain (spilled part first) and all levels of one
 * location by timestamp (ties: events first, then lower level), and where
 * another location's chain keeps records of it (hosted_records), those
 * records from there, as adt_guest_record_open gives them (after the
 * levels at a tie); its chain's records of other locations are left out.
 * No copy of the stored records is made; a spilled chunk is read into a
 * scratch chunk. Returns NULL on allocation or I/O failure. */
adt_reader *adt_reader_open(adt_location *location);
bool adt_reader_next(adt_reader *reader, adt_record_view *record);
void adt_reader_close(adt_reader *reader);

/* Opens a record of kind ADT_GUEST_RECORD_KIND: *guest and the record as
 * the guest's read-out gives it (its time, kind and payload; level
 * ADT_EVENT_LEVEL). false where the payload is too short to hold one. */
bool adt_guest_record_open(const adt_record_view *view, uint64_t *guest, adt_record_view *record);

/* ---- the image of a buffer (a run that did not end cleanly) ----------- */

/* Writes the buffer as it is to fd, for adt_buffer_image_read to rebuild
 * later in another process: the geometry, every location's bookkeeping,
 * the chunks its chains hold and the spill file's contents. Async-signal-safe and
 * lock-free: it reads memory that stays mapped and calls write(2) and
 * sendfile(2) only, so it may run in a signal handler that interrupted an
 * append, and while other threads go on appending; whatever they change
 * meanwhile the reader finds half-done and cuts off. Returns the bytes
 * written, or -1 (errno set). */
int64_t adt_buffer_image_write(const adt_buffer *buffer, int fd);

/* Says whether a record found in an image, in a chain of location (its
 * bookkeeping as saved), is whole by its content (the buffer checks its
 * framing, order and level): false cuts its chain there. A location's
 * chains are checked one after the other: its spilled events, its events
 * in memory, then its sample levels from level 0. */
typedef bool (*adt_record_check)(const adt_location *location, const adt_record_view *record, void *arg);

typedef struct adt_image_repair {
    uint64_t chains_cut;   /* chains that ended in a chunk or record not whole */
    uint64_t records_cut;  /* records their bookkeeping counted beyond the cut */
    /* Of records_cut, those of a location's list of chunks that left the
     * arena (spilled, or streamed: adt_buffer_take_event_chunks) cut at a
     * chunk or record not whole in the spill file given, most often a
     * streamed chunk that never reached the receiver's file, with the
     * location's events in memory that followed them. */
    uint64_t list_records_cut;
} adt_image_repair;

/* Rebuilds a buffer from an image of `bytes` bytes: every chain is followed
 * with bounds and cut at the first chunk or record that is not whole (what
 * a thread was changing when the image was taken); samples cut count as
 * dropped. The buffer has extra_chunks free chunks more per location, for
 * records the recovery appends. spill_fd: a file holding the image's spill contents
 * (adt_buffer_image_spill) at offset 0, or -1 when there are none; or one
 * that holds, besides those, the chunks streamed during the run
 * (adt_buffer_take_event_chunks) at their places: the lists of spilled
 * chunks are followed in this file (mapped), not in the image; it stays
 * the caller's, open for writing: where a location's list of spilled
 * chunks is cut, the last chunk kept is rewritten there. Returns NULL with
 * a one-line error for an image that is no buffer image, of another
 * version, cut short, or damaged past repair. */
adt_buffer *adt_buffer_image_read(const void *image, size_t bytes, size_t extra_chunks, int spill_fd,
                                  adt_record_check check, void *check_arg, adt_image_repair *repair,
                                  char *error, size_t error_size);

/* The spill file's contents inside an image: *spill and the byte count
 * (0 when there are none or the image is not whole). */
size_t adt_buffer_image_spill(const void *image, size_t bytes, const void **spill);

/* The image's spill contents copied into a file of their own in memory
 * (memfd), for adt_buffer_image_read's spill_fd; -1 when the image has
 * none or the copy failed. The caller closes it. */
int adt_buffer_image_spill_file(const void *image, size_t bytes);

/* The image's spilled chunks written at their places into fd, a file
 * that holds the chunks streamed during the run (adt_buffer_take_event_chunks)
 * at theirs, so that fd is then the spill file adt_buffer_image_read
 * takes. Only chunks the spill file held are written (a place it does not
 * hold, zeros, is left as it is in fd). 0, or -1 with errno. */
int adt_buffer_image_spill_into(const void *image, size_t bytes, int fd);

/* chunk (chunk_bytes of a chunk taken by adt_buffer_take_event_chunks,
 * a copy kept while its receiver may not have written it) written at
 * position's place in fd, the receiver's file, where fd holds no chunk
 * there (zeros, or past its end): 1 when written, 0 when fd holds one
 * there (kept: the receiver's) or the copy holds no records; -1 with
 * errno. */
int adt_buffer_spill_fill_hole(int fd, const void *chunk, uint32_t chunk_bytes, uint32_t position);

/* The location's list of chunks that left the arena read from fd from
 * now on: fd holds its streamed chunks at their places (a copy of the
 * receiver's file); the chunks the location spilled to its own spill file
 * are written into fd at theirs first. The list is followed as
 * adt_buffer_image_read follows an image's and cut at the first chunk
 * that is not whole (a streamed one that never reached fd): then the
 * events in memory are given back too (they would follow a gap), and
 * repair counts what was cut. fd stays the caller's, open until the
 * location is read. Normal context of the location's own thread, its
 * appends over. 0, or -1 (fd cannot be written, no memory). */
int adt_buffer_adopt_spill_file(adt_location *location, int fd, adt_image_repair *repair);

/* The arena an image was taken of, as its header states it: its bytes
 * (chunks × chunk size) and its chunk size; false when image is no buffer
 * image of this version. adt_buffer_image_read makes the whole arena
 * again, so a reader with another source of the arena's size compares the
 * two first. */
bool adt_buffer_image_arena(const void *image, size_t bytes, uint64_t *arena_bytes, uint64_t *chunk_bytes);

#ifdef __cplusplus
}
#endif

#endif
