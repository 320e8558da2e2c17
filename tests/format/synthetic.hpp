// Synthetic traces for the format tests: appends records to a real
// adt_buffer and keeps, next to it, the text of every OTF2 event a reader
// should see (ids resolved to names), so that tests compare names, not ids.
#pragma once

#include <otf2/otf2.h>

#include <cmath>
#include <cstring>
#include <string>
#include <deque>
#include <map>
#include <vector>

#include "buffer/buffer.h"
#include "format/format.h"
#include "otf2_readback.hpp"

namespace synthetic {

constexpr uint32_t kUndef = ADT_UNDEFINED_ID;

struct Record {
    uint64_t time;
    bool is_sample = false;
    uint64_t number = 0;     // sample number n
    std::string text;        // expected event text (without unwind distance)
    uint32_t cc = kUndef;    // local calling context of a CC event
    enum { kNone, kEnter, kLeave, kSample } cc_kind = kNone;
    std::string metric_text; // expected Metric event before a sample
    int shift_in_events = -1; // a sample kept in the event chain: the shift it was taken at
};

struct Location {
    adt_location *location;
    uint32_t thread_index;
    std::string name;
    uint64_t time;
    std::vector<Record> records;
    std::vector<std::pair<uint32_t, uint32_t>> open;  // region, cc of open Enters
};

class Trace {
  public:
    Trace(size_t arena_bytes, size_t chunk_bytes, size_t max_locations, bool cc_style)
        : cc_style_(cc_style)
    {
        buffer_ = adt_buffer_create(arena_bytes, chunk_bytes, max_locations);
        defs_ = adt_defs_create();
    }
    ~Trace()
    {
        adt_defs_destroy(defs_);
        adt_buffer_destroy(buffer_);
    }
    Trace(const Trace &) = delete;
    Trace &operator=(const Trace &) = delete;

    adt_buffer *buffer() { return buffer_; }
    adt_defs *defs() { return defs_; }
    bool cc_style() const { return cc_style_; }
    std::deque<Location> &locations() { return locations_; }

    uint32_t region(const std::string &name, adt_region_role role = ADT_ROLE_FUNCTION,
                    adt_paradigm paradigm = ADT_PARADIGM_MPI)
    {
        uint32_t id = adt_defs_region(defs_, name.c_str(), name.c_str(), role, paradigm, nullptr, 0, 0);
        if (id >= region_names_.size())
            region_names_.resize(id + 1);
        region_names_[id] = name;
        return id;
    }

    uint32_t comm(uint32_t creator, uint32_t sequence, const std::string &name, std::vector<uint32_t> members,
                  bool is_self = false, std::vector<uint32_t> remote = {}, uint32_t parent = kUndef)
    {
        adt_comm_desc desc{};
        desc.creator_world_rank = creator;
        desc.sequence = sequence;
        desc.name = name.c_str();
        desc.members = members.data();
        desc.size = (uint32_t)members.size();
        desc.remote_members = remote.data();
        desc.remote_size = (uint32_t)remote.size();
        desc.parent = parent;
        desc.is_self = is_self;
        uint32_t id = adt_defs_comm(defs_, &desc);
        if (id >= comm_names_.size())
            comm_names_.resize(id + 1);
        comm_names_[id] = name;
        return id;
    }

    // MPI_Comm_set_name after the definition.
    bool rename_comm(uint32_t id, const std::string &name)
    {
        if (adt_defs_comm_set_name(defs_, id, name.c_str()) != 0)
            return false;
        comm_names_[id] = name;
        return true;
    }

    // Calling-context node (local id = index); parents first.
    uint32_t node(uint32_t region_id, uint32_t parent)
    {
        nodes_.push_back({ region_id, kUndef, parent });
        return (uint32_t)nodes_.size() - 1;
    }
    bool commit_nodes() { return adt_defs_set_calling_contexts(defs_, nodes_.data(), nodes_.size()) == 0; }
    const std::vector<adt_cc_node> &nodes() const { return nodes_; }

    std::string path(uint32_t cc) const
    {
        std::string out;
        for (; cc != kUndef; cc = nodes_[cc].parent) {
            if (!out.empty())
                out += "<";
            out += region_names_[nodes_[cc].region];
        }
        return out;
    }

