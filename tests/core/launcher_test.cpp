// The adaptrace launcher, run as a child process from a temporary prefix
// (prefix/bin/adaptrace, prefix/lib/libadaptrace.so = a probe library).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "../scratch_directory.hpp"

namespace fs = std::filesystem;

namespace {

struct RunResult {
    int exit_code;
    std::string out;
    std::string err;
};

std::string read_file(const fs::path &path)
{
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

class Launcher : public ::testing::Test {
protected:
    void SetUp() override
    {
        ASSERT_FALSE(scratch_.path().empty());
        prefix_ = scratch_.path();
        fs::create_directories(prefix_ / "bin");
        fs::create_directories(prefix_ / "lib");
        fs::copy_file(ADAPTRACE_LAUNCHER, launcher());
        fs::copy_file(ADAPTRACE_PRELOAD_PROBE, library());
    }

    fs::path launcher() const { return prefix_ / "bin" / "adaptrace"; }
    fs::path library() const { return prefix_ / "lib" / "libadaptrace.so"; }
    fs::path probe_file() const { return prefix_ / "probe.txt"; }

    // Runs the launcher with arguments in an environment of PATH, the probe
    // file and extra; stdout and stderr go through files.
    RunResult run(const std::vector<std::string> &arguments, const std::map<std::string, std::string> &extra = {})
    {
        // verify_asan_link_order=0: in the sanitizer build the launcher is
        // instrumented, and ASan refuses to start under a preexisting
        // LD_PRELOAD that does not name its runtime first.
        std::map<std::string, std::string> settings = {{"PATH", getenv("PATH")},
                                                       {"ADT_TEST_PROBE_FILE", probe_file().string()},
                                                       {"ASAN_OPTIONS", "verify_asan_link_order=0"}};
        for (const auto &[name, value] : extra)
            settings[name] = value;
        std::vector<std::string> environment;
        for (const auto &[name, value] : settings)
            environment.push_back(name + "=" + value);
        std::vector<std::string> argv_strings = {launcher().string()};
        argv_strings.insert(argv_strings.end(), arguments.begin(), arguments.end());
        std::vector<char *> argv, envp;
        for (auto &text : argv_strings)
            argv.push_back(text.data());
        argv.push_back(nullptr);
        for (auto &text : environment)
            envp.push_back(text.data());
        envp.push_back(nullptr);

        const fs::path out = prefix_ / "stdout.txt", err = prefix_ / "stderr.txt";
        pid_t child = fork();
        if (child == 0) {
            int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            dup2(out_fd, STDOUT_FILENO);
            dup2(err_fd, STDERR_FILENO);
            execve(argv[0], argv.data(), envp.data());
            _exit(126);
        }
        int status = 0;
        EXPECT_EQ(waitpid(child, &status, 0), child);
        EXPECT_TRUE(WIFEXITED(status));
        return RunResult{WEXITSTATUS(status), read_file(out), read_file(err)};
    }

    std::map<std::string, std::string> run_env(const std::vector<std::string> &arguments,
                                               const std::map<std::string, std::string> &extra = {})
    {
        std::vector<std::string> with_program = arguments;
        with_program.push_back("env");
        RunResult result = run(with_program, extra);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        EXPECT_EQ(result.err, "");
        std::map<std::string, std::string> variables;
        std::stringstream lines(result.out);
        std::string line;
        while (std::getline(lines, line)) {
            size_t equals = line.find('=');
            if (equals != std::string::npos)
                variables[line.substr(0, equals)] = line.substr(equals + 1);
        }
        return variables;
    }

    ScratchDirectory scratch_{"adaptrace-launcher"};
    fs::path prefix_;
};

void expect_one_error_line(const RunResult &result, int exit_code, const std::string &piece)
{
    EXPECT_EQ(result.exit_code, exit_code) << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err.rfind("adaptrace: ", 0), 0u) << result.err;
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
    EXPECT_NE(result.err.find(piece), std::string::npos) << result.err;
}

TEST_F(Launcher, HelpListsEveryVariableWithOptionDefaultAndHelp)
{
    RunResult result = run({"--help"});
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.out.rfind("usage: adaptrace [options] PROGRAM [ARGS...]", 0), 0u);
    for (size_t i = 0; i < adt_config_var_count; i++) {
        const adt_config_var &var = adt_config_vars[i];
        SCOPED_TRACE(var.name);
        EXPECT_NE(result.out.find(std::string("--") + var.option + " VALUE"), std::string::npos);
        const std::string shown_default = var.default_value[0] != '\0' ? var.default_value : "\"\"";
        EXPECT_NE(result.out.find(std::string(var.name) + " (default: " + shown_default + ")"), std::string::npos);
        EXPECT_NE(result.out.find(var.help), std::string::npos);
        EXPECT_NE(result.out.find(std::string("accepted: ") + var.accepted), std::string::npos);
    }
}

