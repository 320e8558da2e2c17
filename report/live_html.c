/* live/report.html: the analyzers' live report (online/, docs/online.md)
 * drawn by live_page.js from the live/report.json it embeds, with the
 * report page's shell, libraries and shared script (page_shell.c,
 * page_common.js). Written by analyzer 0 each report round, beside
 * live/report.json, from the same text; never in the measured
 * application. */
#include "report_internal.h"

/* Compiled in from live_page.js (embed.cmake). */
extern const char adt_report_live_page_js[];

static const char live_body[] =
    "<p id=\"state\"></p>\n"
    "<h2>Connection</h2>\n"
    "<p class=\"note\">The ranks heard from and those whose last chunk came, what the analyzers received, and "
    "the MPI calls and samples the ranks did not stream, by cause (docs/online.md): they are in the archive, "
    "not in this report.</p>\n"
    "<div id=\"connection\"></div>\n"
    "<h2>MPI profile</h2>\n"
    "<p class=\"note\">The MPI calls streamed so far: per function, summed over the ranks, the calls, the "
    "seconds between their Enter and Leave and the bytes they moved; then per rank, the spread of the "
    "ranks' time in MPI (its imbalance: the most over the mean, as adaptrace-report's) and of their "
    "computation (each rank's span, from its main thread's first event to its latest so far, less its "
    "time in MPI), the ranks that wait most (late sender and collective waiting, in adaptrace-report's "
    "order), each rank's figures, and its functions.</p>\n"
    "<div id=\"mpi-functions\"></div>\n<p id=\"imbalance\"></p>\n<p id=\"computation\"></p>\n"
    "<p id=\"waiting-most\"></p>\n"
    "<div id=\"ranks\"></div>\n"
    "<div id=\"rank-functions\"></div>\n"
    "<h2>Time steps</h2>\n"
    "<p class=\"note\">The computation between consecutive outermost MPI calls of the ranks' main threads, "
    "by the pair of MPI functions that bound it (adaptrace-report keys them by calling context when sampling "
    "is on): the 20 pairs with the most total time, their instances' spread, the longest instance's rank and "
    "iteration, and the rank whose instances take longest on average.</p>\n"
    "<p id=\"steps-unknown\"></p>\n<div id=\"time-steps\"></div>\n"
    "<h2>Sampling rates</h2>\n"
    "<p class=\"note\">Each sampled rank's main thread: its rate from the start of its sampling (seconds "
    "after the run's start), and each halving of the buffer's rate with the bytes in use just before and "
    "after it.</p>\n"
    "<div id=\"sampling-rates\"></div>\n"
    "<h2>Sampled profile</h2>\n"
    "<p class=\"note\">The samples of the ranks' main threads streamed so far, each weighing the period of "
    "its rate: the 30 functions with the most exclusive time, then the 15 with the most inclusive time "
    "(a sample counts once for every function on its calling path).</p>\n"
    "<div id=\"hot-functions\"></div>\n<div id=\"hot-inclusive\"></div>\n"
    "<p>Sections drawn: <span id=\"drawn\"></span></p>\n";

void adt_report_print_live_page(const char *archive, const char *json, size_t length, FILE *out)
{
    adt_report_print_page_head("adaptrace live report", archive, false, out);
    fputs(live_body, out);
    fputs("<script type=\"application/json\" id=\"live-data\">", out);
    /* '<' only occurs inside the JSON's strings (function names), where
     * \u003c is the same character: no "</script>" can end the data. */
    for (size_t i = 0; i < length; i++) {
        if (json[i] == '<')
            fputs("\\u003c", out);
        else
            fputc(json[i], out);
    }
    fputs("</script>\n", out);
    adt_report_print_page_tail(adt_report_live_page_js, out);
}
