/* adaptrace-report ARCHIVE: the profile of a run from its archive, as
 * text (or JSON) and an HTML page (report/ does the work). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

/* Why --html is refused where the page was left out of the build
 * (ADAPTRACE_REPORT_HTML off: its libraries come from npm at build time). */
#define WITHOUT_PAGE                                                                                            \
    "this adaptrace-report was built without its HTML page (ADAPTRACE_REPORT_HTML=OFF; the page's libraries, "  \
    "d3 and d3-flame-graph, come from npm at build time): rebuild adaptrace where npm is installed "            \
    "(docs/install.md)"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: adaptrace-report [--json] [--salvage] [--compensate[=model|constant]] [--html FILE]\n"
            "                        [--speedscope FILE] [--chrome-trace FILE] [--write-archive DIR] ARCHIVE\n"
            "       adaptrace-report --skeleton [--expand] ARCHIVE\n"
            "\n"
            "Prints the profile of the run whose OTF2 archive is ARCHIVE (the directory holding\n"
            "traces.otf2): time, calls and bytes per MPI function, the spread over ranks and the\n"
            "imbalance, late-sender and collective waiting, the communication matrix, and the hot\n"
            "functions and call paths of the samples. docs/report.md says how each is computed.\n"
            "\n"
            "  --html FILE  also write the report as one self-contained HTML page (timeline, heat\n"
            "               maps, a flame graph) that opens from disk%s\n"
            "  --speedscope FILE  also write the samples for www.speedscope.app (left-heavy and\n"
            "               sandwich views; the report keeps no sample order)\n"
            "  --chrome-trace FILE  also write the trace as Chrome trace-event JSON for Perfetto UI\n"
            "               (ui.perfetto.dev) or chrome://tracing: MPI calls and other regions per\n"
            "               rank and thread, messages as arrows; written during the same pass\n"
            "  --json       print the profile as JSON instead of text\n"
            "  --skeleton   print the MPI calls of each rank's threads folded into loops (ARCHIVE's\n"
            "               skeleton.adts, docs/folding.md): loops with their iteration counts, calls\n"
            "               with their parameters; with --expand every call in order, one per line\n"
            "  --salvage    of a damaged archive, report the locations whose events are intact and\n"
            "               say which were left out and why (without it, damage is an error)\n"
            "  --compensate[=model]  every figure from times with adaptrace's own cost taken out, by\n"
            "               the cost per event and gap that the run measured (summary.json), keeping\n"
            "               messages and collectives causal; each correction counted (docs/compensation.md)\n"
            "  --compensate=constant  the same with one cost per kind of event (the warmest class),\n"
            "               as a start-up constant would compensate, for comparison\n"
            "  --write-archive DIR  with --compensate: also write the archive again into DIR (new or\n"
            "               empty), every record with its compensated times, for Vampir and other\n"
            "               OTF2 readers\n"
            "\n"
            "Exit status: 0 on success, 1 when the archive cannot be opened or an output cannot be\n"
            "written, 2 on a usage error or when the archive is damaged (one line says which file\n"
            "and what is wrong).\n"
            "  --help       print this help and exit\n",
            ADT_WITH_REPORT_HTML ? "" : "\n               (left out of this build: ADAPTRACE_REPORT_HTML=OFF)");
}

/* Whether path can take the compensated archive: missing, or an empty
 * directory (OTF2 would mix its files with those there). NULL if so, else
 * why not. */
static const char *unusable_target(const char *path)
{
    DIR *directory = opendir(path);
    if (directory == NULL) {
        return errno == ENOENT ? NULL : strerror(errno);
    }
    const char *why = NULL;
    for (struct dirent *entry; why == NULL && (entry = readdir(directory)) != NULL;) {
        why = strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0 ? "it exists and is not empty"
                                                                                  : NULL;
    }
    closedir(directory);
    return why;
}

typedef int write_file(const struct adt_report_profile *profile, const char *archive, const char *path,
                       char *error, size_t error_size);

/* The files asked for on the command line, and what writes each. */
struct output {
    const char *option;
    const char *what;
    write_file *write;
    const char *path;
};

