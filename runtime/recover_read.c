/*
 * adaptrace-recover, step 1: reading the rescue files of <archive>.rescue
 * (rescue.h). Every complete file is mapped, its header and sections
 * checked (their hashes, the header's values, its rank against the file's
 * name) and found, and placed at its world rank; the world size is the one
 * most files say, and a file that says another is left out. A file that
 * fails a check is left out with one line, its rank not saved. A .partial
 * file (a save the process was killed in) is named, not used. A rank without a file stays "not
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

int adt_recover_left_out(const saved_process *process, const char *why)
{
    fprintf(stderr, "adaptrace-recover: %s is not usable, left out: %s\n", process->path, why);
    return -1;
}

static bool has_nul(const char *text, size_t size)
{
    return memchr(text, '\0', size) != NULL;
}

/* What the file's name says: rank-<rank>.adtr or pid-<pid>.adtr, as the
 * save names it (rescue.c); false for any other name. */
static bool parse_name(const char *path, uint32_t *rank, int32_t *pid)
{
    const char *name = strrchr(path, '/');
    name = name != NULL ? name + 1 : path;
    bool ranked = strncmp(name, "rank-", 5) == 0;
    if (!ranked && strncmp(name, "pid-", 4) != 0)
        return false;
    const char *digits = name + (ranked ? 5 : 4);
    char *end;
    errno = 0;
    unsigned long long number = strtoull(digits, &end, 10);
    if (end == digits || *digits < '0' || *digits > '9' || errno != 0 || strcmp(end, ".adtr") != 0 ||
        number >= (ranked ? ADT_RESCUE_NO_RANK : (unsigned long long)INT32_MAX + 1))
        return false;
    *rank = ranked ? (uint32_t)number : ADT_RESCUE_NO_RANK;
    *pid = ranked ? 0 : (int32_t)number;
    return true;
}

/* The header on its own and against the file's name: NULL when sound,
 * else what is wrong. The world size is checked against the other files
 * later (agree_on_size). */
static const char *header_problem(const saved_process *process)
{
    const adt_rescue_header *header = process->header;
    if (header->magic != ADT_RESCUE_MAGIC)
        return "not a rescue file of adaptrace";
    if (header->version != ADT_RESCUE_VERSION)
        return "written by another version of adaptrace";
    adt_rescue_header copy;
    memcpy(&copy, header, sizeof copy);
    copy.check = 0;
    if (adt_rescue_hash(ADT_RESCUE_HASH_START, &copy, sizeof copy) != header->check)
        return "its header is damaged (its check does not match)";
    uint32_t named_rank;
    int32_t named_pid;
    if (!parse_name(process->path, &named_rank, &named_pid))
        return "its name is not rank-<rank>.adtr or pid-<pid>.adtr";
    if (header->rank != named_rank)
        return "its header names another rank than its file name";
    if (header->rank == ADT_RESCUE_NO_RANK && header->pid != named_pid)
        return "its header names another process than its file name";
    if (header->rank != ADT_RESCUE_NO_RANK ? header->rank >= header->size : header->size != 1)
        return "its header's rank does not fit its world size";
    if (header->kind < ADT_RESCUE_SIGNAL || header->kind > ADT_RESCUE_SNAPSHOT || header->sampling > 1 ||
        header->defs_complete > 1 || header->has_clock_offset > 1 || header->timer_resolution == 0 ||
        header->skeleton_saved >= ADT_SKELETON_SAVED_CAUSES || header->unused != 0 ||
        header->end_time < header->start_time || !has_nul(header->hostname, sizeof header->hostname) ||
        !has_nul(header->archive_dir, sizeof header->archive_dir))
        return "its header holds an impossible value";
    return NULL;
}

/* The skeleton's section: a head, function_count NUL-terminated names in
 * exactly names_bytes, then exactly part_bytes of part, or of the image
 * of the skeletons' share (image: an ending signal's save; rescue.h). NULL
 * when sound, else what is wrong; the part itself is checked when
 * skeleton.adts is written (adt_skeleton_file_write refuses a part that
 * does not parse). */
