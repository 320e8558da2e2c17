/* The user API's regions and the profile split by its phases
 * (docs/report.md, "User regions and phases"): during the reading pass each MPI call's exclusive
 * time and each sample's weight go to the innermost phase open on their
 * location (read_events.c); at the end the samples' calling contexts
 * become their functions, as for the whole profile (read.c); then their
 * text and JSON. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read_internal.h"

uint32_t adt_report_add_phase(struct reading *reading, const char *name)
{
    struct adt_report_profile *profile = reading->profile;
    profile->phases = adt_report_grow(profile->phases, &reading->phase_capacity, profile->phase_count + 1,
                                      sizeof *profile->phases);
    profile->phases[profile->phase_count].name = strdup(name);
    return (uint32_t)profile->phase_count++;
}

void adt_report_phase_mpi(struct reading *reading, uint32_t phase, uint32_t mpi_function, double seconds)
{
    struct adt_report_phase *p = &reading->profile->phases[phase];
    p->mpi_function_seconds =
        adt_report_grow(p->mpi_function_seconds, &p->mpi_function_capacity, (size_t)mpi_function + 1, sizeof(double));
    p->mpi_function_seconds[mpi_function] += seconds;
    p->mpi_seconds += seconds;
}

void adt_report_phase_sample(struct reading *reading, uint32_t phase, uint32_t context, double weight)
{
    struct adt_report_phase *p = &reading->profile->phases[phase];
    p->context_seconds = adt_report_grow(p->context_seconds, &p->context_capacity, (size_t)context + 1, sizeof(double));
    p->context_seconds[context] += weight;
    p->sampled_seconds += weight;
}

/* After the contexts' functions are known (read.c, finish). */
void adt_report_finish_phases(struct reading *reading)
{
    struct adt_report_profile *profile = reading->profile;
    for (size_t i = 0; i < profile->phase_count; i++) {
        struct adt_report_phase *p = &profile->phases[i];
        size_t capacity = p->mpi_function_capacity;
        p->mpi_function_seconds = adt_report_grow(p->mpi_function_seconds, &capacity,
                                                  profile->mpi_function_count, sizeof(double));
        p->mpi_function_capacity = capacity;
        p->function_seconds = calloc(profile->sampled_function_count + 1, sizeof(double));
        if (p->function_seconds == NULL) {
            fprintf(stderr, "adaptrace-report: out of memory\n");
            exit(1);
        }
        for (size_t c = 0; c < p->context_capacity && c < profile->context_count; c++) {
            uint32_t function = profile->contexts[c].function;
            if (p->context_seconds[c] > 0 && function != UINT32_MAX) {
                p->function_seconds[function] += p->context_seconds[c];
            }
        }
        free(p->context_seconds);
        p->context_seconds = NULL;
        p->context_capacity = 0;
    }
}

void adt_report_free_phases(struct adt_report_profile *profile)
{
    for (size_t i = 0; i < profile->phase_count; i++) {
        free(profile->phases[i].name);
        free(profile->phases[i].mpi_function_seconds);
        free(profile->phases[i].function_seconds);
        free(profile->phases[i].context_seconds);
    }
    free(profile->phases);
    for (size_t i = 0; i < profile->user_region_count; i++) {
        free(profile->user_regions[i].name);
    }
    free(profile->user_regions);
}

/* ---- text and JSON (report/text.c prints them in their places) -------- */

/* The nonzero values of a phase's array, largest first (at most limit). */
static size_t largest(const double *values, size_t count, size_t limit, uint32_t **order)
{
    *order = adt_report_order_by(values, count, sizeof *values, 0);
    size_t shown = 0;
    while (shown < count && shown < limit && values[(*order)[shown]] > 0) {
        shown++;
    }
    return shown;
}

enum { PHASE_TOP_TEXT = 5, PHASE_TOP_JSON = 50 };

