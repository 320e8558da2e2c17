/* The analyzer's decoder of the ranks' chunks into the event feed's
 * analyses (feed/feed.h) and live/report.json (live.c), for analyzer.c;
 * the ranks' side never includes it. */
#ifndef ADAPTRACE_ONLINE_LIVE_H
#define ADAPTRACE_ONLINE_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "feed/feed.h"
#include "online/wire.h"

/* The key of each cause in live/report.json, by adt_online_loss,
 * adt_online_sample_loss and adt_online_message_loss. */
extern const char *const adt_online_loss_keys[ADT_ONLINE_LOSS_COUNT];
extern const char *const adt_online_sample_loss_keys[ADT_ONLINE_SAMPLE_LOSS_COUNT];
extern const char *const adt_online_message_loss_keys[ADT_ONLINE_MESSAGE_LOSS_COUNT];
extern const char *const adt_online_waiting_loss_keys[ADT_ONLINE_WAITING_LOSS_COUNT];

/* One rank as its chunks tell it; all words, so the analyzers' totals add
 * up with one MPI_SUM (a rank is served by one analyzer, the others hold
 * zeros for it). */
typedef struct adt_live_rank {
    uint64_t ticks_per_second;
    uint64_t unstreamed[ADT_ONLINE_LOSS_COUNT];
    uint64_t heard;    /* 1 once a chunk came */
    uint64_t finished; /* 1 once its last chunk came */
    uint64_t chunks;
    uint64_t bytes;
    uint64_t samples_unstreamed[ADT_ONLINE_SAMPLE_LOSS_COUNT];
    uint64_t messages_unstreamed[ADT_ONLINE_MESSAGE_LOSS_COUNT];
    /* The span of its thread that called MPI_Init so far (the event
     * feed's, from its chunks' headers; clock ticks), once heard. */
    uint64_t first_event;
    uint64_t last_event;
    /* Time steps left out: the computation before an outermost call
     * that came after calls not streamed one by one
     * (ADT_ONLINE_CALL_AFTER_UNSTREAMED). */
    uint64_t steps_unknown;
    /* Its main thread's sampling rate over time: the initial rate (its
     * introduction's; 0: not sampled), and per halving k the time it was
     * reached (its rate records'; 0: not said) and the bytes of its
     * buffer in use just before and after. */
    uint64_t rate_hz;
    uint64_t rate_reached[ADT_ONLINE_RATE_SHIFTS];
    uint64_t rate_bytes[ADT_ONLINE_RATE_SHIFTS][2];
    /* Its clock offset to rank 0 (its introduction's; an int64_t), added
     * to its times before they meet another rank's. */
    uint64_t clock_offset;
    /* The waiting analysis (the feed's, feed/waiting.c): its message and
     * collective ends the rank could not stream, by cause (its chunks'
     * headers), those the analyzer left out, by cause
     * (ADT_ONLINE_WAITING_LOSS_PEER_ON_OTHER_ANALYZER,
     * ADT_ONLINE_WAITING_LOSS_PEER_UNKNOWN), its message ends fed, the
     * messages it received that were matched, the collective instances
     * matched whose first finished member it was (each instance counted
     * once over the ranks), and its late sender and collective waiting
     * (ticks of the ranks' clocks). */
    uint64_t waiting_unstreamed[ADT_ONLINE_WAITING_LOSS_COUNT];
    uint64_t waiting_left_out[ADT_ONLINE_WAITING_LOSS_COUNT];
    uint64_t message_ends;
    uint64_t messages_matched;
    uint64_t collectives_matched;
    uint64_t late_sender_ticks;
    uint64_t collective_wait_ticks;
    /* Analyzer 0's analysis of the ends crossing analyzers only
     * (adt_live_add_crossing_words): the rank's ends it took, each one
     * counted under ADT_ONLINE_WAITING_LOSS_PEER_ON_OTHER_ANALYZER by the
     * analyzer serving the rank until then. */
    uint64_t crossing_ends_taken;
    /* Its PAPI counters' running totals at its last sample streamed (its
     * chunks' headers; ADAPTRACE_METRICS). */
    uint64_t counter_totals[ADT_ONLINE_COUNTERS_MAX];
} adt_live_rank;

/* Where a rank's next time step starts: the function and Leave of its
 * last outermost call (open: one came). */
typedef struct adt_live_step_start {
    uint64_t leave;
    uint32_t function;
    bool open;
} adt_live_step_start;

/* The name of a rank's calling-context node (key as the rank sent it),
 * as the archive names its region; below_measurement: its parent is
 * adaptrace's own frame, *measurement: it is one. NULL: no name (the
 * node is left out). */
typedef const char *(*adt_live_namer)(void *state, uint32_t rank, uint32_t id, uint64_t key,
                                      bool below_measurement, bool *measurement);

