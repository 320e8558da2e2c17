// A thread's skeleton grows into the share (issue #25): a full signature
// table, grammar or timing table is moved into a larger one with
// everything it held, a thread folds far past its first slab and still
// expands exactly to its calls, and only a share with no room left stops
// it, under the cause of the table that was full.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "skeleton/skeleton.h"

namespace {

// Memory for a table, 8-byte aligned.
std::vector<uint64_t> room(size_t bytes)
{
    return std::vector<uint64_t>(bytes / 8 + 1);
}

std::vector<uint32_t> expand(adt_skeleton_grammar *grammar)
{
    adt_skeleton_grammar_settle(grammar);
    std::vector<uint32_t> starts(adt_skeleton_grammar_rules(grammar) + 1);
    std::vector<uint32_t> values(adt_skeleton_grammar_symbols(grammar));
    std::vector<uint32_t> exponents(values.size());
    std::vector<uint32_t> scratch(adt_skeleton_grammar_rule_capacity(grammar));
    adt_skeleton_rules rules = { 0, starts.data(), values.data(), exponents.data() };
    adt_skeleton_grammar_export(grammar, &rules, scratch.data());
    std::vector<uint32_t> out;
    adt_skeleton_rules_expand(
        &rules,
        [](uint32_t terminal, void *arg) {
            static_cast<std::vector<uint32_t> *>(arg)->push_back(terminal);
            return true;
        },
        &out);
    return out;
}

// Loop nests with random bodies: rules, twins and inlining all happen,
// and the grammar keeps growing.
std::vector<uint32_t> structured_input(uint32_t seed, size_t length)
{
    std::mt19937 random(seed);
    std::vector<uint32_t> out;
    while (out.size() < length) {
        std::vector<uint32_t> body(1 + random() % 6);
        for (auto &t : body)
            t = random() % 40;
        uint32_t iterations = 1 + random() % 4;
        for (uint32_t i = 0; i < iterations; ++i)
            out.insert(out.end(), body.begin(), body.end());
    }
    out.resize(length);
    return out;
}

TEST(SkeletonGrowth, AGrammarMovedIntoLargerMemoryGoesOnExactly)
{
    auto input = structured_input(25, 20000);
    std::vector<std::vector<uint64_t>> memories;
    memories.push_back(room(adt_skeleton_grammar_bytes(256, 64, 9)));
    adt_skeleton_grammar *grammar = adt_skeleton_grammar_init(memories.back().data(), 256, 64, 9);
    int growths = 0;
    for (uint32_t terminal : input) {
        while (!adt_skeleton_grammar_append(grammar, terminal)) {
            size_t bytes = adt_skeleton_grammar_scaled_bytes(grammar, 12);
            memories.push_back(room(bytes));
            adt_skeleton_grammar *grown = adt_skeleton_grammar_grow(grammar, memories.back().data(), bytes);
            ASSERT_NE(grown, nullptr);
            EXPECT_EQ(adt_skeleton_grammar_length(grown), adt_skeleton_grammar_length(grammar));
            EXPECT_GT(adt_skeleton_grammar_rule_capacity(grown), adt_skeleton_grammar_rule_capacity(grammar));
            grammar = grown;
            growths++;
        }
    }
    EXPECT_GE(growths, 3);
    EXPECT_EQ(adt_skeleton_grammar_length(grammar), input.size());
    EXPECT_EQ(expand(grammar), input);
}

TEST(SkeletonGrowth, NoLargerGrammarFitsInMemoryOfTheSameSize)
{
    auto memory = room(adt_skeleton_grammar_bytes(256, 64, 9));
    adt_skeleton_grammar *grammar = adt_skeleton_grammar_init(memory.data(), 256, 64, 9);
    auto other = room(memory.size() * 8);
    EXPECT_EQ(adt_skeleton_grammar_grow(grammar, other.data(), memory.size() * 8), nullptr);
    EXPECT_EQ(adt_skeleton_grammar_scaled_bytes(grammar, 1u << 30), SIZE_MAX) << "past the limits";
}

TEST(SkeletonGrowth, SignaturesKeepTheirIdsInALargerTable)
{
    auto memory = room(adt_skeleton_signatures_bytes(4, 64));
    adt_skeleton_signatures *table = adt_skeleton_signatures_init(memory.data(), 4, 64);
    std::vector<std::vector<uint64_t>> grown_memory;
    std::vector<std::string> keys;
    for (int i = 0; i < 300; ++i)
        keys.push_back("call " + std::to_string(i * 7919));
    auto intern = [&](const std::string &key) {
        return adt_skeleton_signatures_intern(table, reinterpret_cast<const uint8_t *>(key.data()),
                                              (uint32_t)key.size());
    };
    for (uint32_t i = 0; i < keys.size(); ++i) {
        uint32_t terminal = intern(keys[i]);
        if (terminal == UINT32_MAX) {
            size_t bytes = adt_skeleton_signatures_scaled_bytes(table, 16);
            grown_memory.push_back(room(bytes));
            table = adt_skeleton_signatures_grow(table, grown_memory.back().data(), bytes);
            ASSERT_NE(table, nullptr);
            terminal = intern(keys[i]);
        }
        ASSERT_EQ(terminal, i);
    }
    EXPECT_GE(grown_memory.size(), 5u);
    EXPECT_EQ(adt_skeleton_signatures_count(table), keys.size());
    for (uint32_t i = 0; i < keys.size(); ++i) {
        EXPECT_EQ(intern(keys[i]), i) << "found again by its hash";
        uint32_t length = 0;
        const uint8_t *key = adt_skeleton_signatures_key(table, i, &length);
        EXPECT_EQ(std::string(reinterpret_cast<const char *>(key), length), keys[i]);
    }
}

// 3 rounds over 30 pairs into a table of 2, grown whenever it refuses, by
// grow (moved) or grow_in_place (extended where it is): each pair keeps
// its computation (its index) and durations (the rounds).
void expect_timing_grows(bool in_place)
{
    std::vector<std::vector<uint64_t>> memories;
    memories.push_back(room(in_place ? adt_skeleton_timing_bytes(64) : adt_skeleton_timing_bytes(2)));
    adt_skeleton_timing *timing = adt_skeleton_timing_init(memories.back().data(), 2);
    int growths = 0;
    for (uint64_t round = 1; round <= 3; ++round) {
        for (uint32_t pair = 0; pair < 30; ++pair) {
            if (adt_skeleton_timing_add(timing, pair, pair + 1, pair, round))
                continue;
            size_t bytes = adt_skeleton_timing_scaled_bytes(timing, 16);
            if (in_place) {
                ASSERT_LE(bytes, adt_skeleton_timing_bytes(64));
                ASSERT_EQ(adt_skeleton_timing_grow_in_place(timing, bytes), timing);
            } else {
                memories.push_back(room(bytes));
                timing = adt_skeleton_timing_grow(timing, memories.back().data(), bytes);
                ASSERT_NE(timing, nullptr);
            }
            growths++;
            ASSERT_TRUE(adt_skeleton_timing_add(timing, pair, pair + 1, pair, round));
        }
    }
    EXPECT_GE(growths, 3);
    ASSERT_EQ(adt_skeleton_timing_count(timing), 30u);
    std::vector<adt_skeleton_pair> pairs(30);
    adt_skeleton_timing_export(timing, 0, pairs.data());
    for (uint32_t pair = 0; pair < 30; ++pair) {
        EXPECT_EQ(pairs[pair].previous, pair);
        EXPECT_EQ(pairs[pair].signature, pair + 1);
        EXPECT_EQ(pairs[pair].compute.count, 3u);
        EXPECT_EQ(pairs[pair].compute.min, pair);
        EXPECT_EQ(pairs[pair].compute.max, pair);
        EXPECT_EQ(pairs[pair].duration.min, 1u);
        EXPECT_EQ(pairs[pair].duration.max, 3u);
        EXPECT_DOUBLE_EQ(pairs[pair].duration.mean, 2.0);
    }
}

TEST(SkeletonGrowth, TimingKeepsEveryPairsValuesInALargerTable)
{
    expect_timing_grows(false);
}

TEST(SkeletonGrowth, TimingKeepsEveryPairsValuesExtendedInPlace)
{
    expect_timing_grows(true);
}

TEST(SkeletonGrowth, NoLargerTimingFitsInItsOwnBytes)
{
    auto memory = room(adt_skeleton_timing_bytes(16));
    adt_skeleton_timing *timing = adt_skeleton_timing_init(memory.data(), 16);
    EXPECT_EQ(adt_skeleton_timing_grow_in_place(timing, adt_skeleton_timing_bytes(16)), nullptr);
    EXPECT_EQ(adt_skeleton_timing_count(timing), 0u);
}

// The key of call i of a stream with `distinct` different calls: a
// message size that varies (CP2K's distributed matrices), in loops.
std::vector<uint8_t> call_key(uint32_t value, uint32_t padding)
{
    std::vector<uint8_t> key = { 3, 1, 0 };
    for (uint32_t v = value;; v >>= 7) {
        key.push_back((uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)));
        if (v < 0x80)
            break;
    }
    key.insert(key.end(), padding, 0);
    return key;
}

