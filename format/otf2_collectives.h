/* Internal: OTF2's collective callbacks over an adt_collectives, so that
 * the archive is written in OTF2's collective mode by every rank (a serial
 * program is the case size 1). */
#ifndef ADAPTRACE_FORMAT_OTF2_COLLECTIVES_H
#define ADAPTRACE_FORMAT_OTF2_COLLECTIVES_H

#include <otf2/otf2.h>

#include "format/format.h"

/* Allocates *context (the caller frees it after OTF2_Archive_Close);
 * collectives must outlive the archive. */
OTF2_ErrorCode adt_otf2_set_collectives(OTF2_Archive *archive, const adt_collectives *collectives,
                                        OTF2_CollectiveContext **context);

#endif
