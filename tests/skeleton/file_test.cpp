// skeleton.adts (issue #25): the threads' skeletons written and read back
// whole; a file cut short, damaged or of another version is refused with
// one line.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "skeleton/skeleton.h"

namespace {

// A TSC rate (ticks per second), as the file of a run with the TSC holds.
constexpr uint64_t kTicksPerSecond = 2600000123ull;

std::vector<uint8_t> key_of(uint32_t call)
{
    return { (uint8_t)(call & 0x7f), 3, 4 };
}

// Two threads folded in the share, written as one rank's part.
class SkeletonFile : public ::testing::Test {
protected:
    std::vector<uint8_t> file;
    std::vector<std::vector<uint32_t>> calls{ {}, {} };

    void SetUp() override
    {
        ASSERT_EQ(adt_skeleton_share_create(2ull * ADT_SKELETON_SLAB_BYTES), 0);
        adt_skeleton *threads[2] = { adt_skeleton_claim(0), adt_skeleton_claim(1) };
        ASSERT_NE(threads[0], nullptr);
        ASSERT_NE(threads[1], nullptr);
        // Each call: 100 ns of computation before it, and call * 10 ns
        // long (thread 0's first call: no computation on record).
        uint64_t now = 1000;
        for (int step = 0; step < 40; ++step) {
            for (uint32_t call : { 10u, 11u, 12u, 11u, 12u, 13u }) {
                calls[0].push_back(call);
                auto key = key_of(call);
                now += 100;
                adt_skeleton_fold(threads[0], key.data(), (uint32_t)key.size(), now, now + call * 10);
                now += call * 10;
            }
        }
        for (uint32_t call : { 1u, 2u, 2u, 2u, 3u }) {
            calls[1].push_back(call);
            auto key = key_of(call);
            adt_skeleton_fold(threads[1], key.data(), (uint32_t)key.size(), 0, 0);
        }
        // Five ranks: 0, 2 and 4 with these skeletons, 1 and 3 with none.
        size_t part_bytes[3] = { 0, 0, 0 };
        uint8_t *part[3];
        for (uint32_t i = 0; i < 3; ++i) {
            part[i] = adt_skeleton_rank_encode(2 * i, &part_bytes[i]);
            ASSERT_NE(part[i], nullptr);
        }
        // A part: u64 structure bytes (4), the structure (0 threads).
        const uint8_t other[] = { 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
        const char *names[] = { "MPI_Init", "MPI_Send" };
        const uint8_t *parts[] = { part[0], other, part[1], other, part[2] };
        size_t sizes[] = { part_bytes[0], sizeof other, part_bytes[1], sizeof other, part_bytes[2] };
        char path[] = "/tmp/skeleton-test-XXXXXX";
        int fd = mkstemp(path);
        ASSERT_GE(fd, 0);
        close(fd);
        ASSERT_EQ(adt_skeleton_file_write(path, names, 2, parts, sizes, 5, kTicksPerSecond, nullptr), 0);
        for (uint8_t *one : part)
            free(one);
        FILE *stream = fopen(path, "rb");
        ASSERT_NE(stream, nullptr);
        int c;
        while ((c = fgetc(stream)) != EOF)
            file.push_back((uint8_t)c);
        fclose(stream);
        unlink(path);
    }

    void TearDown() override { adt_skeleton_share_destroy(); }

    std::string refusal(const std::vector<uint8_t> &bytes)
    {
        char error[256] = "";
        adt_skeleton_file *read = adt_skeleton_file_parse(bytes.data(), bytes.size(), error, sizeof error);
        if (read) {
            adt_skeleton_file_free(read);
            return "";
        }
        EXPECT_EQ(std::strchr(error, '\n'), nullptr);
        return error;
    }
};

std::vector<uint32_t> expanded_calls(const adt_skeleton_thread_view &thread)
{
    std::vector<uint32_t> terminals;
    adt_skeleton_rules_expand(
        &thread.rules,
        [](uint32_t terminal, void *arg) {
            static_cast<std::vector<uint32_t> *>(arg)->push_back(terminal);
            return true;
        },
        &terminals);
    std::vector<uint32_t> out;
    for (uint32_t t : terminals)
        out.push_back(thread.keys[t][0]);
    return out;
}

TEST_F(SkeletonFile, ReadsBackEveryThreadsCalls)
{
    char error[256] = "";
    adt_skeleton_file *read = adt_skeleton_file_parse(file.data(), file.size(), error, sizeof error);
    ASSERT_NE(read, nullptr) << error;
    EXPECT_EQ(read->version, ADT_SKELETON_VERSION);
    EXPECT_EQ(read->ticks_per_second, kTicksPerSecond);
    ASSERT_EQ(read->function_count, 2u);
    EXPECT_STREQ(read->function_names[1], "MPI_Send");
    ASSERT_EQ(read->rank_count, 5u);
    ASSERT_EQ(read->class_count, 2u) << "equal ranks are stored once";
    EXPECT_EQ(read->classes[0].rank_count, 3u);
    EXPECT_EQ(read->classes[1].rank_count, 2u);
    EXPECT_EQ(read->classes[1].thread_count, 0u);
    ASSERT_EQ(read->range_count, 2u) << "0,2,4 and 1,3 are one strided range each";
    EXPECT_EQ(read->ranges[0].first, 0u);
    EXPECT_EQ(read->ranges[0].count, 3u);
    EXPECT_EQ(read->ranges[0].stride, 2u);
    EXPECT_EQ(read->ranges[1].first, 1u);
    EXPECT_EQ(read->ranges[1].stride, 2u);
    for (uint32_t r = 0; r < 5; ++r) {
        EXPECT_EQ(read->ranks[r].rank, r);
        EXPECT_EQ(read->ranks[r].class_index, r % 2);
    }
    ASSERT_EQ(read->ranks[4].thread_count, 2u);
    for (int t = 0; t < 2; ++t) {
        const adt_skeleton_thread_view &thread = read->ranks[4].threads[t];
        EXPECT_EQ(thread.thread_index, (uint64_t)t);
        EXPECT_EQ(thread.stop, ADT_SKELETON_RUNNING);
        EXPECT_EQ(thread.calls, calls[t].size());
        EXPECT_EQ(expanded_calls(thread), calls[t]);
    }
    // Thread 0's 240 calls: a loop of 40 around 6 calls, not 240 symbols.
    const adt_skeleton_rules &rules = read->ranks[0].threads[0].rules;
    EXPECT_LE(rules.starts[rules.rule_count], 8u);
    adt_skeleton_file_free(read);
}

TEST_F(SkeletonFile, EveryCutIsRefused)
{
    for (size_t size = 0; size < file.size(); ++size) {
        std::vector<uint8_t> cut(file.begin(), file.begin() + (long)size);
        EXPECT_NE(refusal(cut), "") << "cut at " << size;
    }
}

TEST_F(SkeletonFile, EveryFlippedByteIsRefused)
{
    for (size_t at = 0; at < file.size(); ++at) {
        std::vector<uint8_t> damaged = file;
        damaged[at] ^= 0x20;
        EXPECT_NE(refusal(damaged), "") << "byte " << at;
    }
}

TEST_F(SkeletonFile, AnotherVersionIsNamed)
{
    std::vector<uint8_t> other = file;
    other[sizeof ADT_SKELETON_MAGIC] = (uint8_t)(ADT_SKELETON_VERSION_PARTIAL + 1);
    EXPECT_EQ(refusal(other), "skeleton format version 8, this adaptrace reads versions 6 and 7");
}

// Files of version 1 (no timing), 2 (no clock rate), 3 (no parameters
// by rank), 4 and 5 (a receive's matched peer and tag where its wildcards
// are now; 5 a partial file) are refused by their version, not read as
// something else.
TEST_F(SkeletonFile, TheVersionsWithoutTimingClockRateParametersOrWildcardsAreNamed)
{
    std::vector<uint8_t> old = file;
    old[sizeof ADT_SKELETON_MAGIC] = 1;
    EXPECT_EQ(refusal(old), "skeleton format version 1, this adaptrace reads versions 6 and 7");
    old[sizeof ADT_SKELETON_MAGIC] = 2;
    EXPECT_EQ(refusal(old), "skeleton format version 2, this adaptrace reads versions 6 and 7");
    old[sizeof ADT_SKELETON_MAGIC] = 3;
    EXPECT_EQ(refusal(old), "skeleton format version 3, this adaptrace reads versions 6 and 7");
    old[sizeof ADT_SKELETON_MAGIC] = 4;
    EXPECT_EQ(refusal(old), "skeleton format version 4, this adaptrace reads versions 6 and 7");
    old[sizeof ADT_SKELETON_MAGIC] = 5;
    EXPECT_EQ(refusal(old), "skeleton format version 5, this adaptrace reads versions 6 and 7");
}

// The three ranks of the class have their timing merged: every pair's
// count is three times one rank's, its mean and spread those of the
// calls, and each histogram's values in its bins.
TEST_F(SkeletonFile, TimingIsMergedOverTheClass)
{
    char error[256] = "";
    adt_skeleton_file *read = adt_skeleton_file_parse(file.data(), file.size(), error, sizeof error);
    ASSERT_NE(read, nullptr) << error;
    const adt_skeleton_thread_view &thread = read->ranks[2].threads[0];
    EXPECT_EQ(thread.untimed, 0u);
    uint64_t timed = 0;
    for (uint32_t p = 0; p < thread.pair_count; ++p) {
        const adt_skeleton_pair &pair = thread.pairs[p];
        timed += pair.duration.count;
        EXPECT_EQ(pair.duration.count % 3, 0u);
        uint32_t call = thread.keys[pair.signature][0];
        EXPECT_EQ(pair.duration.min, call * 10u);
        EXPECT_EQ(pair.duration.max, call * 10u);
        EXPECT_DOUBLE_EQ(pair.duration.mean, call * 10.0);
        EXPECT_NEAR(adt_skeleton_histogram_variance(&pair.duration), 0.0, 1e-9);
        EXPECT_EQ(pair.compute.min_rank, 0u) << "the lowest rank of equal minima";
        uint64_t compute = pair.previous == ADT_SKELETON_NO_PREVIOUS ? 0 : 100;
        EXPECT_EQ(pair.compute.max, compute);
        EXPECT_EQ(adt_skeleton_thread_pair(&thread, pair.previous, pair.signature), &pair);
    }
    EXPECT_EQ(timed, 3 * calls[0].size()) << "every call of the three ranks is in one pair";
    // 11 follows 10 and 12: two pairs; 12 follows 11 twice per step.
    const adt_skeleton_pair *after_eleven = adt_skeleton_thread_pair(&thread, 1, 2);
    ASSERT_NE(after_eleven, nullptr);
    EXPECT_EQ(after_eleven->duration.count, 3u * 2 * 40);
    // Thread 0 spans from its first call's Leave to its last call's Enter.
    EXPECT_GT(thread.span, 0u);
    EXPECT_EQ(thread.span_rank, 0u);
    adt_skeleton_file_free(read);
}

TEST_F(SkeletonFile, NotASkeletonIsNamed)
{
    std::vector<uint8_t> other(file.size(), 'x');
    EXPECT_EQ(refusal(other), "not a skeleton file (no ADTSKEL header)");
}

TEST(SkeletonShare, AThreadWithoutASlabIsStoppedAndCounted)
{
    ASSERT_EQ(adt_skeleton_share_create(ADT_SKELETON_SLAB_BYTES), 0);
    adt_skeleton *first = adt_skeleton_claim(0);
    adt_skeleton *second = adt_skeleton_claim(1);
    ASSERT_NE(first, nullptr);
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(first->stop, ADT_SKELETON_RUNNING);
    EXPECT_EQ(second->stop, ADT_SKELETON_STOP_NO_SLAB);
    const uint8_t key[] = { 1 };
    adt_skeleton_fold(second, key, 1, 0, 0);
    EXPECT_EQ(second->calls, 0u);
    EXPECT_EQ(adt_skeleton_count(), 2u);
    EXPECT_EQ(adt_skeleton_at(1), second);
    adt_skeleton_share_destroy();
}

// Inside a loop the fold compares a call's key with the key the loop
// expects, by words that overlap at the end (signatures_internal.h): a
// key of any length that differs from it in any one byte is another
// signature, and the same key stays the loop's.
TEST(SkeletonShare, AKeyDifferingInAnyByteFromTheExpectedOneIsAnotherSignature)
{
    for (uint32_t length = 1; length <= 20; ++length) {
        for (uint32_t differing = 0; differing < length; ++differing) {
            ASSERT_EQ(adt_skeleton_share_create(ADT_SKELETON_SLAB_BYTES), 0);
            adt_skeleton *skeleton = adt_skeleton_claim(0);
            ASSERT_NE(skeleton, nullptr);
            std::vector<uint8_t> key(length);
            for (uint32_t i = 0; i < length; ++i)
                key[i] = (uint8_t)(i * 7 + 1);
            for (int call = 0; call < 4; ++call)
                adt_skeleton_fold(skeleton, key.data(), length, 0, 0);
            std::vector<uint8_t> other = key;
            other[differing] ^= 0x40;
            adt_skeleton_fold(skeleton, other.data(), length, 0, 0);
            adt_skeleton_fold(skeleton, key.data(), length, 0, 0);
            EXPECT_EQ(adt_skeleton_signatures_count(skeleton->signatures), 2u)
                << "length " << length << ", byte " << differing;
            adt_skeleton_grammar_settle(skeleton->grammar);
            EXPECT_EQ(adt_skeleton_grammar_length(skeleton->grammar), 6u);
            adt_skeleton_share_destroy();
        }
    }
}

// Threads claim their skeletons at once and fold side by side: each gets
// a slab of its own (one atomic add), and each skeleton holds exactly its
// thread's calls; the threads beyond the slabs are stopped and counted.
TEST(SkeletonShare, ThreadsClaimAndFoldSideBySide)
{
    const int threads = 6, slabs = 4, calls = 5000;
    ASSERT_EQ(adt_skeleton_share_create((uint64_t)slabs * ADT_SKELETON_SLAB_BYTES), 0);
    std::vector<adt_skeleton *> claimed(threads, nullptr);
    std::vector<std::thread> running;
    for (int t = 0; t < threads; ++t) {
        running.emplace_back([t, &claimed] {
            adt_skeleton *skeleton = adt_skeleton_claim((uint64_t)t);
            claimed[t] = skeleton;
            for (int i = 0; i < calls; ++i) {
                const uint8_t key[] = { (uint8_t)t, (uint8_t)(i % 7) };
                adt_skeleton_fold(skeleton, key, sizeof key, (uint64_t)i * 2, (uint64_t)i * 2 + 1);
            }
        });
    }
    for (auto &thread : running)
        thread.join();
    ASSERT_EQ(adt_skeleton_count(), (size_t)threads);
    int folding = 0, stopped = 0;
    for (int t = 0; t < threads; ++t) {
        ASSERT_NE(claimed[t], nullptr);
        EXPECT_EQ(claimed[t]->thread_index, (uint64_t)t);
        if (claimed[t]->stop == ADT_SKELETON_STOP_NO_SLAB) {
            stopped++;
            EXPECT_EQ(claimed[t]->calls, 0u);
            continue;
        }
        folding++;
        EXPECT_EQ(claimed[t]->stop, ADT_SKELETON_RUNNING);
        EXPECT_EQ(claimed[t]->calls, (uint64_t)calls);
        uint32_t length = 0;
        const uint8_t *key = adt_skeleton_signatures_key(claimed[t]->signatures, 0, &length);
        EXPECT_EQ(key[0], t) << "every slab is its own thread's";
    }
    EXPECT_EQ(folding, slabs);
    EXPECT_EQ(stopped, threads - slabs);
    adt_skeleton_share_destroy();
}

} // namespace
