// skeleton.adts (issue #25): ranks whose skeletons differ only in their
// calls' parameters are one class, each differing parameter stored as
// its values with their ranks; every rank reads back exactly its own
// keys. Ranks whose structure differs stay apart. Ranks without a
// skeleton are named missing with their cause (version 7).
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include "skeleton/skeleton.h"

namespace {

using Key = std::vector<uint8_t>;
using Calls = std::vector<Key>;

// A key as mpi-events writes one: function, calling context, then a
// record kind and its fields (all below 128: one byte each).
Key call(uint8_t function, uint8_t context, std::vector<uint8_t> fields)
{
    fields.insert(fields.begin(), { function, context });
    return fields;
}

uint8_t zigzag(int value)
{
    return (uint8_t)(value < 0 ? -2 * value - 1 : 2 * value);
}

// A ring exchange: a send to peer, ten times, then a reduce to rank 0
// (whose received bytes only the root has).
Calls ring(int peer, uint8_t received)
{
    Calls calls{ call(1, 0, {}) };
    for (int step = 0; step < 10; ++step)
        calls.push_back(call(4, 0, { 2, 8, 0, 1, zigzag(peer), 5 }));
    calls.push_back(call(7, 0, { 11, 0, 8, received, 0, 3, 1, 0 }));
    return calls;
}

// One rank's part: its one thread's calls folded and encoded.
std::vector<uint8_t> part_of(const Calls &calls, uint32_t rank)
{
    std::vector<uint8_t> part;
    EXPECT_EQ(adt_skeleton_share_create(ADT_SKELETON_SLAB_BYTES), 0);
    adt_skeleton *thread = adt_skeleton_claim(0);
    EXPECT_NE(thread, nullptr);
    uint64_t now = 0;
    for (const Key &key : calls) {
        adt_skeleton_fold(thread, key.data(), (uint32_t)key.size(), now + 10, now + 20);
        now += 20;
    }
    size_t bytes = 0;
    uint8_t *encoded = adt_skeleton_rank_encode(rank, &bytes);
    EXPECT_NE(encoded, nullptr);
    part.assign(encoded, encoded + bytes);
    free(encoded);
    adt_skeleton_share_destroy();
    return part;
}

// An empty file of the tests' own under /tmp (skeleton-KIND-XXXXXX),
// for a writer to replace; the test unlinks it (taken_back does).
std::string temporary_file(const char *kind)
{
    std::string path = std::string("/tmp/skeleton-") + kind + "-XXXXXX";
    int fd = mkstemp(path.data());
    EXPECT_GE(fd, 0) << path;
    if (fd >= 0)
        close(fd);
    return path;
}

// The bytes of the file at path, which is removed.
std::vector<uint8_t> taken_back(const std::string &path)
{
    std::vector<uint8_t> bytes;
    FILE *stream = fopen(path.c_str(), "rb");
    for (int c; stream && (c = fgetc(stream)) != EOF;)
        bytes.push_back((uint8_t)c);
    if (stream)
        fclose(stream);
    unlink(path.c_str());
    return bytes;
}

// The functions the keys' first field indexes.
const char *const kNames[8] = { "MPI_Init", "MPI_Comm_rank", "MPI_Comm_size", "MPI_Barrier",
                                "MPI_Send", "MPI_Recv", "MPI_Bcast", "MPI_Reduce" };

// The file of these ranks' calls; a rank with a cause in missing (a
// non-NULL one) has no skeleton and is named missing for it.
std::vector<uint8_t> file_of(const std::vector<Calls> &ranks, const std::vector<const char *> &missing = {})
{
    std::vector<std::vector<uint8_t>> parts;
    for (uint32_t r = 0; r < ranks.size(); ++r)
        parts.push_back(part_of(ranks[r], r));
    std::vector<const uint8_t *> data;
    std::vector<size_t> sizes;
    std::vector<const char *> causes(ranks.size(), nullptr);
    for (uint32_t r = 0; r < ranks.size(); ++r) {
        causes[r] = r < missing.size() ? missing[r] : nullptr;
        data.push_back(causes[r] ? nullptr : parts[r].data());
        sizes.push_back(parts[r].size());
    }
    const std::string path = temporary_file("merge");
    EXPECT_EQ(adt_skeleton_file_write(path.c_str(), kNames, 8, data.data(), sizes.data(), (uint32_t)ranks.size(), 1000000000,
                                      causes.data()),
              0);
    return taken_back(path);
}

struct Read {
    adt_skeleton_file *file = nullptr;
    std::string error;
    explicit Read(const std::vector<uint8_t> &bytes)
    {
        char why[256] = "";
        file = adt_skeleton_file_parse(bytes.data(), bytes.size(), why, sizeof why);
        error = why;
    }
    ~Read() { adt_skeleton_file_free(file); }
};

// Rank r's calls as its view expands them, key by key.
Calls expanded(const adt_skeleton_file *file, uint32_t rank)
{
    struct Walk {
        const adt_skeleton_thread_view *thread;
        Calls calls;
    } walk{ &file->ranks[rank].threads[0], {} };
    adt_skeleton_rules_expand(
        &walk.thread->rules,
        [](uint32_t terminal, void *arg) {
            auto *w = static_cast<Walk *>(arg);
            const uint8_t *key = w->thread->keys[terminal];
            w->calls.emplace_back(key, key + w->thread->key_lengths[terminal]);
            return true;
        },
        &walk);
    return walk.calls;
}

uint64_t checksum(const std::vector<uint8_t> &bytes, size_t size)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < size; ++i)
        h = (h ^ bytes[i]) * 1099511628211ull;
    return h;
}

