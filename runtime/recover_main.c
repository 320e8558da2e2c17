/* adaptrace-recover ARCHIVE: the command a user runs after a job that did
 * not end cleanly (runtime/recover.c does the work). */
#include <stdio.h>
#include <string.h>

#include "runtime_internal.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: adaptrace-recover [--quiet] ARCHIVE\n"
            "\n"
            "Makes the OTF2 archive ARCHIVE (and ARCHIVE/summary.json) of a run that did not end\n"
            "cleanly (a signal, MPI_Abort, an exit without MPI_Finalize, or snapshots of a run that\n"
            "hangs), from the files its processes saved in ARCHIVE.rescue. ARCHIVE is the path\n"
            "the run's message names (ADAPTRACE_OUTPUT, or the default name). Run it after the\n"
            "job, on any node that sees the files; it needs no MPI. The rescue files are removed\n"
            "once the archive is written.\n"
            "\n"
            "  --quiet   no summary on stderr\n"
            "  --help    print this help and exit\n");
}

int main(int argc, char **argv)
{
    bool quiet = false;
    const char *archive = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--quiet") == 0) {
            quiet = true;
        } else if (argv[i][0] == '-' || archive != NULL) {
            fprintf(stderr, "adaptrace-recover: unexpected argument '%s'\n", argv[i]);
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
    size_t length = strlen(archive);
    char trimmed[ADT_PATH_MAX];
    snprintf(trimmed, sizeof trimmed, "%.*s", (int)(length > 1 && archive[length - 1] == '/' ? length - 1 : length),
             archive);
    return adt_recover_run(trimmed, quiet);
}
