// The OTF2 writer on synthetic buffers: every record kind, many locations,
// extreme values, many OTF2 chunks, removed sample levels, and the failure
// cases. Every archive written is read back with the OTF2 reader API and
// validated with `otf2-print --silent -Werror`.
#include <fstream>
#include <random>
#include <string>

#include "core/core.h"
#include "writer_fixture.hpp"

namespace {

TEST(FormatWriter, EveryRecordKindWithExtremeValuesAndClockOffsets)
{
    Trace t(4u << 20, 64u << 10, 8, true);
    World w(t);
    t.add_metric("PAPI_TOT_CYC");
    t.add_metric("PAPI_TOT_INS");
    uint32_t step = t.add_parameter("time step");
    uint32_t residual = t.add_user_metric("residual");
    ASSERT_TRUE(t.commit_nodes());
    const uint64_t big = UINT64_MAX - 1;
    const uint32_t big32 = UINT32_MAX - 1;
    Location &l0 = t.add_location(0, 0, "Master thread", 1000000000000ull);
    Location &l1 = t.add_location(0, 1, "Pthread 1", 1000000000500ull);
    t.add_location(0, 2, "Pthread 2 (no records)", 0);

    ASSERT_TRUE(t.rename_comm(w.split, "rows"));
    ASSERT_EQ(t.sample(l0, w.n_kernel, { 0, big }), ADT_APPEND_OK);
    ASSERT_TRUE(t.enter(l0, w.mpi_send, w.n_send));
    ASSERT_TRUE(t.p2p(l0, ADT_REC_MPI_SEND, w.world, 0, big32, big, 0));
    ASSERT_TRUE(t.leave(l0));
    ASSERT_TRUE(t.enter(l0, w.mpi_recv, w.n_recv));
    ASSERT_TRUE(t.p2p(l0, ADT_REC_MPI_RECV, w.split, 0, 0, 0, 0));
    ASSERT_TRUE(t.leave(l0));
    ASSERT_EQ(t.sample(l0, w.n_kernel_deep, { 1, 2 }), ADT_APPEND_OK);
    ASSERT_TRUE(t.enter(l0, w.mpi_send, w.n_send));
    ASSERT_TRUE(t.p2p(l0, ADT_REC_MPI_ISEND, w.inter, 0, 7, 1, big));
    ASSERT_TRUE(t.p2p(l0, ADT_REC_MPI_IRECV, w.self, 0, big32, big, 0));
    ASSERT_TRUE(t.request(l0, ADT_REC_MPI_IRECV_REQUEST, 0));
    ASSERT_TRUE(t.leave(l0));
    ASSERT_TRUE(t.enter(l0, w.mpi_wait, w.n_wait));
    ASSERT_TRUE(t.request(l0, ADT_REC_MPI_ISEND_COMPLETE, big));
    ASSERT_TRUE(t.request(l0, ADT_REC_MPI_REQUEST_TEST, 42));
    ASSERT_TRUE(t.request(l0, ADT_REC_MPI_REQUEST_CANCELLED, 43));
    ASSERT_TRUE(t.request(l0, ADT_REC_NB_COLLECTIVE_REQUEST, 44));
    ASSERT_TRUE(t.collective_end(l0, ADT_REC_NB_COLLECTIVE_COMPLETE, OTF2_COLLECTIVE_OP_ALLREDUCE, w.world,
                                 ADT_COLLECTIVE_ROOT_NONE, big, 0, 44));
    ASSERT_TRUE(t.leave(l0));
    ASSERT_TRUE(t.enter(l0, w.mpi_allreduce, w.n_allreduce));
    ASSERT_TRUE(t.collective_begin(l0));
    ASSERT_TRUE(t.collective_end(l0, ADT_REC_MPI_COLLECTIVE_END, OTF2_COLLECTIVE_OP_ALLREDUCE, w.world,
                                 ADT_COLLECTIVE_ROOT_NONE, 8, big, 0));
    ASSERT_TRUE(t.leave(l0));
    ASSERT_TRUE(t.buffer_flush(l0, 5000));
    ASSERT_TRUE(t.on_off(l0, false));
    ASSERT_TRUE(t.on_off(l0, true));
    ASSERT_TRUE(t.parameter(l0, step, "time step", INT64_MIN));
    ASSERT_TRUE(t.user_metric(l0, residual, "residual", -0.125));
    ASSERT_EQ(t.sample(l0, w.n_main, { big, 0 }), ADT_APPEND_OK);

    ASSERT_EQ(t.sample(l1, w.n_solve, { 5, 6 }), ADT_APPEND_OK);
    ASSERT_TRUE(t.enter(l1, w.mpi_allreduce, w.n_allreduce));
    ASSERT_TRUE(t.leave(l1));

    adt_clock_offset offsets[2] = { { 999999999000ull, 50, 0.5 }, { 1000000002000ull, 90, 0.25 } };
    readback::Archive a = write_and_check(t, fresh_path("every-kind"), offsets);

    // definitions a viewer needs
    ASSERT_EQ(a.comms.size(), 4u);
    EXPECT_EQ(a.comms[0].name, "MPI_COMM_WORLD");
    EXPECT_EQ(a.comms[2].parent, 0u);
    EXPECT_EQ(a.comms[2].name, "rows") << "renamed after its definition";
    EXPECT_EQ(a.comms[3].name, "inter");
    EXPECT_NE(a.comms[3].remote_group, UINT32_MAX);
    EXPECT_EQ(a.groups[0].type, OTF2_GROUP_TYPE_COMM_LOCATIONS);
    EXPECT_EQ(a.groups[a.comms[1].group].type, OTF2_GROUP_TYPE_COMM_SELF);
    EXPECT_EQ(a.comms[0].group, a.comms[2].group) << "identical member lists share one group";
    ASSERT_EQ(a.generators.size(), 1u);
    EXPECT_EQ(a.generators[0].period, 100u);
    EXPECT_EQ(a.generators[0].exponent, -6);
    EXPECT_EQ(a.metric_names,
              (std::vector<std::string>{ "PAPI_TOT_CYC", "PAPI_TOT_INS", "sampling rate", "buffer use", "residual" }));
    EXPECT_EQ(a.metric_classes, (std::vector<std::vector<uint32_t>>{ { 0, 1 }, { 2 }, { 3 }, { 4 } }))
        << "the counters' class, then the rate's, the buffer use's and the user metric's";
    EXPECT_EQ(a.parameter_names, std::vector<std::string>{ "time step" });
    EXPECT_EQ(a.location_groups, std::vector<std::string>{ "MPI Rank 0" });
    EXPECT_EQ(a.system_tree.size(), 2u);
    EXPECT_EQ(a.paradigms, (std::vector<OTF2_Paradigm>{ OTF2_PARADIGM_MPI, OTF2_PARADIGM_SAMPLING }));
}

TEST(FormatWriter, PlainEnterLeaveWithoutSampling)
{
    Trace t(1u << 20, 4096, 2, false);
    World w(t);
    ASSERT_TRUE(t.commit_nodes());
    Location &l = t.add_location(0, 0, "Master thread", 10);
    for (int i = 0; i < 100; ++i) {
        ASSERT_TRUE(t.enter(l, w.mpi_send, kUndef));
        ASSERT_TRUE(t.p2p(l, ADT_REC_MPI_SEND, w.world, 0, (uint32_t)i, (uint64_t)i * 8, 0));
        ASSERT_TRUE(t.leave(l));
    }
    readback::Archive a = write_and_check(t, fresh_path("plain"));
    EXPECT_TRUE(a.generators.empty());
    EXPECT_EQ(a.paradigms, std::vector<OTF2_Paradigm>{ OTF2_PARADIGM_MPI });
}

TEST(FormatWriter, ManyLocationsAndStreamsSpanningManyChunks)
{
    Trace t(96u << 20, 64u << 10, 32, true);
    World w(t);
    ASSERT_TRUE(t.commit_nodes());
    std::vector<Location *> locs;
    for (uint32_t i = 0; i < 17; ++i)
        locs.push_back(&t.add_location(0, i, "Pthread " + std::to_string(i), 1000 + i));
    // location 0: 960k events, about 16 MiB: four 4 MiB OTF2 chunks
    for (int i = 0; i < 240000; ++i) {
        ASSERT_TRUE(t.enter(*locs[0], w.mpi_send, w.n_send));
        ASSERT_TRUE(t.p2p(*locs[0], ADT_REC_MPI_ISEND, w.world, 0, (uint32_t)i, (uint64_t)i << 20, (uint64_t)i));
        ASSERT_TRUE(t.leave(*locs[0]));
        ASSERT_EQ(t.sample(*locs[0], i % 2 ? w.n_kernel : w.n_kernel_deep), ADT_APPEND_OK);
    }
    for (uint32_t i = 1; i < locs.size(); ++i)
        for (uint32_t k = 0; k < 50 * i; ++k)
            ASSERT_EQ(t.sample(*locs[i], (k + i) % 3 ? w.n_solve : w.n_main), ADT_APPEND_OK);
    std::string dir = fresh_path("many");
    write_and_check(t, dir);
    struct stat st;
    ASSERT_EQ(stat((dir + "/traces/0.evt").c_str(), &st), 0);
    EXPECT_GT(st.st_size, 12 << 20) << "the stream must span several OTF2 chunks";
}

// Samples with several removed levels: survivors are exactly n ≡ 0 mod 2^k,
// their unwind distances match a brute-force recomputation over the
// retained stream, and each names the generator of the rate it was taken at.
TEST(FormatWriter, UnwindDistancesAfterRandomLevelRemovals)
{
    std::mt19937 random(12345);
    Trace t(8u << 20, 4096, 4, true);
    World w(t);
    // a deeper random tree below "solve"
    std::vector<uint32_t> app_nodes = { w.n_main, w.n_solve, w.n_kernel, w.n_kernel_deep };
    for (int i = 0; i < 60; ++i) {
        uint32_t parent = app_nodes[random() % app_nodes.size()];
        app_nodes.push_back(t.node(random() % 2 ? w.kernel : w.solve, parent));
    }
    std::vector<uint32_t> mpi_nodes;
    for (uint32_t parent : app_nodes)
        mpi_nodes.push_back(t.node(w.mpi_send, parent));
    ASSERT_TRUE(t.commit_nodes());
    t.set_initial_rate(4000);
    Location &l = t.add_location(0, 0, "Master thread", 1);
    Location &l2 = t.add_location(0, 1, "Pthread 1", 1);
    int removals = 0;
    for (int i = 0; i < 40000; ++i) {
        Location &target = i % 5 == 0 ? l2 : l;
        int what = (int)(random() % 10);
        if (what < 7) {
            ASSERT_EQ(t.sample(target, app_nodes[random() % app_nodes.size()]), ADT_APPEND_OK);
        } else {
            size_t which = random() % mpi_nodes.size();
            ASSERT_TRUE(t.enter(target, w.mpi_send, mpi_nodes[which]));
            if (random() % 2) {
                ASSERT_EQ(t.sample(target, mpi_nodes[which]), ADT_APPEND_OK);
            }
            ASSERT_TRUE(t.leave(target));
        }
        if (random() % 4000 == 0) {
            ASSERT_EQ(adt_buffer_drop_lowest_level(&target == &l ? l.location : l2.location, nullptr) >= 0, true);
            ++removals;
        }
    }
    ASSERT_EQ(adt_buffer_drop_lowest_level(l.location, nullptr) >= 0, true);
    ASSERT_EQ(adt_buffer_drop_lowest_level(l.location, nullptr) >= 0, true);
    adt_location_stats stats;
    adt_location_get_stats(l.location, &stats);
    ASSERT_GE(stats.shift, 2u);
    readback::Archive a = write_and_check(t, fresh_path("unwind"));
    for (size_t i = 0; i < a.generators.size(); ++i)
        EXPECT_EQ(a.generators[i].name.substr(0, 6), "timer ");
    (void)removals;
}

// Weights: a location halved three times keeps samples taken at shifts 0
// to 3, and each of them stands for 2^3 initial periods. Every sample
// names the generator of its location's final period, so a period-weighted
// profile (samples × period) adds up to the time its thread was sampled
// (the last sample number × the initial period), within one final period.
TEST(FormatWriter, SamplesNameTheirLocationsFinalPeriod)
{
    Trace t(8u << 20, 4096, 4, true);
    World w(t);
    ASSERT_TRUE(t.commit_nodes());
    t.set_initial_rate(4000);
    Location &halved = t.add_location(0, 0, "Master thread", 1);
    Location &kept = t.add_location(0, 1, "Pthread 1", 1);
    for (int shift = 0; shift <= 3; ++shift) {
        for (int i = 0; i < 1000; ++i) {
            ASSERT_EQ(t.sample(halved, i % 2 ? w.n_kernel : w.n_solve), ADT_APPEND_OK);
            ASSERT_EQ(t.sample(kept, w.n_kernel), ADT_APPEND_OK);
        }
        if (shift < 3) {
            ASSERT_GE(adt_buffer_drop_lowest_level(halved.location, nullptr), 0);
        }
    }
    ASSERT_EQ(halved.records.back().number, 1000u * (1 + 2 + 4 + 8));
    readback::Archive a = write_and_check(t, fresh_path("weights"));
    const double initial_us = 250.0;
    std::map<uint64_t, std::pair<size_t, double>> weighted;  // location: samples, Σ period in µs
    for (const auto &[location, events] : a.events)
        for (const readback::Event &e : events)
            if (e.type == "CallingContextSample") {
                const readback::Generator &generator = a.generators.at(e.fields[2]);
                EXPECT_EQ(generator.exponent, -6);
                weighted[location].first++;
                weighted[location].second += double(generator.period);
            }
    ASSERT_EQ(weighted.size(), 2u);
    const uint64_t halved_id = 0, kept_id = 1ull << 32;
    EXPECT_EQ(weighted[halved_id].first, 15000u / 8);
    EXPECT_DOUBLE_EQ(weighted[halved_id].second, 15000 * initial_us);
    EXPECT_EQ(weighted[kept_id].first, 4000u);
    EXPECT_DOUBLE_EQ(weighted[kept_id].second, 4000 * initial_us);
    ASSERT_EQ(a.generators.size(), 2u);
}

// A sample kept in the event chain (online analysis, trace output) is
// thinned by no halving: it names the generator of the shift it was taken
// at, so that samples × period is still the sampled time after a halving
// (here the overload protection's, on a location whose levels are empty).
TEST(FormatWriter, SamplesInTheEventChainNameThePeriodTheyWereTakenAt)
{
    Trace t(8u << 20, 4096, 4, true);
    World w(t);
    ASSERT_TRUE(t.commit_nodes());
    t.set_initial_rate(4000);
    Location &l = t.add_location(0, 0, "Master thread", 1);
    for (int i = 0; i < 1000; ++i)
        ASSERT_TRUE(t.sample_in_events(l, w.n_kernel, 0));
    ASSERT_EQ(adt_buffer_drop_own_level(l.location, nullptr), 1);
    for (int i = 0; i < 1000; ++i)
        ASSERT_TRUE(t.sample_in_events(l, w.n_solve, 1));
    readback::Archive a = write_and_check(t, fresh_path("event-chain-weights"));
    size_t samples = 0;
    double weighted_us = 0.0;
    for (const readback::Event &e : a.events[0])
        if (e.type == "CallingContextSample") {
            samples++;
            weighted_us += double(a.generators.at(e.fields[2]).period);
        }
    EXPECT_EQ(samples, 2000u);
    EXPECT_DOUBLE_EQ(weighted_us, 1000 * 250.0 + 1000 * 500.0);
    EXPECT_EQ(a.generators.size(), 2u);
}

// A thread that only computes keeps, after k halvings, the samples
// numbered n ≡ 0 mod 2^k: its first kept record may come long after its
// first halvings (overload halvings come early). Its sampling rate is
// still marked from the start of its sampling: one Metric per shift, each
// at the time the shift was reached, those before the first record
// included, and a drop over several empty levels marks each shift it
// passed, at one time. The archive's time range starts at the first mark.
TEST(FormatWriter, HalvingsBeforeTheFirstRecordAreMarkedAtTheirOwnTimes)
{
    Trace t(1u << 20, 4096, 2, true);
    World w(t);
    ASSERT_TRUE(t.commit_nodes());
    t.set_initial_rate(4000);
    const uint64_t started = adt_clock_now();
    Location &l = t.add_location(0, 0, "Master thread", started);
    ASSERT_EQ(adt_buffer_drop_own_level(l.location, nullptr), 1);
    ASSERT_EQ(adt_buffer_drop_own_level(l.location, nullptr), 2);
    l.time = adt_clock_now() + 1;
    const uint64_t first_record = l.time;
    ASSERT_TRUE(t.enter(l, w.mpi_send, w.n_send));
    ASSERT_TRUE(t.leave(l));
    // Samples n = 4, 8 and 12 are taken but too large to store; n = 16
    // lands on level 4, so the next drop empties levels 2 to 4 at once.
    std::vector<char> too_large(8192);
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(adt_buffer_append_sample(l.location, ADT_REC_SAMPLE, l.time++, too_large.data(),
                                           (uint32_t)too_large.size(), nullptr),
                  ADT_APPEND_TOO_LARGE);
    }
    ASSERT_EQ(t.sample(l, w.n_kernel), ADT_APPEND_OK);
    ASSERT_EQ(l.records.back().number, 16u);
    ASSERT_EQ(adt_buffer_drop_lowest_level(l.location, nullptr), 5);
    l.time = adt_clock_now() + 1;
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(t.sample(l, w.n_kernel), ADT_APPEND_OK);
    }
    adt_location_stats stats;
    adt_location_get_stats(l.location, &stats);

    readback::Archive a = write_and_check(t, fresh_path("rate-before-first"));
    // The first Metric is the rate where sampling started; the buffer's
    // use comes only with halvings.
    std::vector<readback::Event> marks, uses;
    for (const readback::Event &e : a.events[0])
        if (e.type == "Metric")
            (marks.empty() || e.fields.at(0) == marks[0].fields.at(0) ? marks : uses).push_back(e);
    ASSERT_EQ(marks.size(), 1u + 5u) << "one mark per shift, 0 to 5";
    ASSERT_EQ(uses.size(), 2u * 5u) << "the buffer's use before and after, per halving";
    for (unsigned passed = 3; passed < 5; ++passed)
        EXPECT_EQ(uses[2 * (passed - 1)].fields.at(1), uses[2 * (passed - 1) + 1].fields.at(1))
            << "shift " << passed << ": an empty level the drop passed frees nothing";
    for (size_t k = 0; k < marks.size(); ++k) {
        ASSERT_EQ(marks[k].fields.size(), 2u);
        double hz;
        std::memcpy(&hz, &marks[k].fields[1], sizeof hz);
        EXPECT_EQ(hz, 4000.0 / double(1u << k)) << "shift " << k;
        EXPECT_EQ(marks[k].time, stats.shift_reached_at[k]) << "shift " << k;
    }
    EXPECT_EQ(marks[0].time, started) << "the initial rate from the start of sampling";
    EXPECT_LT(marks[2].time, first_record) << "both early halvings before the first record";
    EXPECT_EQ(a.events[0].front().type, "Metric");
    EXPECT_EQ(a.global_offset, started) << "the archive's time range covers the early marks";
    EXPECT_EQ(marks[3].time, marks[5].time) << "one drop over levels 2 to 4: one time";
    EXPECT_EQ(a.locations[0].events, a.events[0].size());
}

