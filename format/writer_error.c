/*
 * The writer's one error line (writer_internal.h), set by whichever step
 * of the end-of-run write fails first; every job of the writer reports
 * through it, and it calls nothing of theirs. Normal context.
 */
#include <stdarg.h>
#include <stdio.h>

#include "format/writer_internal.h"

void adt_writer_error(writer *w, const char *format, ...)
{
    if (w->result->error[0])
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(w->result->error, sizeof w->result->error, format, args);
    va_end(args);
}
