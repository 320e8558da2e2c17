/*
 * Diagnostics on stderr. Each message leaves in one write(2) so that the
 * lines of many ranks sharing one terminal do not interleave mid-line.
 */
#include "core/core.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define ADT_LOG_PREFIX "adaptrace: "

int adt_write_all(int fd, const void *data, size_t bytes)
{
    const char *at = data;
    while (bytes > 0) {
        ssize_t written = write(fd, at, bytes);
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0) {
            if (written == 0)
                errno = EIO;
            return -1;
        }
        at += written;
        bytes -= (size_t)written;
    }
    return 0;
}

static void write_line(const char *line, size_t length)
{
    adt_write_all(STDERR_FILENO, line, length);
}

void adt_log(const char *format, ...)
{
    char line[ADT_LOG_LINE_MAX];
    int saved_errno = errno;
    size_t prefix = sizeof ADT_LOG_PREFIX - 1;
    memcpy(line, ADT_LOG_PREFIX, prefix);
    va_list args;
    va_start(args, format);
    int formatted = vsnprintf(line + prefix, sizeof line - prefix - 1, format, args);
    va_end(args);
    size_t length = prefix;
    if (formatted > 0)
        length += (size_t)formatted < sizeof line - prefix - 1 ? (size_t)formatted : sizeof line - prefix - 2;
    line[length++] = '\n';
    write_line(line, length);
    errno = saved_errno;
}

/* Async-signal-safe: no stdio, no allocation, only write(2). */
void adt_log_signal_safe(const char *message)
{
    char line[256];
    int saved_errno = errno;
    size_t length = sizeof ADT_LOG_PREFIX - 1;
    memcpy(line, ADT_LOG_PREFIX, length);
    for (const char *p = message; *p != '\0' && length < sizeof line - 1; p++)
        line[length++] = *p;
    line[length++] = '\n';
    write_line(line, length);
    errno = saved_errno;
}