struct Share {
    explicit Share(uint32_t slabs)
    {
        EXPECT_EQ(adt_skeleton_share_create((uint64_t)slabs * ADT_SKELETON_SLAB_BYTES), 0);
    }
    ~Share() { adt_skeleton_share_destroy(); }
};

// Folds the calls; returns the ones taken before the skeleton stopped.
std::vector<uint32_t> fold(adt_skeleton *skeleton, const std::vector<uint32_t> &values, uint32_t padding)
{
    std::vector<uint32_t> taken;
    uint64_t now = 0;
    for (uint32_t value : values) {
        auto key = call_key(value, padding);
        adt_skeleton_fold(skeleton, key.data(), (uint32_t)key.size(), now, now + 1 + value % 5);
        now += 10;
        if (skeleton->stop != ADT_SKELETON_RUNNING)
            break;
        taken.push_back(value);
    }
    return taken;
}

// What the skeleton expands to, as the values of the keys.
std::vector<uint32_t> expanded_values(adt_skeleton *skeleton)
{
    std::vector<uint32_t> out;
    for (uint32_t terminal : expand(skeleton->grammar)) {
        uint32_t length = 0, offset = 3;
        const uint8_t *key = adt_skeleton_signatures_key(skeleton->signatures, terminal, &length);
        uint64_t value = 0;
        EXPECT_TRUE(adt_skeleton_key_next(key, length, &offset, &value));
        out.push_back((uint32_t)value);
    }
    return out;
}