    void add_metric(const std::string &name) { metric_names_.push_back(name); adt_defs_metric(defs_, name.c_str(), "#"); }
    uint32_t add_parameter(const std::string &name) { return adt_defs_parameter(defs_, name.c_str()); }
    uint32_t add_user_metric(const std::string &name) { return adt_defs_user_metric(defs_, name.c_str()); }
    void set_initial_rate(uint32_t hz) { rate_hz_ = hz; }
    uint32_t initial_rate() const { return rate_hz_; }

    Location &add_location(uint32_t rank, uint32_t thread_index, const std::string &name, uint64_t start_time)
    {
        adt_location *loc = adt_buffer_add_location(buffer_, rank + ((uint64_t)thread_index << 32));
        adt_buffer_sampling_started(loc, start_time);
        locations_.push_back({ loc, thread_index, name, start_time, {}, {} });
        return locations_.back();
    }

    // ---- appends: each returns false if the buffer refused the record ----

    template <typename Payload>
    bool event(Location &l, adt_record_kind kind, const Payload &payload, Record record)
    {
        record.time = l.time++;
        if (adt_buffer_append_event(l.location, (uint16_t)kind, record.time, &payload, sizeof payload) != ADT_APPEND_OK)
            return false;
        l.records.push_back(record);
        return true;
    }

    bool enter(Location &l, uint32_t region_id, uint32_t cc)
    {
        adt_rec_region rec{ region_id, cc_style_ ? cc : kUndef };
        Record r;
        if (cc_style_) {
            r.text = "CallingContextEnter cc=" + path(cc);
            r.cc = cc;
            r.cc_kind = Record::kEnter;
        } else {
            r.text = "Enter region=" + region_names_[region_id];
        }
        l.open.push_back({ region_id, rec.calling_context });
        return event(l, ADT_REC_ENTER, rec, r);
    }

    bool leave(Location &l)
    {
        auto [region_id, cc] = l.open.back();
        l.open.pop_back();
        adt_rec_region rec{ region_id, cc };
        Record r;
        if (cc != kUndef) {
            r.text = "CallingContextLeave cc=" + path(cc);
            r.cc = cc;
            r.cc_kind = Record::kLeave;
        } else {
            r.text = "Leave region=" + region_names_[region_id];
        }
        return event(l, ADT_REC_LEAVE, rec, r);
    }

    bool p2p(Location &l, adt_record_kind kind, uint32_t comm_id, uint32_t peer, uint32_t tag, uint64_t bytes,
             uint64_t request)
    {
        adt_rec_p2p rec{ bytes, request, comm_id, peer, tag, 0 };
        static const char *names[] = { "", "", "", "MpiSend", "MpiIsend", "", "", "MpiRecv", "MpiIrecv" };
        Record r;
        r.text = std::string(names[kind]) + " peer=" + std::to_string(peer) + " comm=" + comm_names_[comm_id] +
                 " tag=" + std::to_string(tag) + " bytes=" + std::to_string(bytes);
        if (kind == ADT_REC_MPI_ISEND || kind == ADT_REC_MPI_IRECV)
            r.text += " request=" + std::to_string(request);
        return event(l, kind, rec, r);
    }

    bool request(Location &l, adt_record_kind kind, uint64_t request_id)
    {
        static const std::map<int, std::string> names = {
            { ADT_REC_MPI_ISEND_COMPLETE, "MpiIsendComplete" },
            { ADT_REC_MPI_IRECV_REQUEST, "MpiIrecvRequest" },
            { ADT_REC_MPI_REQUEST_TEST, "MpiRequestTest" },
            { ADT_REC_MPI_REQUEST_CANCELLED, "MpiRequestCancelled" },
            { ADT_REC_NB_COLLECTIVE_REQUEST, "NonBlockingCollectiveRequest" },
        };
        adt_rec_request rec{ request_id };
        Record r;
        r.text = names.at(kind) + " request=" + std::to_string(request_id);
        return event(l, kind, rec, r);
    }

