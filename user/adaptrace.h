/*
 * adaptrace.h: the user API of adaptrace, for C and C++ programs.
 *
 * Mark the parts of a program that its profile and trace should name:
 *
 *     #include <adaptrace.h>
 *
 *     adaptrace_region_t solver = adaptrace_region_register("solver");
 *     adaptrace_region_begin(solver);
 *     ...
 *     adaptrace_region_end(solver);
 *
 * or, with a handle registered at its first use:
 *
 *     ADAPTRACE_REGION_DEFINE(solver);
 *     ADAPTRACE_REGION_BEGIN(solver, "solver");
 *     ...
 *     ADAPTRACE_REGION_END(solver);
 *
 * - A region is an Enter/Leave pair of its own region (paradigm USER) in
 *   the trace; samples taken inside it are attributed to it. Regions nest
 *   with each other and with the MPI calls made inside them.
 * - A phase (adaptrace_phase_register) is a region that the report splits
 *   its profile by: every sample and MPI call is counted in the innermost
 *   phase open around it. In the trace it carries OTF2's PHASE flag.
 * - A parameter (adaptrace_parameter_register) is a named integer whose
 *   values the program records as it goes (adaptrace_parameter_int), each
 *   in the region open around it; a metric (adaptrace_metric_register) the
 *   same for doubles (adaptrace_metric_double).
 * - adaptrace_pause / adaptrace_resume stop and restart the measurement of
 *   the calling thread: no samples, no parameter or metric values, and no region
 *   records for regions begun while paused. MPI calls are still recorded (docs/user-api.md
 *   says why).
 *
 * Every call is valid at any time and does nothing when the program runs
 * without adaptrace: link with libadaptrace_user (CMake: adaptrace::adaptrace,
 * pkg-config: adaptrace), whose functions do nothing; libadaptrace.so,
 * preloaded by the adaptrace launcher, defines the same functions and
 * takes their place (docs/user-api.md). Handles are small integers and
 * never 0; registering the same name again gives the same handle.
 * Unbalanced calls (an end without its begin on the same thread, regions
 * ending out of nesting order, regions left open) are said once on stderr,
 * counted in the run summary, and never corrupt the trace.
 */
#ifndef ADAPTRACE_H
#define ADAPTRACE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ADAPTRACE_API_VERSION 1

/* A registered region or phase; 0 is never a handle (the macros use it
 * for "not registered yet"). */
typedef uint32_t adaptrace_region_t;

/* Registers a region (a phase) by name; the name is copied. Thread-safe;
 * takes a lock and may allocate: call it once per region, not per begin. */
adaptrace_region_t adaptrace_region_register(const char *name);
adaptrace_region_t adaptrace_phase_register(const char *name);

/* Begin and end an instance of a registered region or phase on the calling
 * thread. Cheap: an append to the thread's buffer, no lock, no allocation. */
void adaptrace_region_begin(adaptrace_region_t region);
void adaptrace_region_end(adaptrace_region_t region);

/* A named integer value (a time step's number, an iteration count), recorded
 * with its time in the region open on the calling thread (OTF2's
 * ParameterInt). Register once (thread-safe, a lock), record cheaply (an
 * append). Never 0. */
typedef uint32_t adaptrace_parameter_t;
adaptrace_parameter_t adaptrace_parameter_register(const char *name);
void adaptrace_parameter_int(adaptrace_parameter_t parameter, int64_t value);

/* A named floating-point value (a residual, an energy), recorded with its
 * time (OTF2's Metric of a USER metric member, a DOUBLE): the same
 * registration and cost as a parameter. */
typedef uint32_t adaptrace_metric_t;
adaptrace_metric_t adaptrace_metric_register(const char *name);
void adaptrace_metric_double(adaptrace_metric_t metric, double value);

/* Pause and resume the calling thread's measurement; pauses nest (the
 * thread resumes when every pause was resumed). */
void adaptrace_pause(void);
void adaptrace_resume(void);

/* A static handle, registered at the first begin that reaches it. */
#define ADAPTRACE_REGION_DEFINE(handle) static adaptrace_region_t handle = 0

#define ADAPTRACE_REGISTERED_(handle, name, register_function)                        \
    (__atomic_load_n(&(handle), __ATOMIC_RELAXED) != 0                                \
         ? __atomic_load_n(&(handle), __ATOMIC_RELAXED)                               \
         : (__atomic_store_n(&(handle), register_function(name), __ATOMIC_RELAXED),  \
            __atomic_load_n(&(handle), __ATOMIC_RELAXED)))

#define ADAPTRACE_REGION_BEGIN(handle, name) \
    adaptrace_region_begin(ADAPTRACE_REGISTERED_(handle, name, adaptrace_region_register))
#define ADAPTRACE_PHASE_BEGIN(handle, name) \
    adaptrace_region_begin(ADAPTRACE_REGISTERED_(handle, name, adaptrace_phase_register))
#define ADAPTRACE_REGION_END(handle) adaptrace_region_end(__atomic_load_n(&(handle), __ATOMIC_RELAXED))
#define ADAPTRACE_PHASE_END(handle) ADAPTRACE_REGION_END(handle)

#ifdef __cplusplus
}
#endif

#endif
