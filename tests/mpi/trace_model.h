// The parts of an OTF2 archive the MPI whole-run checks look at, read back
// with the OTF2 reader API: definitions (regions, calling contexts, groups,
// communicators, locations) and, per location, its MPI calls with the
// message, request and collective events recorded inside each call.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace adaptrace_test {

enum class EventKind {
    send,           // MpiSend or MpiIsend (request set for the latter)
    receive,        // MpiRecv or MpiIrecv (request set for the latter)
    isend_complete,
    irecv_request,
    request_test,
    request_cancelled,
    collective_begin,
    collective_end,
    nb_collective_request,
    nb_collective_complete,
    rma_win_create,
    rma_win_destroy,
    rma_collective_begin,
    rma_collective_end,
    rma_group_sync,
    rma_request_lock,
    rma_release_lock,
    rma_sync,
    rma_put,
    rma_get,
    rma_atomic,
    rma_complete_blocking,
    rma_complete_nonblocking,
    rma_complete_remote,
    rma_op_test,
};

struct Event {
    EventKind kind = EventKind::send;
    uint64_t position = 0;  // index among this location's events, for ordering
    uint32_t peer = 0;  // rank in comm (send: receiver, receive: sender)
    uint32_t comm = 0;
    uint32_t tag = 0;
    uint64_t bytes = 0;
    std::optional<uint64_t> request;
    uint32_t collective_op = 0;
    uint32_t root = 0;
    uint64_t sent = 0;
    uint64_t received = 0;
    // RMA events: window, target (peer), matching id (request), sent and
    // received bytes, group (group sync), collective_op (collective end).
    uint32_t win = 0;
    uint32_t group = 0;
};

// One MPI region instance (Enter … Leave, or CallingContextEnter … Leave).
struct Call {
    std::string name;
    std::vector<Event> events;
    bool left = false;
};

struct Group {
    uint32_t type = 0;
    uint32_t flags = 0;
    std::vector<uint64_t> members;
};

struct Comm {
    bool inter = false;
    uint32_t group = 0;   // intra-communicator
    uint32_t group_a = 0; // inter-communicator
    uint32_t group_b = 0;
};

struct LocationTrace {
    std::vector<Call> calls;
    std::vector<std::string> errors;  // nesting problems found while reading
    uint64_t events = 0;
};

struct Trace {
    std::map<uint32_t, std::string> strings;
    std::map<uint32_t, std::string> region_names;
    std::map<uint32_t, uint32_t> calling_context_regions;
    std::map<uint32_t, Group> groups;
    std::map<uint32_t, Comm> comms;
    std::map<uint32_t, uint32_t> rma_win_comms;  // RmaWin -> its Comm
    std::vector<uint64_t> locations;
    std::vector<uint64_t> comm_locations;  // members of the COMM_LOCATIONS group
    std::map<uint64_t, LocationTrace> by_location;
    bool calling_context_events = false;
    bool enter_leave_events = false;

    // World rank of a location (its index in COMM_LOCATIONS), if any.
    std::optional<uint32_t> world_rank_of(uint64_t location) const;
    // The location of rank `rank` of `comm`, seen from `self`; empty when
    // the rank or communicator cannot be resolved.
    std::optional<uint64_t> location_of(uint32_t comm, uint32_t rank, uint64_t self) const;
    // World ranks of the members of an intra-communicator as seen from self.
    std::optional<std::vector<uint32_t>> world_members(uint32_t group, uint64_t self) const;
};

// Reads the archive whose anchor file is anchor_path; on failure returns
// false and says why in error.
bool read_trace(const std::string &anchor_path, Trace &trace, std::string &error);

}  // namespace adaptrace_test
