/*
 * Randomised sampling intervals (docs/sampling.md, "Dithering"): a
 * thread's timer period is drawn anew every ADT_DITHER_SIGNALS_PER_DRAW
 * signals, so that the samples a location keeps after k halvings — every
 * 2^k-th, spaced by sums of 2^k periods — do not keep one phase of a
 * periodic application.
 *
 * A period of mean M is M/4 + an exponential of mean 3M/4: its mean is
 * exactly M (the rate the summary reports), it is never shorter than M/4
 * (a signal never follows the previous one within a quarter period, which
 * would only add signal cost), and its relative standard deviation is
 * 3/4, close to the exponential's 1, which mixes phases best.
 *
 * Why a block of signals per draw rather than one: re-arming costs a
 * system call (PERF_EVENT_IOC_PERIOD or timer_settime, 5–40 µs in the
 * development VM from a handler, against ~1.5 µs for the rest of it), so
 * drawing at every signal would multiply adaptrace's cost per signal.
 * Once per 8 signals it adds a few µs per 8. The block also helps the
 * thinned samples: the survivors of k ≥ 3 halvings are spaced by 2^k / 8
 * whole blocks, whose sum keeps a relative spread of 3/4 / sqrt(2^k / 8)
 * rather than the 3/4 / sqrt(2^k) of independent intervals; below that,
 * 8 / 2^k survivors in a row share a period, and the next block moves
 * them to another phase.
 *
 * The generator is xoshiro256** seeded through splitmix64: a few integer
 * operations and one log1p per draw, no global state, so each thread
 * draws from its own state. Async-signal-safe: pure arithmetic on the
 * caller's memory (log1p of an argument in (-1, 0] has no error case and
 * touches neither errno nor a lock).
 */
#ifndef ADAPTRACE_SAMPLER_DITHER_H
#define ADAPTRACE_SAMPLER_DITHER_H

#include <stdint.h>

#define ADT_DITHER_SIGNALS_PER_DRAW 8

typedef struct adt_dither {
    uint64_t state[4];
} adt_dither;

/* Any seed gives a full, distinct stream. */
void adt_dither_seed(adt_dither *dither, uint64_t seed);
/* The next 64 random bits. */
uint64_t adt_dither_next(adt_dither *dither);
/* The next interval of mean mean_ns (≥ mean_ns / 4, ≥ 1). */
uint64_t adt_dither_interval(adt_dither *dither, uint64_t mean_ns);

#endif