TEST_F(Launcher, Version)
{
    RunResult result = run({"--version"});
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, std::string("adaptrace ") + ADAPTRACE_VERSION + "\n");
}

TEST_F(Launcher, UsageErrorsExitWithTwoBeforeRunningAnything)
{
    expect_one_error_line(run({}), 2, "no program given");
    expect_one_error_line(run({"--buffer-size", "64M"}), 2, "no program given");
    expect_one_error_line(run({"--bogus", "1", "env"}), 2, "unknown option '--bogus'");
    expect_one_error_line(run({"--bogus=1", "env"}), 2, "unknown option '--bogus'");
    expect_one_error_line(run({"-h"}), 2, "unknown option '-h'");
    expect_one_error_line(run({"--buffer-size"}), 2, "option '--buffer-size' needs a value");
    expect_one_error_line(run({"--buffer-size", "64Q", "env"}), 2,
                          "--buffer-size: ADAPTRACE_BUFFER_SIZE='64Q': unknown suffix 'Q' (accepted: ");
    expect_one_error_line(run({"--sampling-rate=", "env"}), 2, "ADAPTRACE_SAMPLING_RATE='': empty value");
    expect_one_error_line(run({"--sampling=maybe", "env"}), 2, "ADAPTRACE_SAMPLING='maybe': not a boolean");
    expect_one_error_line(run({"--sampling-signal", "SIGKILL", "env"}), 2, "SIGKILL (9) cannot be used");
    expect_one_error_line(run({"--buffer-size", "32K", "env"}), 2, "below the minimum");
    EXPECT_FALSE(fs::exists(probe_file()));
}

TEST_F(Launcher, InheritedBadVariableIsCaughtBeforeExec)
{
    expect_one_error_line(run({"env"}, {{"ADAPTRACE_SAMPLING_RATE", "fast"}}), 2,
                          "ADAPTRACE_SAMPLING_RATE='fast': not a number (accepted: ");
    EXPECT_FALSE(fs::exists(probe_file()));
}

TEST_F(Launcher, OptionOverridesInheritedBadVariable)
{
    auto variables = run_env({"--sampling-rate", "2k"}, {{"ADAPTRACE_SAMPLING_RATE", "fast"}});
    EXPECT_EQ(variables["ADAPTRACE_SAMPLING_RATE"], "2k");
}

TEST_F(Launcher, ExecsProgramWithVariablesAndPreload)
{
    auto variables = run_env({"--buffer-size", "2G", "--sampling-rate=500Hz", "--output", "/tmp/x y",
                              "--metrics=", "--on-full", "stop"},
                             {{"ADAPTRACE_QUIET", "on"}});
    EXPECT_EQ(variables["LD_PRELOAD"], fs::canonical(library()).string());
    EXPECT_EQ(variables["ADAPTRACE_BUFFER_SIZE"], "2G");
    EXPECT_EQ(variables["ADAPTRACE_SAMPLING_RATE"], "500Hz");
    EXPECT_EQ(variables["ADAPTRACE_OUTPUT"], "/tmp/x y");
    EXPECT_EQ(variables.count("ADAPTRACE_METRICS"), 1u);
    EXPECT_EQ(variables["ADAPTRACE_METRICS"], "");
    EXPECT_EQ(variables["ADAPTRACE_ON_FULL"], "stop");
    EXPECT_EQ(variables["ADAPTRACE_QUIET"], "on");
    EXPECT_EQ(variables.count("ADAPTRACE_SAMPLING"), 0u);
    EXPECT_EQ(read_file(probe_file()), "loaded\n");
}

TEST_F(Launcher, KeepsExistingPreloadEntriesAfterTheLibrary)
{
    const fs::path other = prefix_ / "libother.so";
    fs::copy_file(ADAPTRACE_PRELOAD_PROBE, other);
    auto variables = run_env({}, {{"LD_PRELOAD", other.string()}});
    EXPECT_EQ(variables["LD_PRELOAD"], fs::canonical(library()).string() + ":" + other.string());
    // libother.so is loaded into the launcher too (it inherits LD_PRELOAD),
    // then both libraries into env.
    EXPECT_EQ(read_file(probe_file()), "loaded\nloaded\nloaded\n");
}