    bool collective_begin(Location &l)
    {
        Record r;
        r.text = "MpiCollectiveBegin";
        r.time = l.time++;
        if (adt_buffer_append_event(l.location, ADT_REC_MPI_COLLECTIVE_BEGIN, r.time, nullptr, 0) != ADT_APPEND_OK)
            return false;
        l.records.push_back(r);
        return true;
    }

    bool collective_end(Location &l, adt_record_kind kind, uint32_t op, uint32_t comm_id, uint32_t root,
                        uint64_t sent, uint64_t received, uint64_t request_id)
    {
        adt_rec_collective rec{ sent, received, request_id, op, comm_id, root, 0 };
        Record r;
        r.text = std::string(kind == ADT_REC_MPI_COLLECTIVE_END ? "MpiCollectiveEnd" : "NonBlockingCollectiveComplete") +
                 " op=" + std::to_string(op) + " comm=" + comm_names_[comm_id] + " root=" + std::to_string(root) +
                 " sent=" + std::to_string(sent) + " received=" + std::to_string(received);
        if (kind == ADT_REC_NB_COLLECTIVE_COMPLETE)
            r.text += " request=" + std::to_string(request_id);
        return event(l, kind, rec, r);
    }

    bool buffer_flush(Location &l, uint64_t duration)
    {
        adt_rec_buffer_flush rec{ l.time + duration };
        Record r;
        r.text = "BufferFlush stop=@" + std::to_string(rec.stop_time);
        bool ok = event(l, ADT_REC_BUFFER_FLUSH, rec, r);
        l.time += duration;
        return ok;
    }

    // A user parameter's value, and a user metric's (describe() prints a
    // metric value's bits).
    bool parameter(Location &l, uint32_t parameter, const std::string &name, int64_t value)
    {
        adt_rec_parameter rec{ value, parameter, 0 };
        Record r;
        r.text = "ParameterInt " + name + "=" + std::to_string(value);
        return event(l, ADT_REC_PARAMETER_INT, rec, r);
    }

    bool user_metric(Location &l, uint32_t metric, const std::string &name, double value)
    {
        adt_rec_user_metric rec{ value, metric, 0 };
        uint64_t bits;
        std::memcpy(&bits, &value, sizeof bits);
        Record r;
        r.text = "Metric " + name + "=" + std::to_string(bits);
        return event(l, ADT_REC_USER_METRIC, rec, r);
    }

    bool on_off(Location &l, bool on)
    {
        adt_rec_on_off rec{ on ? 1u : 0u, 0 };
        Record r;
        r.text = std::string("MeasurementOnOff mode=") + (on ? "1" : "2");
        return event(l, ADT_REC_MEASUREMENT_ON_OFF, rec, r);
    }

    // The expected record of a sample of cc at the location's next time.
    Record sample_record(Location &l, uint32_t cc)
    {
        Record r;
        r.time = l.time++;
        r.is_sample = true;
        r.cc = cc;
        r.cc_kind = Record::kSample;
        r.text = "CallingContextSample cc=" + path(cc);
        return r;
    }

    // A sample the online stream kept in the location's event chain
    // (ADAPTRACE_ONLINE_OUTPUT=trace), taken at shift: no level holds it.
    bool sample_in_events(Location &l, uint32_t cc, uint32_t shift)
    {
        uint64_t raw[2] = { 0, 0 };
        auto *rec = reinterpret_cast<adt_rec_sample *>(raw);
        rec->calling_context = cc;
        rec->rate_shift = shift;
        Record r = sample_record(l, cc);
        r.shift_in_events = (int)shift;
        if (adt_buffer_append_event(l.location, ADT_REC_SAMPLE, r.time, raw, sizeof(adt_rec_sample)) != ADT_APPEND_OK)
            return false;
        l.records.push_back(r);
        return true;
    }

