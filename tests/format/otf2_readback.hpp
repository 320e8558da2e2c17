// Reads an OTF2 archive back with the OTF2 reader API into plain C++
// structures (definitions resolved to names), so tests compare what was
// recorded with what a reader sees.
#pragma once

#include <otf2/otf2.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace readback {

struct Region {
    std::string name, canonical, file;
    OTF2_RegionRole role;
    OTF2_Paradigm paradigm;
    uint32_t begin, end;
};

struct CallingContext {
    uint32_t region, source_location, parent;
};

struct Comm {
    std::string name;
    uint32_t group, remote_group, parent;  // remote_group UINT32_MAX for intra
};

struct Group {
    OTF2_GroupType type;
    std::vector<uint64_t> members;
};

struct Location {
    std::string name;
    uint64_t events;
    uint32_t group;
};

struct Generator {
    std::string name;
    int64_t exponent;
    uint64_t period;
};

struct Event {
    std::string type;  // "Enter", "CallingContextSample", "MpiSend", ...
    uint64_t time;
    std::vector<uint64_t> fields;  // in OTF2 argument order, ids as read
};

struct Archive {
    uint64_t resolution = 0, global_offset = 0, trace_length = 0;
    std::map<uint32_t, std::string> strings;
    std::vector<Region> regions;
    std::vector<CallingContext> calling_contexts;
    std::vector<std::pair<uint32_t, uint32_t>> source_locations;  // file string, line
    std::vector<Comm> comms;
    std::vector<Group> groups;
    std::map<uint64_t, Location> locations;
    std::vector<std::string> location_groups;
    std::vector<std::string> system_tree;
    std::vector<Generator> generators;
    std::vector<std::vector<uint32_t>> metric_classes;
    std::vector<std::string> metric_names;
    std::vector<std::string> parameter_names;  // INT64 parameters only
    std::vector<OTF2_Paradigm> paradigms;
    std::map<uint64_t, std::vector<Event>> events;
    std::map<uint64_t, int> clock_offsets;  // count per location
    std::string creator;

    // Region names from the node to the root: "MPI_Send<main<_start".
    std::string path(uint32_t cc) const
    {
        std::string out;
        while (cc != OTF2_UNDEFINED_CALLING_CONTEXT) {
            if (!out.empty())
                out += "<";
            out += regions.at(calling_contexts.at(cc).region).name;
            cc = calling_contexts.at(cc).parent;
        }
        return out;
    }
};

