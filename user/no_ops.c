/*
 * libadaptrace_user: the user API doing nothing, for a program that runs
 * without adaptrace. libadaptrace.so defines the same functions; preloaded
 * (the adaptrace launcher) or linked ahead of this library, its
 * definitions take the place of these (the dynamic loader binds each name
 * to the first object that defines it), so a traced program calls the
 * runtime directly, with no forwarding. Any context: nothing is done.
 */
#include "adaptrace.h"

/* Any handle but 0 (the macros' "not registered yet"). */
#define INERT_HANDLE 1u

adaptrace_region_t adaptrace_region_register(const char *name)
{
    (void)name;
    return INERT_HANDLE;
}

adaptrace_region_t adaptrace_phase_register(const char *name)
{
    (void)name;
    return INERT_HANDLE;
}

void adaptrace_region_begin(adaptrace_region_t region)
{
    (void)region;
}

void adaptrace_region_end(adaptrace_region_t region)
{
    (void)region;
}

adaptrace_parameter_t adaptrace_parameter_register(const char *name)
{
    (void)name;
    return INERT_HANDLE;
}

void adaptrace_parameter_int(adaptrace_parameter_t parameter, int64_t value)
{
    (void)parameter, (void)value;
}

adaptrace_metric_t adaptrace_metric_register(const char *name)
{
    (void)name;
    return INERT_HANDLE;
}

void adaptrace_metric_double(adaptrace_metric_t metric, double value)
{
    (void)metric, (void)value;
}

void adaptrace_pause(void)
{
}

void adaptrace_resume(void)
{
}
