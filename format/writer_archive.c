/*
 * The end-of-run writer's archive directory: its default name, the
 * temporary directory it is written in, the bytes this rank's files hold,
 * and the rename that publishes it. End of run (the name: start-up),
 * normal context.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format/writer_internal.h"

/* Messages are cut at the size of their buffer (paths can be long). */
static void format_message(char *out, size_t size, const char *format, ...) __attribute__((format(printf, 3, 4)));
static void format_message(char *out, size_t size, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(out, size, format, args);
    va_end(args);
}

/* ---- archive directory ------------------------------------------------------- */

/* Whether dir is a directory that holds nothing but live/, the live
 * report of an online run's analyzers (adopt_live_directory). */
static bool holds_only_live(const char *dir)
{
    DIR *stream = opendir(dir);
    if (stream == NULL)
        return false;
    bool only_live = true;
    for (struct dirent *entry = readdir(stream); entry != NULL && only_live; entry = readdir(stream))
        only_live = strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0 ||
                    strcmp(entry->d_name, "live") == 0;
    closedir(stream);
    return only_live;
}

/* Rank 0 checks archive_dir and creates the temporary directory; every rank
 * learns its name (or that it failed, with rank 0's message). */
int adt_writer_prepare_directory(writer *w)
{
    const adt_collectives *c = w->collectives;
    const char *dir = w->input->archive_dir;
    struct {
        uint64_t ok;
        char temp_dir[sizeof w->temp_dir];
        char error[sizeof w->result->error];
    } message = { 0 };
    if (c->rank == 0) {
        struct stat st;
        if (!dir || !dir[0] || strlen(dir) >= ADT_PATH_MAX)
            format_message(message.error, sizeof message.error,
                     "writing trace: archive directory '%s' is not a path (accepted: a non-empty path shorter than %d bytes)",
                     dir ? dir : "(null)", ADT_PATH_MAX);
        else if (lstat(dir, &st) == 0 && !(S_ISDIR(st.st_mode) && holds_only_live(dir)))
            format_message(message.error, sizeof message.error,
                     "writing trace %s: the path exists already (an archive is never written over an existing path)", dir);
        else {
            snprintf(message.temp_dir, sizeof message.temp_dir, "%s" TEMP_SUFFIX, dir);
            if (!mkdtemp(message.temp_dir))
                format_message(message.error, sizeof message.error,
                         "writing trace %s: cannot create the temporary directory %s: %s", dir,
                         message.temp_dir, strerror(errno));
            else {
                /* mkdtemp creates mode 0700; give the archive the usual mode */
                mode_t mask = umask(0);
                umask(mask);
                chmod(message.temp_dir, 0777 & ~mask);
                message.ok = 1;
            }
        }
    }
    if (c->bcast(c->context, &message, sizeof message, 0) != 0) {
        adt_writer_error(w, "writing trace %s: broadcasting the temporary directory name failed", dir);
        return -1;
    }
    if (!message.ok) {
        adt_writer_error(w, "%s", message.error);
        return -1;
    }
    memcpy(w->temp_dir, message.temp_dir, sizeof w->temp_dir);
    return 0;
}

static uint64_t file_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

uint64_t adt_writer_bytes_of_rank(const writer *w)
{
    char path[sizeof w->temp_dir + 64];
    uint64_t total = 0;
    for (size_t i = 0; i < w->input->thread_count; ++i) {
        uint64_t id = adt_writer_location_id(w->collectives->rank, w->input->threads[i].thread_index);
        static const char *const suffixes[] = { "evt", "def" };
        for (int s = 0; s < 2; ++s) {
            snprintf(path, sizeof path, "%s/" ARCHIVE_NAME "/%llu.%s", w->temp_dir,
                     (unsigned long long)id, suffixes[s]);
            total += file_bytes(path);
        }
    }
    if (w->collectives->rank == 0) {
        snprintf(path, sizeof path, "%s/" ARCHIVE_NAME ".otf2", w->temp_dir);
        total += file_bytes(path);
        snprintf(path, sizeof path, "%s/" ARCHIVE_NAME ".def", w->temp_dir);
        total += file_bytes(path);
    }
    return total;
}

/* The analysis processes of an online run (online/, issue #28) write
 * <archive>/live/ while the run goes on, before the archive exists; they
 * have finished with it when the ranks write. Its live/ moves into the
 * finished archive, and the directory that held it goes, so the rename
 * below finds the name free. A directory holding anything else stays, and
 * the rename refuses it as before. */
static void adopt_live_directory(const writer *w)
{
    char live[ADT_PATH_MAX + sizeof "/live"], adopted[sizeof w->temp_dir + sizeof "/live"];
    snprintf(live, sizeof live, "%s/live", w->input->archive_dir);
    snprintf(adopted, sizeof adopted, "%s/live", w->temp_dir);
    if (renameat2(AT_FDCWD, live, AT_FDCWD, adopted, RENAME_NOREPLACE) == 0)
        rmdir(w->input->archive_dir);
}

/* Rank 0 renames the finished archive into place; never over an entry that
 * appeared in the meantime (RENAME_NOREPLACE). */
int adt_writer_publish(writer *w)
{
    const adt_collectives *c = w->collectives;
    struct {
        uint64_t ok;
        char error[sizeof w->result->error];
    } message = { 0 };
    if (c->rank == 0) {
        adopt_live_directory(w);
        if (renameat2(AT_FDCWD, w->temp_dir, AT_FDCWD, w->input->archive_dir, RENAME_NOREPLACE) == 0)
            message.ok = 1;
        else
            format_message(message.error, sizeof message.error, "writing trace %s: cannot rename %s to it: %s",
                     w->input->archive_dir, w->temp_dir, strerror(errno));
    }
    if (c->bcast(c->context, &message, sizeof message, 0) != 0) {
        adt_writer_error(w, "writing trace %s: broadcasting the result of the rename failed", w->input->archive_dir);
        return -1;
    }
    if (!message.ok) {
        adt_writer_error(w, "%s", message.error);
        return -1;
    }
    return 0;
}

void adt_archive_default_name(char *name, size_t size)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm local;
    localtime_r(&now, &local);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
    snprintf(name, size, "adaptrace-%s-%lld", stamp, (long long)getpid());
    struct stat existing;
    for (unsigned attempt = 2; stat(name, &existing) == 0; attempt++)
        snprintf(name, size, "adaptrace-%s-%lld-%u", stamp, (long long)getpid(), attempt);
}