TEST(FormatWriter, ProgramEndingInsideARegionIsClosedAtTheLastTimestamp)
{
    Trace t(1u << 20, 4096, 2, true);
    World w(t);
    ASSERT_TRUE(t.commit_nodes());
    Location &l = t.add_location(0, 0, "Master thread", 100);
    ASSERT_TRUE(t.enter(l, w.mpi_allreduce, w.n_allreduce));
    ASSERT_TRUE(t.collective_begin(l));
    ASSERT_EQ(t.sample(l, w.n_allreduce), ADT_APPEND_OK);
    readback::Archive a = write_and_check(t, fresh_path("open-region"));
    ASSERT_FALSE(a.events[0].empty());
    EXPECT_EQ(a.events[0].back().type, "CallingContextLeave");
}

TEST(FormatWriter, LeaveWithoutEnterIsRefusedAndLeavesNothing)
{
    Trace t(1u << 20, 4096, 2, false);
    World w(t);
    Location &l = t.add_location(0, 0, "Master thread", 100);
    adt_rec_region rec{ w.mpi_send, kUndef };
    ASSERT_EQ(adt_buffer_append_event(l.location, ADT_REC_LEAVE, 5, &rec, sizeof rec), ADT_APPEND_OK);
    std::string dir = fresh_path("bad-leave");
    Written r = write_trace(t, dir);
    EXPECT_EQ(r.rc, -1);
    EXPECT_NE(std::string(r.result.error).find(dir), std::string::npos) << r.result.error;
    EXPECT_NE(std::string(r.result.error).find("without a matching enter"), std::string::npos) << r.result.error;
    EXPECT_FALSE(exists(dir));
    EXPECT_TRUE(entries_starting(scratch_dir(), basename_of(dir) + ".tmp-").empty());
}