/* A rank's sampled profile as it came (the analyzer serving it only):
 * its calling-context tree with its samples, in the event feed's
 * analysis (feed/feed.h; functions: indices into adt_live.function_names),
 * each sample standing for round(2^k × 10^6 / rate) µs at halving k (the
 * archive's interrupt generator period). */
/* A region's name as a rank sent it (ADT_ONLINE_RECORD_REGION_NAME): its
 * parts come in order; complete once the part with the NUL came. */
typedef struct adt_live_named_region {
    uint32_t region;
    uint32_t parts;
    bool complete;
    char name[ADT_ONLINE_REGION_NAME_MAX];
} adt_live_named_region;

typedef struct adt_live_samples {
    uint32_t rate_hz; /* 0 until its introduction said, or not sampled */
    /* The names of the regions met in its calling contexts */
    adt_live_named_region *region_names;
    uint32_t region_name_count;
    uint32_t region_name_capacity;
    adt_feed_samples tree;
    /* [node id]: adaptrace's own frame (the namer folds the frames below
     * it into it too) */
    bool *measurement;
    uint32_t measurement_capacity;
    /* With PAPI counters (tree.counters, the rank's introduction's): the
     * sample of the last samples record, fed once its counts records
     * came (pending: one is waiting; context ADT_FEED_NO_PARENT: its
     * context was left out), and its counts so far. */
    bool pending;
    uint32_t pending_context;
    double pending_seconds;
    double pending_counts[ADT_FEED_COUNTERS_MAX];
} adt_live_samples;

/* What the analyzer knows of its ranks. The MPI profile is the event
 * feed's (feed/feed.h), functions numbered by adt_mpi_function, its ticks
 * each rank's own (adt_live_write reads them at rank 0's rate). */
typedef struct adt_live adt_live;
struct adt_live {
    uint32_t ranks;
    adt_feed_mpi_profile mpi;
    /* The communication matrix from the ranks' message records (the
     * feed's, ranks in MPI_COMM_WORLD) */
    adt_feed_matrix matrix;
    adt_live_rank *states;    /* [rank] */
    /* The time steps of the ranks (the feed's: locations are ranks, calls
     * adt_mpi_function, ticks each rank's own), and where each rank's
     * next one starts. */
    adt_feed_segments steps;
    adt_live_step_start *step_starts; /* [rank] */
    adt_live_samples *samples; /* [rank] */
    char **function_names;     /* the sampled functions met, by name */
    uint32_t function_count;
    uint32_t function_capacity;
    adt_live_namer namer;
    void *namer_state;
    /* Late sender and collective waiting: the feed's matching of the
     * ranks' message and collective ends (feed/waiting.c, the analysis
     * adaptrace-report's reader drives), its communicators numbered by
     * their keys (adt_online_comm_key) in the order met, and the ranks
     * this analyzer serves, [served_first, served_end): the ends whose
     * other ends go to another analyzer are left out (counted). */
    adt_feed_waiting waiting;
    uint64_t *comm_keys;
    size_t comm_count;
    size_t comm_capacity;
    uint32_t served_first;
    uint32_t served_end;
    /* The ends this analyzer cannot match (a message whose other end is
     * another analyzer's rank, a collective with a member another
     * analyzer serves), for analyzer 0 to match
     * (adt_live_add_crossing_words): ADT_LIVE_CROSSING_END_WORDS words
     * each, in the order they came, their times on rank 0's clock; kept
     * until adt_live_crossing_taken drops those analyzer 0 took. */
    uint64_t *crossing;
    size_t crossing_words;
    size_t crossing_capacity;
    /* Analyzer 0's total only: the analysis of the ends crossing
     * analyzers, whose per-rank waiting figures adt_live_write adds to
     * live's (NULL: none). */
    const adt_live *crossed;
};

/* A crossing end's words: its rank, then its record (wire.h) with its
 * times on rank 0's clock. */
#define ADT_LIVE_CROSSING_END_WORDS (1 + sizeof(adt_online_record) / sizeof(uint64_t))

#define ADT_LIVE_RANK_WORDS (sizeof(adt_live_rank) / sizeof(uint64_t))

/* 0, or -1 when out of memory. It serves every rank until
 * adt_live_serve says otherwise. */
int adt_live_create(adt_live *live, uint32_t ranks, uint32_t functions);
/* The ranks [first, end) are the ones whose chunks live gets (the
 * others' are another analyzer's). */
void adt_live_serve(adt_live *live, uint32_t first, uint32_t end);
void adt_live_destroy(adt_live *live);

/* The name rank sent for region (ADT_ONLINE_RECORD_REGION_NAME), NULL
 * where none came whole. For the namer. */
const char *adt_live_region_name(const adt_live *live, uint32_t rank, uint32_t region);

