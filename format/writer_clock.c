/*
 * The end-of-run writer's clock correction (the two ClockOffset points of
 * a location) and calling-context depths (unwind distances). End of run,
 * normal context.
 */
#include <math.h>
#include <stdlib.h>

#include "format/writer_internal.h"

/* ---- clock correction --------------------------------------------------- */

bool adt_writer_has_clock_offsets(const adt_trace_input *input)
{
    for (int i = 0; i < 2; ++i)
        if (input->clock_offsets[i].local_time || input->clock_offsets[i].offset ||
            input->clock_offsets[i].stddev != 0.0)
            return true;
    return false;
}

/* The correction OTF2 readers apply with two ClockOffset records. */
uint64_t adt_writer_corrected_time(const adt_trace_input *input, uint64_t time)
{
    if (!adt_writer_has_clock_offsets(input))
        return time;
    const adt_clock_offset *a = &input->clock_offsets[0], *b = &input->clock_offsets[1];
    double slope = b->local_time != a->local_time
                       ? (double)(b->offset - a->offset) / ((double)b->local_time - (double)a->local_time)
                       : 0.0;
    return time + (uint64_t)(a->offset + (int64_t)rint(slope * ((double)time - (double)a->local_time)));
}

/* ---- calling contexts ---------------------------------------------------- */

int adt_writer_prepare_calling_contexts(writer *w)
{
    adt_defs *defs = w->input->defs;
    size_t count = defs->calling_context_count;
    w->cc_parent = malloc((count + 1) * sizeof *w->cc_parent);
    w->cc_depth = malloc((count + 1) * sizeof *w->cc_depth);
    if (!w->cc_parent || !w->cc_depth)
        return -1;
    for (size_t i = 0; i < count; ++i) {
        uint32_t parent = defs->calling_contexts[i].parent;
        w->cc_parent[i] = parent;
        w->cc_depth[i] = parent == ADT_UNDEFINED_ID ? 0 : w->cc_depth[parent] + 1;
    }
    return 0;
}

/* unwindDistance of a calling-context event at cur after prev (section
 * 5.5): the frames newly entered since prev, plus one. The first frame of
 * cur's path that is prev or one of its ancestors is their lowest common
 * ancestor, so the count is depth(cur) - depth(lca). */
uint32_t adt_writer_unwind_distance(const writer *w, uint32_t prev, uint32_t cur)
{
    if (prev == ADT_UNDEFINED_ID)
        return w->cc_depth[cur] + 2;
    uint32_t a = cur, b = prev;
    while (w->cc_depth[a] > w->cc_depth[b])
        a = w->cc_parent[a];
    while (w->cc_depth[b] > w->cc_depth[a])
        b = w->cc_parent[b];
    while (a != b && a != ADT_UNDEFINED_ID) {
        a = w->cc_parent[a];
        b = w->cc_parent[b];
    }
    if (a == ADT_UNDEFINED_ID)
        return w->cc_depth[cur] + 2;
    return w->cc_depth[cur] - w->cc_depth[a] + 1;
}
