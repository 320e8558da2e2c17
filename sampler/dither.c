/*
 * The interval generator of dither.h. Runs in the signal handler (each
 * sample draws the next interval) and at thread start; pure arithmetic on
 * the caller's state, so async-signal-safe.
 */
#include "sampler/dither.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotate_left(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* splitmix64 expands any seed into a state that is not all zero, which
 * is the one state xoshiro256** must never be in. */
void adt_dither_seed(adt_dither *dither, uint64_t seed)
{
    for (int i = 0; i < 4; ++i)
        dither->state[i] = splitmix64(&seed);
}

uint64_t adt_dither_next(adt_dither *dither)
{
    uint64_t *s = dither->state;
    uint64_t result = rotate_left(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotate_left(s[3], 45);
    return result;
}

uint64_t adt_dither_interval(adt_dither *dither, uint64_t mean_ns)
{
    /* u uniform in [0, 1) from the top 53 bits; -log1p(-u) is an
     * exponential of mean 1, at most 53 ln 2 ≈ 36.7. */
    double u = (double)(adt_dither_next(dither) >> 11) * 0x1.0p-53;
    double exponential = -log1p(-u);
    double interval = (double)mean_ns * (0.25 + 0.75 * exponential);
    return interval < 1.0 ? 1 : (uint64_t)interval;
}
