/* feed: the events the analyses of a run take, and the analyses written
 * once on them (issue #28). Any producer drives them: adaptrace-report's
 * reader of archives (report/read_events.c, report/folded.c) and the
 * analyzer's decoder of the ranks' stream (online/live.c). What each
 * producer can feed, and what it cannot yet, is in docs/report.md and
 * docs/online.md.
 *
 * The analyses so far:
 * - the MPI profile: per MPI function and rank, the calls, their
 *   exclusive clock ticks and the bytes their records moved;
 * - the communication matrix: per sending and receiving rank, the
 *   point-to-point messages sent and their bytes;
 * - the spread of a figure over the ranks (min, mean, max and the
 *   imbalance max/mean), of the MPI profile's time per rank and others;
 * - a rank's span (its main thread's first to last event) and its
 *   computation (the span less its time in MPI);
 * - the time steps: the computation between consecutive outermost MPI
 *   calls of a thread, grouped by the pair of calls that bound it;
 * - the sampled profile: a calling-context tree with its samples, and per
 *   function the exclusive and inclusive samples, seconds and counter
 *   counts (a sample counts exclusively for its context's function and
 *   inclusively, once, for every function on its path);
 * - waiting: late sender (a receive entered before its matching send's
 *   call) and collective waiting (each member's wait from its entry to
 *   the last member's entry), per rank, from the messages and collective
 *   instances matched as their ends come;
 * - orderings: indices by a figure, largest first, and the ranks by their
 *   waiting (adaptrace-report's and the live report's
 *   "ranks_waiting_most").
 *
 * Normal context only (malloc): the producers are post-mortem or the
 * analysis process, never a rank's hot path. Plain C types: the unit
 * tests are C++. */
#ifndef ADAPTRACE_FEED_H
#define ADAPTRACE_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- The MPI profile ---- */

/* One MPI function on one rank. All words, so that analysis processes
 * serving different ranks add their profiles up with one MPI_SUM. Ticks
 * are the producer's clock's (the archive's timer resolution, a rank's
 * stream's rate): the consumer turns them into seconds. */
typedef struct adt_feed_mpi_figures {
    uint64_t calls;
    uint64_t ticks; /* exclusive: less the MPI calls nested in them */
    uint64_t bytes_sent;
    uint64_t bytes_received;
    /* Of calls and ticks, those a producer estimated rather than measured
     * (report/folded.c: folded calls, their skeleton histogram's mean). */
    uint64_t estimated_calls;
    uint64_t estimated_ticks;
} adt_feed_mpi_figures;

#define ADT_FEED_MPI_FIGURES_WORDS (sizeof(adt_feed_mpi_figures) / sizeof(uint64_t))

/* Seconds summed call by call, where the producer's clock is known from
 * the start (an archive's): each call's exclusive ticks in seconds, added
 * in the order the calls came. The sum of the ticks read once at the end
 * can differ in the last bit, and adaptrace-report's figures are kept to
 * the bit. */
typedef struct adt_feed_mpi_seconds {
    double seconds;
    double estimated_seconds;
} adt_feed_mpi_seconds;

/* The figures of functions × ranks, functions numbered by the producer
 * from 0 (more are added as they come). */
typedef struct adt_feed_mpi_profile {
    uint32_t ranks;
    uint32_t functions;
    size_t capacity;               /* functions the arrays hold room for */
    adt_feed_mpi_figures *figures; /* [function * ranks + rank] */
    uint64_t ticks_per_second;     /* 0: not known from the start, no seconds summed */
    adt_feed_mpi_seconds *seconds; /* [function], summed over the ranks */
    double *rank_seconds;          /* [rank], summed over the functions */
} adt_feed_mpi_profile;

/* functions: how many to make room for at once (more may come);
 * ticks_per_second: the producer's clock when known from the start (then
 * seconds are summed call by call), else 0. 0, or -1 when out of memory. */
int adt_feed_mpi_profile_create(adt_feed_mpi_profile *profile, uint32_t ranks, uint32_t functions,
                                uint64_t ticks_per_second);