// The file with its checksum made to match again (a damage that the
// checksum does not catch: the reader's checks must).
std::vector<uint8_t> resealed(std::vector<uint8_t> bytes)
{
    uint64_t h = checksum(bytes, bytes.size() - 8);
    for (int i = 0; i < 8; ++i)
        bytes[bytes.size() - 8 + i] = (uint8_t)(h >> (8 * i));
    return bytes;
}

// Six ranks on a ring (the last one's peer wraps around), rank 0 the
// root of the reduce: one class, two parameters, three variants.
std::vector<Calls> six_on_a_ring()
{
    std::vector<Calls> ranks;
    for (int r = 0; r < 6; ++r)
        ranks.push_back(ring(r == 5 ? -5 : +1, r == 0 ? 48 : 0));
    return ranks;
}

TEST(SkeletonMerge, RanksDifferingInParametersAreOneClass)
{
    std::vector<Calls> ranks = six_on_a_ring();
    Read read(file_of(ranks));
    ASSERT_NE(read.file, nullptr) << read.error;
    ASSERT_EQ(read.file->class_count, 1u);
    const adt_skeleton_class_view &one = read.file->classes[0];
    EXPECT_EQ(one.rank_count, 6u);
    ASSERT_EQ(one.parameter_count, 2u);
    // The send's peer (field 6: function, context, kind, bytes, request,
    // communicator, peer): +1 on ranks 0-4, -5 on rank 5.
    const adt_skeleton_parameter &peer = one.parameters[0];
    EXPECT_EQ(peer.signature, 1u);
    EXPECT_EQ(peer.field, 6u);
    ASSERT_EQ(peer.value_count, 2u);
    EXPECT_EQ(peer.values[0].value, zigzag(+1));
    ASSERT_EQ(peer.values[0].range_count, 1u);
    EXPECT_EQ(peer.values[0].ranges[0].first, 0u);
    EXPECT_EQ(peer.values[0].ranges[0].count, 5u);
    EXPECT_EQ(peer.values[0].ranges[0].stride, 1u);
    EXPECT_EQ(peer.values[1].value, zigzag(-5));
    EXPECT_EQ(peer.values[1].ranges[0].first, 5u);
    EXPECT_EQ(peer.values[1].ranges[0].count, 1u);
    // The reduce's received bytes: 48 on the root, 0 elsewhere.
    const adt_skeleton_parameter &received = one.parameters[1];
    EXPECT_EQ(received.signature, 2u);
    EXPECT_EQ(received.field, 5u);
    ASSERT_EQ(received.value_count, 2u);
    EXPECT_EQ(received.values[0].value, 48u);
    EXPECT_EQ(received.values[1].value, 0u);
    EXPECT_EQ(received.values[1].ranges[0].first, 1u);
    EXPECT_EQ(received.values[1].ranges[0].count, 5u);
    EXPECT_EQ(one.variant_count, 3u) << "rank 0, ranks 1-4, rank 5";
    for (uint32_t r = 0; r < 6; ++r) {
        EXPECT_EQ(read.file->ranks[r].class_index, 0u);
        EXPECT_EQ(expanded(read.file, r), ranks[r]) << "rank " << r << " reads back its own keys";
    }
    // Their timing is merged as a class's: every call of the six ranks.
    uint64_t timed = 0;
    for (uint32_t p = 0; p < one.threads[0].pair_count; ++p)
        timed += one.threads[0].pairs[p].duration.count;
    EXPECT_EQ(timed, 6 * ranks[0].size());
}

