#include "trace_model.h"

#include <otf2/otf2.h>

namespace adaptrace_test {

namespace {

struct ReadState {
    Trace *trace;
    std::map<uint64_t, std::vector<size_t>> open_regions;  // per location: indices into calls
};

Trace &trace_of(void *user_data) { return *static_cast<ReadState *>(user_data)->trace; }

OTF2_CallbackCode on_string(void *user_data, OTF2_StringRef self, const char *string)
{
    trace_of(user_data).strings[self] = string;
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_region(void *user_data, OTF2_RegionRef self, OTF2_StringRef name,
                            OTF2_StringRef, OTF2_StringRef, OTF2_RegionRole, OTF2_Paradigm,
                            OTF2_RegionFlag, OTF2_StringRef, uint32_t, uint32_t)
{
    Trace &trace = trace_of(user_data);
    trace.region_names[self] = trace.strings[name];
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_calling_context(void *user_data, OTF2_CallingContextRef self,
                                     OTF2_RegionRef region, OTF2_SourceCodeLocationRef,
                                     OTF2_CallingContextRef)
{
    trace_of(user_data).calling_context_regions[self] = region;
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_location(void *user_data, OTF2_LocationRef self, OTF2_StringRef,
                              OTF2_LocationType, uint64_t, OTF2_LocationGroupRef)
{
    trace_of(user_data).locations.push_back(self);
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_group(void *user_data, OTF2_GroupRef self, OTF2_StringRef,
                           OTF2_GroupType type, OTF2_Paradigm paradigm, OTF2_GroupFlag flags,
                           uint32_t member_count, const uint64_t *members)
{
    Trace &trace = trace_of(user_data);
    Group group;
    group.type = type;
    group.flags = flags;
    group.members.assign(members, members + member_count);
    if (type == OTF2_GROUP_TYPE_COMM_LOCATIONS && paradigm == OTF2_PARADIGM_MPI)
        trace.comm_locations = group.members;
    trace.groups[self] = group;
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_comm(void *user_data, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef group,
                          OTF2_CommRef, OTF2_CommFlag)
{
    Comm comm;
    comm.group = group;
    trace_of(user_data).comms[self] = comm;
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_inter_comm(void *user_data, OTF2_CommRef self, OTF2_StringRef,
                                OTF2_GroupRef group_a, OTF2_GroupRef group_b, OTF2_CommRef,
                                OTF2_CommFlag)
{
    Comm comm;
    comm.inter = true;
    comm.group_a = group_a;
    comm.group_b = group_b;
    trace_of(user_data).comms[self] = comm;
    return OTF2_CALLBACK_SUCCESS;
}

// ---- events ------------------------------------------------------------

void enter_region(void *user_data, OTF2_LocationRef location, const std::string &name)
{
    ReadState &state = *static_cast<ReadState *>(user_data);
    LocationTrace &lt = state.trace->by_location[location];
    lt.events++;
    Call call;
    call.name = name;
    lt.calls.push_back(call);
    state.open_regions[location].push_back(lt.calls.size() - 1);
}

void leave_region(void *user_data, OTF2_LocationRef location, const std::string &name)
{
    ReadState &state = *static_cast<ReadState *>(user_data);
    LocationTrace &lt = state.trace->by_location[location];
    lt.events++;
    std::vector<size_t> &open = state.open_regions[location];
    if (open.empty()) {
        lt.errors.push_back("Leave of " + name + " without an open region");
        return;
    }
    Call &call = lt.calls[open.back()];
    if (call.name != name)
        lt.errors.push_back("Leave of " + name + " while " + call.name + " is open");
    call.left = true;
    open.pop_back();
}

std::string region_name(void *user_data, OTF2_RegionRef region)
{
    const Trace &trace = trace_of(user_data);
    auto found = trace.region_names.find(region);
    return found == trace.region_names.end() ? "<undefined region " + std::to_string(region) + ">"
                                             : found->second;
}

std::string calling_context_name(void *user_data, OTF2_CallingContextRef context)
{
    const Trace &trace = trace_of(user_data);
    auto found = trace.calling_context_regions.find(context);
    if (found == trace.calling_context_regions.end())
        return "<undefined calling context " + std::to_string(context) + ">";
    return region_name(user_data, found->second);
}

OTF2_CallbackCode on_enter(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data,
                           OTF2_AttributeList *, OTF2_RegionRef region)
{
    trace_of(user_data).enter_leave_events = true;
    enter_region(user_data, location, region_name(user_data, region));
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_leave(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data,
                           OTF2_AttributeList *, OTF2_RegionRef region)
{
    leave_region(user_data, location, region_name(user_data, region));
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_cc_enter(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data,
                              OTF2_AttributeList *, OTF2_CallingContextRef context, uint32_t)
{
    trace_of(user_data).calling_context_events = true;
    enter_region(user_data, location, calling_context_name(user_data, context));
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_cc_leave(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data,
                              OTF2_AttributeList *, OTF2_CallingContextRef context)
{
    leave_region(user_data, location, calling_context_name(user_data, context));
    return OTF2_CALLBACK_SUCCESS;
}

// Attaches an MPI event to the innermost open region of its location.
OTF2_CallbackCode add_event(void *user_data, OTF2_LocationRef location, Event event)
{
    ReadState &state = *static_cast<ReadState *>(user_data);
    LocationTrace &lt = state.trace->by_location[location];
    event.position = lt.events++;
    std::vector<size_t> &open = state.open_regions[location];
    if (open.empty()) {
        lt.errors.push_back("MPI event of kind " + std::to_string(static_cast<int>(event.kind)) +
                            " outside any region");
        return OTF2_CALLBACK_SUCCESS;
    }
    lt.calls[open.back()].events.push_back(event);
    return OTF2_CALLBACK_SUCCESS;
}

Event message(EventKind kind, uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes)
{
    Event event;
    event.kind = kind;
    event.peer = peer;
    event.comm = comm;
    event.tag = tag;
    event.bytes = bytes;
    return event;
}

Event request_event(EventKind kind, uint64_t request)
{
    Event event;
    event.kind = kind;
    event.request = request;
    return event;
}

Event collective(EventKind kind, OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root,
                 uint64_t sent, uint64_t received)
{
    Event event;
    event.kind = kind;
    event.collective_op = op;
    event.comm = comm;
    event.root = root;
    event.sent = sent;
    event.received = received;
    return event;
}

OTF2_CallbackCode on_send(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data,
                          OTF2_AttributeList *, uint32_t receiver, OTF2_CommRef comm,
                          uint32_t tag, uint64_t bytes)
{
    return add_event(user_data, location, message(EventKind::send, receiver, comm, tag, bytes));
}

OTF2_CallbackCode on_isend(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data,
                           OTF2_AttributeList *, uint32_t receiver, OTF2_CommRef comm,
                           uint32_t tag, uint64_t bytes, uint64_t request)
{
    Event event = message(EventKind::send, receiver, comm, tag, bytes);
    event.request = request;
    return add_event(user_data, location, event);
}

OTF2_CallbackCode on_recv(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data,
                          OTF2_AttributeList *, uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                          uint64_t bytes)
{
    return add_event(user_data, location, message(EventKind::receive, sender, comm, tag, bytes));
}

OTF2_CallbackCode on_irecv(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data,
                           OTF2_AttributeList *, uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                           uint64_t bytes, uint64_t request)
{
    Event event = message(EventKind::receive, sender, comm, tag, bytes);
    event.request = request;
    return add_event(user_data, location, event);
}

template <EventKind kind>
OTF2_CallbackCode on_request(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data,
                             OTF2_AttributeList *, uint64_t request)
{
    return add_event(user_data, location, request_event(kind, request));
}

// An event without fields (MpiCollectiveBegin, RmaCollectiveBegin).
template <EventKind kind>
OTF2_CallbackCode on_marker(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data, OTF2_AttributeList *)
{
    Event event;
    event.kind = kind;
    return add_event(user_data, location, event);
}

OTF2_CallbackCode on_collective_end(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data,
                                    OTF2_AttributeList *, OTF2_CollectiveOp op, OTF2_CommRef comm,
                                    uint32_t root, uint64_t sent, uint64_t received)
{
    return add_event(user_data, location,
                     collective(EventKind::collective_end, op, comm, root, sent, received));
}

OTF2_CallbackCode on_nb_collective_complete(OTF2_LocationRef location, OTF2_TimeStamp,
                                            void *user_data, OTF2_AttributeList *,
                                            OTF2_CollectiveOp op, OTF2_CommRef comm,
                                            uint32_t root, uint64_t sent, uint64_t received,
                                            uint64_t request)
{
    Event event = collective(EventKind::nb_collective_complete, op, comm, root, sent, received);
    event.request = request;
    return add_event(user_data, location, event);
}

OTF2_CallbackCode on_rma_win(void *user_data, OTF2_RmaWinRef self, OTF2_StringRef, OTF2_CommRef comm,
                             OTF2_RmaWinFlag)
{
    trace_of(user_data).rma_win_comms[self] = comm;
    return OTF2_CALLBACK_SUCCESS;
}

Event rma(EventKind kind, OTF2_RmaWinRef win, uint32_t target = 0, uint64_t id = 0, uint64_t sent = 0,
          uint64_t received = 0)
{
    Event event;
    event.kind = kind;
    event.win = win;
    event.peer = target;
    event.request = id;
    event.sent = sent;
    event.received = received;
    return event;
}

template <EventKind kind>
OTF2_CallbackCode on_rma_window(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data, OTF2_AttributeList *,
                                OTF2_RmaWinRef win)
{
    return add_event(user_data, location, rma(kind, win));
}

template <EventKind kind>
OTF2_CallbackCode on_rma_completion(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data,
                                    OTF2_AttributeList *, OTF2_RmaWinRef win, uint64_t id)
{
    return add_event(user_data, location, rma(kind, win, 0, id));
}

OTF2_CallbackCode on_rma_collective_end(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data,
                                        OTF2_AttributeList *, OTF2_CollectiveOp op, OTF2_RmaSyncLevel,
                                        OTF2_RmaWinRef win, uint32_t, uint64_t, uint64_t)
{
    Event event = rma(EventKind::rma_collective_end, win);
    event.collective_op = op;
    return add_event(user_data, location, event);
}

OTF2_CallbackCode on_rma_group_sync(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data,
                                    OTF2_AttributeList *, OTF2_RmaSyncLevel, OTF2_RmaWinRef win,
                                    OTF2_GroupRef group)
{
    Event event = rma(EventKind::rma_group_sync, win);
    event.group = group;
    return add_event(user_data, location, event);
}

OTF2_CallbackCode on_rma_request_lock(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data,
                                      OTF2_AttributeList *, OTF2_RmaWinRef win, uint32_t remote, uint64_t,
                                      OTF2_LockType)
{
    return add_event(user_data, location, rma(EventKind::rma_request_lock, win, remote));
}

OTF2_CallbackCode on_rma_release_lock(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data,
                                      OTF2_AttributeList *, OTF2_RmaWinRef win, uint32_t remote, uint64_t)
{
    return add_event(user_data, location, rma(EventKind::rma_release_lock, win, remote));
}

OTF2_CallbackCode on_rma_sync(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data, OTF2_AttributeList *,
                              OTF2_RmaWinRef win, uint32_t remote, OTF2_RmaSyncType)
{
    return add_event(user_data, location, rma(EventKind::rma_sync, win, remote));
}

OTF2_CallbackCode on_rma_put(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data, OTF2_AttributeList *,
                             OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes, uint64_t id)
{
    return add_event(user_data, location, rma(EventKind::rma_put, win, remote, id, bytes, 0));
}

OTF2_CallbackCode on_rma_get(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data, OTF2_AttributeList *,
                             OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes, uint64_t id)
{
    return add_event(user_data, location, rma(EventKind::rma_get, win, remote, id, 0, bytes));
}

OTF2_CallbackCode on_rma_atomic(OTF2_LocationRef location, OTF2_TimeStamp, void *user_data, OTF2_AttributeList *,
                                OTF2_RmaWinRef win, uint32_t remote, OTF2_RmaAtomicType, uint64_t sent,
                                uint64_t received, uint64_t id)
{
    return add_event(user_data, location, rma(EventKind::rma_atomic, win, remote, id, sent, received));
}

bool check(OTF2_ErrorCode code, const char *what, std::string &error)
{
    if (code == OTF2_SUCCESS)
        return true;
    error = std::string(what) + " failed: " + OTF2_Error_GetName(code) + ": " +
            OTF2_Error_GetDescription(code);
    return false;
}

}  // namespace

std::optional<uint32_t> Trace::world_rank_of(uint64_t location) const
{
    for (size_t i = 0; i < comm_locations.size(); i++)
        if (comm_locations[i] == location)
            return static_cast<uint32_t>(i);
    return std::nullopt;
}

std::optional<std::vector<uint32_t>> Trace::world_members(uint32_t group_id, uint64_t self) const
{
    auto group = groups.find(group_id);
    if (group == groups.end())
        return std::nullopt;
    std::vector<uint32_t> members;
    if (group->second.type == OTF2_GROUP_TYPE_COMM_SELF) {
        std::optional<uint32_t> me = world_rank_of(self);
        if (!me)
            return std::nullopt;
        members.push_back(*me);
        return members;
    }
    if (group->second.type != OTF2_GROUP_TYPE_COMM_GROUP)
        return std::nullopt;
    for (uint64_t member : group->second.members)
        members.push_back(static_cast<uint32_t>(member));
    return members;
}

std::optional<uint64_t> Trace::location_of(uint32_t comm_id, uint32_t rank, uint64_t self) const
{
    auto comm = comms.find(comm_id);
    if (comm == comms.end())
        return std::nullopt;
    uint32_t group = comm->second.group;
    if (comm->second.inter) {
        // Ranks on an inter-communicator name the remote group.
        std::optional<uint32_t> me = world_rank_of(self);
        std::optional<std::vector<uint32_t>> a = world_members(comm->second.group_a, self);
        if (!me || !a)
            return std::nullopt;
        bool self_in_a = false;
        for (uint32_t member : *a)
            self_in_a = self_in_a || member == *me;
        group = self_in_a ? comm->second.group_b : comm->second.group_a;
    }
    std::optional<std::vector<uint32_t>> members = world_members(group, self);
    if (!members || rank >= members->size() || (*members)[rank] >= comm_locations.size())
        return std::nullopt;
    return comm_locations[(*members)[rank]];
}

bool read_trace(const std::string &anchor_path, Trace &trace, std::string &error)
{
    OTF2_Reader *reader = OTF2_Reader_Open(anchor_path.c_str());
    if (!reader) {
        error = "OTF2_Reader_Open(" + anchor_path + ") failed";
        return false;
    }
    ReadState state{&trace, {}};
    bool ok = check(OTF2_Reader_SetSerialCollectiveCallbacks(reader),
                    "OTF2_Reader_SetSerialCollectiveCallbacks", error);

    OTF2_GlobalDefReader *defs = ok ? OTF2_Reader_GetGlobalDefReader(reader) : nullptr;
    if (ok && !defs) {
        error = "OTF2_Reader_GetGlobalDefReader failed";
        ok = false;
    }
    if (ok) {
        OTF2_GlobalDefReaderCallbacks *callbacks = OTF2_GlobalDefReaderCallbacks_New();
        OTF2_GlobalDefReaderCallbacks_SetStringCallback(callbacks, on_string);
        OTF2_GlobalDefReaderCallbacks_SetRegionCallback(callbacks, on_region);
        OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback(callbacks, on_calling_context);
        OTF2_GlobalDefReaderCallbacks_SetLocationCallback(callbacks, on_location);
        OTF2_GlobalDefReaderCallbacks_SetGroupCallback(callbacks, on_group);
        OTF2_GlobalDefReaderCallbacks_SetCommCallback(callbacks, on_comm);
        OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(callbacks, on_inter_comm);
        OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(callbacks, on_rma_win);
        ok = check(OTF2_Reader_RegisterGlobalDefCallbacks(reader, defs, callbacks, &state),
                   "OTF2_Reader_RegisterGlobalDefCallbacks", error);
        OTF2_GlobalDefReaderCallbacks_Delete(callbacks);
        uint64_t read = 0;
        ok = ok && check(OTF2_Reader_ReadAllGlobalDefinitions(reader, defs, &read),
                         "OTF2_Reader_ReadAllGlobalDefinitions", error);
        OTF2_Reader_CloseGlobalDefReader(reader, defs);
    }

    for (size_t i = 0; ok && i < trace.locations.size(); i++)
        ok = check(OTF2_Reader_SelectLocation(reader, trace.locations[i]),
                   "OTF2_Reader_SelectLocation", error);
    ok = ok && check(OTF2_Reader_OpenDefFiles(reader), "OTF2_Reader_OpenDefFiles", error) &&
         check(OTF2_Reader_OpenEvtFiles(reader), "OTF2_Reader_OpenEvtFiles", error);
    for (size_t i = 0; ok && i < trace.locations.size(); i++) {
        // Local definitions carry the id mappings and clock offsets.
        OTF2_DefReader *local = OTF2_Reader_GetDefReader(reader, trace.locations[i]);
        if (local) {
            uint64_t read = 0;
            ok = check(OTF2_Reader_ReadAllLocalDefinitions(reader, local, &read),
                       "OTF2_Reader_ReadAllLocalDefinitions", error);
            OTF2_Reader_CloseDefReader(reader, local);
        }
        if (ok && !OTF2_Reader_GetEvtReader(reader, trace.locations[i])) {
            error = "OTF2_Reader_GetEvtReader(" + std::to_string(trace.locations[i]) + ") failed";
            ok = false;
        }
        trace.by_location[trace.locations[i]];
    }
    ok = ok && check(OTF2_Reader_CloseDefFiles(reader), "OTF2_Reader_CloseDefFiles", error);

    OTF2_GlobalEvtReader *events = ok ? OTF2_Reader_GetGlobalEvtReader(reader) : nullptr;
    if (ok && !events) {
        error = "OTF2_Reader_GetGlobalEvtReader failed";
        ok = false;
    }
    if (ok) {
        OTF2_GlobalEvtReaderCallbacks *callbacks = OTF2_GlobalEvtReaderCallbacks_New();
        OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(callbacks, on_enter);
        OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(callbacks, on_leave);
        OTF2_GlobalEvtReaderCallbacks_SetCallingContextEnterCallback(callbacks, on_cc_enter);
        OTF2_GlobalEvtReaderCallbacks_SetCallingContextLeaveCallback(callbacks, on_cc_leave);
        OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(callbacks, on_send);
        OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(callbacks, on_isend);
        OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(callbacks, on_recv);
        OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(callbacks, on_irecv);
        OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback(
            callbacks, on_request<EventKind::isend_complete>);
        OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback(
            callbacks, on_request<EventKind::irecv_request>);
        OTF2_GlobalEvtReaderCallbacks_SetMpiRequestTestCallback(
            callbacks, on_request<EventKind::request_test>);
        OTF2_GlobalEvtReaderCallbacks_SetMpiRequestCancelledCallback(
            callbacks, on_request<EventKind::request_cancelled>);
        OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(
            callbacks, on_request<EventKind::nb_collective_request>);
        OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveBeginCallback(callbacks, on_marker<EventKind::collective_begin>);
        OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(callbacks, on_collective_end);
        OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(
            callbacks, on_nb_collective_complete);
        OTF2_GlobalEvtReaderCallbacks_SetRmaWinCreateCallback(callbacks, on_rma_window<EventKind::rma_win_create>);
        OTF2_GlobalEvtReaderCallbacks_SetRmaWinDestroyCallback(callbacks, on_rma_window<EventKind::rma_win_destroy>);
        OTF2_GlobalEvtReaderCallbacks_SetRmaCollectiveBeginCallback(callbacks, on_marker<EventKind::rma_collective_begin>);
        OTF2_GlobalEvtReaderCallbacks_SetRmaCollectiveEndCallback(callbacks, on_rma_collective_end);
        OTF2_GlobalEvtReaderCallbacks_SetRmaGroupSyncCallback(callbacks, on_rma_group_sync);
        OTF2_GlobalEvtReaderCallbacks_SetRmaRequestLockCallback(callbacks, on_rma_request_lock);
        OTF2_GlobalEvtReaderCallbacks_SetRmaReleaseLockCallback(callbacks, on_rma_release_lock);
        OTF2_GlobalEvtReaderCallbacks_SetRmaSyncCallback(callbacks, on_rma_sync);
        OTF2_GlobalEvtReaderCallbacks_SetRmaPutCallback(callbacks, on_rma_put);
        OTF2_GlobalEvtReaderCallbacks_SetRmaGetCallback(callbacks, on_rma_get);
        OTF2_GlobalEvtReaderCallbacks_SetRmaAtomicCallback(callbacks, on_rma_atomic);
        OTF2_GlobalEvtReaderCallbacks_SetRmaOpCompleteBlockingCallback(
            callbacks, on_rma_completion<EventKind::rma_complete_blocking>);
        OTF2_GlobalEvtReaderCallbacks_SetRmaOpCompleteNonBlockingCallback(
            callbacks, on_rma_completion<EventKind::rma_complete_nonblocking>);
        OTF2_GlobalEvtReaderCallbacks_SetRmaOpCompleteRemoteCallback(
            callbacks, on_rma_completion<EventKind::rma_complete_remote>);
        OTF2_GlobalEvtReaderCallbacks_SetRmaOpTestCallback(callbacks, on_rma_completion<EventKind::rma_op_test>);
        ok = check(OTF2_Reader_RegisterGlobalEvtCallbacks(reader, events, callbacks, &state),
                   "OTF2_Reader_RegisterGlobalEvtCallbacks", error);
        OTF2_GlobalEvtReaderCallbacks_Delete(callbacks);
        uint64_t read = 0;
        ok = ok && check(OTF2_Reader_ReadAllGlobalEvents(reader, events, &read),
                         "OTF2_Reader_ReadAllGlobalEvents", error);
        OTF2_Reader_CloseGlobalEvtReader(reader, events);
        OTF2_Reader_CloseEvtFiles(reader);
    }
    for (const auto &[location, open] : state.open_regions)
        for (size_t index : open)
            trace.by_location[location].errors.push_back("region " +
                                                         trace.by_location[location].calls[index].name +
                                                         " never left");
    OTF2_Reader_Close(reader);
    return ok;
}

}  // namespace adaptrace_test