    // A sample at the location's current rate; status of the append.
    adt_append_status sample(Location &l, uint32_t cc, const std::vector<uint64_t> &metrics = {})
    {
        adt_location_stats stats;
        adt_location_get_stats(l.location, &stats);
        std::vector<uint64_t> raw(2 + metrics.size());
        auto *rec = reinterpret_cast<adt_rec_sample *>(raw.data());
        rec->calling_context = cc;
        rec->rate_shift = stats.shift;
        rec->metric_count = (uint32_t)metrics.size();
        rec->reserved = 0;
        if (!metrics.empty())
            std::memcpy(rec->metric_values, metrics.data(), metrics.size() * sizeof(uint64_t));
        Record r = sample_record(l, cc);
        if (!metrics.empty()) {
            r.metric_text = "Metric";
            for (size_t i = 0; i < metrics.size(); ++i)
                r.metric_text += " " + metric_names_[i] + "=" + std::to_string(metrics[i]);
        }
        adt_append_status status = adt_buffer_append_sample(
            l.location, ADT_REC_SAMPLE, r.time, raw.data(), (uint32_t)(sizeof(adt_rec_sample) + metrics.size() * 8),
            &r.number);
        if (status == ADT_APPEND_OK)
            l.records.push_back(r);
        return status;
    }

    std::string generator_name(uint32_t shift) const
    {
        char text[64];
        snprintf(text, sizeof text, "timer %g us", std::ldexp(1e6 / rate_hz_, (int)shift));
        return text;
    }

    // The sampling-rate Metric at shift, as describe() prints it (the
    // value's bits).
    std::string rate_text(unsigned shift) const
    {
        double hz = rate_hz_ / std::ldexp(1.0, (int)shift);
        uint64_t bits;
        std::memcpy(&bits, &hz, sizeof bits);
        return "Metric sampling rate=" + std::to_string(bits);
    }

    // A halving as the reader sees it: the rate at the shift reached, then
    // the buffer's bytes in use before and after the drop.
    std::vector<std::string> halving_texts(const std::string &at, const adt_location_stats &stats,
                                           unsigned shift) const
    {
        const uint64_t *use = stats.bytes_in_use_at_shift[shift];
        return { at + rate_text(shift), at + "Metric buffer use=" + std::to_string(use[0]),
                 at + "Metric buffer use=" + std::to_string(use[1]) };
    }

    // The events a reader must see on location l, in order: retained
    // samples (n ≡ 0 mod 2^k), Metric before its sample, unwind distances
    // recomputed by brute force over the retained stream, open regions
    // closed at the last timestamp; in a sampled trace the sampling rate
    // at each shift's stamp from shift 0 (the location's start) on, each
    // halving's with the buffer's use, before records of the same time or
    // later ones, those before the first record and after the last one
    // included. time_of maps recorded to read time.
    template <typename TimeMap>
    std::vector<std::string> expected(const Location &l, TimeMap time_of) const
    {
        adt_location_stats stats;
        adt_location_get_stats(l.location, &stats);
        std::vector<std::string> out;
        uint32_t prev = kUndef;
        uint64_t last = 0;
        auto stamp = [&](uint64_t t) { return "@" + std::to_string(time_of(t)) + " "; };
        const bool rates = cc_style_ && rate_hz_ > 0;
        const uint64_t *reached = stats.shift_reached_at;
        unsigned next_shift = 0;
        auto rates_until = [&](uint64_t t) {
            for (; rates && next_shift <= stats.shift && reached[next_shift] <= t; next_shift++)
                if (reached[next_shift] == 0)
                    continue;
                else if (next_shift == 0)
                    out.push_back(stamp(reached[0]) + rate_text(0));
                else
                    for (const std::string &text : halving_texts(stamp(reached[next_shift]), stats, next_shift))
                        out.push_back(text);
        };
        for (const Record &r : l.records) {
            if (r.is_sample && (r.number & ((1ull << stats.shift) - 1)) != 0)
                continue;
            rates_until(r.time);
            last = r.time;
            std::string text = r.text;
            size_t at = text.find("stop=@");
            if (at != std::string::npos)
                text = text.substr(0, at) + "stop=" + std::to_string(time_of(std::stoull(text.substr(at + 6))));
            if (r.cc_kind == Record::kEnter || r.cc_kind == Record::kSample) {
                text += " unwind=" + std::to_string(brute_force_unwind(prev, r.cc));
                prev = r.cc;
            } else if (r.cc_kind == Record::kLeave) {
                prev = nodes_[r.cc].parent;
            }
            if (r.is_sample) {
                if (!r.metric_text.empty())
                    out.push_back(stamp(r.time) + r.metric_text);
                text += " generator=" + generator_name(r.shift_in_events >= 0 ? (unsigned)r.shift_in_events : stats.shift);
            }
            out.push_back(stamp(r.time) + text);
        }
        for (auto it = l.open.rbegin(); it != l.open.rend(); ++it) {
            if (it->second != kUndef) {
                out.push_back(stamp(last) + "CallingContextLeave cc=" + path(it->second));
            } else {
                out.push_back(stamp(last) + "Leave region=" + region_names_[it->first]);
            }
        }
        rates_until(UINT64_MAX);
        return out;
    }

