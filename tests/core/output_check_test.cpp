// adt_config_check_output: what the end of the run would refuse about
// ADAPTRACE_OUTPUT, found before the run with the path and the cause.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "../scratch_directory.hpp"

namespace fs = std::filesystem;

namespace {

class OutputCheck : public ::testing::Test {
protected:
    void SetUp() override
    {
        root_ = scratch_.path();
        ASSERT_FALSE(root_.empty());
    }

    // The message, or "" when the path is accepted.
    std::string check(const std::string &output)
    {
        char error[3 * ADT_PATH_MAX] = "";
        int result = adt_config_check_output(output.c_str(), error, sizeof error);
        EXPECT_EQ(result == 0, error[0] == '\0') << error;
        return error;
    }

    ScratchDirectory scratch_{"adt-output-check"};
    std::string root_;
};

TEST_F(OutputCheck, TheDefaultAndANewPathInAnExistingDirectoryAreAccepted)
{
    EXPECT_EQ(check(""), "");
    EXPECT_EQ(check(root_ + "/trace"), "");
    EXPECT_EQ(check(root_ + "//trace/"), "");
    EXPECT_EQ(check("/"), "ADAPTRACE_OUTPUT='/': the path exists already, and a trace is never written over an "
                      "existing path (File exists)");
}

TEST_F(OutputCheck, ABareNameIsCreatedInTheWorkingDirectory)
{
    fs::path previous = fs::current_path();
    fs::current_path(root_);
    EXPECT_EQ(check("trace"), "");
    std::ofstream(root_ + "/taken") << "x";
    EXPECT_NE(check("taken").find("the path exists already"), std::string::npos);
    fs::current_path(previous);
}

TEST_F(OutputCheck, AnExistingPathIsRefusedWhateverItIs)
{
    fs::create_directory(root_ + "/directory");
    std::ofstream(root_ + "/file") << "x";
    fs::create_symlink(root_ + "/nowhere", root_ + "/dangling");
    for (const char *name : {"directory", "file", "dangling"}) {
        std::string output = root_ + "/" + name;
        EXPECT_EQ(check(output), "ADAPTRACE_OUTPUT='" + output +
                                     "': the path exists already, and a trace is never written over an existing "
                                     "path (File exists)");
    }
}

// The rescue files of an earlier run that did not end cleanly (issue #10)
// would mix with this run's: the path is refused until they are recovered.
TEST_F(OutputCheck, TheRescueFilesOfAnEarlierRunAreNotMixedIn)
{
    std::string output = root_ + "/trace";
    fs::create_directory(output + ".rescue");
    EXPECT_EQ(check(output + "/"), "ADAPTRACE_OUTPUT='" + output + "/': '" + output +
                                       ".rescue' holds the saved data of an earlier run with this path: make its "
                                       "archive with adaptrace-recover " + output + ", or remove it (File exists)");
}

TEST_F(OutputCheck, AMissingParentIsNamed)
{
    std::string output = root_ + "/missing/deeper/trace";
    EXPECT_EQ(check(output), "ADAPTRACE_OUTPUT='" + output + "': its parent directory '" + root_ +
                                 "/missing/deeper' does not exist (No such file or directory)");
}

TEST_F(OutputCheck, AParentThatIsAFileIsNamed)
{
    std::ofstream(root_ + "/file") << "x";
    std::string output = root_ + "/file/trace";
    EXPECT_EQ(check(output), "ADAPTRACE_OUTPUT='" + output + "': its parent '" + root_ +
                                 "/file' is not a directory (Not a directory)");
    std::string deeper = root_ + "/file/sub/trace";
    EXPECT_EQ(check(deeper), "ADAPTRACE_OUTPUT='" + deeper + "': its parent directory '" + root_ +
                                 "/file/sub' cannot be looked up (Not a directory)");
}

TEST_F(OutputCheck, AParentWithoutWritePermissionIsNamed)
{
    if (geteuid() == 0)
        GTEST_SKIP() << "root creates entries whatever the permission bits say";
    fs::create_directory(root_ + "/read-only");
    fs::permissions(root_ + "/read-only", fs::perms::owner_read | fs::perms::owner_exec);
    std::string output = root_ + "/read-only/trace";
    EXPECT_EQ(check(output), "ADAPTRACE_OUTPUT='" + output + "': no entry can be created in its parent directory '" +
                                 root_ + "/read-only' (Permission denied)");
    fs::permissions(root_ + "/read-only", fs::perms::owner_all);
}

} // namespace
