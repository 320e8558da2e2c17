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
    const void *spilled = nullptr;
    size_t spilled_bytes = adt_buffer_image_spill(image.data(), image.size(), &spilled);
    ASSERT_GT(spilled_bytes, 0u);
    ImageFile copy;
    ASSERT_EQ(write(copy.fd, spilled, spilled_bytes), (ssize_t)spilled_bytes);
    Read read = read_image(image, copy.fd);
    ASSERT_NE(read.buffer, nullptr) << read.error;
    expect_readout(adt_buffer_location_at(read.buffer, 0), stored);
    adt_buffer_destroy(read.buffer);
    adt_buffer_destroy(buffer);
    close(spill);
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
    adt_record_check refuse_30 = [](const adt_record_view *record, void *) {
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
