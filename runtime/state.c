/*
 * The measurement's state (unstarted, inert, recording, finished), which
 * start-up (runtime.c), the threads (threads.c) and the endings by a
 * signal (ending.c) read and change.
 *
 * Execution context: any, signal handlers included: each function is one
 * atomic load, store or compare-and-swap on one variable, so it is
 * async-signal-safe and never waits. It lives apart from runtime.c so
 * that the files that read it depend on it alone, and runtime.c on them,
 * never the other way round.
 */
#include <stdatomic.h>

#include "runtime_internal.h"

static _Atomic int state = ADT_RUN_UNSTARTED;

adt_run_state adt_run_state_now(void)
{
    return (adt_run_state)atomic_load_explicit(&state, memory_order_acquire);
}

void adt_run_state_set(adt_run_state now)
{
    atomic_store(&state, now);
}

bool adt_runtime_recording(void)
{
    return adt_run_state_now() == ADT_RUN_RECORDING;
}

bool adt_runtime_end_recording(void)
{
    int expected = ADT_RUN_RECORDING;
    return atomic_compare_exchange_strong(&state, &expected, ADT_RUN_FINISHED);
}