// --stack (issue #24): the tools right behind the library, ahead of what
// LD_PRELOAD held, so that each wrapper's next definition is the first tool's.
TEST_F(Launcher, StacksToolsRightBehindTheLibrary)
{
    const fs::path tool = prefix_ / "libtool.so", other = prefix_ / "libother.so";
    fs::copy_file(ADAPTRACE_PRELOAD_PROBE, tool);
    fs::copy_file(ADAPTRACE_PRELOAD_PROBE, other);
    auto variables = run_env({"--stack", tool.string() + ":libm.so.6"}, {{"LD_PRELOAD", other.string()}});
    EXPECT_EQ(variables["LD_PRELOAD"],
              fs::canonical(library()).string() + ":" + tool.string() + ":libm.so.6:" + other.string());
    EXPECT_EQ(variables["ADAPTRACE_STACK"], tool.string() + ":libm.so.6");
    variables = run_env({}, {{"ADAPTRACE_STACK", tool.string()}});
    EXPECT_EQ(variables["LD_PRELOAD"], fs::canonical(library()).string() + ":" + tool.string());
}

TEST_F(Launcher, RefusesAStackedToolThatIsNotThere)
{
    expect_one_error_line(run({"--stack", "/nonexistent/libtool.so", "env"}), 2,
                          "ADAPTRACE_STACK: cannot read the tool library /nonexistent/libtool.so");
    expect_one_error_line(run({"--stack", "a.so::b.so", "env"}), 2, "an empty entry");
    expect_one_error_line(run({"--stack", "a.so b.so", "env"}), 2, "a blank");
}

TEST_F(Launcher, DoesNotPreloadTheLibraryTwice)
{
    const std::string preload = "/lib/x86_64-linux-gnu/libm.so.6 " + fs::canonical(library()).string();
    auto variables = run_env({}, {{"LD_PRELOAD", preload}});
    EXPECT_EQ(variables["LD_PRELOAD"], preload);
}

TEST_F(Launcher, PassesProgramArgumentsUntouched)
{
    RunResult result = run({"--quiet", "on", "echo", "--buffer-size", "64Q", "--", "-x"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "--buffer-size 64Q -- -x\n");
}

TEST_F(Launcher, DoubleDashEndsOptions)
{
    const fs::path script = prefix_ / "script";
    std::ofstream(script) << "#!/bin/sh\necho \"script $*\"\n";
    fs::permissions(script, fs::perms::owner_all);
    RunResult result = run({"--unwind-depth=8", "--", script.string(), "--sampling", "x"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "script --sampling x\n");
    expect_one_error_line(run({"--", "--help"}), 127, "cannot execute '--help'");
}

TEST_F(Launcher, ProgramThatCannotBeExecutedExitsWith127)
{
    expect_one_error_line(run({"/nonexistent/program", "arg"}), 127,
                          "cannot execute '/nonexistent/program': No such file or directory");
    expect_one_error_line(run({"no-such-program-adaptrace"}), 127, "cannot execute 'no-such-program-adaptrace'");
}

// A static executable never runs the dynamic loader, so LD_PRELOAD cannot
// reach it: it would run unmeasured. The launcher says so and does not run
// it (also when found through PATH); a dynamic one and a script still run.
TEST_F(Launcher, StaticExecutableIsRefusedWithTheReason)
{
    const std::string reason = "is statically linked: the measurement library cannot be preloaded into it";
    expect_one_error_line(run({ADAPTRACE_STATIC_PROGRAM}), 126, std::string("'") + ADAPTRACE_STATIC_PROGRAM + "' " + reason);
    fs::create_directories(prefix_ / "path");
    fs::copy_file(ADAPTRACE_STATIC_PROGRAM, prefix_ / "path" / "static-program");
    const std::string path = (prefix_ / "path").string() + ":" + getenv("PATH");
    expect_one_error_line(run({"static-program"}, {{"PATH", path}}), 126, "'static-program' " + reason);
    EXPECT_FALSE(fs::exists(probe_file()));
}

TEST_F(Launcher, MissingLibraryIsNamed)
{
    fs::remove(library());
    expect_one_error_line(run({"env"}), 127, "cannot find the measurement library " + (prefix_ / "bin").string() +
                                                 "/../lib/libadaptrace.so");
}

} // namespace