namespace detail {
#define RB_ARCHIVE(user) (*static_cast<Archive *>(user))

inline OTF2_CallbackCode on_clock(void *u, uint64_t res, uint64_t off, uint64_t len, uint64_t)
{
    RB_ARCHIVE(u).resolution = res;
    RB_ARCHIVE(u).global_offset = off;
    RB_ARCHIVE(u).trace_length = len;
    return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode on_string(void *u, OTF2_StringRef self, const char *s)
{
    RB_ARCHIVE(u).strings[self] = s;
    return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode on_paradigm(void *u, OTF2_Paradigm p, OTF2_StringRef, OTF2_ParadigmClass)
{
    RB_ARCHIVE(u).paradigms.push_back(p);
    return OTF2_CALLBACK_SUCCESS;
}
inline std::string str(void *u, OTF2_StringRef id)
{
    auto &s = RB_ARCHIVE(u).strings;
    return s.count(id) ? s[id] : std::string("<undefined>");
}
inline OTF2_CallbackCode on_region(void *u, OTF2_RegionRef, OTF2_StringRef name, OTF2_StringRef canonical,
                                   OTF2_StringRef, OTF2_RegionRole role, OTF2_Paradigm paradigm, OTF2_RegionFlag,
                                   OTF2_StringRef file, uint32_t begin, uint32_t end)
{
    RB_ARCHIVE(u).regions.push_back({ str(u, name), str(u, canonical), str(u, file), role, paradigm, begin, end });
    return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode on_cc(void *u, OTF2_CallingContextRef, OTF2_RegionRef region,
                               OTF2_SourceCodeLocationRef scl, OTF2_CallingContextRef parent)
{
    RB_ARCHIVE(u).calling_contexts.push_back({ region, scl, parent });
    return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode on_scl(void *u, OTF2_SourceCodeLocationRef, OTF2_StringRef file, uint32_t line)
{
    RB_ARCHIVE(u).source_locations.push_back({ file, line });
    return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode on_comm(void *u, OTF2_CommRef, OTF2_StringRef name, OTF2_GroupRef group,
                                 OTF2_CommRef parent, OTF2_CommFlag)
{
    RB_ARCHIVE(u).comms.push_back({ str(u, name), group, UINT32_MAX, parent });
    return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode on_intercomm(void *u, OTF2_CommRef, OTF2_StringRef name, OTF2_GroupRef a,
                                      OTF2_GroupRef b, OTF2_CommRef common, OTF2_CommFlag)
{
    RB_ARCHIVE(u).comms.push_back({ str(u, name), a, b, common });
    return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode on_group(void *u, OTF2_GroupRef, OTF2_StringRef, OTF2_GroupType type, OTF2_Paradigm,
                                  OTF2_GroupFlag, uint32_t n, const uint64_t *members)
{
    RB_ARCHIVE(u).groups.push_back({ type, std::vector<uint64_t>(members, members + n) });
    return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode on_location(void *u, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType,
                                     uint64_t events, OTF2_LocationGroupRef group)
{
    RB_ARCHIVE(u).locations[self] = { str(u, name), events, group };
    return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode on_location_group(void *u, OTF2_LocationGroupRef, OTF2_StringRef name,
                                           OTF2_LocationGroupType, OTF2_SystemTreeNodeRef, OTF2_LocationGroupRef)
{
    RB_ARCHIVE(u).location_groups.push_back(str(u, name));
    return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode on_node(void *u, OTF2_SystemTreeNodeRef, OTF2_StringRef name, OTF2_StringRef,
                                 OTF2_SystemTreeNodeRef)
{
    RB_ARCHIVE(u).system_tree.push_back(str(u, name));
    return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode on_generator(void *u, OTF2_InterruptGeneratorRef, OTF2_StringRef name,
                                      OTF2_InterruptGeneratorMode, OTF2_Base, int64_t exponent, uint64_t period)
{
    RB_ARCHIVE(u).generators.push_back({ str(u, name), exponent, period });
    return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode on_metric_member(void *u, OTF2_MetricMemberRef, OTF2_StringRef name, OTF2_StringRef,
                                          OTF2_MetricType, OTF2_MetricMode, OTF2_Type, OTF2_Base, int64_t,
                                          OTF2_StringRef)
{
    RB_ARCHIVE(u).metric_names.push_back(str(u, name));
    return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode on_parameter(void *u, OTF2_ParameterRef, OTF2_StringRef name, OTF2_ParameterType type)
{
    RB_ARCHIVE(u).parameter_names.push_back(type == OTF2_PARAMETER_TYPE_INT64 ? str(u, name) : "(not INT64)");
    return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode on_metric_class(void *u, OTF2_MetricRef, uint8_t n, const OTF2_MetricMemberRef *m,
                                         OTF2_MetricOccurrence, OTF2_RecorderKind)
{
    RB_ARCHIVE(u).metric_classes.push_back(std::vector<uint32_t>(m, m + n));
    return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode on_clock_offset(void *u, OTF2_TimeStamp, int64_t, double)
{
    auto *ctx = static_cast<std::pair<Archive *, uint64_t> *>(u);
    ctx->first->clock_offsets[ctx->second]++;
    return OTF2_CALLBACK_SUCCESS;
}

inline void push(OTF2_LocationRef loc, void *u, const char *type, OTF2_TimeStamp t, std::vector<uint64_t> f)
{
    RB_ARCHIVE(u).events[loc].push_back({ type, t, std::move(f) });
}
#define RB_EVENT(Name, ...) inline OTF2_CallbackCode ev_##Name(OTF2_LocationRef loc, OTF2_TimeStamp t, void *u, \
                                                              OTF2_AttributeList *, __VA_ARGS__)
RB_EVENT(Enter, OTF2_RegionRef r) { push(loc, u, "Enter", t, { r }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(Leave, OTF2_RegionRef r) { push(loc, u, "Leave", t, { r }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(CCEnter, OTF2_CallingContextRef c, uint32_t d) { push(loc, u, "CallingContextEnter", t, { c, d }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(CCLeave, OTF2_CallingContextRef c) { push(loc, u, "CallingContextLeave", t, { c }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(CCSample, OTF2_CallingContextRef c, uint32_t d, OTF2_InterruptGeneratorRef g) { push(loc, u, "CallingContextSample", t, { c, d, g }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(MpiSend, uint32_t p, OTF2_CommRef c, uint32_t tag, uint64_t len) { push(loc, u, "MpiSend", t, { p, c, tag, len }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(MpiIsend, uint32_t p, OTF2_CommRef c, uint32_t tag, uint64_t len, uint64_t req) { push(loc, u, "MpiIsend", t, { p, c, tag, len, req }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(MpiRecv, uint32_t p, OTF2_CommRef c, uint32_t tag, uint64_t len) { push(loc, u, "MpiRecv", t, { p, c, tag, len }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(MpiIrecv, uint32_t p, OTF2_CommRef c, uint32_t tag, uint64_t len, uint64_t req) { push(loc, u, "MpiIrecv", t, { p, c, tag, len, req }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(MpiIsendComplete, uint64_t req) { push(loc, u, "MpiIsendComplete", t, { req }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(MpiIrecvRequest, uint64_t req) { push(loc, u, "MpiIrecvRequest", t, { req }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(MpiRequestTest, uint64_t req) { push(loc, u, "MpiRequestTest", t, { req }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(MpiRequestCancelled, uint64_t req) { push(loc, u, "MpiRequestCancelled", t, { req }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(NbcRequest, uint64_t req) { push(loc, u, "NonBlockingCollectiveRequest", t, { req }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(CollEnd, OTF2_CollectiveOp op, OTF2_CommRef c, uint32_t root, uint64_t s, uint64_t r) { push(loc, u, "MpiCollectiveEnd", t, { op, c, root, s, r }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(NbcComplete, OTF2_CollectiveOp op, OTF2_CommRef c, uint32_t root, uint64_t s, uint64_t r, uint64_t req) { push(loc, u, "NonBlockingCollectiveComplete", t, { op, c, root, s, r, req }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(BufferFlush, OTF2_TimeStamp stop) { push(loc, u, "BufferFlush", t, { stop }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(OnOff, OTF2_MeasurementMode m) { push(loc, u, "MeasurementOnOff", t, { m }); return OTF2_CALLBACK_SUCCESS; }
RB_EVENT(ParameterInt, OTF2_ParameterRef p, int64_t v) { push(loc, u, "ParameterInt", t, { p, (uint64_t)v }); return OTF2_CALLBACK_SUCCESS; }
inline OTF2_CallbackCode ev_CollBegin(OTF2_LocationRef loc, OTF2_TimeStamp t, void *u, OTF2_AttributeList *)
{
    push(loc, u, "MpiCollectiveBegin", t, {});
    return OTF2_CALLBACK_SUCCESS;
}
RB_EVENT(Metric, OTF2_MetricRef metric, uint8_t n, const OTF2_Type *, const OTF2_MetricValue *values)
{
    std::vector<uint64_t> f{ metric };
    for (uint8_t i = 0; i < n; ++i)
        f.push_back(values[i].unsigned_int);
    push(loc, u, "Metric", t, f);
    return OTF2_CALLBACK_SUCCESS;
}
#undef RB_EVENT
#undef RB_ARCHIVE
}  // namespace detail

// Returns false (with a reason) if the archive cannot be read.
inline bool read(const std::string &anchor, Archive &out, std::string &why)
{
    using namespace detail;
    OTF2_Reader *reader = OTF2_Reader_Open(anchor.c_str());
    if (!reader) {
        why = "OTF2_Reader_Open failed for " + anchor;
        return false;
    }
    OTF2_Reader_SetSerialCollectiveCallbacks(reader);
    char *creator = nullptr;
    if (OTF2_Reader_GetCreator(reader, &creator) == OTF2_SUCCESS && creator) {
        out.creator = creator;
        free(creator);
    }
    OTF2_GlobalDefReader *gdr = OTF2_Reader_GetGlobalDefReader(reader);
    OTF2_GlobalDefReaderCallbacks *g = OTF2_GlobalDefReaderCallbacks_New();
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(g, on_clock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(g, on_string);
    OTF2_GlobalDefReaderCallbacks_SetParadigmCallback(g, on_paradigm);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(g, on_region);
    OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback(g, on_cc);
    OTF2_GlobalDefReaderCallbacks_SetSourceCodeLocationCallback(g, on_scl);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(g, on_comm);
    OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(g, on_intercomm);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(g, on_group);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(g, on_location);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(g, on_location_group);
    OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(g, on_node);
    OTF2_GlobalDefReaderCallbacks_SetInterruptGeneratorCallback(g, on_generator);
    OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(g, on_metric_member);
    OTF2_GlobalDefReaderCallbacks_SetParameterCallback(g, on_parameter);
    OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(g, on_metric_class);
    OTF2_Reader_RegisterGlobalDefCallbacks(reader, gdr, g, &out);
    OTF2_GlobalDefReaderCallbacks_Delete(g);
    uint64_t count = 0;
    OTF2_Reader_ReadAllGlobalDefinitions(reader, gdr, &count);
    OTF2_Reader_CloseGlobalDefReader(reader, gdr);

    for (auto &loc : out.locations)
        OTF2_Reader_SelectLocation(reader, loc.first);
    bool ok = OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS && OTF2_Reader_OpenEvtFiles(reader) == OTF2_SUCCESS;
    std::vector<std::pair<Archive *, uint64_t>> contexts;
    contexts.reserve(out.locations.size());
    for (auto &loc : out.locations) {
        OTF2_DefReader *dr = OTF2_Reader_GetDefReader(reader, loc.first);
        if (!dr) {
            ok = false;
            why = "no local definition file for location " + std::to_string(loc.first);
            continue;
        }
        contexts.push_back({ &out, loc.first });
        OTF2_DefReaderCallbacks *d = OTF2_DefReaderCallbacks_New();
        OTF2_DefReaderCallbacks_SetClockOffsetCallback(d, on_clock_offset);
        OTF2_Reader_RegisterDefCallbacks(reader, dr, d, &contexts.back());
        OTF2_DefReaderCallbacks_Delete(d);
        uint64_t defs = 0;
        OTF2_Reader_ReadAllLocalDefinitions(reader, dr, &defs);
        OTF2_Reader_CloseDefReader(reader, dr);
        OTF2_Reader_GetEvtReader(reader, loc.first);
    }
    OTF2_Reader_CloseDefFiles(reader);

    OTF2_GlobalEvtReader *ger = OTF2_Reader_GetGlobalEvtReader(reader);
    OTF2_GlobalEvtReaderCallbacks *e = OTF2_GlobalEvtReaderCallbacks_New();
    OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(e, ev_Enter);
    OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(e, ev_Leave);
    OTF2_GlobalEvtReaderCallbacks_SetCallingContextEnterCallback(e, ev_CCEnter);
    OTF2_GlobalEvtReaderCallbacks_SetCallingContextLeaveCallback(e, ev_CCLeave);
    OTF2_GlobalEvtReaderCallbacks_SetCallingContextSampleCallback(e, ev_CCSample);
    OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(e, ev_MpiSend);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(e, ev_MpiIsend);
    OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(e, ev_MpiRecv);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(e, ev_MpiIrecv);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback(e, ev_MpiIsendComplete);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback(e, ev_MpiIrecvRequest);
    OTF2_GlobalEvtReaderCallbacks_SetMpiRequestTestCallback(e, ev_MpiRequestTest);
    OTF2_GlobalEvtReaderCallbacks_SetMpiRequestCancelledCallback(e, ev_MpiRequestCancelled);
    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveBeginCallback(e, ev_CollBegin);
    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(e, ev_CollEnd);
    OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(e, ev_NbcRequest);
    OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(e, ev_NbcComplete);
    OTF2_GlobalEvtReaderCallbacks_SetBufferFlushCallback(e, ev_BufferFlush);
    OTF2_GlobalEvtReaderCallbacks_SetMeasurementOnOffCallback(e, ev_OnOff);
    OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(e, ev_Metric);
    OTF2_GlobalEvtReaderCallbacks_SetParameterIntCallback(e, ev_ParameterInt);
    OTF2_Reader_RegisterGlobalEvtCallbacks(reader, ger, e, &out);
    OTF2_GlobalEvtReaderCallbacks_Delete(e);
    uint64_t events = 0;
    if (OTF2_Reader_ReadAllGlobalEvents(reader, ger, &events) != OTF2_SUCCESS) {
        ok = false;
        why = "reading the events failed";
    }
    OTF2_Reader_CloseGlobalEvtReader(reader, ger);
    OTF2_Reader_CloseEvtFiles(reader);
    OTF2_Reader_Close(reader);
    return ok;
}

// Runs otf2-print --silent -Werror on the anchor; returns its exit status
// (0 = the archive validates without warnings).
inline int validate(const std::string &anchor)
{
    std::string command = "otf2-print --silent -Werror '" + anchor + "' > /dev/null 2>&1";
    return std::system(command.c_str());
}

}  // namespace readback
