// An image of the share (issue #25: the skeletons of a run ended by a
// signal): what a signal handler copies out of the share, read back in
// other memory, encodes to exactly the part the live skeletons encode to,
// with threads that grew across slabs and one that found no slab; an
// image whose lengths, head, hash or tables do not fit is refused with one
// line.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "skeleton/skeleton.h"

namespace {

struct Share {
    explicit Share(uint32_t slabs)
    {
        EXPECT_EQ(adt_skeleton_share_create((uint64_t)slabs * ADT_SKELETON_SLAB_BYTES), 0);
    }
    ~Share() { adt_skeleton_share_destroy(); }
};

std::vector<uint8_t> key_of(uint32_t value)
{
    std::vector<uint8_t> key = { 7, 1 };
    for (uint64_t v = value;; v >>= 7) {
        key.push_back((uint8_t)(v < 0x80 ? v : (v & 0x7f) | 0x80));
        if (v < 0x80)
            break;
    }
    return key;
}

void fold(adt_skeleton *skeleton, uint32_t steps, uint32_t distinct_every)
{
    uint64_t now = 0;
    for (uint32_t step = 0; step < steps; ++step)
        for (uint32_t value : { 1u, 2u, 3u, step % distinct_every == 0 ? 100u + step : 4u }) {
            auto key = key_of(value);
            adt_skeleton_fold(skeleton, key.data(), (uint32_t)key.size(), now, now + 3 + value % 7);
            now += 20 + step % 3;
        }
}

// The image as the rescue writes it: block by block.
std::vector<uint8_t> take_image(size_t block_bytes)
{
    adt_skeleton_image_cursor cursor;
    adt_skeleton_image_begin(&cursor);
    std::vector<uint8_t> image, block(block_bytes);
    for (size_t got; (got = adt_skeleton_image_next(&cursor, block.data(), block.size())) != 0;)
        image.insert(image.end(), block.begin(), block.begin() + got);
    EXPECT_EQ(image.size(), cursor.total_bytes);
    return image;
}

std::vector<uint8_t> encoded(const std::vector<uint8_t> &image, uint32_t rank, std::string *error)
{
    char line[160] = "";
    size_t bytes = 0;
    uint8_t *part = adt_skeleton_image_encode(image.data(), image.size(), rank, &bytes, line, sizeof line);
    *error = line;
    std::vector<uint8_t> out;
    if (part)
        out.assign(part, part + bytes);
    free(part);
    return out;
}

// The image's trailer made to match its bytes again (damage its hash
// missed), so that the checks behind it are reached.
void rehash(std::vector<uint8_t> &image)
{
    uint64_t hash = 14695981039346656037ull;
    for (size_t i = 0; i + 8 < image.size(); ++i)
        hash = (hash ^ image[i]) * 1099511628211ull;
    memcpy(&image[image.size() - 8], &hash, 8);
}

std::vector<uint8_t> live_part(uint32_t rank)
{
    size_t bytes = 0;
    uint8_t *part = adt_skeleton_rank_encode(rank, &bytes);
    std::vector<uint8_t> out(part, part + bytes);
    free(part);
    return out;
}

TEST(SkeletonImage, EncodesToTheLivePartAfterGrowthAndWithASlablessThread)
{
    Share share(6);
    adt_skeleton *grown = adt_skeleton_claim(0);
    adt_skeleton *small = adt_skeleton_claim(1);
    ASSERT_NE(grown, nullptr);
    ASSERT_NE(small, nullptr);
    // 6,000 distinct calls: past the first slab's 2,048 signatures and
    // 512 timing pairs, so the tables move into further slabs.
    fold(grown, 12000, 2);
    fold(small, 500, 1000);
    EXPECT_GT(adt_skeleton_share_claimed_bytes(), 2ull * ADT_SKELETON_SLAB_BYTES);
    // Every slab taken: a third thread has none (its skeleton stopped).
    while (adt_skeleton_share_claimed_bytes() < adt_skeleton_share_bytes())
        ASSERT_NE(adt_skeleton_claim(9), nullptr);
    adt_skeleton *slabless = adt_skeleton_claim(2);
    ASSERT_NE(slabless, nullptr);
    EXPECT_EQ(slabless->stop, ADT_SKELETON_STOP_NO_SLAB);
    EXPECT_EQ(grown->stop, ADT_SKELETON_RUNNING);
    // An odd block size: headers and slabs cut across blocks.
    std::vector<uint8_t> image = take_image(4093);
    std::string error;
    std::vector<uint8_t> from_image = encoded(image, 3, &error);
    ASSERT_FALSE(from_image.empty()) << error;
    // The image's encoding changed nothing in the share: the live part,
    // encoded afterwards, is the same bytes.
    EXPECT_EQ(from_image, live_part(3));
}

TEST(SkeletonImage, RefusesAnImageThatDoesNotFit)
{
    Share share(2);
    adt_skeleton *skeleton = adt_skeleton_claim(0);
    ASSERT_NE(skeleton, nullptr);
    fold(skeleton, 300, 50);
    std::vector<uint8_t> image = take_image(65536);
    std::string error;
    ASSERT_FALSE(encoded(image, 0, &error).empty()) << error;

    std::vector<uint8_t> cut(image.begin(), image.end() - 8);
    EXPECT_TRUE(encoded(cut, 0, &error).empty());
    EXPECT_EQ(error, "its lengths do not add up");

    std::vector<uint8_t> changed = image;
    changed[image.size() / 2] ^= 1;
    EXPECT_TRUE(encoded(changed, 0, &error).empty());
    EXPECT_EQ(error, "its hash does not match");

    std::vector<uint8_t> foreign = image;
    foreign[0] ^= 1;
    rehash(foreign);
    EXPECT_TRUE(encoded(foreign, 0, &error).empty());
    EXPECT_EQ(error, "not an image of this build's skeletons");

    // The first skeleton's grammar pointer (its second field) moved past
    // the slabs.
    std::vector<uint8_t> moved = image;
    uint64_t grammar;
    size_t head = 40, field = offsetof(adt_skeleton, grammar);
    memcpy(&grammar, &moved[head + field], 8);
    grammar += 2ull * ADT_SKELETON_SLAB_BYTES;
    memcpy(&moved[head + field], &grammar, 8);
    rehash(moved);
    EXPECT_TRUE(encoded(moved, 0, &error).empty());
    EXPECT_EQ(error, "thread 0's tables do not fit its slabs");
}

} // namespace
