/* libFuzzer target of the readers of skeleton.adts (issue #25): the input
 * is one skeleton file, read by adt_skeleton_file_parse (skeleton/), and
 * what passes its checks goes to every reader behind it: the replay's plan
 * of each rank (replay/plan.c: the keys' fields, the requests, the
 * collectives), each thread's (previous, call) pairs looked up as the
 * report and the replay look them up, and adaptrace-report --skeleton's
 * text (report/skeleton.c: the loops, rank lists, calls and histograms).
 *
 * Before the parse the file's checksum (its last 8 bytes, FNV-1a over the
 * rest) is made to match: otherwise nearly every input would stop there
 * and the readers behind it would never see damage.
 *
 * The seed corpus (corpus/skeleton) is the skeleton of a real run: the
 * bundled demo on 4 ranks (mpi.demo.np4.sampling-on: 10 iterations), and
 * a recovered run's version 7 file that names a rank missing. A
 * run must end (libFuzzer's -timeout), within -rss_limit_mb, without a
 * sanitizer report; a damaged file is refused with one line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay/replay.h"
#include "report/report.h"
#include "skeleton/skeleton.h"
#include "skeleton/skeleton_file.h"

/* Plans made per input: a file may name up to ADT_SKELETON_RANKS_MAX
 * ranks, and each plan is a pass over its class's calls. */
enum { PLANNED_RANKS_MAX = 8 };

static char work_dir[] = "/tmp/adt-fuzz-skeleton-XXXXXX";
static char skeleton_path[sizeof work_dir + sizeof ADT_SKELETON_FILE_NAME + 1];
static FILE *discard;

static void remove_work_dir(void)
{
    unlink(skeleton_path);
    rmdir(work_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    if (mkdtemp(work_dir) == NULL) {
        perror("skeleton_fuzz: mkdtemp");
        abort();
    }
    snprintf(skeleton_path, sizeof skeleton_path, "%s/%s", work_dir, ADT_SKELETON_FILE_NAME);
    discard = fopen("/dev/null", "w");
    if (discard == NULL) {
        perror("skeleton_fuzz: /dev/null");
        abort();
    }
    atexit(remove_work_dir);
    return 0;
}

/* Every pair of each thread looked up, as the report's folded calls and
 * the replay do. */
static void look_up_pairs(const adt_skeleton_file *file)
{
    for (uint32_t c = 0; c < file->class_count; c++) {
        const adt_skeleton_class_view *class_view = &file->classes[c];
        for (uint32_t t = 0; t < class_view->thread_count; t++) {
            const adt_skeleton_thread_view *thread = &class_view->threads[t];
            for (uint32_t p = 0; p < thread->pair_count; p++) {
                const adt_skeleton_pair *pair = adt_skeleton_thread_pair(thread, thread->pairs[p].previous,
                                                                         thread->pairs[p].signature);
                if (pair != &thread->pairs[p])
                    abort();
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *file_bytes = malloc(size ? size : 1);
    if (file_bytes == NULL)
        return 0;
    memcpy(file_bytes, data, size);
    if (size > 8) {
        uint64_t checksum = adt_skeleton_checksum(file_bytes, size - 8);
        memcpy(file_bytes + size - 8, &checksum, 8);
    }
    char error[512];
    adt_skeleton_file *file = adt_skeleton_file_parse(file_bytes, size, error, sizeof error);
    /* fuzz.skeleton.seed: the committed seed must be read. A skeleton of
     * an older version is refused at once, and a fuzzer started from it
     * would hardly reach the readers behind the refusal. */
    if (file == NULL && getenv("ADT_FUZZ_SKELETON_SEED_MUST_READ") != NULL) {
        fprintf(stderr, "skeleton_fuzz: the seed was not read (%s): copy corpus/skeleton/demo again from this "
                        "build (tests/fuzz/CMakeLists.txt says how)\n", error);
        abort();
    }
    if (file != NULL) {
        look_up_pairs(file);
        uint32_t planned = file->rank_count < PLANNED_RANKS_MAX ? file->rank_count : PLANNED_RANKS_MAX;
        for (uint32_t rank = 0; rank < planned; rank++)
            adt_replay_plan_free(adt_replay_plan_build(file, rank, file->rank_count, error, sizeof error));
        adt_skeleton_file_free(file);
        /* The report's text reads the file itself. */
        FILE *out = fopen(skeleton_path, "wb");
        if (out != NULL) {
            bool written = fwrite(file_bytes, 1, size, out) == size;
            if (fclose(out) == 0 && written)
                adt_report_print_skeleton(work_dir, false, discard, error, sizeof error);
        }
    }
    free(file_bytes);
    return 0;
}
