/* The HTML page: one file holding the profile as JSON, the embedded
 * libraries (d3, d3-flame-graph, page_common.js: page_shell.c) and page.js,
 * which draws from the JSON. Nothing is fetched when the page is opened. */
#include "report_internal.h"

/* Compiled in from page.js (embed.cmake). */
extern const char adt_report_page_js[];

static void print_body(FILE *out)
{
    fputs("<h2>MPI profile</h2>\n"
          "<p class=\"note\">Exclusive time in each MPI function summed over all ranks, the calls and the bytes "
          "they moved. Per rank: span (first to last event), time in MPI, computation (span less MPI), "
          "late-sender waiting (a receive entered before its matching send) and collective waiting (entry to "
          "the last member's entry); max/mean is the imbalance.</p>\n"
          "<div id=\"mpi-functions\"></div>\n<div id=\"rank-spread\"></div>\n<div id=\"rank-bars\"></div>\n"
          "<h2>Timeline</h2>\n"
          "<p class=\"note\">Each thread of each rank over the run, a row each (a rank's threads together): "
          "blue is computation, red is inside MPI, a mix is a time bin that held both; grey is a thread before "
          "its first event or after its last. Scroll to zoom, drag to pan.</p>\n"
          "<div id=\"timeline\"></div>\n"
          "<h2>Communication matrix</h2>\n"
          "<p class=\"note\">Point-to-point messages by sender (row) and receiver (column): bytes on the left, "
          "message counts on the right.</p>\n"
          "<div class=\"matrices\"><div id=\"matrix-bytes\"></div><div id=\"matrix-messages\"></div></div>\n"
          "<h2>Time steps</h2>\n"
          "<p class=\"note\">The computation between two consecutive MPI calls of a thread, one kind per pair of "
          "calls (their call paths when the run was sampled): the kinds with the most total time, and the "
          "histogram of the durations of each kind's instances over all iterations and ranks. A bar far right "
          "is an outlier; its rank and iteration are named above the chart. Hover a chart for the calls' paths."
          "</p>\n"
          "<div id=\"step-table\"></div>\n<div id=\"step-histograms\" class=\"matrices\"></div>\n"
          "<h2>Sampled profile</h2>\n"
          "<p class=\"note\">Each sample weighs the period its interrupt generator states. Click a frame of "
          "the flame graph to zoom into it.</p>\n"
          "<div id=\"flame\"></div>\n<div id=\"hot-functions\"></div>\n<div id=\"hot-paths\"></div>\n"
          "<div id=\"hot-lines\"></div>\n"
          "<h2>User regions and phases</h2>\n"
          "<p class=\"note\">The regions the program marked (adaptrace.h): instances, inclusive time and time "
          "less what was entered inside them, all ranks and threads. The phases split the profile: each MPI "
          "call and each sample counts in the innermost phase open on its thread.</p>\n"
          "<div id=\"user-regions\"></div>\n<div id=\"phases\"></div>\n"
          "<h2>The adaptive buffer at work</h2>\n"
          "<p class=\"note\">The sampling rate of each sampled thread over the run: the rate at its first event, "
          "halved each time the buffer dropped a level of its samples (the memory ran out, or the thread could not "
          "keep up with its rate). Each halving is a dot; hover it for its time and the new rate.</p>\n"
          "<div id=\"rates\"></div>\n"
          "<p class=\"note\">The buffer's use at each halving (the bytes of the thread's process's buffer in use, "
          "all its threads together): an open dot just before the level was dropped, a filled one just after. "
          "These are the only values the archive holds: nothing is known of the use between two halvings.</p>\n"
          "<div id=\"buffer-use\"></div>\n"
          "<p class=\"note\">The flushes: when the buffer was full and dropping samples could not make room, "
          "the thread's events were written out to a file mid-run, a red bar per flush from its start for its "
          "duration (hover it). The normal run has none.</p>\n"
          "<div id=\"flushes\"></div>\n"
          "<p>Sections drawn: <span id=\"drawn\"></span></p>\n",
          out);
}

static void print_page(const struct adt_report_profile *profile, const char *archive, FILE *out)
{
    adt_report_print_page_head("adaptrace report", archive, true, out);
    print_body(out);
    fputs("<script type=\"application/json\" id=\"profile-data\">", out);
    adt_report_print_json(profile, out);
    fputs("</script>\n", out);
    adt_report_print_page_tail(adt_report_page_js, out);
}

int adt_report_write_html(const struct adt_report_profile *profile, const char *archive, const char *path,
                          char *error, size_t error_size)
{
    return adt_report_write_file(path, print_page, profile, archive, error, error_size);
}
