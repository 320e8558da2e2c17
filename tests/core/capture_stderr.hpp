// What a piece of code writes on stderr, for the tests of core's
// diagnostics.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <unistd.h>

// Runs body with stderr redirected into a pipe and returns what it wrote
// (at most a pipe's capacity, 64 KiB: body runs before anything is read).
template <typename Body>
std::string capture_stderr(Body body)
{
    int pipe_fds[2];
    EXPECT_EQ(pipe(pipe_fds), 0);
    int saved = dup(STDERR_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[1]);
    body();
    dup2(saved, STDERR_FILENO);
    close(saved);
    std::string text;
    char chunk[4096];
    ssize_t got;
    while ((got = read(pipe_fds[0], chunk, sizeof chunk)) > 0)
        text.append(chunk, static_cast<size_t>(got));
    close(pipe_fds[0]);
    return text;
}