void adt_feed_mpi_profile_free(adt_feed_mpi_profile *profile);

/* An MPI call of function on rank left: its exclusive ticks (estimated:
 * not measured). 0, or -1 when out of memory or rank is not one. */
int adt_feed_mpi_call(adt_feed_mpi_profile *profile, uint32_t rank, uint32_t function, uint64_t exclusive_ticks,
                      bool estimated);
/* Bytes a message or collective record attributed to function on rank
 * (the innermost MPI call open when it was written). */
int adt_feed_mpi_bytes(adt_feed_mpi_profile *profile, uint32_t rank, uint32_t function, uint64_t sent,
                       uint64_t received);
/* Calls a producer could only give as sums (the stream's totals records:
 * calls, their ticks and bytes). */
int adt_feed_mpi_sums(adt_feed_mpi_profile *profile, uint32_t rank, uint32_t function,
                      const adt_feed_mpi_figures *sums);

/* The figures of function on rank; zeros for a function none came for. */
adt_feed_mpi_figures adt_feed_mpi_of(const adt_feed_mpi_profile *profile, uint32_t rank, uint32_t function);
/* The figures of function summed over the ranks. */
adt_feed_mpi_figures adt_feed_mpi_function(const adt_feed_mpi_profile *profile, uint32_t function);
/* The exclusive ticks of every MPI call of rank. */
uint64_t adt_feed_mpi_rank_ticks(const adt_feed_mpi_profile *profile, uint32_t rank);
/* With ticks_per_second: function's seconds (zeros for one none came
 * for). */
adt_feed_mpi_seconds adt_feed_mpi_function_seconds(const adt_feed_mpi_profile *profile, uint32_t function);

/* ---- The communication matrix ---- */

/* Per (sender, receiver), ranks in MPI_COMM_WORLD: the messages sent and
 * their bytes. A consumer may keep the arrays (then it frees them with
 * free and leaves the struct zeroed). */
typedef struct adt_feed_matrix {
    uint32_t ranks;
    uint64_t *bytes;    /* [sender * ranks + receiver] */
    uint64_t *messages; /* [sender * ranks + receiver] */
} adt_feed_matrix;

/* 0, or -1 when out of memory. */
int adt_feed_matrix_create(adt_feed_matrix *matrix, uint32_t ranks);
void adt_feed_matrix_free(adt_feed_matrix *matrix);
/* A message sender sent to receiver, of bytes. 0, or -1 (nothing added)
 * when either is not a rank. */
int adt_feed_message(adt_feed_matrix *matrix, uint32_t sender, uint32_t receiver, uint64_t bytes);
/* count messages sender sent to receiver, of bytes together (a producer's
 * totals: the stream's per-receiver totals records). 0, or -1 (nothing
 * added) when either is not a rank. */
int adt_feed_messages(adt_feed_matrix *matrix, uint32_t sender, uint32_t receiver, uint64_t count, uint64_t bytes);

/* ---- The spread over the ranks ---- */

typedef struct adt_feed_spread {
    double min;
    double mean;
    double max;
    double imbalance; /* max / mean; 1 where the mean is not above 0 */
} adt_feed_spread;

/* The spread of count values, one per rank, each a double stride bytes
 * after the one before (the first at values): a field of an array of
 * structs, or an array of doubles. */
adt_feed_spread adt_feed_spread_of(const void *values, size_t count, size_t stride);

/* ---- Orderings ---- */

/* The indices 0..count-1 ordered by a double at byte offset field_offset
 * of count elements of element_size bytes from base, largest first, equal
 * ones by index. NULL when out of memory; the caller frees. */
uint32_t *adt_feed_order_by(const void *base, size_t count, size_t element_size, size_t field_offset);

/* The ranks 0..ranks-1 ordered by their waiting, most first: late sender
 * plus collective waiting ticks (an adt_feed_waiting's arrays, or their
 * sums over several analyses), equal ones by rank. Ordered by the ticks,
 * not by seconds: producers with the same ticks give the same order. NULL
 * when out of memory; the caller frees. */
