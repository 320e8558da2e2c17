// The process-local definitions registry.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "format/format.h"

namespace {

struct Defs {
    adt_defs *d = adt_defs_create();
    ~Defs() { adt_defs_destroy(d); }
};

TEST(FormatDefs, IdenticalDefinitionsShareAnIdAndIdsAreDense)
{
    Defs defs;
    uint32_t a = adt_defs_region(defs.d, "MPI_Send", "PMPI_Send", ADT_ROLE_POINT2POINT, ADT_PARADIGM_MPI, nullptr, 0, 0);
    uint32_t b = adt_defs_region(defs.d, "MPI_Recv", nullptr, ADT_ROLE_POINT2POINT, ADT_PARADIGM_MPI, nullptr, 0, 0);
    uint32_t c = adt_defs_region(defs.d, "MPI_Send", "PMPI_Send", ADT_ROLE_POINT2POINT, ADT_PARADIGM_MPI, nullptr, 0, 0);
    uint32_t d = adt_defs_region(defs.d, "MPI_Send", "PMPI_Send", ADT_ROLE_POINT2POINT, ADT_PARADIGM_MPI, "a.c", 1, 2);
    EXPECT_EQ(a, 0u);
    EXPECT_EQ(b, 1u);
    EXPECT_EQ(c, a);
    EXPECT_EQ(d, 2u);
    EXPECT_EQ(adt_defs_source_location(defs.d, "a.c", 10), 0u);
    EXPECT_EQ(adt_defs_source_location(defs.d, "a.c", 11), 1u);
    EXPECT_EQ(adt_defs_source_location(defs.d, "a.c", 10), 0u);
    EXPECT_EQ(adt_defs_source_location(defs.d, nullptr, 10), ADT_UNDEFINED_ID);
    EXPECT_EQ(adt_defs_metric(defs.d, "PAPI_TOT_CYC", "#"), 0u);
    EXPECT_EQ(adt_defs_metric(defs.d, "PAPI_L1_DCM", "#"), 1u);
    EXPECT_EQ(adt_defs_metric(defs.d, "PAPI_TOT_CYC", "#"), 0u);
    EXPECT_EQ(adt_defs_region(defs.d, nullptr, nullptr, ADT_ROLE_FUNCTION, ADT_PARADIGM_USER, nullptr, 0, 0),
              ADT_UNDEFINED_ID);
}

TEST(FormatDefs, CommunicatorsAreKeyedByCreatorAndSequence)
{
    Defs defs;
    uint32_t members[] = { 0, 1, 2 };
    adt_comm_desc world{ 0, 0, "MPI_COMM_WORLD", members, 3, nullptr, 0, ADT_UNDEFINED_ID, false };
    EXPECT_EQ(adt_defs_comm(defs.d, &world), 0u);
    adt_comm_desc self{ 1, 0, "MPI_COMM_SELF", nullptr, 0, nullptr, 0, ADT_UNDEFINED_ID, true };
    EXPECT_EQ(adt_defs_comm(defs.d, &self), 1u);
    adt_comm_desc again = world;
    again.name = "renamed later";
    EXPECT_EQ(adt_defs_comm(defs.d, &again), 0u) << "same key, same communicator";
    adt_comm_desc child{ 0, 1, "", members, 2, nullptr, 0, 0, false };
    EXPECT_EQ(adt_defs_comm(defs.d, &child), 2u);
    adt_comm_desc orphan{ 0, 2, "", members, 2, nullptr, 0, 17, false };
    EXPECT_EQ(adt_defs_comm(defs.d, &orphan), ADT_UNDEFINED_ID) << "parent must be defined before";
    adt_comm_desc no_members{ 0, 3, "", nullptr, 2, nullptr, 0, ADT_UNDEFINED_ID, false };
    EXPECT_EQ(adt_defs_comm(defs.d, &no_members), ADT_UNDEFINED_ID);
}

TEST(FormatDefs, CallingContextsNeedParentsFirstAndKnownRegions)
{
    Defs defs;
    uint32_t main_region = adt_defs_region(defs.d, "main", nullptr, ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING, nullptr, 0, 0);
    uint32_t scl = adt_defs_source_location(defs.d, "main.c", 3);
    adt_cc_node good[] = { { main_region, scl, ADT_UNDEFINED_ID }, { main_region, ADT_UNDEFINED_ID, 0 } };
    EXPECT_EQ(adt_defs_set_calling_contexts(defs.d, good, 2), 0);
    adt_cc_node child_first[] = { { main_region, ADT_UNDEFINED_ID, 1 }, { main_region, ADT_UNDEFINED_ID, ADT_UNDEFINED_ID } };
    EXPECT_EQ(adt_defs_set_calling_contexts(defs.d, child_first, 2), -1);
    adt_cc_node self_parent[] = { { main_region, ADT_UNDEFINED_ID, 0 } };
    EXPECT_EQ(adt_defs_set_calling_contexts(defs.d, self_parent, 1), -1);
    adt_cc_node unknown_region[] = { { 99, ADT_UNDEFINED_ID, ADT_UNDEFINED_ID } };
    EXPECT_EQ(adt_defs_set_calling_contexts(defs.d, unknown_region, 1), -1);
    adt_cc_node unknown_location[] = { { main_region, 7, ADT_UNDEFINED_ID } };
    EXPECT_EQ(adt_defs_set_calling_contexts(defs.d, unknown_location, 1), -1);
}

TEST(FormatDefs, ConcurrentRegistrationsAgreeOnIds)
{
    Defs defs;
    std::vector<std::vector<uint32_t>> ids(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 500; ++i) {
                std::string name = "f" + std::to_string((i * 7 + t) % 300);
                ids[t].push_back(adt_defs_region(defs.d, name.c_str(), nullptr, ADT_ROLE_FUNCTION,
                                                 ADT_PARADIGM_SAMPLING, nullptr, 0, 0));
            }
        });
    for (auto &th : threads)
        th.join();
    std::map<std::string, uint32_t> seen;
    for (int t = 0; t < 4; ++t)
        for (int i = 0; i < 500; ++i) {
            std::string name = "f" + std::to_string((i * 7 + t) % 300);
            auto [it, added] = seen.emplace(name, ids[t][i]);
            EXPECT_EQ(it->second, ids[t][i]) << name;
            EXPECT_LT(ids[t][i], 300u);
        }
    EXPECT_EQ(seen.size(), 300u);
}

}  // namespace
