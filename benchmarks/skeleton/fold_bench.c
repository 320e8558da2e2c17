/*
 * adaptrace-bench-skeleton: what folding one MPI call costs (issue #25),
 * in CPU time (the machine is shared): the demo's time step as keys of
 * the size mpi-events/fold.c makes (9 calls per inner step, 10 steps and
 * an Allreduce per outer step) folded into a skeleton, against the same
 * loop handing each key to a function that only reads it (the baseline:
 * producing the keys). Also an irregular stream (random counts in an
 * Alltoallv-like call), whose tables grow into the rest of a 64 MiB
 * share, until its skeleton stops or has taken CALLS calls. Then the
 * image of the share that an ending signal's save writes (skeleton.h),
 * taken as the rescue takes it (16 KiB blocks, each hashed for the
 * section's check; not written), and the rank's part encoded from it
 * (adaptrace-recover) against the part encoded from the live skeletons
 * (an ending in normal code). Prints one JSON object.
 *
 * usage: adaptrace-bench-skeleton [CALLS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/common/bench_clock.h"
#include "runtime/rescue.h"
#include "skeleton/skeleton.h"

enum { KEY_BYTES = 24 };

/* The key of call number i of the demo's pattern. */
static void demo_key(uint64_t i, uint8_t key[KEY_BYTES])
{
    uint64_t step = i % 91;
    memset(key, 0, KEY_BYTES);
    key[0] = (uint8_t)(step == 90 ? 7 : step % 9 < 4 ? 1 : step % 9 < 8 ? 2 : 3);
    key[1] = (uint8_t)(step == 90 ? 20 : 11 + step % 9);
    key[2] = (uint8_t)(step % 9);
    key[5] = 128;
}

/* Defeats the optimiser: the baseline makes every key and hands it to a
 * call, as the fold gets it. */
static uint64_t sink;
__attribute__((noinline)) static void read_key(const uint8_t *key, uint32_t length)
{
    sink += key[length - 1];
}

int main(int argc, char **argv)
{
    uint64_t calls = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000000ull;
    if (adt_skeleton_share_create(64ull * ADT_SKELETON_SLAB_BYTES) != 0) {
        perror("adt_skeleton_share_create");
        return 1;
    }
    adt_skeleton *skeleton = adt_skeleton_claim(0);
    uint8_t key[KEY_BYTES];

    double start = bench_cpu_seconds();
    for (uint64_t i = 0; i < calls; ++i) {
        demo_key(i, key);
        read_key(key, KEY_BYTES);
    }
    double baseline = bench_cpu_seconds() - start;

    start = bench_cpu_seconds();
    for (uint64_t i = 0; i < calls; ++i) {
        demo_key(i, key);
        adt_skeleton_fold(skeleton, key, KEY_BYTES, 2 * i, 2 * i + 1 + (i & 7));
    }
    double folded = bench_cpu_seconds() - start;

    adt_skeleton *irregular = adt_skeleton_claim(1);
    uint64_t state = 25;
    uint64_t irregular_calls = 0;
    while (irregular->stop == ADT_SKELETON_RUNNING && irregular_calls < calls) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        memset(key, 0, KEY_BYTES);
        key[0] = 4;
        key[3] = (uint8_t)(state >> 59);
        key[4] = (uint8_t)(state >> 53);
        adt_skeleton_fold(irregular, key, KEY_BYTES, 0, 0);
        irregular_calls++;
    }
    /* The save's loop (rescue.c, put_skeleton_image) without the write. */
    static uint8_t block[16384];
    uint8_t *image = malloc(adt_skeleton_share_bytes() + 65536);
    if (image == NULL)
        return 1;
    start = bench_cpu_seconds();
    adt_skeleton_image_cursor cursor;
    adt_skeleton_image_begin(&cursor);
    uint64_t check = ADT_RESCUE_HASH_START;
    size_t image_bytes = 0;
    for (size_t got; (got = adt_skeleton_image_next(&cursor, block, sizeof block)) != 0; image_bytes += got) {
        check = adt_rescue_hash(check, block, got);
        memcpy(image + image_bytes, block, got);
    }
    double taken = bench_cpu_seconds() - start;
    char error[160];
    size_t part_bytes = 0, live_bytes = 0;
    start = bench_cpu_seconds();
    uint8_t *part = adt_skeleton_image_encode(image, image_bytes, 0, &part_bytes, error, sizeof error);
    double from_image = bench_cpu_seconds() - start;
    start = bench_cpu_seconds();
    uint8_t *live = adt_skeleton_rank_encode(0, &live_bytes);
    double from_live = bench_cpu_seconds() - start;
    if (part == NULL || live == NULL || part_bytes != live_bytes || memcmp(part, live, part_bytes) != 0) {
        fprintf(stderr, "adaptrace-bench-skeleton: the image's part differs from the live one (%s)\n",
                part ? "other bytes" : error);
        return 1;
    }
    printf("{\n  \"calls\": %llu,\n  \"demo_pattern\": {\"baseline_ns_per_call\": %.2f, \"folded_ns_per_call\": %.2f, "
           "\"added_ns_per_call\": %.2f, \"ratio\": %.3f, \"grammar_symbols\": %u, \"rules\": %u, "
           "\"stopped\": %s},\n",
           (unsigned long long)calls, 1e9 * baseline / (double)calls, 1e9 * folded / (double)calls,
           1e9 * (folded - baseline) / (double)calls, folded / baseline,
           adt_skeleton_grammar_symbols(skeleton->grammar), adt_skeleton_grammar_rules(skeleton->grammar),
           skeleton->stop == ADT_SKELETON_RUNNING ? "false" : "true");
    printf("  \"irregular\": {\"calls_until_stopped\": %llu, \"stop\": \"%s\", \"signatures\": %u, "
           "\"grammar_symbols\": %u, \"untimed\": %llu, \"share_claimed_bytes\": %llu},\n  \"sink\": %llu,\n",
           (unsigned long long)irregular->calls,
           irregular->stop == ADT_SKELETON_RUNNING ? "running" : adt_skeleton_stop_keys[irregular->stop],
           adt_skeleton_signatures_count(irregular->signatures), adt_skeleton_grammar_symbols(irregular->grammar),
           (unsigned long long)irregular->untimed, (unsigned long long)adt_skeleton_share_claimed_bytes(),
           (unsigned long long)(sink & 1));
    printf("  \"image\": {\"bytes\": %zu, \"take_cpu_s\": %.4f, \"take_ns_per_byte\": %.3f, "
           "\"encode_from_image_cpu_s\": %.4f, \"encode_live_cpu_s\": %.4f, \"ratio_image_to_live\": %.3f, "
           "\"part_bytes\": %zu, \"check_low_bit\": %llu}\n}\n",
           image_bytes, taken, 1e9 * taken / (double)image_bytes, from_image, from_live, from_image / from_live,
           part_bytes, (unsigned long long)(check & 1));
    free(part);
    free(live);
    free(image);
    adt_skeleton_share_destroy();
    return 0;
}
