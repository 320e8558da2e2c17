/* What the files of the report module share: growing arrays, and the
 * matching of messages and collective instances after the reading pass. */
#ifndef ADT_REPORT_INTERNAL_H
#define ADT_REPORT_INTERNAL_H

#include <otf2/otf2.h>

#include "report/report.h"

/* array grown to hold at least needed elements (new ones zeroed); exits on
 * out of memory. */
void *adt_report_grow(void *array, size_t *capacity, size_t needed, size_t element_size);

/* Writes path with print; -1 with a reason in error when it cannot be
 * written. */
int adt_report_write_file(const char *path,
                          void (*print)(const struct adt_report_profile *profile, const char *archive, FILE *out),
                          const struct adt_report_profile *profile, const char *archive, char *error,
                          size_t error_size);

/* text as a JSON string; '<' escaped too, so the JSON can sit in an HTML
 * script. */
void adt_report_print_json_string(const char *text, FILE *out);

/* One send or receive: world ranks of both ends, and the entry of the MPI
 * call that made it. */
struct adt_report_message {
    uint32_t comm;
    uint32_t sender;
    uint32_t receiver;
    uint32_t tag;
    uint64_t bytes;
    uint64_t time;
    uint64_t enter_time;
};

/* One rank's part of one collective: its sequence number on the
 * communicator names the instance. */
struct adt_report_collective {
    uint32_t comm;
    uint32_t rank;
    uint64_t sequence;
    uint64_t enter_time;
};

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
    struct adt_report_message *sends;
    size_t send_count;
    size_t send_capacity;
    struct adt_report_message *receives;
    size_t receive_count;
    size_t receive_capacity;
    struct adt_report_collective *collectives;
    size_t collective_count;
    size_t collective_capacity;
};

void adt_report_define_group(struct adt_report_matching *matching, uint32_t group, OTF2_GroupType type,
                             uint32_t size, const uint64_t *members);
/* remote_group: UINT32_MAX for an intra-communicator. */
void adt_report_define_comm(struct adt_report_matching *matching, uint32_t comm, uint32_t group,
                            uint32_t remote_group);
void adt_report_matching_start(struct adt_report_matching *matching, size_t rank_count);
/* peer is the other end's rank in comm, as the MPI records give it. */
void adt_report_add_message(struct adt_report_matching *matching, bool sending, uint32_t rank, uint32_t peer,
                            uint32_t comm, uint32_t tag, uint64_t bytes, uint64_t time, uint64_t enter_time);
void adt_report_add_collective(struct adt_report_matching *matching, uint32_t comm, uint32_t rank,
                               uint64_t sequence, uint64_t enter_time);
/* Fills the matrix, the late-sender and collective waiting times and the
 * match counts of profile. */
void adt_report_match(struct adt_report_matching *matching, struct adt_report_profile *profile,
                      uint64_t timer_resolution);
void adt_report_matching_free(struct adt_report_matching *matching);

#endif
