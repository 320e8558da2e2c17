/* The samples as a speedscope file (https://www.speedscope.app, file
 * format "sampled"): one entry per calling context that samples were taken
 * in, its stack root first and its weight in seconds. The report keeps
 * no sample order, so speedscope's time-ordered view shows the contexts
 * one after another; its left-heavy and sandwich views are the profile. */
#include <inttypes.h>
#include <stdlib.h>

#include "report_internal.h"

static void print_stack(const struct adt_report_profile *profile, uint32_t context, FILE *out)
{
    size_t depth = 0;
    for (uint32_t node = context; node != UINT32_MAX; node = profile->contexts[node].parent) {
        depth++;
    }
    uint32_t *frames = malloc(depth * sizeof *frames);
    size_t i = depth;
    for (uint32_t node = context; node != UINT32_MAX; node = profile->contexts[node].parent) {
        frames[--i] = profile->contexts[node].function;
    }
    fputc('[', out);
    for (i = 0; i < depth; i++) {
        fprintf(out, "%s%" PRIu32, i ? "," : "", frames[i]);
    }
    fputc(']', out);
    free(frames);
}

static void print_speedscope(const struct adt_report_profile *profile, const char *archive, FILE *out)
{
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"adaptrace-report\","
          "\n\"shared\":{\"frames\":[",
          out);
    for (size_t f = 0; f < profile->sampled_function_count; f++) {
        fputs(f ? ",\n{\"name\":" : "\n{\"name\":", out);
        adt_report_print_json_string(profile->sampled_functions[f].name, out);
        fputc('}', out);
    }
    fputs("]},\n\"profiles\":[{\"type\":\"sampled\",\"name\":", out);
    adt_report_print_json_string(archive, out);
    fprintf(out, ",\"unit\":\"seconds\",\"startValue\":0,\"endValue\":%.9g,\n\"samples\":[", profile->sampled_seconds);
    bool first = true;
    for (size_t c = 0; c < profile->context_count; c++) {
        if (profile->contexts[c].self_seconds > 0) {
            fputs(first ? "\n" : ",\n", out);
            first = false;
            print_stack(profile, (uint32_t)c, out);
        }
    }
    fputs("],\n\"weights\":[", out);
    first = true;
    for (size_t c = 0; c < profile->context_count; c++) {
        if (profile->contexts[c].self_seconds > 0) {
            fprintf(out, "%s%.9g", first ? "" : ",", profile->contexts[c].self_seconds);
            first = false;
        }
    }
    fputs("]}]}\n", out);
}

int adt_report_write_speedscope(const struct adt_report_profile *profile, const char *archive, const char *path,
                                char *error, size_t error_size)
{
    return adt_report_write_file(path, print_speedscope, profile, archive, error, error_size);
}
