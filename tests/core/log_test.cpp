// adt_log and adt_log_signal_safe: prefix, one line, errno kept.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <unistd.h>

#include "capture_stderr.hpp"
#include "core/core.h"

namespace {

TEST(Log, PrefixesFormatsAndEndsTheLine)
{
    std::string text = capture_stderr([] { adt_log("cannot create '%s': %s", "/x/y", "No such file"); });
    EXPECT_EQ(text, "adaptrace: cannot create '/x/y': No such file\n");
}

TEST(Log, KeepsErrno)
{
    errno = ENOSPC;
    capture_stderr([] { adt_log("message %d", 1); });
    EXPECT_EQ(errno, ENOSPC);
    errno = EAGAIN;
    capture_stderr([] { adt_log_signal_safe("fixed"); });
    EXPECT_EQ(errno, EAGAIN);
}

TEST(Log, TruncatesLongMessagesToOneLine)
{
    const std::string long_text(5000, 'x');
    std::string text = capture_stderr([&] { adt_log("%s", long_text.c_str()); });
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.rfind("adaptrace: xxx", 0), 0u);
    EXPECT_EQ(text.back(), '\n');
    EXPECT_EQ(text.find('\n'), text.size() - 1);
    EXPECT_LT(text.size(), long_text.size());

    std::string safe = capture_stderr([&] { adt_log_signal_safe(long_text.c_str()); });
    EXPECT_EQ(safe.rfind("adaptrace: xxx", 0), 0u);
    EXPECT_EQ(safe.find('\n'), safe.size() - 1);
}

TEST(Log, SignalSafeWritesTheFixedMessage)
{
    std::string text = capture_stderr([] { adt_log_signal_safe("sample dropped"); });
    EXPECT_EQ(text, "adaptrace: sample dropped\n");
}

} // namespace