uint32_t *adt_feed_ranks_waiting_most(const uint64_t *late_sender_ticks, const uint64_t *collective_wait_ticks,
                                      size_t ranks);

/* ---- Span and computation per rank ---- */

/* The first and last times of the events of a rank's main thread (the
 * producer's clock ticks, in the order the events came or not). */
typedef struct adt_feed_span {
    uint64_t first;
    uint64_t last;
    bool seen;
} adt_feed_span;

/* An event of the rank's main thread at time. */
void adt_feed_span_event(adt_feed_span *span, uint64_t time);

typedef struct adt_feed_rank_time {
    double span_seconds; /* 0 until an event came */
    double mpi_seconds;
    double computation_seconds; /* span less the time in MPI, 0 where that is not above it */
} adt_feed_rank_time;

/* The rank's span in seconds (its ticks / ticks_per_second, 0 with no
 * clock) and its computation, given its time in MPI (the MPI profile's,
 * every thread's). */
adt_feed_rank_time adt_feed_rank_time_of(const adt_feed_span *span, uint64_t ticks_per_second, double mpi_seconds);

/* ---- Time steps: the computation between consecutive MPI calls ---- */

/* One instance: its duration (producer's ticks), its location (the
 * producer's numbering; location_ranks below maps it to a rank) and
 * whether it was estimated rather than measured (report/folded.c). */
typedef struct adt_feed_segment_instance {
    uint64_t ticks;
    uint32_t location;
    bool estimated;
} adt_feed_segment_instance;

/* The instances of one key, the two calls as the producer numbers them
 * (an MPI function, a calling context, a region), in the order they were
 * fed. */
typedef struct adt_feed_segment_key {
    uint64_t from_call;
    uint64_t to_call;
    adt_feed_segment_instance *instances;
    size_t count;
    size_t capacity;
} adt_feed_segment_key;

/* Every key's instances, found through an open-addressed table; zeroed:
 * empty. */
typedef struct adt_feed_segments {
    adt_feed_segment_key *keys; /* in the order they first came */
    size_t key_count;
    size_t key_capacity;
    uint32_t *slots; /* key index + 1; 0: empty */
    size_t slot_count;
} adt_feed_segments;

/* The computation of location from leaving call from_call (an outermost
 * MPI call) to entering the next one, to_call: ticks long. 0, or -1 when
 * out of memory (nothing added). */
int adt_feed_segment(adt_feed_segments *segments, uint64_t from_call, uint64_t to_call, uint32_t location,
                     uint64_t ticks, bool estimated);
void adt_feed_segments_free(adt_feed_segments *segments);

enum { ADT_FEED_SEGMENT_BINS = 40 };

/* The figures of one key. The quantiles are nearest-rank; the histogram
 * has equal-width bins from the shortest instance to the longest. */
typedef struct adt_feed_segment_figures {
    uint64_t from_call;
    uint64_t to_call;
    uint64_t count;
    double total_seconds;
    double mean_seconds;
    double min_seconds;
    double median_seconds;
    double p95_seconds;
    double max_seconds;
    /* The longest instance (of equal ones, the lowest rank's, then
     * location's, first: whatever order the locations were fed in): its
     * rank and iteration (its number among its location's instances of
     * the key, from 0). */
    uint32_t max_rank;
    uint32_t max_iteration;
    /* The rank whose instances take longest on average. */
    uint32_t slowest_rank;
    double slowest_rank_mean_seconds;
    uint64_t estimated_count; /* of count, those estimated */
    uint64_t histogram[ADT_FEED_SEGMENT_BINS];
} adt_feed_segment_figures;

/* The figures of each key into figures[key index] (key_count of them):
 * location_ranks[location] is each location's rank, below rank_count;
 * seconds are ticks / ticks_per_second. 0, or -1 when out of memory. */
