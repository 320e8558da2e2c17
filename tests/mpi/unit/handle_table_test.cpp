#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "handle_table.h"

namespace {

struct Payload {
    uint64_t id;
    uint32_t comm;
};

struct TableDeleter {
    void operator()(adt_handle_table *table) const { adt_handle_table_destroy(table); }
};
using Table = std::unique_ptr<adt_handle_table, TableDeleter>;

Table make_table(size_t capacity) { return Table(adt_handle_table_create(capacity, sizeof(Payload))); }

TEST(HandleTable, InsertedKeyIsFoundWithItsPayload)
{
    Table table = make_table(256);
    ASSERT_TRUE(table);
    auto *payload = static_cast<Payload *>(adt_handle_table_insert(table.get(), 0x1000));
    ASSERT_NE(payload, nullptr);
    EXPECT_EQ(payload->id, 0u) << "a new key's payload is zero-filled";
    payload->id = 42;
    payload->comm = 7;
    auto *found = static_cast<Payload *>(adt_handle_table_find(table.get(), 0x1000));
    ASSERT_EQ(found, payload);
    EXPECT_EQ(found->id, 42u);
    EXPECT_EQ(adt_handle_table_find(table.get(), 0x2000), nullptr);
    EXPECT_EQ(adt_handle_table_count(table.get()), 1u);
}

TEST(HandleTable, RemovedKeyIsGoneAndItsSlotIsReused)
{
    Table table = make_table(64);
    for (uintptr_t round = 0; round < 10000; ++round) {
        uintptr_t key = 0x10 + round * 8;
        ASSERT_NE(adt_handle_table_insert(table.get(), key), nullptr) << "round " << round;
        adt_handle_table_remove(table.get(), key);
        ASSERT_EQ(adt_handle_table_find(table.get(), key), nullptr);
    }
    EXPECT_EQ(adt_handle_table_count(table.get()), 0u);
    EXPECT_EQ(adt_handle_table_overflows(table.get()), 0u);
}

TEST(HandleTable, InsertingAPresentKeyReturnsTheSameSlot)
{
    Table table = make_table(64);
    void *first = adt_handle_table_insert(table.get(), 0x40);
    static_cast<Payload *>(first)->id = 9;
    void *second = adt_handle_table_insert(table.get(), 0x40);
    EXPECT_EQ(first, second);
    EXPECT_EQ(static_cast<Payload *>(second)->id, 9u);
    EXPECT_EQ(adt_handle_table_count(table.get()), 1u);
}

TEST(HandleTable, ReservedKeysAreRefused)
{
    Table table = make_table(64);
    EXPECT_EQ(adt_handle_table_insert(table.get(), 0), nullptr);
    EXPECT_EQ(adt_handle_table_insert(table.get(), 1), nullptr);
}

TEST(HandleTable, FullTableRefusesAndCountsInsteadOfOverwriting)
{
    Table table = make_table(64);
    size_t inserted = 0;
    for (uintptr_t key = 2; key < 2 + 200; ++key)
        inserted += adt_handle_table_insert(table.get(), key * 16) != nullptr;
    EXPECT_EQ(inserted, 64u);
    EXPECT_EQ(adt_handle_table_overflows(table.get()), 200u - 64u);
    for (uintptr_t key = 2; key < 2 + 200; ++key) {
        auto *payload = adt_handle_table_find(table.get(), key * 16);
        if (payload)
            static_cast<Payload *>(payload)->id = key;
    }
    size_t found = 0;
    for (uintptr_t key = 2; key < 2 + 200; ++key) {
        auto *payload = static_cast<Payload *>(adt_handle_table_find(table.get(), key * 16));
        if (payload) {
            ++found;
            EXPECT_EQ(payload->id, key);
        }
    }
    EXPECT_EQ(found, 64u);
}

TEST(HandleTable, ThreadsInsertAndRemoveTheirOwnKeysConcurrently)
{
    Table table = make_table(4096);
    constexpr int threads = 4, keys_per_thread = 250, rounds = 20;
    std::atomic<int> errors{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            for (int round = 0; round < rounds; ++round) {
                for (int k = 0; k < keys_per_thread; ++k) {
                    uintptr_t key = (uintptr_t)(t * keys_per_thread + k + 1) * 64;
                    auto *payload = static_cast<Payload *>(adt_handle_table_insert(table.get(), key));
                    if (!payload) {
                        ++errors;
                        continue;
                    }
                    payload->id = key + (uint64_t)round;
                }
                for (int k = 0; k < keys_per_thread; ++k) {
                    uintptr_t key = (uintptr_t)(t * keys_per_thread + k + 1) * 64;
                    auto *payload = static_cast<Payload *>(adt_handle_table_find(table.get(), key));
                    if (!payload || payload->id != key + (uint64_t)round)
                        ++errors;
                    adt_handle_table_remove(table.get(), key);
                }
            }
        });
    }
    for (auto &worker : workers)
        worker.join();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(adt_handle_table_count(table.get()), 0u);
}

} // namespace
