/*
 * The expectation log of the whole-run test programs: each program notes
 * every MPI call it makes (and the members of the communicators it builds)
 * in call order, and before MPI_Finalize writes EXPECT_DIR/rank.<r>.txt,
 * which adaptrace-mpi-trace-check compares with the trace:
 *
 *   call <MPI function>                   one line per call, in call order
 *   members <w0> <w1> ...                 the communicator used by the last
 *                                         call has these MPI_COMM_WORLD ranks,
 *                                         in communicator-rank order
 *   intercomm <local ...> | <remote ...>  the same for an inter-communicator
 *
 * Expected members come from the program's own construction, not from MPI.
 * One log per process; C, C++ and (through bind(C)) Fortran code append to
 * the same log, so a mixed-language program lists its calls in one order.
 */
#ifndef ADAPTRACE_TESTS_MPI_EXPECT_NOTES_H
#define ADAPTRACE_TESTS_MPI_EXPECT_NOTES_H

#ifdef __cplusplus
extern "C" {
#endif

/* Appends one printf-formatted line to the log. */
void expect_note(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* Appends "call NAME". */
void expect_note_call(const char *name);
/* Appends "KEYWORD first first+step ..." (count ranks). */
void expect_note_members(const char *keyword, int first, int step, int count);
/* Writes the log to DIRECTORY/rank.<rank>.txt and empties it. */
void expect_write(const char *directory, int rank);

#ifdef __cplusplus
}
#endif

/* Notes the call, then makes it: CALL(MPI_Send, buffer, ...). */
#define CALL(function, ...) (expect_note_call(#function), function(__VA_ARGS__))

#endif