int adt_feed_segments_summarise(const adt_feed_segments *segments, const uint32_t *location_ranks,
                                size_t rank_count, uint64_t ticks_per_second, adt_feed_segment_figures *figures);

/* ---- The sampled profile ---- */

#define ADT_FEED_NO_PARENT UINT32_MAX
#define ADT_FEED_NO_FUNCTION UINT32_MAX
/* Counter values a sample can carry (the report's PAPI counters). */
#define ADT_FEED_COUNTERS_MAX 16

/* A node of a calling-context tree and the samples taken in it. */
typedef struct adt_feed_context {
    uint32_t parent;   /* ADT_FEED_NO_PARENT for a root */
    uint32_t function; /* the producer's function index; ADT_FEED_NO_FUNCTION: none (left out) */
    uint64_t samples;
    double seconds; /* the time its samples stand for */
    double counts[ADT_FEED_COUNTERS_MAX];
} adt_feed_context;

/* A calling-context tree, nodes numbered by the producer from 0. */
typedef struct adt_feed_samples {
    uint32_t counters; /* counter values each sample carries, <= ADT_FEED_COUNTERS_MAX */
    uint32_t count;    /* nodes 0 .. count-1 exist */
    uint32_t capacity;
    adt_feed_context *contexts;
} adt_feed_samples;

/* Node ids a tree can have; a larger one is refused (-1). */
#define ADT_FEED_CONTEXTS_MAX (1u << 30)

void adt_feed_samples_free(adt_feed_samples *samples);
/* Node id's parent and function (its samples, if some came first, stay).
 * 0, or -1 when out of memory or id is too large. */
int adt_feed_context_define(adt_feed_samples *samples, uint32_t id, uint32_t parent, uint32_t function);
/* A sample taken in node context: the seconds it stands for and its
 * counter values (samples->counters of them; NULL: none). 0, or -1 when
 * out of memory or context is too large. */
int adt_feed_sample(adt_feed_samples *samples, uint32_t context, double seconds, const double *counts);

/* One function of the sampled profile. */
typedef struct adt_feed_function_profile {
    uint64_t exclusive_samples;
    uint64_t inclusive_samples;
    double exclusive_seconds;
    double inclusive_seconds;
    double exclusive_counts[ADT_FEED_COUNTERS_MAX];
    double inclusive_counts[ADT_FEED_COUNTERS_MAX];
} adt_feed_function_profile;

/* Adds the samples of the tree to functions (function_count of them,
 * indexed by the contexts' function), nodes in id order: a node's
 * samples exclusively to its function, inclusively once to each function
 * on its path. Nodes without samples or without a function are passed
 * over, and so are the ancestors without one. 0, or -1 when out of
 * memory (nothing added). */
int adt_feed_sampled_functions(const adt_feed_samples *samples, adt_feed_function_profile *functions,
                               uint32_t function_count);

/* ---- Waiting: late sender and collective waiting ---- */

/* One end of a point-to-point message: world ranks of both ends, the
 * communicator as the producer numbers it (the same number on both ends:
 * a global identity), the location that recorded it (the producer's
 * numbering, passed back to the callbacks), the time of its record and
 * the entry of the MPI call that made it. Times are on one clock for all
 * ranks (the producer corrects them). */
typedef struct adt_feed_message_end {
    uint32_t location;
    uint32_t comm;
    uint32_t sender;
    uint32_t receiver;
    uint32_t tag;
    uint64_t bytes;
    uint64_t time;
    uint64_t enter_time;
} adt_feed_message_end;

/* One member's part of a collective instance: its world rank, the
 * location that recorded it, the entry of its call and the time of its
 * end record. */
typedef struct adt_feed_collective_entry {
    uint32_t rank;
    uint32_t location;
    uint64_t enter_time;
    uint64_t end_time;
} adt_feed_collective_entry;

/* A message end not matched yet, in the list of its pair of ranks. */
typedef struct adt_feed_pending_end {
    adt_feed_message_end end;
    bool sending;
    uint32_t next; /* index + 1 of the next in its list (or in the free list); 0: none */
} adt_feed_pending_end;

