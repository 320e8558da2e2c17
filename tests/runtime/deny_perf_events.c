/* Preloaded by the sleeping-calls test: perf_event_open fails with EACCES,
 * as under kernel.perf_event_paranoid = 3 or a container's seccomp filter,
 * so that adaptrace's fallback is exercised. Every other system call goes
 * to libc's syscall() with its six possible arguments. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>

long syscall(long number, ...)
{
    if (number == SYS_perf_event_open) {
        errno = EACCES;
        return -1;
    }
    long (*real)(long, ...) = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    va_list arguments;
    va_start(arguments, number);
    long a = va_arg(arguments, long), b = va_arg(arguments, long), c = va_arg(arguments, long),
         d = va_arg(arguments, long), e = va_arg(arguments, long), f = va_arg(arguments, long);
    va_end(arguments);
    return real(number, a, b, c, d, e, f);
}
