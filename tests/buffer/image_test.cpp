// The buffer's image (issue #10): what a process saves at an ending, read
// back in another buffer. Round trip with events, samples, removed levels
// and spilled chunks; an image cut short is refused; a chain caught in the
// middle of an append (by the saving thread's own signal, or by another
// thread appending meanwhile) is cut to its whole records.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "buffer/buffer.h"
#include "test_support.h"

namespace {

// An in-memory file for the image.
struct ImageFile {
    int fd = memfd_create("adaptrace-image-test", 0);
    ~ImageFile() { close(fd); }

    std::vector<char> bytes() const
    {
        off_t size = lseek(fd, 0, SEEK_END);
        std::vector<char> data(static_cast<size_t>(size));
        EXPECT_EQ(pread(fd, data.data(), data.size(), 0), size);
        return data;
    }
};

struct Read {
    adt_buffer *buffer = nullptr;
    adt_image_repair repair{};
    std::string error;
};

Read read_image(const std::vector<char> &image, int spill_fd = -1, adt_record_check check = nullptr,
                void *arg = nullptr)
{
    Read read;
    char error[256] = "";
    read.buffer = adt_buffer_image_read(image.data(), image.size(), 1, spill_fd, check, arg, &read.repair, error,
                                        sizeof error);
    read.error = error;
    return read;
}

// Drops the lowest level whenever a chunk is missing, as the flush policy
// does while samples are left.
bool drop_levels(adt_buffer *buffer, const adt_preflush_request *request, void *)
{
    for (size_t i = 0; i < adt_buffer_location_count(buffer); i++) {
        adt_location *location = adt_buffer_location_at(buffer, i);
        if ((location == request->requester || !request->from_sample) &&
            adt_buffer_drop_lowest_level(location, request) >= 0)
            return true;
    }
    return false;
}

void fill(adt_location *location, std::vector<ModelRecord> &stored, std::mt19937_64 &random, size_t count,
          uint64_t &time)
{
    for (size_t i = 0; i < count; i++) {
        bool sample = random() % 3 != 0;
        std::vector<uint8_t> payload = random_payload(time, random() % 40);
        uint64_t number = 0;
        adt_append_status status =
            sample ? adt_buffer_append_sample(location, 7, time, payload.data(), (uint32_t)payload.size(), &number)
                   : adt_buffer_append_event(location, 3, time, payload.data(), (uint32_t)payload.size());
        if (status == ADT_APPEND_OK)
            stored.push_back({time, static_cast<uint16_t>(sample ? 7 : 3), sample, number, payload});
        time += 1 + random() % 5;
    }
}

TEST(BufferImage, ReadsBackWhatEveryLocationHeld)
{
    adt_buffer *buffer = adt_buffer_create(64 * 1024, 1024, 4);
    adt_buffer_set_preflush(buffer, drop_levels, nullptr);
    std::mt19937_64 random(7);
    std::vector<ModelRecord> stored[3];
    uint64_t time = 1;
    for (int id = 0; id < 3; id++)
        adt_buffer_add_location(buffer, 10 + id);
    // Interleaved, and enough to make levels drop.
    for (int round = 0; round < 20; round++)
        for (int id = 0; id < 3; id++)
            fill(adt_buffer_location_at(buffer, id), stored[id], random, 200, time);
    ImageFile file;
    ASSERT_GT(adt_buffer_image_write(buffer, file.fd), 0);
    Read read = read_image(file.bytes());
    ASSERT_NE(read.buffer, nullptr) << read.error;
    EXPECT_EQ(read.repair.chains_cut, 0u);
    EXPECT_EQ(read.repair.records_cut, 0u);
    ASSERT_EQ(adt_buffer_location_count(read.buffer), 3u);
    for (int id = 0; id < 3; id++) {
        adt_location *original = adt_buffer_location_at(buffer, id);
        adt_location *copy = adt_buffer_location_at(read.buffer, id);
        EXPECT_EQ(adt_location_id(copy), 10u + id);
        adt_location_stats before, after;
        adt_location_get_stats(original, &before);
        adt_location_get_stats(copy, &after);
        EXPECT_GT(before.shift, 0u) << "levels were dropped";
        EXPECT_EQ(after.shift, before.shift);
        // Shift 64 (the sample numbers used up) gets no stamp: the last
        // stamped drop is the one that reached 63.
        unsigned last_stamped = before.shift < ADT_BUFFER_LEVELS ? before.shift : ADT_BUFFER_LEVELS - 1;
        EXPECT_NE(before.shift_reached_at[last_stamped], 0u) << "the last drop was stamped";
        EXPECT_NE(before.bytes_in_use_at_shift[last_stamped][0], 0u) << "with the arena in use then";
        for (unsigned shift = 0; shift < ADT_BUFFER_LEVELS; shift++) {
            EXPECT_EQ(after.shift_reached_at[shift], before.shift_reached_at[shift]) << "shift " << shift;
            EXPECT_EQ(after.bytes_in_use_at_shift[shift][0], before.bytes_in_use_at_shift[shift][0]);
            EXPECT_EQ(after.bytes_in_use_at_shift[shift][1], before.bytes_in_use_at_shift[shift][1]);
        }
        EXPECT_EQ(after.samples_kept, before.samples_kept);
        EXPECT_EQ(after.events.records, before.events.records);
        expect_readout(copy, expected_readout(stored[id], before.shift));
    }
    // The copy takes appends (the recovery closes regions with them).
    uint64_t payload = 1;
    EXPECT_EQ(adt_buffer_append_event(adt_buffer_location_at(read.buffer, 0), 3, time, &payload, sizeof payload),
              ADT_APPEND_OK);
    adt_buffer_destroy(read.buffer);
    adt_buffer_destroy(buffer);
}

TEST(BufferImage, SpilledEventsComeBackThroughTheSpillFile)
{
    char path[] = "/tmp/adaptrace-image-spill-XXXXXX";
    int spill = mkstemp(path);
    ASSERT_GE(spill, 0);
    unlink(path);
    adt_buffer *buffer = adt_buffer_create(16 * 1024, 1024, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    std::vector<ModelRecord> stored;
    std::mt19937_64 random(3);
    for (uint64_t time = 1; time < 400; time++) {
        std::vector<uint8_t> payload = random_payload(time, 24);
        ASSERT_EQ(adt_buffer_append_event(location, 3, time, payload.data(), 24), ADT_APPEND_OK);
        stored.push_back({time, 3, false, 0, payload});
        if (time % 100 == 0) {
            ASSERT_GT(adt_buffer_spill_events(location, spill), 0);
        }
    }
    ImageFile file;
    ASSERT_GT(adt_buffer_image_write(buffer, file.fd), 0);
    std::vector<char> image = file.bytes();
    // The spill contents as the recovery and the online analyzer hand them
    // to the reader: a memory file of their own.
    int copy = adt_buffer_image_spill_file(image.data(), image.size());
    ASSERT_GE(copy, 0);
    const void *spilled = nullptr;
    EXPECT_EQ(lseek(copy, 0, SEEK_END), (off_t)adt_buffer_image_spill(image.data(), image.size(), &spilled));
    Read read = read_image(image, copy);
    ASSERT_NE(read.buffer, nullptr) << read.error;
    expect_readout(adt_buffer_location_at(read.buffer, 0), stored);
    adt_buffer_destroy(read.buffer);
    adt_buffer_destroy(buffer);
    close(copy);
    close(spill);
}

TEST(BufferImage, AnImageWithoutSpilledEventsHasNoSpillFile)
{
    adt_buffer *buffer = adt_buffer_create(16 * 1024, 1024, 1);
    uint64_t payload = 1;
    ASSERT_EQ(adt_buffer_append_event(adt_buffer_add_location(buffer, 0), 3, 1, &payload, sizeof payload),
              ADT_APPEND_OK);
    ImageFile file;
    ASSERT_GT(adt_buffer_image_write(buffer, file.fd), 0);
    std::vector<char> image = file.bytes();
    EXPECT_EQ(adt_buffer_image_spill_file(image.data(), image.size()), -1);
    EXPECT_EQ(adt_buffer_image_spill_file(image.data(), 8), -1) << "no image";
    adt_buffer_destroy(buffer);
}

// An image whose spilled events were damaged on disk after the save
// (issue #30): the spill list is followed as the reader will follow it,
// each chunk once and its records checked, and cut at the first damage;
// the events in memory, which come after, are dropped, so that what is
// left is a prefix of the events. A list that led back to its head made
// the reader go round it, time running backwards; a record of size 0 was
// read as the end of the location.
class DamagedSpill : public ::testing::Test {
protected:
    void SetUp() override
    {
        char path[] = "/tmp/adaptrace-image-spill-XXXXXX";
        spill_ = mkstemp(path);
        ASSERT_GE(spill_, 0);
        unlink(path);
        buffer_ = adt_buffer_create(16 * 1024, 1024, 1);
        adt_location *location = adt_buffer_add_location(buffer_, 0);
        for (uint64_t time = 1; time < 400; time++) {
            std::vector<uint8_t> payload = random_payload(time, 24);
            ASSERT_EQ(adt_buffer_append_event(location, 3, time, payload.data(), 24), ADT_APPEND_OK);
            stored_.push_back({time, 3, false, 0, payload});
            if (time % 100 == 0) {
                ASSERT_GT(adt_buffer_spill_events(location, spill_), 0);
            }
        }
        ImageFile file;
        ASSERT_GT(adt_buffer_image_write(buffer_, file.fd), 0);
        image_ = file.bytes();
        const void *spilled = nullptr;
        spill_bytes_ = adt_buffer_image_spill(image_.data(), image_.size(), &spilled);
        ASSERT_GE(spill_bytes_, 3 * 1024u);
        spill_at_ = static_cast<size_t>(static_cast<const char *>(spilled) - image_.data());
    }
    void TearDown() override
    {
        adt_buffer_destroy(buffer_);
        close(spill_);
    }

    // The chunk header (next, used) of spilled chunk `index`.
    uint32_t *chunk_header(size_t index) { return reinterpret_cast<uint32_t *>(&image_[spill_at_ + index * 1024]); }

    // Reads the damaged image back: the events are a strict prefix of
    // those appended, in order, and the cut is counted.
    void expect_a_prefix(size_t at_most)
    {
        ImageFile copy;
        ASSERT_EQ(write(copy.fd, image_.data() + spill_at_, spill_bytes_), (ssize_t)spill_bytes_);
        Read read = read_image(image_, copy.fd);
        ASSERT_NE(read.buffer, nullptr) << read.error;
        EXPECT_GE(read.repair.chains_cut, 1u);
        EXPECT_GT(read.repair.records_cut, 0u);
        adt_location *location = adt_buffer_location_at(read.buffer, 0);
        adt_reader *reader = adt_reader_open(location);
        ASSERT_NE(reader, nullptr);
        adt_record_view view;
        size_t count = 0;
        while (count <= stored_.size() && adt_reader_next(reader, &view)) {
            ASSERT_LT(count, stored_.size());
            EXPECT_EQ(view.time, stored_[count].time) << "record " << count;
            count++;
        }
        adt_reader_close(reader);
        EXPECT_GT(count, 0u);
        EXPECT_LE(count, at_most);
        adt_location_stats stats;
        adt_location_get_stats(location, &stats);
        EXPECT_EQ(stats.events.records + stats.spilled_records, count) << "the counts say what is there";
        adt_buffer_destroy(read.buffer);
    }

    adt_buffer *buffer_ = nullptr;
    int spill_ = -1;
    std::vector<ModelRecord> stored_;
    std::vector<char> image_;
    size_t spill_at_ = 0, spill_bytes_ = 0;
};

TEST_F(DamagedSpill, AListThatLoopsEndsWhereItComesBack)
{
    chunk_header(1)[0] = 0; // chunk 1 leads back to chunk 0, the head
    expect_a_prefix(stored_.size() - 1);
}

TEST_F(DamagedSpill, ARecordOfSizeZeroEndsTheList)
{
    uint32_t *record_size = chunk_header(2) + 4; // after the chunk header and the first record's time
    *record_size = 0;
    expect_a_prefix(stored_.size() - 1);
}

TEST_F(DamagedSpill, AListLeadingOutOfTheFileEndsThere)
{
    chunk_header(0)[0] = 1u << 30;
    expect_a_prefix(stored_.size() - 1);
}

// Counts and sizes of a damaged image that would reach past it or past
// the machine are refused before anything is allocated or read (issue
// #30): the spill's length wrapped the bounds check around, and an arena
// of 2^30 chunks was made (and every chunk of it touched) before anything
// was read.
TEST(BufferImage, ImpossibleSizesAreRefused)
{
    adt_buffer *buffer = adt_buffer_create(16 * 1024, 1024, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    uint64_t value = 5;
    for (uint64_t time = 1; time < 100; time++)
        adt_buffer_append_event(location, 3, time, &value, sizeof value);
    ImageFile file;
    ASSERT_GT(adt_buffer_image_write(buffer, file.fd), 0);
    const std::vector<char> image = file.bytes();
    // image_header (image.c): magic 0, version 8, chunk_bytes 12,
    // chunks_total 16, location_count 20, location_bytes 24,
    // arena_address 32, spill_bytes 40; the locations from 48.
    struct Damage {
        const char *what;
        size_t at;
        uint64_t value;
        size_t bytes;
        const char *error;
    };
    for (const Damage &damage : {
             Damage{"spill_bytes near 2^64", 40, ~uint64_t(0) - 100, 8, "cut short"},
             Damage{"chunks_total 2^30 of 1 KiB", 16, 1u << 30, 4, "larger than this machine's memory"},
             Damage{"location_count 2^32 - 1", 20, ~uint32_t(0), 4, "cut short"},
         }) {
        std::vector<char> damaged = image;
        std::memcpy(&damaged[damage.at], &damage.value, damage.bytes);
        Read read = read_image(damaged);
        EXPECT_EQ(read.buffer, nullptr) << damage.what;
        EXPECT_NE(read.error.find(damage.error), std::string::npos) << damage.what << ": " << read.error;
        adt_buffer_destroy(read.buffer);
    }
    adt_buffer_destroy(buffer);
}

TEST(BufferImage, AnImageCutShortIsRefused)
{
    adt_buffer *buffer = adt_buffer_create(16 * 1024, 1024, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    uint64_t value = 5;
    for (uint64_t time = 1; time < 100; time++)
        adt_buffer_append_event(location, 3, time, &value, sizeof value);
    ImageFile file;
    ASSERT_GT(adt_buffer_image_write(buffer, file.fd), 0);
    std::vector<char> image = file.bytes();
    for (size_t keep : {size_t(0), size_t(40), image.size() / 2, image.size() - 1}) {
        std::vector<char> cut(image.begin(), image.begin() + long(keep));
        Read read = read_image(cut);
        EXPECT_EQ(read.buffer, nullptr) << "kept " << keep << " of " << image.size() << " bytes";
        EXPECT_FALSE(read.error.empty());
    }
    adt_buffer_destroy(buffer);
}

// A record whose header is written but whose write pointer is not yet
// published is not in the image; one the content check refuses cuts the
// chain there, and the samples cut count as dropped.
TEST(BufferImage, AChainIsCutAtTheFirstRecordThatIsNotWhole)
{
    adt_buffer *buffer = adt_buffer_create(16 * 1024, 1024, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    for (uint64_t time = 1; time <= 60; time++) {
        uint64_t value = time;
        adt_buffer_append_event(location, 3, time, &value, sizeof value);
        adt_buffer_append_sample(location, 7, time, &value, sizeof value, nullptr);
    }
    ImageFile file;
    ASSERT_GT(adt_buffer_image_write(buffer, file.fd), 0);
    // Refuse the record of time 30 (as a torn payload would be).
    adt_record_check refuse_30 = [](const adt_location *, const adt_record_view *record, void *) {
        uint64_t value;
        std::memcpy(&value, record->payload, sizeof value);
        return value != 30;
    };
    Read read = read_image(file.bytes(), -1, refuse_30);
    ASSERT_NE(read.buffer, nullptr) << read.error;
    EXPECT_GE(read.repair.chains_cut, 2u) << "the event chain and one sample level";
    adt_location_stats stats;
    adt_location_get_stats(adt_buffer_location_at(read.buffer, 0), &stats);
    EXPECT_EQ(stats.events.records, 29u);
    EXPECT_EQ(stats.samples_kept + stats.samples_dropped, 60u);
    EXPECT_GT(stats.samples_lost[ADT_SAMPLE_LOST_CUT], 0u);
    EXPECT_EQ(stats.samples_lost[ADT_SAMPLE_LOST_CUT], stats.samples_dropped) << "cut at the repair, nothing else";
    adt_reader *reader = adt_reader_open(adt_buffer_location_at(read.buffer, 0));
    adt_record_view view;
    while (adt_reader_next(reader, &view)) {
        uint64_t value;
        std::memcpy(&value, view.payload, sizeof value);
        EXPECT_NE(value, 30u);
        if (view.level == ADT_EVENT_LEVEL) {
            EXPECT_LT(value, 30u) << "nothing after the cut of the event chain";
        }
    }
    adt_reader_close(reader);
    adt_buffer_destroy(read.buffer);
    adt_buffer_destroy(buffer);
}

// The image taken while another thread appends (as a save from one
// thread's signal handler while the others run on): every image reads
// back, and what each holds is a prefix of what was appended.
TEST(BufferImage, AnImageTakenDuringAppendsHoldsAPrefixOfThem)
{
    adt_buffer *buffer = adt_buffer_create(4 << 20, 1024, 1);
    adt_buffer_set_preflush(buffer, drop_levels, nullptr);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    std::atomic<bool> stop{false};
    // Events stop while they take a quarter of the arena, so none is ever
    // dropped (they stay a prefix); samples go on, dropping levels.
    const uint64_t events = (1 << 20) / 24;
    std::thread appender([&] {
        for (uint64_t time = 1; !stop.load(std::memory_order_relaxed); time++) {
            uint64_t value = time;
            if (time <= events) {
                ASSERT_EQ(adt_buffer_append_event(location, 3, time, &value, sizeof value), ADT_APPEND_OK);
            }
            adt_buffer_append_sample(location, 7, time, &value, sizeof value, nullptr);
        }
    });
    for (int round = 0; round < 20; round++) {
        ImageFile file;
        ASSERT_GT(adt_buffer_image_write(buffer, file.fd), 0);
        Read read = read_image(file.bytes());
        ASSERT_NE(read.buffer, nullptr) << read.error;
        adt_reader *reader = adt_reader_open(adt_buffer_location_at(read.buffer, 0));
        ASSERT_NE(reader, nullptr);
        adt_record_view view;
        uint64_t next_event = 1;
        while (adt_reader_next(reader, &view)) {
            uint64_t value;
            ASSERT_EQ(view.payload_size, sizeof value);
            std::memcpy(&value, view.payload, sizeof value);
            ASSERT_EQ(value, view.time) << "a torn record";
            if (view.level == ADT_EVENT_LEVEL) {
                ASSERT_EQ(value, next_event++) << "events are a prefix, in order";
            }
        }
        adt_reader_close(reader);
        adt_buffer_destroy(read.buffer);
    }
    stop = true;
    appender.join();
    adt_buffer_destroy(buffer);
}

}  // namespace
