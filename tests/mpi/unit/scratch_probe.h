/* scratch_probe.c: scratch.h's request copy, callable from C++. */
#ifndef ADT_TEST_SCRATCH_PROBE_H
#define ADT_TEST_SCRATCH_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct scratch_outcome {
    bool has_copy;                   /* the call got its copy of the requests */
    uint64_t completions_unrecorded; /* added to the count by this call */
} scratch_outcome;

/* Makes and releases the copy for a call over `requests` requests. */
scratch_outcome scratch_probe(int requests);
/* Requests a call can have without allocating (ADT_MPI_SCRATCH_INLINE). */
int scratch_inline_requests(void);

#ifdef __cplusplus
}
#endif

#endif
