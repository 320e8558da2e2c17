#include "expect_notes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NOTE_LINE_MAX = 512 };

/* Grows: how often a polling loop (MPI_Test until done) runs depends on
 * the load of the machine. */
static char **notes;
static int note_count;
static int note_capacity;

void expect_note(const char *format, ...)
{
    if (note_count == note_capacity) {
        int capacity = note_capacity ? 2 * note_capacity : 1024;
        char **grown = realloc(notes, (size_t)capacity * sizeof *notes);
        if (!grown) {
            fprintf(stderr, "expect_note: no memory for %d notes\n", capacity);
            abort();
        }
        notes = grown;
        note_capacity = capacity;
    }
    char line[NOTE_LINE_MAX];
    va_list args;
    va_start(args, format);
    vsnprintf(line, sizeof line, format, args);
    va_end(args);
    notes[note_count++] = strdup(line);
}

void expect_note_call(const char *name) { expect_note("call %s", name); }

void expect_note_members(const char *keyword, int first, int step, int count)
{
    char line[NOTE_LINE_MAX];
    int used = snprintf(line, sizeof line, "%s", keyword);
    for (int i = 0; i < count; i++)
        used += snprintf(line + used, sizeof line - (size_t)used, " %d", first + i * step);
    expect_note("%s", line);
}

void expect_write(const char *directory, int rank)
{
    /* Written under another name and renamed: a log that exists is
     * complete (endings.c's aborting rank waits for the others'). */
    char path[4096], partial[4200];
    snprintf(path, sizeof path, "%s/rank.%d.txt", directory, rank);
    snprintf(partial, sizeof partial, "%s.partial", path);
    FILE *file = fopen(partial, "w");
    if (!file) {
        perror(partial);
        abort();
    }
    for (int i = 0; i < note_count; i++) {
        fprintf(file, "%s\n", notes[i]);
        free(notes[i]);
    }
    note_count = 0;
    if (fclose(file) != 0 || rename(partial, path) != 0) {
        perror(path);
        abort();
    }
}
