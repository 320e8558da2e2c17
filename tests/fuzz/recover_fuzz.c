/* libFuzzer target of adaptrace-recover's readers (runtime/recover_read.c,
 * recover_rebuild.c and what they call: the definitions journal's replay,
 * the calling-context tree and module list, the buffer image): the input
 * is one rescue file, rank-0.adtr of a run of one rank, and the whole
 * recovery runs on it (adt_recover_run), the archive written included,
 * since the writer is the last judge of the records the readers let
 * through.
 *
 * Before the recovery the sections' checks are made to match their bytes
 * (rescue.h), the counters' excepted (below): otherwise nearly every input would stop at a check and the
 * readers behind it would never see damage (damage that a hash misses
 * reaches them as well). The header's check is left as the input has it:
 * a header that passes is trusted in its world size, and a world of N
 * ranks costs a thread and an OTF2 location each, a time the fuzzer would
 * report as a hang where nothing is wrong; recover_damaged.py checks the
 * header's values with its check made to match.
 *
 * The seed corpus (corpus/recover) is a real rescue file: the C endings
 * program (tests/mpi/endings.c) on one rank, sampled at 1 kHz with a
 * 16 MiB buffer (so that it folds: the file has a skeleton section, which
 * the recovery writes skeleton.adts from), ended without MPI_Finalize. A run must end (libFuzzer's
 * -timeout), within -rss_limit_mb, without a sanitizer report; a damaged
 * file is either recovered or left out with one line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/rescue.h"
#include "runtime/runtime_internal.h"

static char work_dir[] = "/tmp/adt-fuzz-recover-XXXXXX";
static char archive[sizeof work_dir + 16];
static char rescue_dir[sizeof archive + 16];
static char rescue_file[sizeof rescue_dir + 16];

static void remove_work_dir(void)
{
    adt_remove_tree(work_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    if (mkdtemp(work_dir) == NULL) {
        perror("recover_fuzz: mkdtemp");
        abort();
    }
    snprintf(archive, sizeof archive, "%s/archive", work_dir);
    snprintf(rescue_dir, sizeof rescue_dir, "%s%s", archive, ADT_RESCUE_SUFFIX);
    snprintf(rescue_file, sizeof rescue_file, "%s/rank-0.adtr", rescue_dir);
    atexit(remove_work_dir);
    return 0;
}

/* The checks of every section that lies whole in file, made to match. */
static void match_section_checks(uint8_t *file, size_t size)
{
    size_t at = sizeof(adt_rescue_header);
    while (at <= size && size - at >= sizeof(adt_rescue_section)) {
        adt_rescue_section section;
        memcpy(&section, file + at, sizeof section);
        at += sizeof section;
        if (section.bytes > size - at)
            return;
        /* The counters' check is left as the input has it, like the
         * header's: they give the arena's size that the image must have,
         * which is made again whole (a size the fuzzer could change in
         * both would take the memory of a process that had it). */
        if (section.tag == ADT_RESCUE_SECTION_COUNTERS) {
            at += (size_t)((section.bytes + 7u) & ~(uint64_t)7u);
            continue;
        }
        uint64_t content = adt_rescue_section_hashed(section.tag)
                               ? adt_rescue_hash(ADT_RESCUE_HASH_START, file + at, section.bytes)
                               : ADT_RESCUE_HASH_START;
        section.check = adt_rescue_section_check(section.tag, section.bytes, content);
        memcpy(file + at - sizeof section, &section, sizeof section);
        uint64_t padded = (section.bytes + 7u) & ~(uint64_t)7u;
        if (section.tag == ADT_RESCUE_SECTION_END || padded > size - at)
            return;
        at += (size_t)padded;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *file = malloc(size ? size : 1);
    memcpy(file, data, size);
    match_section_checks(file, size);
    mkdir(rescue_dir, 0755);
    FILE *out = fopen(rescue_file, "wb");
    if (out == NULL || fwrite(file, 1, size, out) != size || fclose(out) != 0) {
        fprintf(stderr, "recover_fuzz: cannot write %s\n", rescue_file);
        abort();
    }
    free(file);
    int status = adt_recover_run(archive, true);
    /* fuzz.recover.seed: the committed seed must be recovered. A rescue
     * file of an older layout (the summary's counters change with the
     * runtime) is refused at once, and a fuzzer started from it would
     * hardly reach the readers behind the refusal. */
    if (status != 0 && getenv("ADT_FUZZ_RECOVER_SEED_MUST_RECOVER") != NULL) {
        fprintf(stderr, "recover_fuzz: the seed was not recovered (status %d): make corpus/recover/intact again "
                        "with this build (tests/fuzz/CMakeLists.txt says how)\n", status);
        abort();
    }
    /* And its skeleton section made skeleton.adts: the fuzzer starts from
     * an input whose part reaches adt_skeleton_file_write's parser. */
    char skeleton[sizeof archive + sizeof ADT_SKELETON_FILE_NAME + 1];
    snprintf(skeleton, sizeof skeleton, "%s/%s", archive, ADT_SKELETON_FILE_NAME);
    if (getenv("ADT_FUZZ_RECOVER_SEED_MUST_RECOVER") != NULL && access(skeleton, F_OK) != 0) {
        fprintf(stderr, "recover_fuzz: the seed's recovery wrote no %s: make corpus/recover/intact again with a "
                        "buffer that folds (tests/fuzz/CMakeLists.txt says how)\n", ADT_SKELETON_FILE_NAME);
        abort();
    }
    adt_remove_tree(archive);
    adt_remove_tree(rescue_dir);
    return 0;
}
