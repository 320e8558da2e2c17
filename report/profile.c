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

struct ordering {
    const char *base;
    size_t element_size;
    size_t field_offset;
};

static double field_of(const struct ordering *ordering, uint32_t index)
{
    double value;
    memcpy(&value, ordering->base + index * ordering->element_size + ordering->field_offset, sizeof value);
    return value;
}

/* qsort has no context argument; the ordering is set for the one sort. */
static _Thread_local const struct ordering *current_ordering;

static int compare_largest_first(const void *left, const void *right)
{
    uint32_t a = *(const uint32_t *)left, b = *(const uint32_t *)right;
    double value_a = field_of(current_ordering, a), value_b = field_of(current_ordering, b);
    if (value_a != value_b) {
        return value_a < value_b ? 1 : -1;
    }
    return (a > b) - (a < b);
}

uint32_t *adt_report_order_by(const void *base, size_t count, size_t element_size, size_t field_offset)
{
    uint32_t *order = malloc((count ? count : 1) * sizeof *order);
    for (size_t i = 0; i < count; i++) {
        order[i] = (uint32_t)i;
    }
    struct ordering ordering = {.base = base, .element_size = element_size, .field_offset = field_offset};
    current_ordering = &ordering;
    qsort(order, count, sizeof *order, compare_largest_first);
    current_ordering = NULL;
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