TEST(FormatWriter, ExistingArchiveDirectoryIsNeverTouched)
{
    Trace t(1u << 20, 4096, 2, false);
    World w(t);
    Location &l = t.add_location(0, 0, "Master thread", 100);
    ASSERT_TRUE(t.enter(l, w.mpi_send, kUndef));
    ASSERT_TRUE(t.leave(l));
    std::string dir = fresh_path("existing");
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    { std::ofstream(dir + "/earlier.txt") << "an earlier trace"; }
    Written r = write_trace(t, dir);
    EXPECT_EQ(r.rc, -1);
    EXPECT_NE(std::string(r.result.error).find(dir), std::string::npos) << r.result.error;
    EXPECT_EQ(entries_starting(dir, "").size(), 3u) << "only ., .. and earlier.txt";
    std::ifstream earlier(dir + "/earlier.txt");
    std::string content;
    std::getline(earlier, content);
    EXPECT_EQ(content, "an earlier trace");
    EXPECT_TRUE(entries_starting(scratch_dir(), basename_of(dir) + ".tmp-").empty());
}

TEST(FormatWriter, UnwritableParentIsAnErrorNamingThePath)
{
    Trace t(1u << 20, 4096, 2, false);
    World w(t);
    Location &l = t.add_location(0, 0, "Master thread", 100);
    ASSERT_TRUE(t.enter(l, w.mpi_send, kUndef));
    ASSERT_TRUE(t.leave(l));
    // a regular file as parent: creating anything below it fails even for root
    std::string parent = fresh_path("not-a-directory");
    { std::ofstream(parent) << "x"; }
    std::string dir = parent + "/trace";
    Written r = write_trace(t, dir);
    EXPECT_EQ(r.rc, -1);
    EXPECT_NE(std::string(r.result.error).find(dir), std::string::npos) << r.result.error;
    struct stat st;
    ASSERT_EQ(stat(parent.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_size, 1);
}

}  // namespace