// Equal ranks far apart in one strided range per value.
TEST(SkeletonMerge, ParameterRanksAreStridedRanges)
{
    std::vector<Calls> ranks;
    for (int r = 0; r < 8; ++r)
        ranks.push_back(ring(r % 2 ? -1 : +1, 0));
    Read read(file_of(ranks));
    ASSERT_NE(read.file, nullptr) << read.error;
    ASSERT_EQ(read.file->class_count, 1u);
    ASSERT_EQ(read.file->classes[0].parameter_count, 1u);
    const adt_skeleton_parameter &peer = read.file->classes[0].parameters[0];
    ASSERT_EQ(peer.value_count, 2u);
    for (uint32_t v = 0; v < 2; ++v) {
        ASSERT_EQ(peer.values[v].range_count, 1u);
        EXPECT_EQ(peer.values[v].ranges[0].first, v);
        EXPECT_EQ(peer.values[v].ranges[0].count, 4u);
        EXPECT_EQ(peer.values[v].ranges[0].stride, 2u);
    }
    for (uint32_t r = 0; r < 8; ++r)
        EXPECT_EQ(expanded(read.file, r), ranks[r]) << "rank " << r;
}

// Ranks whose loops, functions, calling contexts or records differ are
// separate classes, each with its own keys.
TEST(SkeletonMerge, RanksWithAnotherStructureStayApart)
{
    Calls base = ring(+1, 0);
    Calls longer = base;
    longer.insert(longer.begin() + 1, base[1]); // eleven sends: another loop count
    Calls other_function = base;
    other_function.back()[0] = 6;
    Calls other_context = base;
    other_context.back()[1] = 2;
    Calls more_fields = base;
    more_fields.back().push_back(9);
    std::vector<Calls> ranks{ base, longer, other_function, other_context, more_fields, base };
    Read read(file_of(ranks));
    ASSERT_NE(read.file, nullptr) << read.error;
    EXPECT_EQ(read.file->class_count, 5u);
    EXPECT_EQ(read.file->ranks[5].class_index, 0u) << "equal to rank 0";
    for (uint32_t k = 0; k < read.file->class_count; ++k)
        EXPECT_EQ(read.file->classes[k].parameter_count, 0u);
    for (uint32_t r = 0; r < ranks.size(); ++r)
        EXPECT_EQ(expanded(read.file, r), ranks[r]) << "rank " << r;
}

