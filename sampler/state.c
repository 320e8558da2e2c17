/*
 * The sampler's process-wide state, defined once here and read by every
 * other file of the sampler: set at start-up (startup.c), read by the
 * handler, the MPI wrappers' unwinding and the end of the run.
 */
#include "sampler/sampler_internal.h"

adt_sampler_global adt_sampler;
const char adt_sampler_timer_token = 0;
__thread adt_sampler_thread *adt_sampler_current __attribute__((tls_model("initial-exec")));
