/* The unification benchmark's directly built unions against merging the
 * same synthetic ranks one by one, for the GoogleTest in
 * unify_synthetic_test.cpp (format/unify.h is C only). */
#include "unify_synthetic_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synthetic_ranks.h"

uint32_t synthetic_cp2k_own_calling_contexts(void)
{
    return SYNTHETIC_CP2K_OWN_CALLING_CONTEXTS;
}

char *synthetic_union_differences(uint32_t rank_count, uint32_t own_calling_contexts, uint32_t first,
                                  uint32_t count)
{
    synthetic_shape shape = { rank_count, own_calling_contexts };
    adt_blob merged = { 0 }, direct = { 0 };
    char *text = malloc(256);
    if (text && !synthetic_union_merged(&shape, first, count, &merged))
        snprintf(text, 256, "merging ranks %u..%u one by one failed", first, first + count - 1);
    else if (text && !synthetic_union_direct(&shape, first, count, &direct))
        snprintf(text, 256, "building the union of ranks %u..%u directly failed", first, first + count - 1);
    else if (text) {
        size_t common = merged.size < direct.size ? merged.size : direct.size, at = 0;
        while (at < common && merged.data[at] == direct.data[at])
            ++at;
        if (at == merged.size && at == direct.size && merged.size > 0)
            text[0] = '\0';
        else
            snprintf(text, 256, "ranks %u..%u: merged %zu bytes, direct %zu bytes, first difference at byte %zu",
                     first, first + count - 1, merged.size, direct.size, at);
    }
    adt_blob_free(&merged);
    adt_blob_free(&direct);
    return text;
}