static const char *read_skeleton(saved_process *process, const char *at, uint64_t bytes, bool image)
{
    adt_rescue_skeleton_head head;
    if (bytes < sizeof head)
        return "its skeleton is shorter than its head";
    memcpy(&head, at, sizeof head);
    bytes -= sizeof head;
    at += sizeof head;
    if (head.function_count == 0 || head.names_bytes > bytes || head.part_bytes != bytes - head.names_bytes)
        return "its skeleton's lengths do not add up";
    uint32_t names = 0;
    for (uint32_t i = 0; i < head.names_bytes; i++)
        names += at[i] == '\0';
    if (names != head.function_count || at[head.names_bytes - 1] != '\0')
        return "its skeleton's function names do not match their count";
    process->skeleton_names = at;
    process->skeleton_function_count = head.function_count;
    process->skeleton_names_bytes = head.names_bytes;
    if (image) {
        process->skeleton_image = (const uint8_t *)at + head.names_bytes;
        process->skeleton_image_bytes = (size_t)head.part_bytes;
    } else {
        process->skeleton_part = (const uint8_t *)at + head.names_bytes;
        process->skeleton_part_bytes = (size_t)head.part_bytes;
    }
    return NULL;
}

static int read_sections(saved_process *process)
{
    const char *at = process->file;
    size_t left = process->file_bytes;
    if (left < sizeof(adt_rescue_header))
        return adt_recover_left_out(process, "shorter than its header");
    process->header = (const adt_rescue_header *)at;
    const char *problem = header_problem(process);
    if (problem != NULL)
        return adt_recover_left_out(process, problem);
    at += sizeof(adt_rescue_header);
    left -= sizeof(adt_rescue_header);
    bool ended = false;
    while (!ended) {
        adt_rescue_section section;
        if (left < sizeof section)
            return adt_recover_left_out(process, "cut short (the save did not finish)");
        memcpy(&section, at, sizeof section);
        at += sizeof section;
        left -= sizeof section;
        if (section.bytes > left || ((section.bytes + 7u) & ~(uint64_t)7u) > left)
            return adt_recover_left_out(process, "cut short, or a section's length is damaged");
        size_t padded = (size_t)((section.bytes + 7u) & ~(uint64_t)7u);
        uint64_t content = ADT_RESCUE_HASH_START;
        if (adt_rescue_section_hashed(section.tag))
            content = adt_rescue_hash(content, at, section.bytes);
        bool checked = section.check == adt_rescue_section_check(section.tag, section.bytes, content);
        /* The skeleton's image alone is left out when damaged (rescue.h):
         * its framing held, the rest of the file is read on. */
        if (!checked && section.tag == ADT_RESCUE_SECTION_SKELETON_IMAGE) {
            process->skeleton_damage = "its check does not match";
            at += padded;
            left -= padded;
            continue;
        }
        if (!checked)
            return adt_recover_left_out(process, "a section is damaged (its check does not match)");
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
        case ADT_RESCUE_SECTION_UNDELIVERED:
            process->undelivered = at, process->undelivered_bytes = section.bytes;
            break;
        case ADT_RESCUE_SECTION_COUNTERS:
            if (section.bytes != sizeof process->counters)
                return adt_recover_left_out(process, "its counters have another layout");
            memcpy(&process->counters, at, sizeof process->counters);
            break;
        case ADT_RESCUE_SECTION_LOCATION_LINES:
            if (section.bytes % sizeof(adt_location_summary) != 0)
                return adt_recover_left_out(process, "its location lines have another layout");
            process->saved_lines = (const adt_location_summary *)at;
            process->saved_line_count = section.bytes / sizeof(adt_location_summary);
            break;
        case ADT_RESCUE_SECTION_SKELETON:
        case ADT_RESCUE_SECTION_SKELETON_IMAGE: {
            const char *skeleton_problem =
                read_skeleton(process, at, section.bytes, section.tag == ADT_RESCUE_SECTION_SKELETON_IMAGE);
            if (skeleton_problem != NULL)
                return adt_recover_left_out(process, skeleton_problem);
            break;
        }
        case ADT_RESCUE_SECTION_END:
            ended = true;
            break;
        default:
            return adt_recover_left_out(process, "a section of an unknown kind");
        }
        at += padded;
        left -= padded;
    }
    if (process->image == NULL || process->journal == NULL)
        return adt_recover_left_out(process, "its buffer or definitions are missing");
    bool skeleton_section = process->skeleton_part != NULL || process->skeleton_image != NULL ||
                            process->skeleton_damage != NULL;
    if ((process->header->skeleton_saved == ADT_SKELETON_SAVED) != skeleton_section ||
        (process->skeleton_part != NULL && process->skeleton_image != NULL))
        return adt_recover_left_out(process, "its header and its skeleton's section disagree");
    process->skeleton_saved = (adt_skeleton_saved)process->header->skeleton_saved;
    if (process->header->sampling && (process->tree == NULL || process->maps == NULL))
        return adt_recover_left_out(process, "its calling contexts or module list are missing");
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

