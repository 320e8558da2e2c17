// adt_config_warn_unknown and adt_config_closest: a misspelled ADAPTRACE_*
// variable is named at start-up with the variable it was probably meant to
// be, instead of leaving the default in force without a word.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "capture_stderr.hpp"
#include "core/core.h"

namespace {

struct Warnings {
    size_t count;
    std::vector<std::string> lines;
};

// Warns about the names of entries (each "NAME=value").
Warnings warn_about(std::vector<std::string> entries)
{
    std::vector<char *> environment;
    for (auto &entry : entries)
        environment.push_back(entry.data());
    environment.push_back(nullptr);
    Warnings warnings{};
    std::string text = capture_stderr([&] { warnings.count = adt_config_warn_unknown(environment.data()); });
    std::istringstream stream(text);
    for (std::string line; std::getline(stream, line);)
        warnings.lines.push_back(line);
    return warnings;
}

TEST(UnknownNames, MisspelledVariableIsNamedWithTheClosestKnownOne)
{
    Warnings warnings = warn_about({"ADAPTRACE_BUFER_SIZE=1M"});
    EXPECT_EQ(warnings.count, 1u);
    ASSERT_EQ(warnings.lines.size(), 1u);
    EXPECT_EQ(warnings.lines[0], "adaptrace: unknown variable ADAPTRACE_BUFER_SIZE is ignored; did you mean "
                                 "ADAPTRACE_BUFFER_SIZE? (adaptrace --help lists every variable)");
}

TEST(UnknownNames, EveryUnknownNameGetsItsOwnLine)
{
    Warnings warnings = warn_about({"ADAPTRACE_SAMPLING_RATES=5k", "PATH=/usr/bin", "ADAPTRACE_QUIETT=on",
                                    "adaptrace_output=x"});
    EXPECT_EQ(warnings.count, 3u);
    ASSERT_EQ(warnings.lines.size(), 3u);
    EXPECT_NE(warnings.lines[0].find("ADAPTRACE_SAMPLING_RATES is ignored; did you mean ADAPTRACE_SAMPLING_RATE?"),
              std::string::npos)
        << warnings.lines[0];
    EXPECT_NE(warnings.lines[1].find("ADAPTRACE_QUIETT is ignored; did you mean ADAPTRACE_QUIET?"), std::string::npos)
        << warnings.lines[1];
    // Names are case-sensitive: the lower-case spelling is ignored too.
    EXPECT_NE(warnings.lines[2].find("adaptrace_output is ignored; did you mean ADAPTRACE_OUTPUT?"), std::string::npos)
        << warnings.lines[2];
}

TEST(UnknownNames, KnownVariablesOtherToolsAndTheRuntimesOwnMarkerAreNotWarnedAbout)
{
    std::vector<std::string> entries = {"_ADAPTRACE_OWNER_PID=1234", "SCOREP_TOTAL_MEMORY=16000k", "ADAPTRACE",
                                        "ADAPTRACEX=1", "HOME=/root"};
    for (size_t i = 0; i < adt_config_var_count; i++)
        entries.push_back(std::string(adt_config_vars[i].name) + "=" + adt_config_vars[i].default_value);
    Warnings warnings = warn_about(entries);
    EXPECT_EQ(warnings.count, 0u);
    EXPECT_TRUE(warnings.lines.empty()) << warnings.lines[0];
}

TEST(UnknownNames, AnEmptyEnvironmentIsFine)
{
    EXPECT_EQ(warn_about({}).count, 0u);
    EXPECT_EQ(adt_config_warn_unknown(nullptr), 0u);
}

TEST(UnknownNames, ClosestIsTheSmallestEditDistance)
{
    EXPECT_STREQ(adt_config_closest("ADAPTRACE_BUFFER_SIZE")->name, "ADAPTRACE_BUFFER_SIZE");
    EXPECT_STREQ(adt_config_closest("ADAPTRACE_SAMPLINGCLOCK")->name, "ADAPTRACE_SAMPLING_CLOCK");
    EXPECT_STREQ(adt_config_closest("ADAPTRACE_SAMPLE_SIGNAL")->name, "ADAPTRACE_SAMPLING_SIGNAL");
    EXPECT_STREQ(adt_config_closest("ADAPTRACE_ONFULL")->name, "ADAPTRACE_ON_FULL");
    EXPECT_STREQ(adt_config_closest("adaptrace_unwind_depth")->name, "ADAPTRACE_UNWIND_DEPTH");
    // Longer than the names compared: still answers with a row of the table.
    EXPECT_NE(adt_config_closest(("ADAPTRACE_" + std::string(200, 'X')).c_str()), nullptr);
}

} // namespace
