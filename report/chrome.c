/* The trace as Chrome trace-event JSON (Perfetto UI, chrome://tracing),
 * written while the archive is read: each region instance as a complete
 * event when its Leave is read, each message as a flow when the matching
 * finds its second end. Viewers sort the events, so they go out in the order
 * the pass meets them and nothing of the trace is kept for the file.
 * Samples are left out (docs/report.md says why). */
#include <inttypes.h>

#include "report_internal.h"

/* Every event after the first starts with the comma that separates it
 * from the one before. */
static void begin_event(struct adt_report_chrome *chrome)
{
    fputs(chrome->written ? ",\n{" : "\n{", chrome->out);
    chrome->written = true;
}

/* Nanoseconds from the start of the run. Slices are printed from these
 * integers, not from rounded microseconds, so that a slice nested in
 * another never ends after it in the file. */
static uint64_t nanoseconds(const struct adt_report_chrome *chrome, uint64_t time)
{
    uint64_t ticks = time > chrome->global_offset ? time - chrome->global_offset : 0;
    return (uint64_t)((double)ticks * chrome->nanoseconds_per_tick + 0.5);
}

/* Microseconds, the unit of ts and dur, to the nanosecond. */
static void print_microseconds(const char *key, uint64_t time_ns, FILE *out)
{
    fprintf(out, ",\"%s\":%" PRIu64 ".%03" PRIu64, key, time_ns / 1000, time_ns % 1000);
}

/* otherData: what the viewers show as the trace's metadata; the length
 * of the run is there for checking. */
void adt_report_chrome_start(struct adt_report_chrome *chrome, uint64_t global_offset, uint64_t timer_resolution,
                             uint64_t trace_length, const char *archive)
{
    chrome->global_offset = global_offset;
    chrome->nanoseconds_per_tick = 1e9 / (double)timer_resolution;
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"archive\":", chrome->out);
    adt_report_print_json_string(archive, chrome->out);
    print_microseconds("run_microseconds", nanoseconds(chrome, global_offset + trace_length), chrome->out);
    fputs("},\n\"traceEvents\":[", chrome->out);
}

void adt_report_chrome_process(struct adt_report_chrome *chrome, uint32_t rank)
{
    begin_event(chrome);
    fprintf(chrome->out,
            "\"ph\":\"M\",\"pid\":%" PRIu32 ",\"name\":\"process_name\",\"args\":{\"name\":\"rank %" PRIu32 "\"}}",
            rank, rank);
}

void adt_report_chrome_thread(struct adt_report_chrome *chrome, uint32_t rank, uint32_t thread, const char *name)
{
    begin_event(chrome);
    fprintf(chrome->out,
            "\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"name\":\"thread_name\",\"args\":{\"name\":", rank,
            thread);
    adt_report_print_json_string(name, chrome->out);
    fputs("}}", chrome->out);
}

void adt_report_chrome_slice(struct adt_report_chrome *chrome, uint32_t rank, uint32_t thread, const char *name,
                             bool mpi, uint64_t enter_time, uint64_t leave_time)
{
    uint64_t start = nanoseconds(chrome, enter_time);
    /* A Leave before its Enter (an archive whose clock went back) is a
     * slice of no length, not one of 2^64 ns. */
    uint64_t end = leave_time > enter_time ? nanoseconds(chrome, leave_time) : start;
    begin_event(chrome);
    fprintf(chrome->out, "\"ph\":\"X\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, rank, thread);
    print_microseconds("ts", start, chrome->out);
    print_microseconds("dur", end - start, chrome->out);
    fputs(mpi ? ",\"cat\":\"mpi\",\"name\":" : ",\"cat\":\"region\",\"name\":", chrome->out);
    adt_report_print_json_string(name, chrome->out);
    fputc('}', chrome->out);
}

/* One end of a flow, at the time of the message record. The record lies
 * inside the MPI call that made it, so both ends bind to the slice that
 * encloses them ("bp":"e"); the default would bind the finish to the next
 * slice to begin. */
static void print_flow_end(struct adt_report_chrome *chrome, const char *phase, uint64_t id,
                           const adt_feed_message_end *message, uint32_t rank)
{
    begin_event(chrome);
    fprintf(chrome->out,
            "\"ph\":\"%s\",\"bp\":\"e\",\"cat\":\"message\",\"name\":\"message\",\"id\":%" PRIu64 ",\"pid\":%" PRIu32
            ",\"tid\":%" PRIu32,
            phase, id, rank, message->location);
    print_microseconds("ts", nanoseconds(chrome, message->time), chrome->out);
    fprintf(chrome->out, ",\"args\":{\"bytes\":%" PRIu64 ",\"tag\":%" PRIu32 "}}", message->bytes, message->tag);
}

void adt_report_chrome_flow(void *data, const adt_feed_message_end *send,
                            const adt_feed_message_end *receive)
{
    struct adt_report_chrome *chrome = data;
    print_flow_end(chrome, "s", chrome->flows, send, send->sender);
    print_flow_end(chrome, "f", chrome->flows, receive, receive->receiver);
    chrome->flows++;
}

void adt_report_chrome_end(struct adt_report_chrome *chrome)
{
    fputs("\n]}\n", chrome->out);
}