/* The first and last pending end of one (sender, receiver) pair. */
typedef struct adt_feed_pending_list {
    uint32_t first; /* index + 1; 0: empty */
    uint32_t last;
} adt_feed_pending_list;

/* A collective instance, open until every member has finished it. */
typedef struct adt_feed_collective_instance {
    bool complete;
    uint32_t finished;
    uint64_t last_entry;
    adt_feed_collective_entry *entries; /* one per member that finished it */
} adt_feed_collective_instance;

/* One communicator's instances from its oldest open one on (the one with
 * sequence number first + i at [i]) and each rank's next sequence number
 * on it (NULL until a collective on it came). */
typedef struct adt_feed_collective_window {
    uint64_t first;
    adt_feed_collective_instance *instances;
    size_t count;
    size_t capacity;
    uint64_t *next_sequence; /* [rank] */
} adt_feed_collective_window;

/* The matching of messages and collective instances as their ends come,
 * and its figures. Messages: MPI delivers the messages of one
 * (communicator, sender, receiver, tag) in the order they were sent, so
 * the n-th send of such a key matches its n-th receive (receives fed in
 * the order they completed on their rank): an end matches the oldest
 * waiting end of the other side with its key; one that finds none waits.
 * Collectives: the n-th collective a rank finishes on a communicator is
 * instance n on every member; an instance is summed up when its last
 * member has finished it. Only what still waits is kept. Each rank's ends
 * must come in the order its records were written; the ranks' may
 * interleave in any way. */
typedef struct adt_feed_waiting {
    uint32_t ranks;
    adt_feed_pending_list *pending_lists; /* [sender * ranks + receiver] */
    adt_feed_pending_end *pending;
    size_t pending_count;
    size_t pending_capacity;
    uint32_t free_pending; /* index + 1 of the first free one; 0: none */
    uint64_t message_ends;     /* fed */
    uint64_t messages_matched; /* each of two ends */
    uint64_t *late_sender_ticks; /* [receiving rank]: its receives' entries before their sends' */
    adt_feed_collective_window *windows; /* [comm] */
    size_t window_count;
    uint64_t collectives_matched;
    uint64_t *collective_wait_ticks; /* [rank] */
    /* Called, when not NULL, with data: matched for each matched message,
     * collective_matched for each collective instance every member of
     * which finished it, with its members' entries. */
    void (*matched)(void *data, const adt_feed_message_end *send, const adt_feed_message_end *receive);
    void (*collective_matched)(void *data, const adt_feed_collective_entry *entries, uint32_t count);
    void *data;
} adt_feed_waiting;

/* 0, or -1 when out of memory. */
int adt_feed_waiting_create(adt_feed_waiting *waiting, uint32_t ranks);
void adt_feed_waiting_free(adt_feed_waiting *waiting);
/* A send (sending) or a completed receive. 0, or -1 (nothing added)
 * when a rank is not one or out of memory. */
int adt_feed_message_end_add(adt_feed_waiting *waiting, bool sending, const adt_feed_message_end *end);
/* Rank entry->rank finished its next collective on comm, which involves
 * members ranks (both groups of an inter-communicator). 0, or -1
 * (nothing added) when the rank is not one or out of memory. */
int adt_feed_collective_end(adt_feed_waiting *waiting, uint32_t comm, uint32_t members,
                            const adt_feed_collective_entry *entry);
/* As adt_feed_collective_end, the end of the rank's instance sequence on
 * comm as the producer numbered it (the count of the rank's collective
 * ends on comm before it, fed or not): an end the producer lost leaves
 * its instance incomplete (never matched, kept until the waiting is
 * freed) and does not shift the rank's later ones. Each rank's numbers
 * on a communicator must grow; -1 (nothing added) for one that does not,
 * a rank that is not one, or out of memory. */
int adt_feed_collective_end_numbered(adt_feed_waiting *waiting, uint32_t comm, uint32_t members,
                                     const adt_feed_collective_entry *entry, uint64_t sequence);

#endif
