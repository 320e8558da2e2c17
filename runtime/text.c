/*
 * Text built without stdio, for code that runs in a signal handler
 * (ending.c, rescue.c): appends into a fixed array, cutting what does not
 * fit. Async-signal-safe: no allocation, no locale, no lock.
 */
#include <signal.h>
#include <string.h>

#include "runtime_internal.h"

void adt_text_add(adt_text *text, const char *part)
{
    while (*part != '\0' && text->length + 1 < sizeof text->bytes)
        text->bytes[text->length++] = *part++;
    text->bytes[text->length] = '\0';
}

void adt_text_add_number(adt_text *text, uint64_t value)
{
    char digits[24];
    size_t count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    while (count > 0 && text->length + 1 < sizeof text->bytes)
        text->bytes[text->length++] = digits[--count];
    text->bytes[text->length] = '\0';
}

void adt_text_add_signal_name(adt_text *text, int signum)
{
    const char *abbreviation = sigabbrev_np(signum);
    if (abbreviation != NULL) {
        adt_text_add(text, "SIG");
        adt_text_add(text, abbreviation);
    } else {
        adt_text_add(text, "signal ");
        adt_text_add_number(text, (uint64_t)signum);
    }
}