void adt_report_print_phases_text(const struct adt_report_profile *profile, FILE *out)
{
    if (profile->user_region_count == 0) {
        return;
    }
    fprintf(out, "\nUser regions (adaptrace.h; all ranks and threads)\n");
    fprintf(out, "  %-28s %-6s %10s %14s %14s\n", "region", "kind", "instances", "inclusive s", "exclusive s");
    for (size_t i = 0; i < profile->user_region_count; i++) {
        const struct adt_report_user_region *region = &profile->user_regions[i];
        fprintf(out, "  %-28s %-6s %10" PRIu64 " %14.6f %14.6f\n", region->name, region->phase ? "phase" : "region",
                region->instances, region->inclusive_seconds, region->exclusive_seconds);
    }
    if (profile->phase_count == 0) {
        return;
    }
    fprintf(out, "\nPhases: MPI time and samples in the innermost phase open around them\n");
    fprintf(out, "  %-28s %10s %12s %12s %12s\n", "phase", "instances", "seconds", "MPI s", "sampled s");
    for (size_t i = 0; i < profile->phase_count; i++) {
        const struct adt_report_phase *phase = &profile->phases[i];
        fprintf(out, "  %-28s %10" PRIu64 " %12.6f %12.6f %12.6f\n", phase->name, phase->instances, phase->seconds,
                phase->mpi_seconds, phase->sampled_seconds);
    }
    for (size_t i = 0; i < profile->phase_count; i++) {
        const struct adt_report_phase *phase = &profile->phases[i];
        uint32_t *order;
        fprintf(out, "  %s\n    MPI:", phase->name);
        size_t shown = largest(phase->mpi_function_seconds, profile->mpi_function_count, PHASE_TOP_TEXT, &order);
        for (size_t k = 0; k < shown; k++) {
            fprintf(out, "%s %s %.6f s", k ? "," : "", profile->mpi_functions[order[k]].name,
                    phase->mpi_function_seconds[order[k]]);
        }
        free(order);
        fprintf(out, "%s\n    hot functions (exclusive):", shown ? "" : " none");
        shown = largest(phase->function_seconds, profile->sampled_function_count, PHASE_TOP_TEXT, &order);
        for (size_t k = 0; k < shown; k++) {
            fprintf(out, "%s %s %.6f s", k ? "," : "", profile->sampled_functions[order[k]].name,
                    phase->function_seconds[order[k]]);
        }
        free(order);
        fprintf(out, "%s\n", shown ? "" : " none");
    }
}

/* [{"name":...,"seconds":...}, ...] of a phase's nonzero values. */
static void print_named_seconds_json(const double *values, size_t count, const char *(*name)(const void *, size_t),
                                     const void *names, FILE *out)
{
    uint32_t *order;
    size_t shown = largest(values, count, PHASE_TOP_JSON, &order);
    fputc('[', out);
    for (size_t k = 0; k < shown; k++) {
        fputs(k ? ",{\"name\":" : "{\"name\":", out);
        adt_report_print_json_string(name(names, order[k]), out);
        fprintf(out, ",\"seconds\":%.9g}", values[order[k]]);
    }
    fputc(']', out);
    free(order);
}

static const char *mpi_function_name(const void *profile, size_t index)
{
    return ((const struct adt_report_profile *)profile)->mpi_functions[index].name;
}

static const char *sampled_function_name(const void *profile, size_t index)
{
    return ((const struct adt_report_profile *)profile)->sampled_functions[index].name;
}

void adt_report_print_phases_json(const struct adt_report_profile *profile, FILE *out)
{
    fputs(",\n\"user_regions\":[", out);
    for (size_t i = 0; i < profile->user_region_count; i++) {
        const struct adt_report_user_region *region = &profile->user_regions[i];
        fputs(i ? ",{\"name\":" : "{\"name\":", out);
        adt_report_print_json_string(region->name, out);
        fprintf(out, ",\"phase\":%s,\"instances\":%" PRIu64 ",\"inclusive_seconds\":%.9g,\"exclusive_seconds\":%.9g}",
                region->phase ? "true" : "false", region->instances, region->inclusive_seconds,
                region->exclusive_seconds);
    }
    fputs("],\n\"phases\":[", out);
    for (size_t i = 0; i < profile->phase_count; i++) {
        const struct adt_report_phase *phase = &profile->phases[i];
        fputs(i ? ",{\"name\":" : "{\"name\":", out);
        adt_report_print_json_string(phase->name, out);
        fprintf(out, ",\"instances\":%" PRIu64 ",\"seconds\":%.9g,\"mpi_seconds\":%.9g,\"sampled_seconds\":%.9g",
                phase->instances, phase->seconds, phase->mpi_seconds, phase->sampled_seconds);
        fputs(",\"mpi_functions\":", out);
        print_named_seconds_json(phase->mpi_function_seconds, profile->mpi_function_count, mpi_function_name, profile,
                                 out);
        fputs(",\"hot_functions\":", out);
        print_named_seconds_json(phase->function_seconds, profile->sampled_function_count, sampled_function_name,
                                 profile, out);
        fputc('}', out);
    }
    fputc(']', out);
}
