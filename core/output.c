/*
 * ADAPTRACE_OUTPUT checked at start-up: what the end of the run would find
 * wrong with the path (it exists, its parent is missing or not writable)
 * is already known before the program starts, so it is said then rather
 * than after the whole run. And the removal of an output tree that must
 * not stay (normal context).
 */
#include "core/core.h"

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int refuse(char *error, size_t error_size, const char *output, int error_number, const char *format, ...)
    __attribute__((format(printf, 5, 6)));

/* "ADAPTRACE_OUTPUT='<output>': <cause> (<errno text>)" into error. */
static int refuse(char *error, size_t error_size, const char *output, int error_number, const char *format, ...)
{
    char cause[2 * ADT_PATH_MAX];
    va_list args;
    va_start(args, format);
    vsnprintf(cause, sizeof cause, format, args);
    va_end(args);
    snprintf(error, error_size, "ADAPTRACE_OUTPUT='%s': %s (%s)", output, cause, strerror(error_number));
    return -1;
}

/* The directory path would be created in: "." for a bare name, "/" for a
 * name right under the root; trailing slashes of either are ignored. */
static void parent_directory(const char *path, char parent[ADT_PATH_MAX])
{
    size_t length = strlen(path);
    while (length > 1 && path[length - 1] == '/')
        length--;
    while (length > 0 && path[length - 1] != '/')
        length--;
    while (length > 1 && path[length - 1] == '/')
        length--;
    if (length == 0)
        snprintf(parent, ADT_PATH_MAX, ".");
    else
        snprintf(parent, ADT_PATH_MAX, "%.*s", (int)length, path);
}

int adt_config_check_output(const char *output, char *error, size_t error_size)
{
    if (output[0] == '\0')
        return 0;
    struct stat status;
    if (lstat(output, &status) == 0)
        return refuse(error, error_size, output, EEXIST,
                      "the path exists already, and a trace is never written over an existing path");
    if (errno != ENOENT && errno != ENOTDIR)
        return refuse(error, error_size, output, errno, "the path cannot be looked up");
    /* The rescue files of an earlier run with this path (runtime/rescue.h)
     * would mix with this run's, and its recovery would write here. */
    size_t length = strlen(output);
    while (length > 1 && output[length - 1] == '/')
        length--;
    char rescue[ADT_PATH_MAX + 16];
    snprintf(rescue, sizeof rescue, "%.*s.rescue", (int)length, output);
    if (lstat(rescue, &status) == 0)
        return refuse(error, error_size, output, EEXIST,
                      "'%s' holds the saved data of an earlier run with this path: make its archive with "
                      "adaptrace-recover %.*s, or remove it",
                      rescue, (int)length, output);
    char parent[ADT_PATH_MAX];
    parent_directory(output, parent);
    if (stat(parent, &status) != 0)
        return refuse(error, error_size, output, errno,
                      errno == ENOENT ? "its parent directory '%s' does not exist"
                                      : "its parent directory '%s' cannot be looked up",
                      parent);
    if (!S_ISDIR(status.st_mode))
        return refuse(error, error_size, output, ENOTDIR, "its parent '%s' is not a directory", parent);
    /* The archive is created as a temporary sibling in the parent and
     * renamed there at the end: both need write and search permission. */
    if (access(parent, W_OK | X_OK) != 0)
        return refuse(error, error_size, output, errno, "no entry can be created in its parent directory '%s'",
                      parent);
    return 0;
}

static int remove_entry(const char *path, const struct stat *status, int type, struct FTW *walk)
{
    (void)status, (void)type, (void)walk;
    return remove(path);
}

void adt_remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
