/* What the files of the report module share: growing arrays, and the
 * matching of messages and collective instances after the reading pass. */
#ifndef ADT_REPORT_INTERNAL_H
#define ADT_REPORT_INTERNAL_H

#include <otf2/otf2.h>

#include "feed/feed.h"
#include "report/report.h"

/* array grown to hold at least needed elements, its capacity doubled as
 * often as that takes; exits on out of memory. The new elements are left
 * as they are: for records written whole before they are read. */
void *adt_report_reserve(void *array, size_t *capacity, size_t needed, size_t element_size);
/* The same with the new elements zeroed. */
void *adt_report_grow(void *array, size_t *capacity, size_t needed, size_t element_size);
/* The result of a call into the event feed's analyses (feed/feed.h): -1,
 * out of memory (the reader feeds only ranks and contexts it defined),
 * ends the report as above. */
void adt_report_fed(int result);

/* Writes path with print; -1 with a reason in error when it cannot be
 * written. */
int adt_report_write_file(const char *path,
                          void (*print)(const struct adt_report_profile *profile, const char *archive, FILE *out),
                          const struct adt_report_profile *profile, const char *archive, char *error,
                          size_t error_size);

/* The HTML pages' shell (page_shell.c): the head (heading: archive as
 * title, the style, d3, d3-flame-graph where flame_graph, page_common.js)
 * and the heading, then, after the page's body and data, its script. */
void adt_report_print_page_head(const char *heading, const char *archive, bool flame_graph, FILE *out);
void adt_report_print_page_tail(const char *script, FILE *out);

/* text as a JSON string; '<' escaped too, so the JSON can sit in an HTML
 * script. */
void adt_report_print_json_string(const char *text, FILE *out);
/* The user regions and phases (phases.c): a text section (none without
 * user regions), and the JSON keys "user_regions" and "phases" (each
 * preceded by a comma). */
void adt_report_print_phases_text(const struct adt_report_profile *profile, FILE *out);
void adt_report_print_phases_json(const struct adt_report_profile *profile, FILE *out);

/* A tree of named nodes: the parent of a node (UINT32_MAX above a root)
 * and its name. */
struct adt_report_tree {
    uint32_t (*parent_of)(const void *data, uint32_t node);
    const char *(*name_of)(const void *data, uint32_t node);
    const void *data;
};

/* "main > solve > kernel": the names of node and its ancestors, root
 * first; the caller frees it. */
char *adt_report_join_path(uint32_t node, const struct adt_report_tree *tree);

struct adt_report_group {
    OTF2_GroupType type;
    uint32_t size;
    uint64_t *members;
};

struct adt_report_comm {
    uint32_t group;        /* its group; group A of an inter-communicator */
    uint32_t remote_group; /* group B of an inter-communicator, else UINT32_MAX */
};

struct adt_report_matching {
    size_t rank_count;
    struct adt_report_group *groups;
    size_t group_capacity;
    struct adt_report_comm *comms;
    size_t comm_count;
    size_t comm_capacity;
    /* The event feed's (feed.h), its matrix's arrays handed to the
     * profile by adt_report_match; messages and collectives are matched
     * by its waiting as they are read (its callbacks set by the reader). */
    adt_feed_matrix matrix;
    adt_feed_waiting waiting;
};

void adt_report_define_group(struct adt_report_matching *matching, uint32_t group, OTF2_GroupType type,
                             uint32_t size, const uint64_t *members);
/* remote_group: UINT32_MAX for an intra-communicator. */
void adt_report_define_comm(struct adt_report_matching *matching, uint32_t comm, uint32_t group,
                            uint32_t remote_group);
void adt_report_matching_start(struct adt_report_matching *matching, size_t rank_count);
/* A message a folded call sent (folded.c): rank sent bytes to the rank
 * peer places from its own in comm. Only the matrix takes it (it has no
 * time to match by). False, and nothing added, where the archive does not
 * say who that is (an inter-communicator's, a peer outside the group). */
bool adt_report_add_folded_send(struct adt_report_matching *matching, uint32_t comm, uint32_t rank, int64_t peer,
                                 uint64_t bytes);