TEST(SkeletonMerge, EveryCutOrFlippedByteIsRefused)
{
    std::vector<uint8_t> file = file_of(six_on_a_ring());
    for (size_t size = 0; size < file.size(); ++size) {
        Read read(std::vector<uint8_t>(file.begin(), file.begin() + (long)size));
        EXPECT_EQ(read.file, nullptr) << "cut at " << size;
    }
    for (size_t at = 0; at < file.size(); ++at) {
        std::vector<uint8_t> damaged = file;
        damaged[at] ^= 0x20;
        Read read(damaged);
        EXPECT_EQ(read.file, nullptr) << "byte " << at;
        EXPECT_EQ(read.error.find('\n'), std::string::npos);
    }
}

// Past the checksum (resealed), a flipped byte reaches the reader's own
// checks: each file is refused in one line, or reads back whole, every
// rank's calls expanding to its thread's count (under ASan: no read out
// of bounds on the way).
TEST(SkeletonMerge, EveryResealedFlipIsRefusedOrReadWhole)
{
    std::vector<uint8_t> file = file_of(six_on_a_ring());
    int refused = 0;
    for (size_t at = 0; at + 8 < file.size(); ++at) {
        for (uint8_t flip : { 0x01, 0x20, 0x80 }) {
            std::vector<uint8_t> damaged = file;
            damaged[at] ^= flip;
            Read read(resealed(damaged));
            if (!read.file) {
                EXPECT_EQ(read.error.find('\n'), std::string::npos);
                EXPECT_FALSE(read.error.empty());
                refused++;
                continue;
            }
            for (uint32_t r = 0; r < read.file->rank_count; ++r) {
                ASSERT_EQ(read.file->ranks[r].thread_count, 1u) << "byte " << at;
                EXPECT_EQ(expanded(read.file, r).size(), read.file->ranks[r].threads[0].calls) << "byte " << at;
            }
        }
    }
    EXPECT_GT(refused, 0);
}

// The last bytes before the rank table: the last parameter's last range
// (first 5, count 1, stride 1). Resealed, the reader's own checks refuse a
// range that names a rank twice, one outside the class or too few.
TEST(SkeletonMerge, ParameterRangesNamingWrongRanksAreRefused)
{
    std::vector<uint8_t> file = file_of(six_on_a_ring());
    // u32 rank count, u32 range count, one range of 4 u32, u64 checksum.
    size_t stride_at = file.size() - 8 - 16 - 4 - 4 - 1;
    ASSERT_EQ(file[stride_at - 2], 1u) << "the received bytes' second value: ranks 1-5";
    ASSERT_EQ(file[stride_at - 1], 5u);
    ASSERT_EQ(file[stride_at], 1u);
    std::vector<uint8_t> twice = file;
    twice[stride_at - 2] = 0; // ranks 0-4: rank 0 has 48 already
    EXPECT_EQ(Read(resealed(twice)).error, "corrupt: class 0's parameter 1 names rank 0 twice");
    std::vector<uint8_t> outside = file;
    outside[stride_at - 2] = 2; // ranks 2-6 of 6
    EXPECT_EQ(Read(resealed(outside)).error, "corrupt: class 0's parameter 1 names rank 6 outside the class");
    std::vector<uint8_t> fewer = file;
    fewer[stride_at - 1] = 4; // ranks 1-4: rank 5 has no value
    EXPECT_EQ(Read(resealed(fewer)).error, "corrupt: class 0's parameter 1 names 5 of its 6 ranks");
    EXPECT_EQ(Read(resealed(file)).error, "") << "resealing alone changes nothing";
}

