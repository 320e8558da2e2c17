// Other threads' full event chunks handed to the streaming thread
// (online/handover.c, issue #28): the bound of slots, and under TSan
// several handing threads against one streaming thread.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <set>
#include <thread>
#include <vector>

extern "C" {
#include "online/handover.h"
}

namespace {

constexpr size_t kChunkBytes = 256;
constexpr size_t kChunks = 1024;

struct Buffer {
    adt_buffer *buffer = adt_buffer_create(kChunks * kChunkBytes, kChunkBytes, 8);
    ~Buffer() { adt_buffer_destroy(buffer); }
};

bool append(adt_location *location, uint64_t time)
{
    uint64_t payload = time;
    return adt_buffer_append_event(location, 1, time, &payload, sizeof payload) == ADT_APPEND_OK;
}

// The streaming thread's part: every published slot sent and delivered
// at once (as if its send completed); the chunks' places and records
// taken into places and records.
void deliver_all(std::set<uint32_t> &places, uint64_t &records)
{
    for (unsigned slot = 0; slot < adt_online_handover_slots(); slot++) {
        adt_event_chunk chunk;
        if (adt_online_handed_at(slot, &chunk) != ADT_ONLINE_HANDED_READY)
            continue;
        EXPECT_TRUE(places.insert(chunk.position).second) << "place " << chunk.position << " handed twice";
        EXPECT_GT(chunk.records, 0u);
        records += chunk.records;
        adt_online_handed_sent(slot);
        adt_online_handed_delivered(slot);
    }
}

// With nobody delivering, a thread hands over as many chunks as there are
// slots, keeps the rest in its chain, and hands over again once slots are
// free.
TEST(OnlineHandover, AtMostTheBoundOfSlotsAndAgainOnceFree)
{
    Buffer owner;
    ASSERT_NE(owner.buffer, nullptr);
    adt_location *location = adt_buffer_add_location(owner.buffer, 1);
    adt_online_handover_open(4, UINT32_MAX);
    uint64_t time = 1;
    for (; time <= 400; time++)
        ASSERT_TRUE(append(location, time));
    adt_location_stats before;
    adt_location_get_stats(location, &before);
    ASSERT_GT(before.events.chunks, 8u);
    adt_online_hand_over_events(location);
    unsigned ready = 0;
    for (unsigned slot = 0; slot < adt_online_handover_slots(); slot++) {
        adt_event_chunk chunk;
        ready += adt_online_handed_at(slot, &chunk) == ADT_ONLINE_HANDED_READY;
    }
    EXPECT_EQ(ready, 4u);
    adt_location_stats after;
    adt_location_get_stats(location, &after);
    EXPECT_EQ(after.events.chunks, before.events.chunks - 4);
    std::set<uint32_t> places;
    uint64_t records = 0;
    deliver_all(places, records);
    EXPECT_EQ(records, after.streamed_records);
    adt_online_hand_over_events(location);
    deliver_all(places, records);
    EXPECT_EQ(places.size(), 8u);
    adt_online_handover_stop();
    // Stopped: nothing is handed over any more.
    adt_online_hand_over_events(location);
    for (unsigned slot = 0; slot < adt_online_handover_slots(); slot++) {
        adt_event_chunk chunk;
        EXPECT_EQ(adt_online_handed_at(slot, &chunk), ADT_ONLINE_HANDED_FREE);
    }
}

// Three threads append and hand over while a fourth delivers: every chunk
// is handed once, every record appended is either delivered or still in
// its thread's chain, and every chunk delivered is back on the free list.
TEST(OnlineHandover, ThreadsHandOverWhileTheStreamingThreadDelivers)
{
    Buffer owner;
    ASSERT_NE(owner.buffer, nullptr);
    adt_online_handover_open(8, UINT32_MAX);
    constexpr int kThreads = 3;
    constexpr uint64_t kEvents = 3000; // 24 bytes each: under a third of the arena per thread
    std::vector<adt_location *> locations;
    for (int thread = 0; thread < kThreads; thread++)
        locations.push_back(adt_buffer_add_location(owner.buffer, (uint64_t)thread + 1));
    std::atomic<int> running{kThreads};
    std::set<uint32_t> places;
    uint64_t delivered = 0;
    std::thread streaming([&] {
        while (running.load() > 0)
            deliver_all(places, delivered);
        deliver_all(places, delivered);
    });
    std::vector<std::thread> handing;
    std::atomic<uint64_t> refused{0};
    for (int thread = 0; thread < kThreads; thread++)
        handing.emplace_back([&, thread] {
            for (uint64_t time = 1; time <= kEvents; time++) {
                if (!append(locations[thread], time))
                    refused++;
                adt_online_hand_over_events(locations[thread]);
            }
            running--;
        });
    for (std::thread &thread : handing)
        thread.join();
    streaming.join();
    adt_online_handover_stop();
    EXPECT_EQ(refused.load(), 0u);
    uint64_t in_chains = 0, streamed = 0, chain_chunks = 0;
    for (adt_location *location : locations) {
        adt_location_stats stats;
        adt_location_get_stats(location, &stats);
        in_chains += stats.events.records;
        streamed += stats.streamed_records;
        chain_chunks += stats.events.chunks;
    }
    EXPECT_GT(delivered, 0u);
    EXPECT_EQ(delivered, streamed);
    EXPECT_EQ(in_chains + delivered, kThreads * kEvents);
    adt_buffer_stats buffer;
    adt_buffer_get_stats(owner.buffer, &buffer);
    EXPECT_EQ(buffer.chunks_free + chain_chunks, buffer.chunks_total);
}

} // namespace
