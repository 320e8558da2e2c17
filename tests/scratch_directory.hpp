// A fresh directory under /tmp for one test: removed with everything in
// it when the test passed, kept and named on stderr when it failed, so
// that a failure leaves its evidence. Used by the fixtures of the tests
// that run programs or write files.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

class ScratchDirectory {
public:
    // prefix: the directory's name before its random part, e.g. "adt-runtime-test".
    explicit ScratchDirectory(const std::string &prefix)
    {
        std::string pattern = "/tmp/" + prefix + "-XXXXXX";
        if (mkdtemp(pattern.data()) == nullptr)
            ADD_FAILURE() << "cannot create " << pattern;
        else
            path_ = pattern;
    }
    ScratchDirectory(const ScratchDirectory &) = delete;
    ScratchDirectory &operator=(const ScratchDirectory &) = delete;

    ~ScratchDirectory()
    {
        if (path_.empty())
            return;
        if (::testing::Test::HasFailure()) {
            std::fprintf(stderr, "kept %s for inspection\n", path_.c_str());
            return;
        }
        // A test may have taken its own permissions away to see a refusal.
        std::error_code ignored;
        std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ignored);
        std::filesystem::remove_all(path_, ignored);
    }

    const std::string &path() const { return path_; }

private:
    std::string path_;
};