// Merged pairwise up a binomial tree (each rank: its own part, then its
// children's subtrees in increasing order, each sent as bytes), the ranks
// give the file that merging them one after another gives, byte for
// byte: the same classes, parameters, ranges and timing. A rank with a
// cause in missing has no skeleton (as adt_mpi_fold_write: it goes up
// missing); a child with a cause in failed sends a failed subtree, its
// ranks named missing for that cause by its parent.
adt_skeleton_merge *subtree_of(const std::vector<std::vector<uint8_t>> &parts, uint32_t rank,
                               const std::vector<const char *> &missing = {},
                               const std::vector<const char *> &failed = {})
{
    const char *cause = rank < missing.size() ? missing[rank] : nullptr;
    adt_skeleton_merge *merge = cause ? adt_skeleton_merge_of_missing(rank, 1, cause)
                                      : adt_skeleton_merge_of_part(parts[rank].data(), parts[rank].size(), rank);
    EXPECT_NE(merge, nullptr);
    uint32_t lowest = rank & (~rank + 1);
    for (uint32_t step = 1; (rank == 0 || step < lowest) && rank + step < parts.size(); step <<= 1) {
        uint32_t child_rank = rank + step;
        if (child_rank < failed.size() && failed[child_rank]) {
            uint32_t span = std::min<uint32_t>(step, (uint32_t)parts.size() - child_rank);
            EXPECT_TRUE(adt_skeleton_merge_add(merge, adt_skeleton_merge_of_missing(child_rank, span, failed[child_rank])));
            continue;
        }
        adt_skeleton_merge *child = subtree_of(parts, child_rank, missing, failed);
        size_t bytes = 0;
        uint8_t *wire = adt_skeleton_merge_encode(child, &bytes);
        adt_skeleton_merge_free(child);
        EXPECT_NE(wire, nullptr);
        adt_skeleton_merge *received = adt_skeleton_merge_decode(wire, bytes);
        free(wire);
        EXPECT_NE(received, nullptr);
        EXPECT_TRUE(adt_skeleton_merge_add(merge, received));
    }
    return merge;
}

std::vector<uint8_t> written(const adt_skeleton_merge *merge, uint32_t ranks)
{
    const std::string path = temporary_file("tree");
    EXPECT_EQ(adt_skeleton_merge_write(merge, path.c_str(), kNames, 8, ranks, 1000000000), 0);
    return taken_back(path);
}

TEST(SkeletonMerge, ATreeOfRanksMergesAsOneAfterAnother)
{
    // 13 ranks: a ring with a root and counts that differ by rank (one
    // class), every third rank with a longer loop (a class of its own)
    // and rank 7 with another function at the end (another).
    std::vector<Calls> ranks;
    for (int r = 0; r < 13; ++r) {
        Calls calls = ring(r == 12 ? -12 : +1, r == 0 ? 48 : (uint8_t)(r % 4));
        if (r % 3 == 2)
            calls.insert(calls.begin() + 1, calls[1]);
        if (r == 7)
            calls.back()[0] = 6;
        ranks.push_back(calls);
    }
    std::vector<std::vector<uint8_t>> parts;
    for (uint32_t r = 0; r < ranks.size(); ++r)
        parts.push_back(part_of(ranks[r], r));
    adt_skeleton_merge *sequence = adt_skeleton_merge_of_part(parts[0].data(), parts[0].size(), 0);
    for (uint32_t r = 1; r < parts.size(); ++r)
        ASSERT_TRUE(adt_skeleton_merge_add(sequence, adt_skeleton_merge_of_part(parts[r].data(), parts[r].size(), r)));
    adt_skeleton_merge *tree = subtree_of(parts, 0);
    std::vector<uint8_t> one_by_one = written(sequence, 13), by_tree = written(tree, 13);
    adt_skeleton_merge_free(sequence);
    adt_skeleton_merge_free(tree);
    EXPECT_EQ(by_tree, one_by_one);
    Read read(by_tree);
    ASSERT_NE(read.file, nullptr) << read.error;
    EXPECT_EQ(read.file->class_count, 3u);
    for (uint32_t r = 0; r < ranks.size(); ++r)
        EXPECT_EQ(expanded(read.file, r), ranks[r]) << "rank " << r;
}

