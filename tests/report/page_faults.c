/*
 * A program that takes its page faults in one function, for the test of
 * counters per function (issue #29, check_report.py page-faults): between
 * two stretches of computing that fault nothing, touch_pages writes one
 * byte to each of PAGES pages of a new anonymous mapping, so that each
 * write is one minor fault. It knows nothing of adaptrace: the test runs
 * it through the launcher.
 *
 * usage: page_faults PAGES CPU_SECONDS TRUTH_FILE
 *
 * touch_pages spreads its PAGES writes over CPU_SECONDS of the thread's
 * CPU time, and compute takes CPU_SECONDS / 4 before and after it. Why so
 * slowly: a sample's counter values are what was counted since the
 * previous sample, added to the later sample's function, so the faults
 * after touch_pages' last sample go to compute's first one; spread over
 * many sampling periods, that tail is one period's share. TRUTH_FILE gets
 * one line: PAGES and the minor faults the thread took in touch_pages
 * (getrusage RUSAGE_THREAD).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Keeps the computing from being optimized away. */
static volatile double sink;

static uint64_t cpu_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static long minor_faults(void)
{
    struct rusage usage;
    getrusage(RUSAGE_THREAD, &usage);
    return usage.ru_minflt;
}

/* Arithmetic on registers only: no memory is touched, so no fault. The
 * clock is read every 10,000 steps (tens of microseconds), so that few
 * samples land in clock_gettime rather than in the caller. Always inlined,
 * also in the unoptimized sanitizer build: its samples must be its
 * caller's. */
static inline __attribute__((always_inline)) double spin_until(uint64_t deadline_ns)
{
    double x = 1.0;
    while (cpu_ns() < deadline_ns) {
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 0.5;
    }
    return x;
}

__attribute__((noipa)) static double compute(uint64_t ns)
{
    return spin_until(cpu_ns() + ns);
}

/* The spinning is inlined, so that the samples between the writes land in
 * touch_pages itself and count its faults to it, not to a callee. */
__attribute__((noipa)) static double touch_pages(volatile char *region, long pages, size_t page_size, uint64_t ns)
{
    double x = 0;
    uint64_t start = cpu_ns();
    for (long page = 0; page < pages; page++) {
        region[(size_t)page * page_size] = 1;
        x += spin_until(start + ns * (uint64_t)(page + 1) / (uint64_t)pages);
    }
    return x;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: page_faults PAGES CPU_SECONDS TRUTH_FILE\n");
        return 2;
    }
    long pages = atol(argv[1]);
    uint64_t ns = (uint64_t)(atof(argv[2]) * 1e9);
    size_t page_size = (size_t)sysconf(_SC_PAGESIZE);
    if (pages <= 0 || ns == 0) {
        fprintf(stderr, "page_faults: PAGES and CPU_SECONDS must be positive\n");
        return 2;
    }
    char *region = mmap(NULL, (size_t)pages * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) {
        perror("page_faults: mmap");
        return 1;
    }
    /* A transparent huge page would take 512 pages' writes in one fault. */
    madvise(region, (size_t)pages * page_size, MADV_NOHUGEPAGE);
    FILE *truth = fopen(argv[3], "w");
    if (truth == NULL) {
        perror(argv[3]);
        return 1;
    }
    sink = compute(ns / 4);
    long before = minor_faults();
    sink += touch_pages(region, pages, page_size, ns);
    long faults = minor_faults() - before;
    sink += compute(ns / 4);
    fprintf(truth, "%ld %ld\n", pages, faults);
    fclose(truth);
    return 0;
}