static void unmap(saved_process *process)
{
    if (process->file != NULL)
        munmap(process->file, process->file_bytes);
    memset(process, 0, sizeof *process);
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t left = *(const uint32_t *)a, right = *(const uint32_t *)b;
    return (left > right) - (left < right);
}

/* The world size: the one most ranked files say (each file checks its
 * own header, so disagreeing files are few unless written by different
 * runs into one directory); on a tie the smallest, which holds fewer
 * ranks that were not saved. 0 when no file has a rank. */
static uint32_t agree_on_size(const saved_process *loaded, size_t count)
{
    uint32_t *sizes = malloc((count ? count : 1) * sizeof *sizes);
    size_t ranked = 0;
    for (size_t i = 0; sizes != NULL && i < count; i++)
        if (loaded[i].header->rank != ADT_RESCUE_NO_RANK)
            sizes[ranked++] = loaded[i].header->size;
    if (sizes == NULL || ranked == 0) {
        free(sizes);
        return 0;
    }
    qsort(sizes, ranked, sizeof *sizes, compare_u32);
    uint32_t best = sizes[0];
    size_t best_votes = 0;
    for (size_t i = 0; i < ranked;) {
        size_t j = i;
        while (j < ranked && sizes[j] == sizes[i])
            j++;
        if (j - i > best_votes)
            best = sizes[i], best_votes = j - i;
        i = j;
    }
    free(sizes);
    return best;
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
    for (size_t i = 0; loaded != NULL && i < found.gl_pathc; i++) {
        saved_process *process = &loaded[count];
        snprintf(process->path, sizeof process->path, "%s", found.gl_pathv[i]);
        if (map_file(process) != 0 || read_sections(process) != 0) {
            unmap(process);
            continue;
        }
        count++;
    }
    globfree(&found);
    uint32_t ranks = agree_on_size(loaded, count);
    bool any_rank = ranks > 0;
    /* A ranked file of another world size: its header, though its check
     * matches, cannot be of this run. */
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        const adt_rescue_header *header = loaded[i].header;
        if (any_rank && header->rank != ADT_RESCUE_NO_RANK && header->size != ranks) {
            fprintf(stderr,
                    "adaptrace-recover: %s is not usable, left out: its header says the world had %u ranks, "
                    "the other files %u\n",
                    loaded[i].path, header->size, ranks);
            unmap(&loaded[i]);
            continue;
        }
        loaded[kept++] = loaded[i];
    }
    count = kept;
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
        for (size_t i = 0; i < count; i++)
            unmap(&loaded[i]);
        free(loaded);
        fprintf(stderr, "adaptrace-recover: out of memory for %u ranks\n", ranks);
        return -1;
    }
    run->ranks = ranks;
    for (size_t i = 0; i < count; i++) {
        saved_process *process = &loaded[i];
        uint32_t rank = any_rank ? process->header->rank : (uint32_t)i;
        if (rank == ADT_RESCUE_NO_RANK) {
            fprintf(stderr,
                    "adaptrace-recover: %s left out: its process (pid %d) ended before MPI_Init gave it a rank\n",
                    process->path, (int)process->header->pid);
            unmap(process);
            continue;
        }
        /* rank < ranks: its header's rank is below its size (read_sections),
         * which is the agreed one; the name makes ranks unique. */
        run->processes[rank] = *process;
    }
    free(loaded);
    for (uint32_t r = 0; r < ranks; r++) {
        run->processes[r].rank = r;
        run->processes[r].spill_fd = -1;
    }
    return 0;
}
