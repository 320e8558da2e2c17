/* adaptrace-report ARCHIVE: the profile of a run from its archive, as
 * text (or JSON) and an HTML page (report/ does the work). */
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: adaptrace-report [--json] [--html FILE] ARCHIVE\n"
            "\n"
            "Prints the profile of the run whose OTF2 archive is ARCHIVE (the directory holding\n"
            "traces.otf2): time, calls and bytes per MPI function, the spread over ranks and the\n"
            "imbalance, late-sender and collective waiting, the communication matrix, and the hot\n"
            "functions and call paths of the samples. docs/report.md says how each is computed.\n"
            "\n"
            "  --html FILE  also write the report as one self-contained HTML page (timeline, heat\n"
            "               maps, a flame graph) that opens from disk\n"
            "  --json       print the profile as JSON instead of text\n"
            "  --help       print this help and exit\n");
}

int main(int argc, char **argv)
{
    const char *archive = NULL;
    const char *html = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--html") == 0 && i + 1 < argc) {
            html = argv[++i];
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
    struct adt_report_profile *profile = adt_report_read(archive, error, sizeof error);
    if (profile == NULL) {
        fprintf(stderr, "adaptrace-report: %s: %s\n", archive, error);
        return 1;
    }
    if (json) {
        adt_report_print_json(profile, stdout);
    } else {
        printf("adaptrace-report: %s\n", archive);
        adt_report_print_text(profile, stdout);
    }
    int status = 0;
    if (html != NULL) {
        if (adt_report_write_html(profile, archive, html, error, sizeof error) != 0) {
            fprintf(stderr, "adaptrace-report: %s\n", error);
            status = 1;
        } else if (!json) {
            printf("\nHTML report: %s\n", html);
        }
    }
    adt_report_free(profile);
    return status;
}
