/*
 * grammar_internal.h: the layout of a grammar and the fast path of its
 * append, inline in the fold (skeleton/ only; hot path: no malloc, no
 * lock, no stdio; the owning thread only). grammar.c says what the fast
 * path is: inside a loop, a call is compared with the terminal the loop
 * expects next and, when it is that one, only counted.
 */
#ifndef ADAPTRACE_SKELETON_GRAMMAR_INTERNAL_H
#define ADAPTRACE_SKELETON_GRAMMAR_INTERNAL_H

#include "skeleton.h"

#define ADT_SKELETON_GRAMMAR_NIL 0u

typedef struct symbol {
    uint32_t prev;
    uint32_t next;
    uint32_t value;     /* terminal, RULE_BIT | rule, or GUARD_BIT | rule for a rule's guard */
    uint32_t exponent;
} symbol;

typedef struct rule {
    uint32_t guard;     /* the circular list's head; NIL: rule free */
    uint32_t uses;      /* symbols that reference it (rule 0: none) */
} rule;

struct adt_skeleton_grammar {
    symbol *symbols;        /* [0] is NIL */
    rule *rules;
    uint32_t *digrams;      /* slots: symbol index of a digram's first symbol, NIL empty */
    uint32_t symbol_capacity;
    uint32_t rule_capacity;
    uint32_t digram_mask;
    uint32_t free_symbol;   /* free list through next */
    uint32_t symbols_used;
    uint32_t free_rule;     /* free list through uses */
    uint32_t rules_used;
    uint32_t digrams_used;
    uint64_t length;
    uint64_t probes;
    uint32_t *expected;        /* the fast path: R's expansion (FAST_MAX slots) */
    uint32_t expected_length;
    uint32_t matched;          /* terminals taken since, R's prefix, not yet in the rules */
    uint32_t followed;         /* the symbol R^n followed; NIL: none */
    uint32_t iterations;       /* whole iterations of R taken, not yet in its exponent */
};

/* Points a grammar's arrays into its memory, after the struct, for these
 * capacities (the layout adt_skeleton_grammar_init makes and a grown
 * grammar keeps): the init, and a grammar read back from an image of the
 * share (image_read.c), whose pointers were the saving process's. */
void adt_skeleton_grammar_lay_out(adt_skeleton_grammar *g, uint32_t symbols, uint32_t rules,
                                  uint32_t digram_slots_log2);

/* Whether the sequence ends in a loop that the fast path follows. */
static inline bool adt_skeleton_grammar_follows(const adt_skeleton_grammar *g)
{
    return g->followed != ADT_SKELETON_GRAMMAR_NIL;
}

/* The terminal that loop expects next (only while it follows one: the
 * fold tests that once, then compares a call's key with this terminal's
 * before hashing it). */
static inline uint32_t adt_skeleton_grammar_followed_next(const adt_skeleton_grammar *g)
{
    return g->expected[g->matched];
}

/* The terminal the loop the sequence ends in expects next, or UINT32_MAX. */
static inline uint32_t adt_skeleton_grammar_expected(const adt_skeleton_grammar *g)
{
    return adt_skeleton_grammar_follows(g) ? adt_skeleton_grammar_followed_next(g) : UINT32_MAX;
}

/* The followed loop's exponent would pass 32 bits: its iterations are
 * put into it and the loop followed anew (grammar.c: once per 2^31
 * iterations). */
void adt_skeleton_grammar_refollow(adt_skeleton_grammar *g);

/* Appends the terminal adt_skeleton_grammar_expected gave (not
 * UINT32_MAX): the fast path needs no room, so it never refuses. A whole
 * iteration is counted, and put into the loop's exponent by the
 * settling. True when the caller must call adt_skeleton_grammar_refollow
 * next (rarely: the fold does it in a function of its own, so that its
 * common path calls nothing). */
static inline bool adt_skeleton_grammar_take_expected_until_refollow(adt_skeleton_grammar *g)
{
    g->length++;
    if (++g->matched < g->expected_length)
        return false;
    g->matched = 0;
    return __builtin_expect(++g->iterations >= UINT32_MAX / 2 - g->symbols[g->followed].exponent, 0);
}

static inline void adt_skeleton_grammar_take_expected(adt_skeleton_grammar *g)
{
    if (adt_skeleton_grammar_take_expected_until_refollow(g))
        adt_skeleton_grammar_refollow(g);
}

#endif
