/* libFuzzer target of adaptrace-report's reader (report/read.c and what
 * it calls): a real archive (tests/fuzz/seeds/report, a 2-rank sampled run
 * of the demo), damaged as the input says, read with adt_report_read.
 *
 * The input is a recipe of damage rather than a file: damage to a real
 * archive is what users meet (a copy cut short, a lost block, a flipped
 * byte), and a recipe reaches every file of the archive, their sizes and
 * their agreement with each other. Byte 0: bit 0 set reads with salvage.
 * Then edits of 7 bytes each: the file (its index among the archive's
 * files, modulo their number), the kind (modulo 3: set the byte at the
 * offset to the value, cut the file at the offset, add the value to the
 * byte at the offset), the offset (4 bytes, little-endian, modulo the
 * file's size + 1) and the value. Each run writes the damaged files into a
 * copy of the archive of its own and puts them back afterwards.
 *
 * A run must end (libFuzzer's -timeout), within -rss_limit_mb, without a
 * sanitizer report; a damaged archive is either read or refused with one
 * line. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/report.h"

enum { MAX_FILES = 16, EDIT_BYTES = 7 };

struct archive_file {
    char path[4096];
    unsigned char *original;
    size_t size;
    unsigned char *damaged;
    size_t damaged_size;
    bool touched;
};

static char work_dir[] = "/tmp/adt-fuzz-report-XXXXXX";
static struct archive_file files[MAX_FILES];
static size_t file_count;

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *in = fopen(path, "rb");
    if (in == NULL) {
        return NULL;
    }
    fseek(in, 0, SEEK_END);
    *size = (size_t)ftell(in);
    rewind(in);
    unsigned char *bytes = malloc(*size + 1);
    if (fread(bytes, 1, *size, in) != *size) {
        free(bytes);
        bytes = NULL;
    }
    fclose(in);
    return bytes;
}

static void spill(const char *path, const unsigned char *bytes, size_t size)
{
    FILE *out = fopen(path, "wb");
    if (out == NULL || fwrite(bytes, 1, size, out) != size || fclose(out) != 0) {
        fprintf(stderr, "report_fuzz: cannot write %s\n", path);
        abort();
    }
}

/* Copies the seed archive's file relative (to the seed directory) into
 * the work copy and keeps its bytes. */
static void add_file(const char *seed, const char *relative)
{
    char from[4096];
    snprintf(from, sizeof from, "%s/%s", seed, relative);
    struct archive_file *file = &files[file_count];
    file->original = slurp(from, &file->size);
    if (file->original == NULL || file_count + 1 == MAX_FILES) {
        fprintf(stderr, "report_fuzz: cannot read %s (or too many files)\n", from);
        abort();
    }
    snprintf(file->path, sizeof file->path, "%s/%s", work_dir, relative);
    file->damaged = malloc(file->size + 1);
    spill(file->path, file->original, file->size);
    file_count++;
}

static void remove_work_dir(void)
{
    for (size_t i = 0; i < file_count; i++) {
        unlink(files[i].path);
    }
    char traces[sizeof work_dir + 16];
    snprintf(traces, sizeof traces, "%s/traces", work_dir);
    rmdir(traces);
    rmdir(work_dir);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *seed = getenv("ADT_FUZZ_REPORT_SEED") ? getenv("ADT_FUZZ_REPORT_SEED") : ADT_FUZZ_REPORT_SEED_DIR;
    char traces[4096], subdir[sizeof work_dir + 16];
    snprintf(traces, sizeof traces, "%s/traces", seed);
    DIR *dir = opendir(traces);
    if (mkdtemp(work_dir) == NULL || dir == NULL) {
        fprintf(stderr, "report_fuzz: no seed archive at %s\n", seed);
        abort();
    }
    snprintf(subdir, sizeof subdir, "%s/traces", work_dir);
    mkdir(subdir, 0700);
    atexit(remove_work_dir);
    add_file(seed, "traces.otf2");
    add_file(seed, "traces.def");
    char *names[MAX_FILES];
    size_t name_count = 0;
    for (struct dirent *entry; (entry = readdir(dir)) != NULL && name_count < MAX_FILES - 2;) {
        if (entry->d_name[0] != '.') {
            names[name_count++] = strdup(entry->d_name);
        }
    }
    closedir(dir);
    qsort(names, name_count, sizeof *names, by_name);
    for (size_t i = 0; i < name_count; i++) {
        char relative[512];
        snprintf(relative, sizeof relative, "traces/%s", names[i]);
        add_file(seed, relative);
        free(names[i]);
    }
    return 0;
}

static void apply_edit(const uint8_t *edit)
{
    struct archive_file *file = &files[edit[0] % file_count];
    if (!file->touched) {
        memcpy(file->damaged, file->original, file->size);
        file->damaged_size = file->size;
        file->touched = true;
    }
    uint32_t offset = (uint32_t)edit[2] | (uint32_t)edit[3] << 8 | (uint32_t)edit[4] << 16 | (uint32_t)edit[5] << 24;
    offset %= (uint32_t)(file->damaged_size + 1);
    switch (edit[1] % 3) {
    case 0:
        if (offset < file->damaged_size) {
            file->damaged[offset] = edit[6];
        }
        break;
    case 1:
        file->damaged_size = offset;
        break;
    default:
        if (offset < file->damaged_size) {
            file->damaged[offset] = (unsigned char)(file->damaged[offset] + edit[6]);
        }
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    for (size_t at = 1; at + EDIT_BYTES <= size; at += EDIT_BYTES) {
        apply_edit(data + at);
    }
    for (size_t i = 0; i < file_count; i++) {
        if (files[i].touched) {
            spill(files[i].path, files[i].damaged, files[i].damaged_size);
        }
    }
    struct adt_report_error error;
    struct adt_report_profile *profile =
        adt_report_read(work_dir, &(struct adt_report_options){.salvage = data[0] & 1}, &error);
    /* A refusal names what is wrong: never an empty line. */
    if (profile == NULL && error.text[0] == '\0') {
        abort();
    }
    adt_report_free(profile);
    for (size_t i = 0; i < file_count; i++) {
        if (files[i].touched) {
            spill(files[i].path, files[i].original, files[i].size);
            files[i].touched = false;
        }
    }
    return 0;
}