// A subtree whose ranks are not all above the merge's is refused (the
// tree sends them in rank order; another order would break the rising
// rank lists).
TEST(SkeletonMerge, ASubtreeOutOfRankOrderIsRefused)
{
    std::vector<uint8_t> low = part_of(ring(+1, 0), 1), high = part_of(ring(+1, 0), 2);
    adt_skeleton_merge *merge = adt_skeleton_merge_of_part(high.data(), high.size(), 2);
    EXPECT_FALSE(adt_skeleton_merge_add(merge, adt_skeleton_merge_of_part(low.data(), low.size(), 1)));
    adt_skeleton_merge_free(merge);
}

// ---- ranks without a skeleton (version 7) --------------------------------

// Six ranks on a ring; ranks 1 and 4 saved a damaged skeleton, rank 3 none.
const std::vector<const char *> kSixMissing{ nullptr, "damaged", nullptr, "not_saved", "damaged", nullptr };

TEST(SkeletonPartial, MissingRanksRoundTripWithTheirCauses)
{
    std::vector<Calls> ranks = six_on_a_ring();
    Read read(file_of(ranks, kSixMissing));
    ASSERT_NE(read.file, nullptr) << read.error;
    EXPECT_EQ(read.file->version, ADT_SKELETON_VERSION_PARTIAL);
    ASSERT_EQ(read.file->rank_count, 6u);
    ASSERT_EQ(read.file->class_count, 1u);
    EXPECT_EQ(read.file->classes[0].rank_count, 3u) << "ranks 0, 2 and 5";
    EXPECT_EQ(read.file->missing_count, 3u);
    // Grouped by cause: damaged 1 and 4 (one range, stride 3), not_saved 3.
    ASSERT_EQ(read.file->missing_range_count, 2u);
    const adt_skeleton_missing_range *missing = read.file->missing_ranges;
    EXPECT_STREQ(missing[0].cause, "damaged");
    EXPECT_EQ(missing[0].first, 1u);
    EXPECT_EQ(missing[0].count, 2u);
    EXPECT_EQ(missing[0].stride, 3u);
    EXPECT_STREQ(missing[1].cause, "not_saved");
    EXPECT_EQ(missing[1].first, 3u);
    EXPECT_EQ(missing[1].count, 1u);
    for (uint32_t r = 0; r < 6; ++r) {
        const adt_skeleton_rank_view &view = read.file->ranks[r];
        EXPECT_EQ(view.rank, r);
        if (kSixMissing[r]) {
            EXPECT_EQ(view.class_index, ADT_SKELETON_NO_CLASS) << "rank " << r;
            EXPECT_EQ(view.thread_count, 0u) << "rank " << r;
            EXPECT_EQ(view.threads, nullptr) << "rank " << r;
            EXPECT_STREQ(view.missing_cause, kSixMissing[r]) << "rank " << r;
        } else {
            EXPECT_EQ(view.class_index, 0u) << "rank " << r;
            EXPECT_EQ(view.missing_cause, nullptr) << "rank " << r;
            EXPECT_EQ(expanded(read.file, r), ranks[r]) << "rank " << r << " reads back its own keys";
        }
    }
    // The class's parameter (the peer) has the values of its ranks only:
    // +1 on ranks 0 and 2, -5 on rank 5.
    ASSERT_GE(read.file->classes[0].parameter_count, 1u);
    const adt_skeleton_parameter &peer = read.file->classes[0].parameters[0];
    ASSERT_EQ(peer.value_count, 2u);
    EXPECT_EQ(peer.values[1].value, zigzag(-5));
    EXPECT_EQ(peer.values[1].ranges[0].first, 5u);
}

TEST(SkeletonPartial, AFileOfEveryRankStaysVersion4)
{
    Read read(file_of(six_on_a_ring()));
    ASSERT_NE(read.file, nullptr) << read.error;
    EXPECT_EQ(read.file->version, ADT_SKELETON_VERSION);
    EXPECT_EQ(read.file->missing_count, 0u);
    EXPECT_EQ(read.file->missing_range_count, 0u);
    for (uint32_t r = 0; r < 6; ++r)
        EXPECT_EQ(read.file->ranks[r].missing_cause, nullptr);
}

