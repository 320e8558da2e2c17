/* What the two HTML pages share around their own body and script: the
 * report page of adaptrace-report --html (html.c) and the analyzer's
 * live/report.html (live_html.c). The head holds the style, the embedded
 * libraries (d3, d3-flame-graph where the page draws a flame graph) and
 * page_common.js; nothing is fetched when the page is opened. Runs when a
 * page is written (the end of adaptrace-report, an analyzer's report
 * round), never in the measured application. */
#include "report_internal.h"

/* Compiled in from the build's npm packages and the page scripts
 * (embed.cmake). */
extern const char adt_report_d3_js[];
extern const char adt_report_flamegraph_js[];
extern const char adt_report_page_common_js[];

static const char page_style[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222}"
    "h2{border-bottom:1px solid #ccc;margin-top:1.6em}"
    "table{border-collapse:collapse;margin:.6em 0}"
    "th,td{padding:2px 10px;text-align:right;border-bottom:1px solid #eee}"
    "th:first-child,td:first-child{text-align:left}"
    "p.note{color:#555;max-width:60em}"
    ".matrices{display:flex;gap:2em;flex-wrap:wrap}";

static void print_html_text(const char *text, FILE *out)
{
    for (const char *c = text; *c; c++) {
        switch (*c) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*c, out);
        }
    }
}

void adt_report_print_page_head(const char *heading, const char *archive, bool flame_graph, FILE *out)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", out);
    print_html_text(heading, out);
    fputs(": ", out);
    print_html_text(archive, out);
    fprintf(out, "</title>\n<style>%s</style>\n<script>%s</script>\n", page_style, adt_report_d3_js);
    if (flame_graph)
        fprintf(out, "<script>%s</script>\n", adt_report_flamegraph_js);
    fprintf(out, "<script>%s</script>\n</head>\n<body>\n<h1>", adt_report_page_common_js);
    print_html_text(heading, out);
    fputs(": ", out);
    print_html_text(archive, out);
    fputs("</h1>\n", out);
}

void adt_report_print_page_tail(const char *script, FILE *out)
{
    fprintf(out, "<script>%s</script>\n</body>\n</html>\n", script);
}
