/*
 * adaptrace-recover, step 1: reading the rescue files of <archive>.rescue
 * (rescue.h). Every complete file is mapped, its sections checked and
 * found, and placed at its world rank; a .partial file (a save the process
 * was killed in) is named, not used. A rank without a file stays "not
 * saved" (no header). Files of processes that ended before MPI_Init
 * (pid-*) are the ranks only when no file has a rank: a program without
 * MPI, its processes in pid order.
 *
 * Execution context: adaptrace-recover, a process of its own (no MPI, no
 * measurement); normal code.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recover_internal.h"

/* ---- 1. reading the files ---------------------------------------------- */

static int map_file(saved_process *process)
{
    int fd = open(process->path, O_RDONLY | O_CLOEXEC);
    struct stat status;
    if (fd < 0 || fstat(fd, &status) != 0) {
        fprintf(stderr, "adaptrace-recover: cannot read %s: %s\n", process->path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    process->file_bytes = (size_t)status.st_size;
    process->file = process->file_bytes > 0 ? mmap(NULL, process->file_bytes, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (process->file == MAP_FAILED || process->file == NULL) {
        process->file = NULL;
        fprintf(stderr, "adaptrace-recover: cannot map %s: %s\n", process->path, strerror(errno));
        return -1;
    }
    return 0;
}

static int bad_file(const saved_process *process, const char *why)
{
    fprintf(stderr, "adaptrace-recover: %s is not usable: %s\n", process->path, why);
    return -1;
}

static int read_sections(saved_process *process)
{
    const char *at = process->file;
    size_t left = process->file_bytes;
    if (left < sizeof(adt_rescue_header))
        return bad_file(process, "shorter than its header");
    process->header = (const adt_rescue_header *)at;
    if (process->header->magic != ADT_RESCUE_MAGIC)
        return bad_file(process, "not a rescue file of adaptrace");
    if (process->header->version != ADT_RESCUE_VERSION)
        return bad_file(process, "written by another version of adaptrace");
    at += sizeof(adt_rescue_header);
    left -= sizeof(adt_rescue_header);
    bool ended = false;
    while (!ended) {
        adt_rescue_section section;
        if (left < sizeof section)
            return bad_file(process, "cut short (the save did not finish)");
        memcpy(&section, at, sizeof section);
        at += sizeof section;
        left -= sizeof section;
        size_t padded = (size_t)((section.bytes + 7u) & ~(uint64_t)7u);
        if (section.bytes > left || padded > left)
            return bad_file(process, "cut short (the save did not finish)");
        switch ((adt_rescue_section_tag)section.tag) {
        case ADT_RESCUE_SECTION_DEFS:
            process->journal = at, process->journal_bytes = section.bytes;
            break;
        case ADT_RESCUE_SECTION_BUFFER:
            process->image = at, process->image_bytes = section.bytes;
            break;
        case ADT_RESCUE_SECTION_CONTEXTS:
            process->tree = at, process->tree_bytes = section.bytes;
            break;
        case ADT_RESCUE_SECTION_MAPS:
            process->maps = at, process->maps_bytes = section.bytes;
            break;
        case ADT_RESCUE_SECTION_COUNTERS:
            if (section.bytes != sizeof process->counters)
                return bad_file(process, "its counters have another layout");
            memcpy(&process->counters, at, sizeof process->counters);
            break;
        case ADT_RESCUE_SECTION_LOCATION_LINES:
            process->saved_lines = (const adt_location_summary *)at;
            process->saved_line_count = section.bytes / sizeof(adt_location_summary);
            break;
        case ADT_RESCUE_SECTION_END:
            ended = true;
            break;
        default:
            return bad_file(process, "a section of an unknown kind");
        }
        at += padded;
        left -= padded;
    }
    if (process->image == NULL || process->journal == NULL)
        return bad_file(process, "its buffer or definitions are missing");
    return 0;
}

static void note_cut_short(recovery *run, const char *path)
{
    const char *name = strrchr(path, '/');
    name = name != NULL ? name + 1 : path;
    size_t used = strlen(run->cut_short_names);
    snprintf(run->cut_short_names + used, sizeof run->cut_short_names - used, "%s%.*s", used ? ", " : "",
             (int)(strlen(name) - strlen(".partial")), name);
    run->cut_short++;
}

static int compare_pid(const void *a, const void *b)
{
    int32_t left = ((const saved_process *)a)->header->pid, right = ((const saved_process *)b)->header->pid;
    return (left > right) - (left < right);
}

int adt_recover_find_processes(recovery *run, const char *directory)
{
    char pattern[ADT_PATH_MAX + 64];
    snprintf(pattern, sizeof pattern, "%s/*.adtr.partial", directory);
    glob_t partial;
    if (glob(pattern, 0, NULL, &partial) == 0)
        for (size_t i = 0; i < partial.gl_pathc; i++)
            note_cut_short(run, partial.gl_pathv[i]);
    globfree(&partial);
    snprintf(pattern, sizeof pattern, "%s/*.adtr", directory);
    glob_t found;
    if (glob(pattern, 0, NULL, &found) != 0) {
        fprintf(stderr, "adaptrace-recover: %s holds no complete rescue file%s\n", directory,
                run->cut_short ? " (every save was cut short: the processes were killed while saving)" : "");
        return -1;
    }
    saved_process *loaded = calloc(found.gl_pathc, sizeof *loaded);
    size_t count = 0;
    uint32_t ranks = 0;
    bool any_rank = false;
    for (size_t i = 0; loaded != NULL && i < found.gl_pathc; i++) {
        saved_process *process = &loaded[count];
        snprintf(process->path, sizeof process->path, "%s", found.gl_pathv[i]);
        if (map_file(process) != 0 || read_sections(process) != 0) {
            if (process->file != NULL)
                munmap(process->file, process->file_bytes);
            memset(process, 0, sizeof *process);
            continue;
        }
        if (process->header->rank != ADT_RESCUE_NO_RANK) {
            any_rank = true;
            if (process->header->size > ranks)
                ranks = process->header->size;
        }
        count++;
    }
    globfree(&found);
    if (loaded == NULL || count == 0) {
        free(loaded);
        fprintf(stderr, "adaptrace-recover: no usable rescue file in %s\n", directory);
        return -1;
    }
    if (!any_rank) {
        /* A program without MPI (or ranks that all ended before MPI_Init):
         * its processes in pid order. */
        qsort(loaded, count, sizeof *loaded, compare_pid);
        ranks = (uint32_t)count;
    }
    run->processes = calloc(ranks, sizeof *run->processes);
    if (run->processes == NULL) {
        free(loaded);
        return -1;
    }
    run->ranks = ranks;
    for (size_t i = 0; i < count; i++) {
        saved_process *process = &loaded[i];
        uint32_t rank = any_rank ? process->header->rank : (uint32_t)i;
        if (rank == ADT_RESCUE_NO_RANK || rank >= ranks) {
            fprintf(stderr,
                    "adaptrace-recover: %s left out: its process (pid %d) ended before MPI_Init gave it a rank\n",
                    process->path, (int)process->header->pid);
            munmap(process->file, process->file_bytes);
            continue;
        }
        run->processes[rank] = *process;
        run->processes[rank].rank = rank;
    }
    free(loaded);
    for (uint32_t r = 0; r < ranks; r++)
        run->processes[r].rank = r;
    return 0;
}