/* Adds a chunk of bytes bytes that came from rank source (last: its last
 * one): its calls, its messages, its message and collective ends, its
 * samples and the calling contexts they refer to (named by live->namer).
 * Returns 0, or -1 with the reason in error for a chunk that does not
 * hold what its header says (then nothing of it is added) or when out of
 * memory for the waiting analysis (then what came before in it stays). */
int adt_live_add_chunk(adt_live *live, uint32_t source, const adt_online_chunk *chunk, size_t bytes, bool last,
                       char *error, size_t error_size);

/* The time steps live holds as words, for analyzer 0 to gather: per key
 * its from and to call and its instance count, then per instance its
 * ticks and its rank (bit 32: estimated). Only the instances added since
 * those already sent: sent[k] of key k's for the first sent_keys keys
 * (keys keep their order; sent NULL and sent_keys 0: every instance),
 * keys with none new left out, so that a report round carries what came
 * since the last one (issue #28). malloc'd, *count words; NULL when out
 * of memory. */
uint64_t *adt_live_steps_words(const adt_live *live, const size_t *sent, size_t sent_keys, size_t *count);
/* Adds the time steps of count words (adt_live_steps_words') to live's.
 * 0, or -1 when out of memory or the words do not parse (what came
 * before stays). */
int adt_live_add_steps_words(adt_live *live, const uint64_t *words, size_t count);

/* Drops the first words words of live->crossing (a multiple of
 * ADT_LIVE_CROSSING_END_WORDS, at most live->crossing_words): analyzer 0
 * took them. */
void adt_live_crossing_taken(adt_live *live, size_t words);
/* Feeds the crossing ends of count words (an analyzer's
 * live->crossing) into cross's waiting analysis, which serves every rank
 * and holds each end until its other ends come: the same matching as
 * adt_live_add_chunk's, each end counted in its rank's
 * crossing_ends_taken. 0, or -1 when out of memory or the words do not
 * parse (what came before stays). */
int adt_live_add_crossing_words(adt_live *cross, const uint64_t *words, size_t count);

/* The sampled profile of the ranks whose samples live holds (the feed's
 * analysis, per rank), as text for adt_live_write (one line a rank and
 * function: rank, exclusive and inclusive samples and microseconds, the
 * count of PAPI counters and each one's exclusive and inclusive counts,
 * name); malloc'd, its length in *length; NULL when out of memory. */
char *adt_live_sampled_profile(const adt_live *live, size_t *length);

/* Prints the page of live/report.html embedding the report's JSON text
 * (length bytes) to out: adt_report_print_live_page (report/), which the
 * analyzer has where the build has the HTML page (ADAPTRACE_REPORT_HTML). */
typedef void (*adt_live_page_printer)(const char *archive, const char *json, size_t length, FILE *out);

/* When a report is written and what it covers. */
typedef struct adt_live_moment {
    bool final;          /* every rank sent its last chunk */
    uint32_t analyzers;
    uint32_t interval_s;
    double elapsed_s;    /* since the analyzers started */
    double analyzers_cpu_s; /* the CPU time the analyzers reported have used, user and system */
    /* The signal that ended the analyzers before their ranks finished
     * (mpirun ends a job whose rank died so), 0 if none: then the report
     * is the last one, of what analyzer 0 itself received
     * (analyzers_reported 1 of analyzers), and not final. */
    int ended_by_signal;
    uint32_t analyzers_reported;
    /* [analyzer]: it did not report in time (it died), NULL where none
     * did: analyzer 0 went on without it, and the report names its
     * ranks as without analyzer (their figures are the last it
     * reported) from analyzers_lost_at_s (the first such loss, since the
     * analyzers started). */
    const bool *analyzer_lost;
    double analyzers_lost_at_s;
    /* The bytes of the other analyzers' report rounds that analyzer 0
     * took, since the analyzers started, and of the largest one: each
     * carries the time steps new since the one before (issue #28). */
    uint64_t round_report_bytes;
    uint64_t round_report_largest_bytes;
    /* The PAPI counters the ranks' samples carry (ADAPTRACE_METRICS, as
     * their introductions name them): the report's "counters" and each
     * rank's "counter_totals". */
    const char *const *counter_names;
    uint32_t counters;
} adt_live_moment;

/* Writes <archive>/live/report.json atomically (a temporary file renamed
 * over it): the totals of live, the sampled profile (the lines of
 * adt_live_sampled_profile of every analyzer reported, concatenated) and
 * the moment; then, with a page printer, live/report.html from the same
 * text, atomically too. names[function]: each function's name. 0, or -1
 * with the reason in error. */
int adt_live_write(const adt_live *live, const char *const *names, const char *profile, size_t profile_length,
                   const char *archive, const adt_live_moment *moment, adt_live_page_printer page, char *error,
                   size_t error_size);

#endif