// 12,000 distinct calls (six times a first slab's 2,048), in loops, and a
// grammar and timing table far past the first slab's: the thread claims
// further slabs (11 of 32: its timing extends in place, the other
// tables leave their old copies unused) and
// its skeleton expands exactly to its calls, each timed.
TEST(SkeletonGrowth, AThreadGrowsAcrossSlabsAndExpandsExactlyToItsCalls)
{
    Share share(32);
    adt_skeleton *skeleton = adt_skeleton_claim(0);
    ASSERT_NE(skeleton, nullptr);
    std::mt19937 random(2048);
    std::vector<uint32_t> values;
    for (uint32_t step = 0; step < 3000; ++step) {
        uint32_t size = step * 4; // a new size every step
        for (uint32_t i = 0; i < 2 + random() % 3; ++i)
            values.insert(values.end(), { size, size + 1, 7, size + 2, size + 3 });
        values.push_back(random() % 300000); // an irregular call
    }
    EXPECT_EQ(fold(skeleton, values, 0).size(), values.size());
    EXPECT_EQ(skeleton->stop, ADT_SKELETON_RUNNING);
    EXPECT_EQ(skeleton->calls, values.size());
    EXPECT_EQ(skeleton->untimed, 0u) << "the timing table grew too";
    EXPECT_GT(adt_skeleton_signatures_count(skeleton->signatures), 12000u);
    EXPECT_GT(adt_skeleton_share_claimed_bytes(), 1u * ADT_SKELETON_SLAB_BYTES);
    EXPECT_LE(adt_skeleton_share_claimed_bytes(), 12u * ADT_SKELETON_SLAB_BYTES) << "the timing extends in place";
    EXPECT_EQ(expanded_values(skeleton), values);
    EXPECT_EQ(adt_skeleton_count(), 1u) << "growth adds slabs, not skeletons";
    EXPECT_EQ(adt_skeleton_at(0), skeleton);
}

// A share of one slab: no room to grow. Long distinct keys fill the
// signature table first, and the skeleton stops there, still exact.
TEST(SkeletonGrowth, AShareWithoutRoomStopsAtTheFullSignatureTable)
{
    Share share(1);
    adt_skeleton *skeleton = adt_skeleton_claim(0);
    std::vector<uint32_t> values(5000);
    for (uint32_t i = 0; i < values.size(); ++i)
        values[i] = i;
    auto taken = fold(skeleton, values, 900);
    EXPECT_EQ(skeleton->stop, ADT_SKELETON_STOP_SIGNATURES_FULL);
    EXPECT_LT(taken.size(), 200u) << "96 KiB of 900-byte keys";
    EXPECT_EQ(skeleton->calls, taken.size());
    EXPECT_EQ(expanded_values(skeleton), taken);
}