TEST(SkeletonPartial, ACauseTheWriterDoesNotKnowIsEmpty)
{
    std::vector<uint8_t> part = part_of(ring(+1, 0), 0);
    const uint8_t *parts[] = { part.data(), nullptr };
    size_t sizes[] = { part.size(), 0 };
    const std::string path = temporary_file("partial");
    ASSERT_EQ(adt_skeleton_file_write(path.c_str(), kNames, 8, parts, sizes, 2, 1000000000, nullptr), 0);
    Read read(taken_back(path));
    ASSERT_NE(read.file, nullptr) << read.error;
    EXPECT_STREQ(read.file->ranks[1].missing_cause, "");
}

TEST(SkeletonPartial, NoRankWithASkeletonIsNoFile)
{
    const uint8_t *parts[] = { nullptr, nullptr };
    size_t sizes[] = { 0, 0 };
    const char *causes[] = { "damaged", "damaged" };
    const std::string path = temporary_file("partial");
    errno = 0;
    EXPECT_EQ(adt_skeleton_file_write(path.c_str(), kNames, 8, parts, sizes, 2, 1000000000, causes), -1);
    EXPECT_EQ(errno, EINVAL);
    unlink(path.c_str());
}

// A partial file cut anywhere, or with any byte flipped, is refused in one
// line; resealed, a flip is refused in one line or the file reads whole.
TEST(SkeletonPartial, EveryCutOrFlippedByteIsRefusedInOneLine)
{
    std::vector<uint8_t> file = file_of(six_on_a_ring(), kSixMissing);
    for (size_t size = 0; size < file.size(); ++size) {
        Read read(std::vector<uint8_t>(file.begin(), file.begin() + (long)size));
        EXPECT_EQ(read.file, nullptr) << "cut at " << size;
        EXPECT_FALSE(read.error.empty()) << "cut at " << size;
        EXPECT_EQ(read.error.find('\n'), std::string::npos);
    }
    for (size_t at = 0; at < file.size(); ++at) {
        std::vector<uint8_t> damaged = file;
        damaged[at] ^= 0x20;
        Read read(damaged);
        EXPECT_EQ(read.file, nullptr) << "byte " << at;
        EXPECT_EQ(read.error.find('\n'), std::string::npos);
        Read resealed_read(resealed(damaged));
        if (!resealed_read.file) {
            EXPECT_FALSE(resealed_read.error.empty()) << "byte " << at;
            EXPECT_EQ(resealed_read.error.find('\n'), std::string::npos);
            continue;
        }
        for (uint32_t r = 0; r < resealed_read.file->rank_count; ++r) {
            const adt_skeleton_rank_view &view = resealed_read.file->ranks[r];
            ASSERT_EQ(view.thread_count, view.missing_cause ? 0u : 1u) << "byte " << at;
            if (!view.missing_cause) {
                EXPECT_EQ(expanded(resealed_read.file, r).size(), view.threads[0].calls) << "byte " << at;
            }
        }
    }
}

// The file's last range of missing ranks (not_saved: first 3, count 1,
// stride 1, cause 1), before the checksum. Resealed, the reader refuses a
// rank that a class or another range names too, a rank past the file's
// ranks, a cause it does not list, an empty range; and its version byte
// set to 4, the bytes after the rank table.
TEST(SkeletonPartial, MissingRangesNamingWrongRanksAreRefused)
{
    std::vector<uint8_t> file = file_of(six_on_a_ring(), kSixMissing);
    size_t first_at = file.size() - 8 - 16;
    ASSERT_EQ(file[first_at], 3u);
    ASSERT_EQ(file[first_at + 12], 1u);
    auto changed = [&](size_t at, uint8_t value) {
        std::vector<uint8_t> bytes = file;
        bytes[at] = value;
        return Read(resealed(bytes)).error;
    };
    EXPECT_EQ(changed(first_at, 0), "corrupt: rank 0 is named twice");
    EXPECT_EQ(changed(first_at, 4), "corrupt: rank 4 is named twice");
    EXPECT_EQ(changed(first_at, 6), "corrupt: missing rank range 1 (1 ranks from 6 by 1, cause 1)");
    EXPECT_EQ(changed(first_at + 12, 2), "corrupt: missing rank range 1 (1 ranks from 3 by 1, cause 2)");
    EXPECT_EQ(changed(first_at + 4, 0), "corrupt: missing rank range 1 (0 ranks from 3 by 1, cause 1)");
    EXPECT_EQ(changed(sizeof ADT_SKELETON_MAGIC, ADT_SKELETON_VERSION).rfind("corrupt: ", 0), 0u);
    EXPECT_EQ(Read(resealed(file)).error, "") << "resealing alone changes nothing";
}