    // Section 5.5 stated as the walk: count frames of cur's path until one
    // is prev or an ancestor of prev.
    uint32_t brute_force_unwind(uint32_t prev, uint32_t cur) const
    {
        uint32_t i = 0;
        for (uint32_t a = cur; a != kUndef; a = nodes_[a].parent, ++i) {
            for (uint32_t p = prev; p != kUndef; p = nodes_[p].parent)
                if (p == a)
                    return i + 1;
        }
        return i + 1;
    }

  private:
    adt_buffer *buffer_;
    adt_defs *defs_;
    bool cc_style_;
    uint32_t rate_hz_ = 10000;
    std::vector<std::string> region_names_, comm_names_, metric_names_;
    std::vector<adt_cc_node> nodes_;
    std::deque<Location> locations_;
};

// The events of one location of a read-back archive as text, ids resolved
// through the archive's definitions.
inline std::vector<std::string> describe(const readback::Archive &a, uint64_t location)
{
    std::vector<std::string> out;
    if (!a.events.count(location))
        return out;
    auto comm = [&](uint64_t id) { return a.comms.at(id).name; };
    for (const readback::Event &e : a.events.at(location)) {
        const auto &f = e.fields;
        std::string s = "@" + std::to_string(e.time) + " " + e.type;
        if (e.type == "Enter" || e.type == "Leave")
            s += " region=" + a.regions.at(f[0]).name;
        else if (e.type == "CallingContextEnter")
            s += " cc=" + a.path(f[0]) + " unwind=" + std::to_string(f[1]);
        else if (e.type == "CallingContextLeave")
            s += " cc=" + a.path(f[0]);
        else if (e.type == "CallingContextSample")
            s += " cc=" + a.path(f[0]) + " unwind=" + std::to_string(f[1]) + " generator=" + a.generators.at(f[2]).name;
        else if (e.type == "MpiSend" || e.type == "MpiRecv" || e.type == "MpiIsend" || e.type == "MpiIrecv") {
            s += " peer=" + std::to_string(f[0]) + " comm=" + comm(f[1]) + " tag=" + std::to_string(f[2]) +
                 " bytes=" + std::to_string(f[3]);
            if (f.size() > 4)
                s += " request=" + std::to_string(f[4]);
        } else if (e.type == "MpiCollectiveEnd" || e.type == "NonBlockingCollectiveComplete") {
            s += " op=" + std::to_string(f[0]) + " comm=" + comm(f[1]) + " root=" + std::to_string(f[2]) +
                 " sent=" + std::to_string(f[3]) + " received=" + std::to_string(f[4]);
            if (f.size() > 5)
                s += " request=" + std::to_string(f[5]);
        } else if (e.type == "BufferFlush")
            s += " stop=" + std::to_string(f[0]);
        else if (e.type == "MeasurementOnOff")
            s += " mode=" + std::to_string(f[0]);
        else if (e.type == "ParameterInt")
            s += " " + a.parameter_names.at(f[0]) + "=" + std::to_string((int64_t)f[1]);
        else if (e.type == "Metric") {
            const auto &members = a.metric_classes.at(f[0]);
            for (size_t i = 0; i < members.size(); ++i)
                s += " " + a.metric_names.at(members[i]) + "=" + std::to_string(f[1 + i]);
        } else if (e.type != "MpiCollectiveBegin")
            s += " request=" + std::to_string(f[0]);
        out.push_back(s);
    }
    return out;
}

}  // namespace synthetic
