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
 * system call (PERF_EVENT_IOC_PERIOD or timer_settime, 5–10 µs in the
 * development VM), so drawing at every signal would multiply adaptrace's
 * own cost per signal (~1.5 µs). The block size also trades two errors
 * (tests/sampler/dither_test.cpp simulates both, in units of the error of
 * independent sampling moments, k = 0..5 halvings):
 * - the survivors of k halvings are spaced by sums of 2^k periods; with a
 *   period per signal those spread by only 3/4 / sqrt(2^k) of their mean
 *   and mix slowly over a program period of the same length (2.2 at
 *   k = 5), with one per block of b they spread b times more in variance
 *   (1.7 for b = 2, 1.2 for b = 4, 1.04 for b = 8);
 * - a program that stays in one function for many samples is counted by
 *   how many samples fall into each stretch, and a block of b equal
 *   periods moves b samples at once (0.84 for b = 1, 1.03 for 2, 1.37
 *   for 4, 1.65 for 8).
 * b = 4 keeps the larger of the two lowest.
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

#define ADT_DITHER_SIGNALS_PER_DRAW 4

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