// Up the tree as at MPI_Finalize: rank 2 not folding, the subtree of rank
// 4 (ranks 4-6) failed on the way. The file names them missing with their
// causes, holds the others' calls, and equals the file written from the
// ranks one after another with the same causes, byte for byte.
TEST(SkeletonPartial, ATreeWithAFailedSubtreeNamesItsRanksMissing)
{
    std::vector<Calls> ranks;
    for (int r = 0; r < 7; ++r)
        ranks.push_back(ring(r == 6 ? -6 : +1, r == 0 ? 48 : 0));
    std::vector<std::vector<uint8_t>> parts;
    for (uint32_t r = 0; r < ranks.size(); ++r)
        parts.push_back(part_of(ranks[r], r));
    std::vector<const char *> missing{ nullptr, nullptr, "not_folding" };
    std::vector<const char *> failed{ nullptr, nullptr, nullptr, nullptr, "merge_failed" };
    adt_skeleton_merge *tree = subtree_of(parts, 0, missing, failed);
    EXPECT_EQ(adt_skeleton_merge_missing_count(tree), 4u);
    std::vector<uint8_t> by_tree = written(tree, 7);
    adt_skeleton_merge_free(tree);
    std::vector<const char *> causes{ nullptr, nullptr, "not_folding", nullptr,
                                      "merge_failed", "merge_failed", "merge_failed" };
    EXPECT_EQ(by_tree, file_of(ranks, causes));
    Read read(by_tree);
    ASSERT_NE(read.file, nullptr) << read.error;
    EXPECT_EQ(read.file->missing_count, 4u);
    for (uint32_t r = 0; r < ranks.size(); ++r) {
        if (causes[r]) {
            EXPECT_STREQ(read.file->ranks[r].missing_cause, causes[r]) << "rank " << r;
        } else {
            EXPECT_EQ(expanded(read.file, r), ranks[r]) << "rank " << r;
        }
    }
}

// A merge that names a rank twice, or not every rank, is not written.
TEST(SkeletonPartial, AMergeNamingARankTwiceOrNoneIsNotWritten)
{
    std::vector<uint8_t> part = part_of(ring(+1, 0), 0);
    adt_skeleton_merge *merge = adt_skeleton_merge_of_part(part.data(), part.size(), 0);
    ASSERT_TRUE(adt_skeleton_merge_add(merge, adt_skeleton_merge_of_missing(2, 1, "damaged")));
    const std::string path = temporary_file("partial");
    errno = 0;
    EXPECT_EQ(adt_skeleton_merge_write(merge, path.c_str(), kNames, 8, 3, 1000000000), -1) << "rank 1 is named nowhere";
    EXPECT_EQ(errno, EINVAL);
    ASSERT_TRUE(adt_skeleton_merge_add(merge, adt_skeleton_merge_of_missing(0, 2, "damaged")));
    errno = 0;
    EXPECT_EQ(adt_skeleton_merge_write(merge, path.c_str(), kNames, 8, 3, 1000000000), -1) << "rank 0 is named twice";
    EXPECT_EQ(errno, EINVAL);
    adt_skeleton_merge_free(merge);
    unlink(path.c_str());
}

} // namespace