/* peer is the other end's rank in comm, as the MPI records give it. */
void adt_report_add_message(struct adt_report_matching *matching, bool sending, uint32_t location, uint32_t rank,
                            uint32_t peer, uint32_t comm, uint32_t tag, uint64_t bytes, uint64_t time,
                            uint64_t enter_time);
/* entry->rank's next collective on comm ended (a communicator the
 * archive did not define is passed over). */
void adt_report_add_collective(struct adt_report_matching *matching, uint32_t comm,
                               const adt_feed_collective_entry *entry);
/* Fills the matrix, the late-sender and collective waiting times and the
 * match counts of profile (all was matched as it came). */
void adt_report_match(struct adt_report_matching *matching, struct adt_report_profile *profile,
                      uint64_t timer_resolution);
void adt_report_matching_free(struct adt_report_matching *matching);

/* Fills the segments of profile from the event feed's time steps
 * (feed/feed.h; location_ranks[location]: each location's rank), most
 * total time first; name_call(data, call, path) names a call (its
 * function, or with path its call path) in memory the profile then owns. */
void adt_report_segments_finish(const adt_feed_segments *segments, const uint32_t *location_ranks,
                                size_t rank_count, uint64_t timer_resolution,
                                char *(*name_call)(void *data, uint64_t call, bool path), void *name_data,
                                struct adt_report_profile *profile);

/* The Chrome trace-event file being written during the reading pass
 * (chrome.c): pid is the rank, tid the location's index among the
 * archive's locations, times are from the archive's global offset. */
struct adt_report_chrome {
    FILE *out;
    uint64_t global_offset;
    double nanoseconds_per_tick;
    bool written; /* an event is out: the next one needs a comma */
    uint64_t flows;
};

/* Opens the JSON object and its event array. */
void adt_report_chrome_start(struct adt_report_chrome *chrome, uint64_t global_offset, uint64_t timer_resolution,
                             uint64_t trace_length, const char *archive);
/* The name of a rank's process ("rank N") and of a location's thread. */
void adt_report_chrome_process(struct adt_report_chrome *chrome, uint32_t rank);
void adt_report_chrome_thread(struct adt_report_chrome *chrome, uint32_t rank, uint32_t thread, const char *name);
/* A region instance, as a complete event. */
void adt_report_chrome_slice(struct adt_report_chrome *chrome, uint32_t rank, uint32_t thread, const char *name,
                             bool mpi, uint64_t enter_time, uint64_t leave_time);
/* A matched message as a flow from its send to its receive; the
 * matched callback of struct adt_report_matching, data the chrome file. */
void adt_report_chrome_flow(void *data, const adt_feed_message_end *send,
                            const adt_feed_message_end *receive);
/* Closes the array and the object. */
void adt_report_chrome_end(struct adt_report_chrome *chrome);

/* One MPI call of a folded call's key (skeleton.c): its function (the
 * skeleton file's function index) and the bytes of its own records. */
struct adt_report_call_part {
    uint32_t function;
    uint64_t bytes_sent;
    uint64_t bytes_received;
};

/* A message one folded call's key sent (an MpiSend or MpiIsend record):
 * its communicator as the skeleton numbers it (its first use on the
 * thread, from 1; 0: none), the receiver relative to the sender's rank in
 * it, and its bytes. */
struct adt_report_call_send {
    uint64_t comm;
    int64_t peer;
    uint64_t bytes;
};

/* Where adt_report_skeleton_call_parts puts a key's sends: the first
 * capacity of them in sends; count: all of them. */
struct adt_report_call_sends {
    struct adt_report_call_send *sends;
    int capacity;
    int count;
};

struct adt_skeleton_file;
/* The calls key stands for into parts: the outermost first, then the
 * nested ones in the order entered; its messages sent into sends, where
 * not NULL. Their count, or -1 for a key that does not decode or holds
 * more than capacity calls. */
int adt_report_skeleton_call_parts(const struct adt_skeleton_file *file, const uint8_t *key, uint32_t length,
                                   struct adt_report_call_part *parts, int capacity,
                                   struct adt_report_call_sends *sends);

#endif
