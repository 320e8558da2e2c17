/*
 * The de Bruijn lookup tables behind adt_lambda32/64 (buffer.h): entry
 * ((2^i * constant) >> (width - log2 width - 1)) holds i. The top
 * log2(width) bits of the products are distinct (the constants are de
 * Bruijn sequences) and one more bit makes them all nonzero, so entry 0 is
 * reached only by n = 0 and holds the bit width; unused entries are 0.
 */
#include "buffer/buffer.h"

const uint8_t adt_debruijn_table32[64] = {
    32, 0, 0, 1, 28, 0, 0, 2, 29, 0, 0, 14, 24, 0, 3, 0,
    30, 0, 0, 22, 20, 0, 15, 0, 25, 0, 17, 0, 0, 4, 0, 8,
    31, 0, 27, 0, 0, 13, 23, 0, 0, 21, 19, 0, 0, 16, 0, 7,
    0, 26, 12, 0, 0, 18, 0, 6, 0, 11, 0, 5, 10, 0, 9, 0,
};

const uint8_t adt_debruijn_table64[128] = {
    64, 0, 0, 1, 0, 48, 0, 2, 0, 57, 49, 0, 0, 28, 0, 3,
    61, 0, 58, 0, 0, 50, 42, 0, 0, 38, 0, 29, 0, 17, 0, 4,
    62, 0, 55, 0, 59, 0, 36, 0, 53, 0, 51, 0, 43, 0, 22, 0,
    45, 0, 39, 0, 33, 0, 30, 0, 24, 0, 18, 0, 12, 0, 0, 5,
    63, 0, 47, 0, 56, 0, 27, 0, 60, 0, 0, 41, 37, 0, 16, 0,
    0, 54, 0, 35, 52, 0, 0, 21, 44, 0, 32, 0, 23, 0, 11, 0,
    0, 46, 0, 26, 0, 40, 0, 15, 0, 34, 0, 20, 0, 31, 0, 10,
    0, 25, 0, 14, 0, 19, 0, 9, 0, 13, 0, 8, 0, 7, 6, 0,
};