int main(int argc, char **argv)
{
    struct output outputs[] = {
#if ADT_WITH_REPORT_HTML
        {"--html", "HTML report", adt_report_write_html, NULL},
#endif
        {"--speedscope", "speedscope profile", adt_report_write_speedscope, NULL}};
    enum { OUTPUT_COUNT = sizeof outputs / sizeof outputs[0] };
    const char *archive = NULL;
    /* Written during the reading pass, not from the profile after it. */
    const char *chrome_path = NULL;
    const char *archive_copy = NULL;
    bool json = false;
    bool salvage = false;
    bool skeleton = false;
    bool expand = false;
    enum adt_report_compensation_mode compensate = ADT_REPORT_MEASURED;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
        struct output *output = NULL;
        for (size_t o = 0; o < OUTPUT_COUNT; o++) {
            output = strcmp(argv[i], outputs[o].option) == 0 ? &outputs[o] : output;
        }
        if (!ADT_WITH_REPORT_HTML && strcmp(argv[i], "--html") == 0) {
            fprintf(stderr, "adaptrace-report: --html: " WITHOUT_PAGE "\n");
            return 2;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--skeleton") == 0) {
            skeleton = true;
        } else if (strcmp(argv[i], "--expand") == 0) {
            expand = true;
        } else if (strcmp(argv[i], "--salvage") == 0) {
            salvage = true;
        } else if (strcmp(argv[i], "--compensate") == 0 || strcmp(argv[i], "--compensate=model") == 0) {
            compensate = ADT_REPORT_COMPENSATE_MODEL;
        } else if (strcmp(argv[i], "--compensate=constant") == 0) {
            compensate = ADT_REPORT_COMPENSATE_CONSTANT;
        } else if (strcmp(argv[i], "--write-archive") == 0 && i + 1 < argc) {
            archive_copy = argv[++i];
        } else if (strcmp(argv[i], "--chrome-trace") == 0 && i + 1 < argc) {
            chrome_path = argv[++i];
        } else if (output != NULL && i + 1 < argc) {
            output->path = argv[++i];
        } else if (argv[i][0] == '-' || archive != NULL) {
            fprintf(stderr, "adaptrace-report: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else {
            archive = argv[i];
        }
    }
    if (archive == NULL) {
        usage(stderr);
        return 2;
    }
    char error[512];
    if (skeleton || expand) {
        /* Without the page there is one file output only: no outputs[1]. */
        bool file_output = false;
        for (size_t o = 0; o < OUTPUT_COUNT; o++)
            file_output = file_output || outputs[o].path != NULL;
        if (!skeleton || json || salvage || chrome_path != NULL || file_output) {
            fprintf(stderr, "adaptrace-report: --skeleton takes --expand and nothing else; --expand needs --skeleton\n");
            return 2;
        }
        int printed = adt_report_print_skeleton(archive, expand, stdout, error, sizeof error);
        if (printed != 0)
            fprintf(stderr, "adaptrace-report: %s\n", error);
        return printed == 0 ? 0 : printed == -1 ? 1 : 2;
    }
    if (archive_copy != NULL) {
        const char *unusable = unusable_target(archive_copy);
        if (compensate == ADT_REPORT_MEASURED || salvage) {
            fprintf(stderr, "adaptrace-report: --write-archive needs --compensate (it writes the compensated times) "
                            "and takes no --salvage (a damaged location cannot be copied)\n");
            return 2;
        } else if (unusable != NULL) {
            fprintf(stderr, "adaptrace-report: --write-archive %s: %s\n", archive_copy, unusable);
            return 2;
        }
    }
    struct adt_report_error read_error;
    int status = 0;
    FILE *chrome = NULL;
    if (chrome_path != NULL && (chrome = fopen(chrome_path, "w")) == NULL) {
        fprintf(stderr, "adaptrace-report: cannot write %s: %s\n", chrome_path, strerror(errno));
        return 1;
    }
    struct adt_report_profile *profile =
        adt_report_read(archive,
                        &(struct adt_report_options){.chrome_trace = chrome,
                                                     .salvage = salvage,
                                                     .compensate = compensate,
                                                     .write_archive = archive_copy},
                        &read_error);
    /* Not removed when cut short: the path may be no regular file
     * (/dev/stdout). A failed read says so below and exits with 1 or 2. */
    if (chrome != NULL && (ferror(chrome) | (fclose(chrome) != 0))) {
        fprintf(stderr, "adaptrace-report: cannot write %s: %s\n", chrome_path, strerror(errno));
        chrome_path = NULL;
        status = 1;
    }
    if (profile == NULL) {
        fprintf(stderr, "adaptrace-report: %s: %s%s\n", archive, read_error.text,
                read_error.salvageable && !salvage ? " (--salvage reports the intact locations)" : "");
        return read_error.damaged ? 2 : 1;
    }
    if (json) {
        adt_report_print_json(profile, stdout);
    } else {
        printf("adaptrace-report: %s\n", archive);
        adt_report_print_text(profile, stdout);
    }
    if (chrome_path != NULL && !json) {
        printf("Chrome trace: %s\n", chrome_path);
    }
    if (archive_copy != NULL && !json) {
        printf("Compensated archive: %s\n", archive_copy);
    }
    for (size_t o = 0; o < OUTPUT_COUNT; o++) {
        if (outputs[o].path == NULL) {
            continue;
        }
        if (outputs[o].write(profile, archive, outputs[o].path, error, sizeof error) != 0) {
            fprintf(stderr, "adaptrace-report: %s\n", error);
            status = 1;
        } else if (!json) {
            printf("%s: %s\n", outputs[o].what, outputs[o].path);
        }
    }
    adt_report_free(profile);
    return status;
}
