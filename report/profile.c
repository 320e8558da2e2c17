/* Figures derived from a profile, shared by the text, JSON, HTML and
 * speedscope output, and the writing of an output file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "feed/feed.h"
#include "report_internal.h"

struct adt_report_spread adt_report_rank_spread(const struct adt_report_profile *profile, size_t field_offset)
{
    const void *first = profile->rank_count > 0 ? (const char *)profile->ranks + field_offset : NULL;
    adt_feed_spread spread = adt_feed_spread_of(first, profile->rank_count, sizeof *profile->ranks);
    return (struct adt_report_spread){
        .min = spread.min, .mean = spread.mean, .max = spread.max, .imbalance = spread.imbalance};
}

uint32_t *adt_report_order_by(const void *base, size_t count, size_t element_size, size_t field_offset)
{
    uint32_t *order = adt_feed_order_by(base, count, element_size, field_offset);
    adt_report_fed(order != NULL ? 0 : -1);
    return order;
}

char *adt_report_join_path(uint32_t node, const struct adt_report_tree *tree)
{
    size_t length = 1;
    for (uint32_t up = node; up != UINT32_MAX; up = tree->parent_of(tree->data, up)) {
        length += strlen(tree->name_of(tree->data, up)) + 3;
    }
    char *path = malloc(length);
    char *end = path + length - 1;
    *end = '\0';
    for (uint32_t up = node; up != UINT32_MAX; up = tree->parent_of(tree->data, up)) {
        const char *name = tree->name_of(tree->data, up);
        size_t name_length = strlen(name);
        if (up != node) {
            end -= 3;
            memcpy(end, " > ", 3);
        }
        end -= name_length;
        memcpy(end, name, name_length);
    }
    memmove(path, end, strlen(end) + 1);
    return path;
}

static uint32_t profile_parent(const void *profile, uint32_t context)
{
    return ((const struct adt_report_profile *)profile)->contexts[context].parent;
}

static const char *profile_name(const void *data, uint32_t context)
{
    const struct adt_report_profile *profile = data;
    return profile->sampled_functions[profile->contexts[context].function].name;
}

char *adt_report_context_path(const struct adt_report_profile *profile, uint32_t context)
{
    return adt_report_join_path(context, &(struct adt_report_tree){profile_parent, profile_name, profile});
}

static const char *profile_line(const void *data, uint32_t context)
{
    const struct adt_report_profile *profile = data;
    uint32_t source = profile->contexts[context].source;
    return source != UINT32_MAX ? profile->source_lines[source].label : "?";
}

char *adt_report_context_lines(const struct adt_report_profile *profile, uint32_t context)
{
    return adt_report_join_path(context, &(struct adt_report_tree){profile_parent, profile_line, profile});
}

int adt_report_write_file(const char *path,
                          void (*print)(const struct adt_report_profile *profile, const char *archive, FILE *out),
                          const struct adt_report_profile *profile, const char *archive, char *error,
                          size_t error_size)
{
    FILE *out = fopen(path, "w");
    if (out == NULL) {
        snprintf(error, error_size, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    print(profile, archive, out);
    if (ferror(out) | (fclose(out) != 0)) {
        snprintf(error, error_size, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
