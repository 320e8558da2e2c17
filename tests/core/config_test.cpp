// The configuration table, its strict parsers and adt_config_load.
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>
#include <utility>

#include "core/core.h"

namespace {

struct SizeCase {
    const char *text;
    uint64_t bytes;
};

class SizeAccepted : public ::testing::TestWithParam<SizeCase> {};

TEST_P(SizeAccepted, ParsesToBytes)
{
    uint64_t bytes = 0;
    char error[256] = "";
    ASSERT_EQ(adt_parse_size(GetParam().text, &bytes, error, sizeof error), 0) << error;
    EXPECT_EQ(bytes, GetParam().bytes);
}

INSTANTIATE_TEST_SUITE_P(
    Forms, SizeAccepted,
    ::testing::Values(SizeCase{"65536", 65536}, SizeCase{"1", 1}, SizeCase{"64K", 64ull << 10},
                      SizeCase{"64k", 64ull << 10}, SizeCase{"64KiB", 64ull << 10},
                      SizeCase{"64kib", 64ull << 10}, SizeCase{"64M", 64ull << 20},
                      SizeCase{"64m", 64ull << 20}, SizeCase{"64MiB", 64ull << 20},
                      SizeCase{"1G", 1ull << 30}, SizeCase{"1GiB", 1ull << 30}, SizeCase{"2g", 2ull << 30},
                      SizeCase{"3T", 3ull << 40}, SizeCase{"007M", 7ull << 20},
                      SizeCase{"18446744073709551615", UINT64_MAX},
                      SizeCase{"16777215T", 16777215ull << 40}));

struct RejectCase {
    const char *text;
    const char *reason; // a piece of the message
};

class SizeRejected : public ::testing::TestWithParam<RejectCase> {};

TEST_P(SizeRejected, GivesReasonAndKeepsResult)
{
    uint64_t bytes = 12345;
    char error[256] = "";
    EXPECT_EQ(adt_parse_size(GetParam().text, &bytes, error, sizeof error), -1);
    EXPECT_NE(std::string(error).find(GetParam().reason), std::string::npos) << error;
    EXPECT_EQ(bytes, 12345u);
}

INSTANTIATE_TEST_SUITE_P(
    Errors, SizeRejected,
    ::testing::Values(RejectCase{"", "empty"}, RejectCase{"abc", "not a number"},
                      RejectCase{"M", "not a number"}, RejectCase{"-1", "negative"},
                      RejectCase{"-64M", "negative"}, RejectCase{"+64M", "not a number"},
                      RejectCase{"0", "zero"}, RejectCase{"0M", "zero"},
                      RejectCase{"64Q", "unknown suffix 'Q'"}, RejectCase{"64MB", "unknown suffix 'MB'"},
                      RejectCase{"64Mx", "unknown suffix 'Mx'"}, RejectCase{"64M5", "unknown suffix 'M5'"},
                      RejectCase{"1.5G", "whole number"}, RejectCase{"1,5G", "whole number"},
                      RejectCase{" 64M", "whitespace"}, RejectCase{"64M ", "whitespace"},
                      RejectCase{"64 M", "unknown suffix ' M'"}, RejectCase{"64M\n", "whitespace"},
                      RejectCase{"18446744073709551616", "too large"},
                      RejectCase{"99999999999999999999999", "too large"},
                      RejectCase{"16777216T", "too large"}, RejectCase{"0x100", "unknown suffix 'x100'"}));

TEST(ParseSize, NullIsEmpty)
{
    uint64_t bytes = 0;
    char error[64] = "";
    EXPECT_EQ(adt_parse_size(nullptr, &bytes, error, sizeof error), -1);
    EXPECT_STREQ(error, "empty value");
}

struct RateCase {
    const char *text;
    uint32_t hz;
};

class RateAccepted : public ::testing::TestWithParam<RateCase> {};

TEST_P(RateAccepted, ParsesToHz)
{
    uint32_t hz = 0;
    char error[256] = "";
    ASSERT_EQ(adt_parse_rate(GetParam().text, &hz, error, sizeof error), 0) << error;
    EXPECT_EQ(hz, GetParam().hz);
}

INSTANTIATE_TEST_SUITE_P(
    Forms, RateAccepted,
    ::testing::Values(RateCase{"10000", 10000}, RateCase{"10k", 10000}, RateCase{"10K", 10000},
                      RateCase{"10kHz", 10000}, RateCase{"10khz", 10000}, RateCase{"10KHZ", 10000},
                      RateCase{"500Hz", 500}, RateCase{"500hz", 500}, RateCase{"1", 1}, RateCase{"1Hz", 1},
                      RateCase{"1MHz", 1000000}, RateCase{"1M", 1000000}, RateCase{"1000000", 1000000},
                      RateCase{"1000k", 1000000}));

class RateRejected : public ::testing::TestWithParam<RejectCase> {};

TEST_P(RateRejected, GivesReasonAndKeepsResult)
{
    uint32_t hz = 777;
    char error[256] = "";
    EXPECT_EQ(adt_parse_rate(GetParam().text, &hz, error, sizeof error), -1);
    EXPECT_NE(std::string(error).find(GetParam().reason), std::string::npos) << error;
    EXPECT_EQ(hz, 777u);
}

INSTANTIATE_TEST_SUITE_P(
    Errors, RateRejected,
    ::testing::Values(RejectCase{"", "empty"}, RejectCase{"fast", "not a number"},
                      RejectCase{"-10k", "negative"}, RejectCase{"0", "zero"}, RejectCase{"0Hz", "zero"},
                      RejectCase{"1000001", "above 1 MHz"}, RejectCase{"2MHz", "above 1 MHz"},
                      RejectCase{"4294967296", "above 1 MHz"},
                      RejectCase{"18446744073709551616", "too large"},
                      RejectCase{"18446744073709551615k", "too large"},
                      RejectCase{"10kHzz", "unknown suffix 'kHzz'"}, RejectCase{"10G", "unknown suffix 'G'"},
                      RejectCase{"10 kHz", "unknown suffix ' kHz'"}, RejectCase{"\t10k", "whitespace"},
                      RejectCase{"2.5kHz", "whole number"}, RejectCase{"10s", "unknown suffix 's'"}));

TEST(ParseBool, AcceptsTheDocumentedWordsInAnyCase)
{
    const std::map<std::string, bool> words = {
        {"on", true},   {"ON", true},     {"true", true},  {"True", true}, {"yes", true},  {"1", true},
        {"off", false}, {"OFF", false}, {"false", false}, {"no", false},   {"No", false}, {"0", false}};
    for (const auto &[text, expected] : words) {
        bool value = !expected;
        char error[128] = "";
        ASSERT_EQ(adt_parse_bool(text.c_str(), &value, error, sizeof error), 0) << text << ": " << error;
        EXPECT_EQ(value, expected) << text;
    }
}

TEST(ParseBool, RejectsEverythingElseUnlikeScoreP)
{
    for (const char *text : {"", "enabled", "2", "onn", "o", " on", "off ", "-1", "y"}) {
        bool value = true;
        char error[128] = "";
        EXPECT_EQ(adt_parse_bool(text, &value, error, sizeof error), -1) << text;
        EXPECT_TRUE(value) << text;
        EXPECT_STRNE(error, "") << text;
    }
}

TEST(ParseSignal, AcceptsSamplingSignalsByNameAndNumber)
{
    const std::map<std::string, int> accepted = {
        {"SIGPROF", SIGPROF},   {"PROF", SIGPROF},         {"sigprof", SIGPROF},
        {"SIGALRM", SIGALRM},   {"VTALRM", SIGVTALRM},     {"SIGUSR1", SIGUSR1},
        {"usr2", SIGUSR2},      {"SIGRTMIN", SIGRTMIN},    {"SIGRTMIN+0", SIGRTMIN},
        {"SIGRTMIN+3", SIGRTMIN + 3}, {"RTMIN+1", SIGRTMIN + 1}, {"SIGRTMAX", SIGRTMAX},
        {"SIGRTMAX-2", SIGRTMAX - 2}, {std::to_string(SIGPROF), SIGPROF},
        {std::to_string(SIGRTMIN + 4), SIGRTMIN + 4},
        {"SIGRTMIN+" + std::to_string(SIGRTMAX - SIGRTMIN), SIGRTMAX}};
    for (const auto &[text, expected] : accepted) {
        int number = -1;
        char error[256] = "";
        ASSERT_EQ(adt_parse_signal(text.c_str(), &number, error, sizeof error), 0) << text << ": " << error;
        EXPECT_EQ(number, expected) << text;
    }
}

TEST(ParseSignal, RejectsSignalsNeededElsewhereAndJunk)
{
    const std::map<std::string, std::string> rejected = {
        {"SIGKILL", "SIGKILL (9) cannot be used"},
        {"SIGSTOP", "SIGSTOP"},
        {"SIGSEGV", "SIGSEGV"},
        {"SEGV", "SIGSEGV"},
        {"SIGINT", "SIGINT"},
        {"SIGCHLD", "SIGCHLD"},
        {"9", "SIGKILL"},
        {"11", "SIGSEGV"},
        {"0", "no such signal"},
        {"65", "no such signal"},
        {"-27", "negative"},
        {"99999999999999999999999", "too large"},
        {"27x", "trailing"},
        {"SIGFOO", "unknown signal name"},
        {"SIG", "unknown signal name"},
        {"", "empty"},
        {" SIGPROF", "whitespace"},
        {"SIGRTMIN-1", "SIGRTMIN+N"},
        {"SIGRTMAX+1", "SIGRTMAX-N"},
        {"SIGRTMIN+", "SIGRTMIN+N"},
        {"SIGRTMIN+2x", "trailing"},
        {"SIGRTMIN+" + std::to_string(SIGRTMAX - SIGRTMIN + 1), "beyond"},
        {"SIGRTMAX-" + std::to_string(SIGRTMAX - SIGRTMIN + 1), "beyond"}};
    for (const auto &[text, reason] : rejected) {
        int number = -1;
        char error[256] = "";
        EXPECT_EQ(adt_parse_signal(text.c_str(), &number, error, sizeof error), -1) << text;
        EXPECT_EQ(number, -1) << text;
        EXPECT_NE(std::string(error).find(reason), std::string::npos) << text << ": " << error;
    }
}

// ---- the table and adt_config_load ----------------------------------------

using Environment = std::map<std::string, std::string>;
const Environment *current_environment = nullptr;

const char *lookup(const char *name)
{
    auto found = current_environment->find(name);
    return found == current_environment->end() ? nullptr : found->second.c_str();
}

struct LoadResult {
    int status;
    adt_config config;
    std::string error;
};

LoadResult load(const Environment &environment)
{
    LoadResult result{};
    char error[1024] = "";
    current_environment = &environment;
    result.status = adt_config_load(&result.config, lookup, error, sizeof error);
    current_environment = nullptr;
    result.error = error;
    return result;
}

TEST(ConfigLoad, DefaultsWithoutVariables)
{
    LoadResult result = load({});
    ASSERT_EQ(result.status, 0) << result.error;
    EXPECT_EQ(result.config.buffer_bytes, 64ull << 20);
    EXPECT_EQ(result.config.sampling_rate_hz, 10000u);
    EXPECT_TRUE(result.config.sampling);
    EXPECT_EQ(result.config.sampling_clock, ADT_SAMPLING_CLOCK_CPU);
    EXPECT_EQ(result.config.sampling_signal, SIGPROF);
    EXPECT_EQ(result.config.unwind_depth, 32u);
    EXPECT_STREQ(result.config.metrics, "");
    EXPECT_STREQ(result.config.output, "");
    EXPECT_EQ(result.config.on_full, ADT_ON_FULL_FOLD);
    EXPECT_FALSE(result.config.quiet);
}

TEST(ConfigLoad, EveryVariableReachesItsField)
{
    LoadResult result = load({{"ADAPTRACE_BUFFER_SIZE", "2G"},
                              {"ADAPTRACE_SAMPLING_RATE", "500Hz"},
                              {"ADAPTRACE_SAMPLING", "off"},
                              {"ADAPTRACE_SAMPLING_CLOCK", "wall"},
                              {"ADAPTRACE_SAMPLING_SIGNAL", "SIGRTMIN+2"},
                              {"ADAPTRACE_UNWIND_DEPTH", "256"},
                              {"ADAPTRACE_METRICS", "PAPI_TOT_CYC,perf::CYCLES"},
                              {"ADAPTRACE_OUTPUT", "/tmp/some trace"},
                              {"ADAPTRACE_ON_FULL", "stop"},
                              {"ADAPTRACE_QUIET", "yes"}});
    ASSERT_EQ(result.status, 0) << result.error;
    EXPECT_EQ(result.config.buffer_bytes, 2ull << 30);
    EXPECT_EQ(result.config.sampling_rate_hz, 500u);
    EXPECT_FALSE(result.config.sampling);
    EXPECT_EQ(result.config.sampling_clock, ADT_SAMPLING_CLOCK_WALL);
    EXPECT_EQ(result.config.sampling_signal, SIGRTMIN + 2);
    EXPECT_EQ(result.config.unwind_depth, 256u);
    EXPECT_STREQ(result.config.metrics, "PAPI_TOT_CYC,perf::CYCLES");
    EXPECT_STREQ(result.config.output, "/tmp/some trace");
    EXPECT_EQ(result.config.on_full, ADT_ON_FULL_STOP);
    EXPECT_TRUE(result.config.quiet);
}

/* fold is the default (issue #25); flush and stop stay choices. */
TEST(ConfigLoad, OnFullTakesEachPolicyByName)
{
    const std::pair<const char *, adt_on_full> words[] = {
        {"fold", ADT_ON_FULL_FOLD}, {"FLUSH", ADT_ON_FULL_FLUSH}, {"stop", ADT_ON_FULL_STOP}};
    for (const auto &[word, policy] : words) {
        LoadResult result = load({{"ADAPTRACE_ON_FULL", word}});
        ASSERT_EQ(result.status, 0) << word << ": " << result.error;
        EXPECT_EQ(result.config.on_full, policy) << word;
    }
}

TEST(ConfigLoad, ErrorIsOneLineNamingVariableValueAndAcceptedForm)
{
    LoadResult result = load({{"ADAPTRACE_BUFFER_SIZE", "64Q"}});
    EXPECT_EQ(result.status, -1);
    const adt_config_var *var = adt_config_find("ADAPTRACE_BUFFER_SIZE");
    ASSERT_NE(var, nullptr);
    EXPECT_EQ(result.error, std::string("ADAPTRACE_BUFFER_SIZE='64Q': unknown suffix 'Q' (accepted: ") +
                                var->accepted + ")");
    EXPECT_EQ(result.error.find('\n'), std::string::npos);
}

struct VariableReject {
    const char *name;
    const char *value;
    const char *reason;
};

class ConfigRejects : public ::testing::TestWithParam<VariableReject> {};

TEST_P(ConfigRejects, NamesVariableValueAndForm)
{
    const VariableReject &bad = GetParam();
    LoadResult result = load({{bad.name, bad.value}});
    EXPECT_EQ(result.status, -1);
    const adt_config_var *var = adt_config_find(bad.name);
    ASSERT_NE(var, nullptr);
    const std::string prefix = std::string(bad.name) + "='" + bad.value + "': ";
    EXPECT_EQ(result.error.rfind(prefix, 0), 0u) << result.error;
    EXPECT_NE(result.error.find(bad.reason), std::string::npos) << result.error;
    EXPECT_NE(result.error.find(std::string("(accepted: ") + var->accepted + ")"), std::string::npos)
        << result.error;
}

INSTANTIATE_TEST_SUITE_P(
    Variables, ConfigRejects,
    ::testing::Values(
        VariableReject{"ADAPTRACE_BUFFER_SIZE", "", "empty"},
        VariableReject{"ADAPTRACE_BUFFER_SIZE", "32K", "below the minimum of 65536"},
        VariableReject{"ADAPTRACE_BUFFER_SIZE", "65535", "below the minimum"},
        VariableReject{"ADAPTRACE_BUFFER_SIZE", "0", "zero"},
        VariableReject{"ADAPTRACE_BUFFER_SIZE", "lots", "not a number"},
        VariableReject{"ADAPTRACE_SAMPLING_RATE", "", "empty"},
        VariableReject{"ADAPTRACE_SAMPLING_RATE", "5GHz", "unknown suffix 'GHz'"},
        VariableReject{"ADAPTRACE_SAMPLING", "", "empty"},
        VariableReject{"ADAPTRACE_SAMPLING", "maybe", "not a boolean"},
        VariableReject{"ADAPTRACE_SAMPLING_CLOCK", "", "empty"},
        VariableReject{"ADAPTRACE_SAMPLING_CLOCK", "monotonic", "unknown word"},
        VariableReject{"ADAPTRACE_SAMPLING_SIGNAL", "SIGSEGV", "cannot be used for sampling"},
        VariableReject{"ADAPTRACE_SAMPLING_SIGNAL", "", "empty"},
        VariableReject{"ADAPTRACE_UNWIND_DEPTH", "", "empty"},
        VariableReject{"ADAPTRACE_UNWIND_DEPTH", "0", "out of range"},
        VariableReject{"ADAPTRACE_UNWIND_DEPTH", "257", "out of range"},
        VariableReject{"ADAPTRACE_UNWIND_DEPTH", "-3", "negative"},
        VariableReject{"ADAPTRACE_UNWIND_DEPTH", "32 ", "whitespace"},
        VariableReject{"ADAPTRACE_UNWIND_DEPTH", "32k", "trailing characters 'k'"},
        VariableReject{"ADAPTRACE_UNWIND_DEPTH", "18446744073709551616", "too large"},
        VariableReject{"ADAPTRACE_METRICS", "PAPI_TOT_CYC,,PAPI_L1_DCM", "event name 2 is empty"},
        VariableReject{"ADAPTRACE_METRICS", ",PAPI_TOT_CYC", "event name 1 is empty"},
        VariableReject{"ADAPTRACE_METRICS", "PAPI_TOT_CYC,", "event name 2 is empty"},
        VariableReject{"ADAPTRACE_METRICS", "PAPI_TOT_CYC, PAPI_L1_DCM", "event name 2 has a blank"},
        VariableReject{"ADAPTRACE_METRICS", "PAPI_TOT_CYC\tX", "event name 1 has a blank or control character"},
        VariableReject{"ADAPTRACE_METRICS",
                       "A1,A2,A3,A4,A5,A6,A7,A8,A9,A10,A11,A12,A13,A14,A15,A16,A17", "more than 16 event names"},
        VariableReject{"ADAPTRACE_ON_FULL", "", "empty"},
        VariableReject{"ADAPTRACE_ON_FULL", "drop", "unknown word"},
        VariableReject{"ADAPTRACE_QUIET", "", "empty"},
        VariableReject{"ADAPTRACE_QUIET", "silent", "not a boolean"}));

// Whether an event exists is PAPI's to say at start-up: the table takes
// generic perf events with '-', qualifiers after ':' with '=', component
// prefixes, exactly as written.
TEST(ConfigLoad, MetricsTakeEveryNameFormPapiHas)
{
    const char *list = "perf::TASK-CLOCK,perf::L1-DCACHE-LOAD-MISSES,INST_RETIRED:ANY_P:u=0,"
                       "rapl::RAPL_ENERGY_PKG:cpu=0,PAPI_TOT_INS";
    LoadResult result = load({{"ADAPTRACE_METRICS", list}});
    ASSERT_EQ(result.status, 0) << result.error;
    EXPECT_STREQ(result.config.metrics, list);
    char names[ADT_METRICS_COUNT_MAX][ADT_METRIC_NAME_MAX];
    char error[128] = "";
    ASSERT_EQ(adt_config_metric_names(list, names, error, sizeof error), 5) << error;
    EXPECT_STREQ(names[0], "perf::TASK-CLOCK");
    EXPECT_STREQ(names[2], "INST_RETIRED:ANY_P:u=0");
    EXPECT_STREQ(names[3], "rapl::RAPL_ENERGY_PKG:cpu=0");
}

TEST(ConfigLoad, EmptyOutputAndMetricsMeanTheDefault)
{
    LoadResult result = load({{"ADAPTRACE_OUTPUT", ""}, {"ADAPTRACE_METRICS", ""}});
    ASSERT_EQ(result.status, 0) << result.error;
    EXPECT_STREQ(result.config.output, "");
    EXPECT_STREQ(result.config.metrics, "");
}

TEST(ConfigLoad, OverlongOutputAndMetricsAreRejected)
{
    const std::string long_path(ADT_PATH_MAX, 'p');
    LoadResult path = load({{"ADAPTRACE_OUTPUT", long_path}});
    EXPECT_EQ(path.status, -1);
    EXPECT_NE(path.error.find("ppp...': path longer than 4095 characters"), std::string::npos) << path.error;

    std::string metrics = "PAPI_TOT_CYC";
    while (metrics.size() < ADT_METRICS_MAX)
        metrics += ",PAPI_TOT_CYC";
    LoadResult list = load({{"ADAPTRACE_METRICS", metrics}});
    EXPECT_EQ(list.status, -1);
    EXPECT_NE(list.error.find("longer than 1023 characters"), std::string::npos);

    LoadResult name = load({{"ADAPTRACE_METRICS", "PAPI_TOT_CYC," + std::string(ADT_METRIC_NAME_MAX, 'X')}});
    EXPECT_EQ(name.status, -1);
    EXPECT_NE(name.error.find("event name 2 is longer than 127 characters"), std::string::npos) << name.error;

    LoadResult fits = load({{"ADAPTRACE_OUTPUT", long_path.substr(1)}});
    EXPECT_EQ(fits.status, 0) << fits.error;
}

TEST(ConfigLoad, SmallestBufferIsAccepted)
{
    LoadResult result = load({{"ADAPTRACE_BUFFER_SIZE", "64K"}});
    ASSERT_EQ(result.status, 0) << result.error;
    EXPECT_EQ(result.config.buffer_bytes, uint64_t{ADT_BUFFER_SIZE_MIN});
}

TEST(ConfigLoad, UnrelatedVariablesAreIgnored)
{
    LoadResult result = load({{"ADAPTRACE_BUFFER_SIZ", "junk"}, {"SCOREP_TOTAL_MEMORY", "junk"}});
    EXPECT_EQ(result.status, 0) << result.error;
}

TEST(ConfigTable, RowsAreCompleteUniqueAndDefaultsParse)
{
    std::map<std::string, int> names, options;
    for (size_t i = 0; i < adt_config_var_count; i++) {
        const adt_config_var &var = adt_config_vars[i];
        SCOPED_TRACE(var.name);
        EXPECT_EQ(std::string(var.name).rfind("ADAPTRACE_", 0), 0u);
        EXPECT_STRNE(var.option, "");
        EXPECT_EQ(std::string(var.option).find_first_not_of("abcdefghijklmnopqrstuvwxyz-"), std::string::npos);
        EXPECT_STRNE(var.accepted, "");
        EXPECT_STRNE(var.help, "");
        ASSERT_NE(var.parse, nullptr);
        adt_config config{};
        char error[512] = "";
        EXPECT_EQ(adt_config_set(&config, &var, var.default_value, error, sizeof error), 0) << error;
        EXPECT_EQ(adt_config_find(var.name), &var);
        EXPECT_EQ(adt_config_find_option(var.option), &var);
        names[var.name]++;
        options[var.option]++;
    }
    EXPECT_EQ(names.size(), adt_config_var_count);
    EXPECT_EQ(options.size(), adt_config_var_count);
    EXPECT_EQ(adt_config_find("ADAPTRACE_NOPE"), nullptr);
    EXPECT_EQ(adt_config_find_option("nope"), nullptr);
}

TEST(ConfigSet, FailureLeavesTheFieldAlone)
{
    adt_config config;
    adt_config_defaults(&config);
    char error[512] = "";
    ASSERT_EQ(adt_config_set(&config, adt_config_find("ADAPTRACE_SAMPLING_RATE"), "2k", error, sizeof error), 0);
    EXPECT_EQ(config.sampling_rate_hz, 2000u);
    EXPECT_EQ(adt_config_set(&config, adt_config_find("ADAPTRACE_SAMPLING_RATE"), "2x", error, sizeof error), -1);
    EXPECT_EQ(config.sampling_rate_hz, 2000u);
    EXPECT_EQ(adt_config_set(&config, adt_config_find("ADAPTRACE_OUTPUT"), nullptr, error, sizeof error), 0);
}

// docs/configuration.md must carry one table row per variable with its
// option and default, and no row for a variable the table lacks.
std::vector<std::string> table_cells(const std::string &row)
{
    std::vector<std::string> cells;
    std::stringstream stream(row);
    std::string cell;
    std::getline(stream, cell, '|');
    while (std::getline(stream, cell, '|')) {
        size_t first = cell.find_first_not_of(' ');
        size_t last = cell.find_last_not_of(' ');
        cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
    }
    return cells;
}

TEST(ConfigDocs, EveryVariableIsDocumented)
{
    std::ifstream file(ADAPTRACE_CONFIGURATION_DOC);
    ASSERT_TRUE(file) << ADAPTRACE_CONFIGURATION_DOC;
    std::map<std::string, std::vector<std::string>> rows;
    std::string line;
    while (std::getline(file, line)) {
        std::vector<std::string> cells = table_cells(line);
        if (line.rfind("| `ADAPTRACE_", 0) == 0 && cells.size() >= 3)
            rows[cells[0]] = cells;
    }
    for (size_t i = 0; i < adt_config_var_count; i++) {
        const adt_config_var &var = adt_config_vars[i];
        SCOPED_TRACE(var.name);
        auto row = rows.find(std::string("`") + var.name + "`");
        ASSERT_NE(row, rows.end()) << "no table row for " << var.name;
        EXPECT_EQ(row->second[1], std::string("`--") + var.option + "`");
        const std::string shown_default = var.default_value[0] != '\0' ? var.default_value : "\"\"";
        EXPECT_EQ(row->second[2], "`" + shown_default + "`");
        rows.erase(row);
    }
    for (const auto &[name, row] : rows)
        ADD_FAILURE() << "documented but not in adt_config_vars: " << name;
}

// The spill file's place is a setting of the table (empty: the runtime
// takes $TMPDIR, or /tmp), not a bare TMPDIR read.
TEST(ConfigLoad, SpillDirectoryIsASettingWithAnEmptyDefault)
{
    EXPECT_STREQ(load({}).config.spill_directory, "");
    LoadResult result = load({{"ADAPTRACE_SPILL_DIRECTORY", "/scratch/local spill"}});
    ASSERT_EQ(result.status, 0) << result.error;
    EXPECT_STREQ(result.config.spill_directory, "/scratch/local spill");
    ASSERT_NE(adt_config_find_option("spill-directory"), nullptr);
    EXPECT_STREQ(adt_config_find_option("spill-directory")->name, "ADAPTRACE_SPILL_DIRECTORY");
    LoadResult too_long = load({{"ADAPTRACE_SPILL_DIRECTORY", std::string(ADT_PATH_MAX, 'p')}});
    EXPECT_EQ(too_long.status, -1);
    EXPECT_NE(too_long.error.find("ADAPTRACE_SPILL_DIRECTORY='ppp"), std::string::npos) << too_long.error;
}

} // namespace
