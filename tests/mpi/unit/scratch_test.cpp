// The wrapper's copy of a call's requests (records.c, adt_mpi_scratch):
// without memory for it the call's completions are not recorded, and each
// of its requests is counted as such, so that the loss reaches the summary.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

#include "scratch_probe.h"

namespace {

// Bytes of address space this process has mapped now (/proc/self/statm).
rlim_t address_space_in_use()
{
    unsigned long pages = 0;
    FILE *statm = std::fopen("/proc/self/statm", "r");
    if (statm == nullptr || std::fscanf(statm, "%lu", &pages) != 1)
        pages = 0;
    if (statm != nullptr)
        std::fclose(statm);
    return static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE));
}

TEST(MpiScratch, ACallWithoutMemoryForItsRequestsCountsTheirCompletionsUnrecorded)
{
    // 16 M requests want ~900 MiB of copies; the address space is held to
    // what is mapped now plus 256 MiB, so their allocation fails on any
    // machine (the sanitizer build returns NULL too: allocator_may_return_null).
    const int requests = 1 << 24;
    struct rlimit saved;
    ASSERT_EQ(getrlimit(RLIMIT_AS, &saved), 0);
    ASSERT_NE(address_space_in_use(), 0u);
    struct rlimit tight = saved;
    tight.rlim_cur = address_space_in_use() + (rlim_t{256} << 20);
    ASSERT_EQ(setrlimit(RLIMIT_AS, &tight), 0);
    const scratch_outcome without_memory = scratch_probe(requests);
    ASSERT_EQ(setrlimit(RLIMIT_AS, &saved), 0);
    EXPECT_FALSE(without_memory.has_copy);
    EXPECT_EQ(without_memory.completions_unrecorded, static_cast<uint64_t>(requests));

    // A call that fits the inline copy needs no memory and loses nothing.
    const scratch_outcome inline_copy = scratch_probe(scratch_inline_requests());
    EXPECT_TRUE(inline_copy.has_copy);
    EXPECT_EQ(inline_copy.completions_unrecorded, 0u);
}

} // namespace