// Two slabs, the second taken by the first thread's grammar: a second
// thread finds none (no_slab), and the first stops when its grammar is
// full again (random calls do not fold). Its timing table never grew (the
// share must keep room for its structure to double): the calls of its
// new pairs were counted as untimed meanwhile.
TEST(SkeletonGrowth, GrowthTakesTheShareFromOtherThreadsAndStopsWhenItIsGone)
{
    Share share(2);
    adt_skeleton *first = adt_skeleton_claim(0);
    std::mt19937 random(7);
    std::vector<uint32_t> values(400000);
    for (auto &v : values)
        v = random() % 100;
    auto taken = fold(first, values, 0);
    EXPECT_EQ(first->stop, ADT_SKELETON_STOP_GRAMMAR_FULL);
    EXPECT_EQ(adt_skeleton_share_claimed_bytes(), 2u * ADT_SKELETON_SLAB_BYTES);
    EXPECT_GT(taken.size(), 10000u);
    EXPECT_GT(first->untimed, 0u);
    EXPECT_EQ(expanded_values(first), taken);
    adt_skeleton *second = adt_skeleton_claim(1);
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(second->stop, ADT_SKELETON_STOP_NO_SLAB);
}

// A small structure and many pairs: 120 distinct calls in a random order
// (about 13,000 of their 14,400 pairs seen in 40,000 calls, some 4 MB of
// histograms, while the signatures and grammar take three slabs). The
// timing grows with the structure, keeping room only for the structure to
// double, so every call is timed in a share of 16 slabs (its table moved
// once, past the grammar's growth); a timing kept to half the share left
// thousands of calls untimed.
TEST(SkeletonGrowth, TimingTakesTheShareASmallStructureLeaves)
{
    Share share(16);
    adt_skeleton *skeleton = adt_skeleton_claim(0);
    ASSERT_NE(skeleton, nullptr);
    std::mt19937 random(120);
    std::vector<uint32_t> values(40000);
    for (auto &v : values)
        v = random() % 120;
    EXPECT_EQ(fold(skeleton, values, 0).size(), values.size());
    EXPECT_EQ(skeleton->stop, ADT_SKELETON_RUNNING);
    EXPECT_GT(adt_skeleton_timing_count(skeleton->timing), 12000u);
    EXPECT_EQ(skeleton->untimed, 0u);
    EXPECT_GT(adt_skeleton_share_claimed_bytes(), 6u * ADT_SKELETON_SLAB_BYTES);
    EXPECT_EQ(expanded_values(skeleton), values);
}

// Four threads grow side by side in one share: their claims never
// overlap (each skeleton holds exactly its own thread's calls, a prefix
// where the share ran out, and stops only under a cause of a full table,
// or finds no slab when the others' growth took the share before its
// first call), and together they take no more than the share.
TEST(SkeletonGrowth, ThreadsGrowSideBySideWithoutTakingEachOthersSlabs)
{
    const int threads = 4;
    Share share(12);
    std::vector<adt_skeleton *> skeletons(threads);
    std::vector<std::vector<uint32_t>> inputs(threads), taken(threads);
    for (int t = 0; t < threads; ++t)
        for (uint32_t i = 0; i < 20000; ++i)
            inputs[t].push_back(i % 3 == 0 ? 7u : (uint32_t)t * 1000000u + i); // mostly distinct
    std::vector<std::thread> running;
    for (int t = 0; t < threads; ++t)
        running.emplace_back([t, &skeletons, &inputs, &taken] {
            skeletons[t] = adt_skeleton_claim((uint64_t)t);
            taken[t] = fold(skeletons[t], inputs[t], 0);
        });
    for (auto &thread : running)
        thread.join();
    EXPECT_LE(adt_skeleton_share_claimed_bytes(), 12u * ADT_SKELETON_SLAB_BYTES);
    size_t calls = 0;
    for (int t = 0; t < threads; ++t) {
        ASSERT_NE(skeletons[t], nullptr);
        EXPECT_TRUE(skeletons[t]->stop == ADT_SKELETON_RUNNING || skeletons[t]->stop == ADT_SKELETON_STOP_NO_SLAB ||
                    skeletons[t]->stop == ADT_SKELETON_STOP_SIGNATURES_FULL ||
                    skeletons[t]->stop == ADT_SKELETON_STOP_GRAMMAR_FULL)
            << "thread " << t << " stopped as " << skeletons[t]->stop;
        calls += taken[t].size();
        if (skeletons[t]->stop == ADT_SKELETON_STOP_NO_SLAB) {
            EXPECT_TRUE(taken[t].empty());
            continue;
        }
        EXPECT_EQ(expanded_values(skeletons[t]), taken[t]) << "thread " << t;
    }
    EXPECT_GT(calls, 4u * 2048) << "past the first slabs' 2,048 signatures each";
}

} // namespace
