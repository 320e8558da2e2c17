/*
 * grammar.c: Sequitur with run-length exponents, in memory laid out once
 * (hot path: no malloc, no lock, no stdio; the owning thread only).
 *
 * Invariants kept after every append (Nevill-Manning & Witten's Sequitur,
 * with Pilgrim's twins rule):
 * - digram uniqueness: no two non-overlapping pairs of adjacent symbols
 *   (value and exponent both) are equal; the digram table maps each pair
 *   to its one occurrence;
 * - no two adjacent symbols have the same value: x^i x^j is x^(i+j), which
 *   is how a loop of n iterations becomes one symbol with exponent n;
 * - rule utility: a rule referenced once, with exponent 1, is inlined.
 * Every step below works on a few neighbouring symbols; Sequitur's proof
 * that the work is linear in the input carries over (each rule creation
 * or twin merge removes a symbol for good), so each append costs
 * amortised constant time.
 *
 * Room: before each append at least ROOM_SYMBOLS symbols and ROOM_RULES
 * rules must be free and the digram table at most half full, else the
 * append is refused and the grammar stays as it is (it still expands to
 * everything appended before). The steps of one append never come near
 * that reserve: each rule creation takes two symbols and frees them again
 * when both occurrences are replaced. A refused grammar can be moved into
 * a larger one (adt_skeleton_grammar_grow: the owning thread, off the
 * common path, no malloc): symbols and rules keep their indices, so the
 * arrays are copied as they are and only the digram table is hashed anew.
 *
 * The fast path: once the sequence ends in a loop R^n (a rule with an
 * exponent of at least 2, or any terminal), R's expansion is written out
 * once (at most FAST_MAX terminals); appends that follow it are only
 * compared with it, and whole iterations are counted: R^n becomes
 * R^(n+k), which is what Sequitur reaches through its twins rule, at the
 * cost of one comparison per call instead of several digram lookups. The
 * count goes into the exponent (and its digram into the table) when a
 * call departs from the loop, or before the grammar is read out; then
 * the iteration's matched part is appended the ordinary way. Room for
 * that is checked when the path starts following a loop.
 */
#include <string.h>

#include "grammar_internal.h"
#include "layout_internal.h"

#define NIL ADT_SKELETON_GRAMMAR_NIL
#define GUARD_BIT 0x40000000u
#define ROOM_SYMBOLS 64u
#define ROOM_RULES 16u
/* The longest loop body the fast path below follows, in terminals. */
#define FAST_MAX 256u

size_t adt_skeleton_grammar_bytes(uint32_t symbols, uint32_t rules, uint32_t digram_slots_log2)
{
    return adt_skeleton_align8(sizeof(adt_skeleton_grammar)) + adt_skeleton_align8((size_t)symbols * sizeof(symbol)) +
           adt_skeleton_align8((size_t)rules * sizeof(rule)) + adt_skeleton_align8(sizeof(uint32_t) << digram_slots_log2) +
           adt_skeleton_align8(sizeof(uint32_t) * FAST_MAX);
}

void adt_skeleton_grammar_lay_out(adt_skeleton_grammar *g, uint32_t symbols, uint32_t rules,
                                  uint32_t digram_slots_log2)
{
    uint8_t *at = (uint8_t *)g + adt_skeleton_align8(sizeof *g);
    g->symbols = (symbol *)at;
    at += adt_skeleton_align8((size_t)symbols * sizeof(symbol));
    g->rules = (rule *)at;
    at += adt_skeleton_align8((size_t)rules * sizeof(rule));
    g->digrams = (uint32_t *)at;
    at += adt_skeleton_align8(sizeof(uint32_t) << digram_slots_log2);
    g->expected = (uint32_t *)at;
    g->symbol_capacity = symbols;
    g->rule_capacity = rules;
    g->digram_mask = (1u << digram_slots_log2) - 1;
}

adt_skeleton_grammar *adt_skeleton_grammar_init(void *memory, uint32_t symbols, uint32_t rules,
                                                uint32_t digram_slots_log2)
{
    memset(memory, 0, adt_skeleton_grammar_bytes(symbols, rules, digram_slots_log2));
    adt_skeleton_grammar *g = memory;
    adt_skeleton_grammar_lay_out(g, symbols, rules, digram_slots_log2);
    /* Free lists: symbol 0 and rule 0's slot are never handed out by them. */
    for (uint32_t s = 1; s + 1 < symbols; ++s)
        g->symbols[s].next = s + 1;
    g->free_symbol = symbols > 1 ? 1 : NIL;
    for (uint32_t r = 1; r + 1 < rules; ++r)
        g->rules[r].uses = r + 1;
    g->free_rule = rules > 1 ? 1 : 0;
    /* Rule 0, the sequence: its guard alone. */
    uint32_t guard = g->free_symbol;
    g->free_symbol = g->symbols[guard].next;
    g->symbols[guard] = (symbol){ guard, guard, GUARD_BIT | 0u, 0 };
    g->symbols_used = 1;
    g->rules[0].guard = guard;
    g->rules_used = 1;
    return g;
}

/* Limits of a grown grammar: symbol indices stay below GUARD_BIT. */
#define SYMBOLS_MAX (1u << 29)
#define DIGRAM_SLOTS_LOG2_MAX 30u

/* The capacities of a grammar scaled by eighths / 8: the digram table
 * keeps its ratio to the symbols, rounded up to a power of two. */
typedef struct capacities {
    uint32_t symbols;
    uint32_t rules;
    uint32_t digram_slots_log2;
} capacities;

static bool scaled_capacities(const adt_skeleton_grammar *g, uint32_t eighths, capacities *out)
{
    out->symbols = adt_skeleton_scaled_capacity(g->symbol_capacity, eighths, SYMBOLS_MAX);
    out->rules = adt_skeleton_scaled_capacity(g->rule_capacity, eighths, SYMBOLS_MAX);
    uint64_t slots = ((uint64_t)g->digram_mask + 1) * eighths / 8;
    out->digram_slots_log2 = 0;
    while (((uint64_t)1 << out->digram_slots_log2) < slots)
        out->digram_slots_log2++;
    return out->symbols != UINT32_MAX && out->rules != UINT32_MAX &&
           out->digram_slots_log2 <= DIGRAM_SLOTS_LOG2_MAX;
}

static size_t scaled_bytes(const void *grammar, uint32_t eighths)
{
    capacities c;
    if (!scaled_capacities(grammar, eighths, &c))
        return SIZE_MAX;
    return adt_skeleton_grammar_bytes(c.symbols, c.rules, c.digram_slots_log2);
}

size_t adt_skeleton_grammar_scaled_bytes(const adt_skeleton_grammar *grammar, uint32_t eighths)
{
    return scaled_bytes(grammar, eighths);
}

static inline uint32_t digram_hash(const adt_skeleton_grammar *g, uint32_t s);

adt_skeleton_grammar *adt_skeleton_grammar_grow(const adt_skeleton_grammar *g, void *memory, size_t bytes)
{
    capacities c;
    uint32_t eighths = adt_skeleton_largest_scale(scaled_bytes, g, bytes);
    if (eighths == 0 || !scaled_capacities(g, eighths, &c))
        return NULL;
    adt_skeleton_grammar *grown = adt_skeleton_grammar_init(memory, c.symbols, c.rules, c.digram_slots_log2);
    /* The arrays as they are, the fast path's state, the counts; then the
     * new symbols and rules put in front of the free lists. */
    symbol *symbols = grown->symbols;
    rule *rules = grown->rules;
    uint32_t *digrams = grown->digrams, *expected = grown->expected, digram_mask = grown->digram_mask;
    memcpy(symbols, g->symbols, sizeof(symbol) * g->symbol_capacity);
    memcpy(rules, g->rules, sizeof(rule) * g->rule_capacity);
    memcpy(expected, g->expected, sizeof(uint32_t) * FAST_MAX);
    *grown = *g;
    grown->symbols = symbols;
    grown->rules = rules;
    grown->digrams = digrams;
    grown->expected = expected;
    grown->digram_mask = digram_mask;
    grown->symbol_capacity = c.symbols;
    grown->rule_capacity = c.rules;
    for (uint32_t s = g->symbol_capacity; s + 1 < c.symbols; ++s)
        symbols[s] = (symbol){ .next = s + 1 };
    symbols[c.symbols - 1] = (symbol){ .next = g->free_symbol };
    grown->free_symbol = g->symbol_capacity;
    for (uint32_t r = g->rule_capacity; r + 1 < c.rules; ++r)
        rules[r] = (rule){ .uses = r + 1 };
    rules[c.rules - 1] = (rule){ .uses = g->free_rule };
    grown->free_rule = g->rule_capacity;
    /* Each digram the table holds, in its slot of the wider table (no
     * two are equal: each probe ends at an empty slot). */
    for (uint32_t slot = 0; slot <= g->digram_mask; ++slot) {
        uint32_t s = g->digrams[slot];
        if (s == NIL)
            continue;
        uint32_t to = digram_hash(grown, s) & digram_mask;
        while (digrams[to] != NIL)
            to = (to + 1) & digram_mask;
        digrams[to] = s;
    }
    return grown;
}

/* ---- symbols and rules -------------------------------------------------- */

static uint32_t new_symbol(adt_skeleton_grammar *g, uint32_t value, uint32_t exponent)
{
    uint32_t s = g->free_symbol;
    g->free_symbol = g->symbols[s].next;
    g->symbols[s] = (symbol){ NIL, NIL, value, exponent };
    g->symbols_used++;
    return s;
}

static void free_symbol(adt_skeleton_grammar *g, uint32_t s)
{
    g->symbols[s].value = 0;
    g->symbols[s].next = g->free_symbol;
    g->free_symbol = s;
    g->symbols_used--;
}

static uint32_t new_rule(adt_skeleton_grammar *g)
{
    uint32_t r = g->free_rule;
    g->free_rule = g->rules[r].uses;
    uint32_t guard = new_symbol(g, GUARD_BIT | r, 0);
    g->symbols[guard].prev = g->symbols[guard].next = guard;
    g->rules[r] = (rule){ guard, 0 };
    g->rules_used++;
    return r;
}

static void free_rule(adt_skeleton_grammar *g, uint32_t r)
{
    free_symbol(g, g->rules[r].guard);
    g->rules[r] = (rule){ NIL, g->free_rule };
    g->free_rule = r;
    g->rules_used--;
}

static inline bool is_guard(const adt_skeleton_grammar *g, uint32_t s)
{
    return (g->symbols[s].value & GUARD_BIT) != 0;
}

static inline bool is_rule(uint32_t value)
{
    return (value & ADT_SKELETON_RULE_BIT) != 0;
}

static inline uint32_t rule_of(uint32_t value)
{
    return value & ~(ADT_SKELETON_RULE_BIT | GUARD_BIT);
}

static inline void join(adt_skeleton_grammar *g, uint32_t left, uint32_t right)
{
    g->symbols[left].next = right;
    g->symbols[right].prev = left;
}

/* A symbol leaves the grammar: the rule it references loses a use. */
static void release(adt_skeleton_grammar *g, uint32_t s)
{
    if (is_rule(g->symbols[s].value))
        g->rules[rule_of(g->symbols[s].value)].uses--;
    free_symbol(g, s);
}

/* ---- the digram table: linear probing, deletion by backward shift ----- */

static inline uint32_t digram_hash(const adt_skeleton_grammar *g, uint32_t s)
{
    const symbol *a = &g->symbols[s], *b = &g->symbols[a->next];
    uint64_t h = ((uint64_t)a->value << 32 | a->exponent) * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)b->value << 32 | b->exponent) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    h *= 0xFF51AFD7ED558CCDull;
    return (uint32_t)(h >> 32);
}

static inline bool same_digram(const adt_skeleton_grammar *g, uint32_t s, uint32_t t)
{
    const symbol *a = &g->symbols[s], *b = &g->symbols[a->next];
    const symbol *c = &g->symbols[t], *d = &g->symbols[c->next];
    return a->value == c->value && a->exponent == c->exponent && b->value == d->value &&
           b->exponent == d->exponent;
}

/* The slot holding s's digram, or the empty slot where it would go. */
static uint32_t digram_slot(adt_skeleton_grammar *g, uint32_t s)
{
    uint32_t slot = digram_hash(g, s) & g->digram_mask;
    for (;;) {
        g->probes++;
        uint32_t held = g->digrams[slot];
        if (held == NIL || same_digram(g, held, s))
            return slot;
        slot = (slot + 1) & g->digram_mask;
    }
}

/* Forgets s's digram if the table holds it at s (it may hold an equal
 * digram elsewhere: then that one stays). */
static void forget_digram(adt_skeleton_grammar *g, uint32_t s)
{
    if (is_guard(g, s) || is_guard(g, g->symbols[s].next))
        return;
    uint32_t slot = digram_slot(g, s);
    if (g->digrams[slot] != s)
        return;
    g->digrams[slot] = NIL;
    g->digrams_used--;
    /* Backward shift: later entries of the probe run move into the hole
     * unless their home lies cyclically in (hole, their slot]. */
    uint32_t hole = slot;
    for (uint32_t next = (slot + 1) & g->digram_mask; g->digrams[next] != NIL;
         next = (next + 1) & g->digram_mask) {
        uint32_t home = digram_hash(g, g->digrams[next]) & g->digram_mask;
        bool stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
        if (stays)
            continue;
        g->digrams[hole] = g->digrams[next];
        g->digrams[next] = NIL;
        hole = next;
    }
}

/* ---- Sequitur ----------------------------------------------------------- */

static bool check(adt_skeleton_grammar *g, uint32_t s);

/* s and its next have the same value: one symbol, exponents added. */
static void merge_twins(adt_skeleton_grammar *g, uint32_t s)
{
    uint32_t t = g->symbols[s].next;
    uint32_t before = g->symbols[s].prev;
    forget_digram(g, before);
    forget_digram(g, s);
    forget_digram(g, t);
    g->symbols[s].exponent += g->symbols[t].exponent;
    join(g, s, g->symbols[t].next);
    release(g, t);
    if (!check(g, before))
        check(g, s);
}

/* Replaces the digram at s by rule r (exponent 1). */
static void substitute(adt_skeleton_grammar *g, uint32_t s, uint32_t r)
{
    uint32_t before = g->symbols[s].prev;
    uint32_t t = g->symbols[s].next;
    uint32_t after = g->symbols[t].next;
    forget_digram(g, before);
    forget_digram(g, s);
    forget_digram(g, t);
    release(g, s);
    release(g, t);
    uint32_t n = new_symbol(g, ADT_SKELETON_RULE_BIT | r, 1);
    g->rules[r].uses++;
    join(g, before, n);
    join(g, n, after);
    if (!check(g, before))
        check(g, n);
}

/* The symbol s references a rule used only here, once: its body takes
 * s's place. */
static void expand(adt_skeleton_grammar *g, uint32_t s)
{
    uint32_t r = rule_of(g->symbols[s].value);
    uint32_t guard = g->rules[r].guard;
    uint32_t first = g->symbols[guard].next, last = g->symbols[guard].prev;
    uint32_t left = g->symbols[s].prev, right = g->symbols[s].next;
    forget_digram(g, left);
    forget_digram(g, s);
    free_symbol(g, s);
    free_rule(g, r);
    join(g, left, first);
    join(g, last, right);
    /* The two new digrams at the seams are checked as any new digram is;
     * the second only if the first changed nothing (a change re-checks
     * its own surroundings). */
    if (!check(g, left))
        check(g, last);
}

static void enforce_utility(adt_skeleton_grammar *g, uint32_t s)
{
    uint32_t value = g->symbols[s].value;
    if (is_rule(value) && g->symbols[s].exponent == 1 && g->rules[rule_of(value)].uses == 1)
        expand(g, s);
}

/* s's digram equals the one at m (elsewhere, not overlapping). */
static void match(adt_skeleton_grammar *g, uint32_t s, uint32_t m)
{
    uint32_t r;
    uint32_t m_next = g->symbols[m].next;
    if (is_guard(g, g->symbols[m].prev) && is_guard(g, g->symbols[m_next].next)) {
        /* m is a whole rule's body: reuse the rule. */
        r = rule_of(g->symbols[g->symbols[m].prev].value);
        substitute(g, s, r);
    } else {
        r = new_rule(g);
        uint32_t guard = g->rules[r].guard;
        uint32_t a = new_symbol(g, g->symbols[m].value, g->symbols[m].exponent);
        uint32_t b = new_symbol(g, g->symbols[m_next].value, g->symbols[m_next].exponent);
        if (is_rule(g->symbols[a].value))
            g->rules[rule_of(g->symbols[a].value)].uses++;
        if (is_rule(g->symbols[b].value))
            g->rules[rule_of(g->symbols[b].value)].uses++;
        join(g, guard, a);
        join(g, a, b);
        join(g, b, guard);
        substitute(g, m, r);
        substitute(g, s, r);
        uint32_t slot = digram_slot(g, a);
        if (g->digrams[slot] == NIL) {
            g->digrams[slot] = a;
            g->digrams_used++;
        }
    }
    /* The rules in r's body may have lost their other uses. r itself can
     * have been inlined meanwhile only if it was used once, which a rule
     * made for two occurrences is not. */
    uint32_t guard = g->rules[r].guard;
    if (guard == NIL)
        return;
    enforce_utility(g, g->symbols[guard].next);
    guard = g->rules[r].guard;
    if (guard != NIL && g->symbols[guard].prev != g->symbols[guard].next)
        enforce_utility(g, g->symbols[guard].prev);
}

/* Enforces both invariants on s's digram; true when it changed anything
 * (then the change has checked the digrams it made). */
static bool check(adt_skeleton_grammar *g, uint32_t s)
{
    if (is_guard(g, s))
        return false;
    uint32_t t = g->symbols[s].next;
    if (is_guard(g, t))
        return false;
    if (g->symbols[s].value == g->symbols[t].value) {
        merge_twins(g, s);
        return true;
    }
    uint32_t slot = digram_slot(g, s);
    uint32_t m = g->digrams[slot];
    if (m == NIL) {
        g->digrams[slot] = s;
        g->digrams_used++;
        return false;
    }
    if (m == s || g->symbols[m].next == s || t == m)
        return false;
    match(g, s, m);
    return true;
}

/* Whether the grammar has room for `terminals` more ordinary appends. */
static bool room_for(const adt_skeleton_grammar *g, uint32_t terminals)
{
    return g->symbol_capacity - g->symbols_used >= ROOM_SYMBOLS + 2 * terminals &&
           g->rule_capacity - g->rules_used >= ROOM_RULES + terminals &&
           (g->digrams_used + 2 * terminals) * 2 <= g->digram_mask;
}

/* One terminal the ordinary way (room checked by the caller). */
static void append_terminal(adt_skeleton_grammar *g, uint32_t terminal)
{
    uint32_t guard = g->rules[0].guard;
    uint32_t last = g->symbols[guard].prev;
    if (last != guard && g->symbols[last].value == terminal) {
        /* The same call again: one more iteration of the innermost loop. */
        uint32_t before = g->symbols[last].prev;
        forget_digram(g, before);
        g->symbols[last].exponent++;
        check(g, before);
        return;
    }
    uint32_t s = new_symbol(g, terminal, 1);
    join(g, last, s);
    join(g, s, guard);
    check(g, last);
}

/* Writes rule r's expansion, exponent times, after expected[*at]; false
 * when it would pass FAST_MAX. */
static bool write_expansion(adt_skeleton_grammar *g, uint32_t value, uint32_t exponent, uint32_t *at)
{
    for (uint32_t n = 0; n < exponent; ++n) {
        if (!is_rule(value)) {
            if (*at == FAST_MAX)
                return false;
            g->expected[(*at)++] = value;
            continue;
        }
        uint32_t guard = g->rules[rule_of(value)].guard;
        for (uint32_t s = g->symbols[guard].next; s != guard; s = g->symbols[s].next)
            if (!write_expansion(g, g->symbols[s].value, g->symbols[s].exponent, at))
                return false;
    }
    return true;
}

/* Starts following the loop the sequence ends in, if it does. */
static void follow(adt_skeleton_grammar *g)
{
    uint32_t guard = g->rules[0].guard;
    uint32_t last = g->symbols[guard].prev;
    g->followed = NIL;
    g->matched = 0;
    if (last == guard || (is_rule(g->symbols[last].value) && g->symbols[last].exponent < 2))
        return;
    uint32_t length = 0;
    if (!write_expansion(g, g->symbols[last].value, 1, &length) || !room_for(g, length))
        return;
    g->expected_length = length;
    g->followed = last;
}

void adt_skeleton_grammar_settle(adt_skeleton_grammar *g)
{
    uint32_t pending = g->matched, last = g->followed;
    g->followed = NIL;
    g->matched = 0;
    if (g->iterations > 0) {
        uint32_t before = g->symbols[last].prev;
        forget_digram(g, before);
        g->symbols[last].exponent += g->iterations;
        g->iterations = 0;
        check(g, before);
    }
    for (uint32_t i = 0; i < pending; ++i)
        append_terminal(g, g->expected[i]);
}

void adt_skeleton_grammar_refollow(adt_skeleton_grammar *g)
{
    adt_skeleton_grammar_settle(g);
    follow(g);
}

bool adt_skeleton_grammar_append(adt_skeleton_grammar *g, uint32_t terminal)
{
    if (g->followed != NIL) {
        if (terminal == adt_skeleton_grammar_expected(g)) {
            adt_skeleton_grammar_take_expected(g);
            return true;
        }
        adt_skeleton_grammar_settle(g);
    }
    if (!room_for(g, 0))
        return false;
    g->length++;
    append_terminal(g, terminal);
    follow(g);
    return true;
}

uint64_t adt_skeleton_grammar_length(const adt_skeleton_grammar *g)
{
    return g->length;
}

uint32_t adt_skeleton_grammar_symbols(const adt_skeleton_grammar *g)
{
    return g->symbols_used;
}

uint32_t adt_skeleton_grammar_rules(const adt_skeleton_grammar *g)
{
    return g->rules_used;
}

uint32_t adt_skeleton_grammar_rule_capacity(const adt_skeleton_grammar *g)
{
    return g->rule_capacity;
}

uint64_t adt_skeleton_grammar_probes(const adt_skeleton_grammar *g)
{
    return g->probes;
}

/* ---- read-out (end of run) ---------------------------------------------- */

void adt_skeleton_grammar_export(adt_skeleton_grammar *g, adt_skeleton_rules *out, uint32_t *renumbered)
{
    adt_skeleton_grammar_settle(g);
    /* Rules numbered in order of first reference, breadth first: rule k's
     * body is written once all rules before it are, so the order of
     * bodies is the order of numbers. renumbered[old] = new + 1 (0: not
     * yet seen); order[] lists old rule ids by new number, kept in
     * out->starts until each is replaced by its start. */
    for (uint32_t r = 0; r < g->rule_capacity; ++r)
        renumbered[r] = 0;
    uint32_t count = 1;
    uint32_t *order = out->starts;
    order[0] = 0;
    renumbered[0] = 1;
    uint32_t written = 0;
    for (uint32_t k = 0; k < count; ++k) {
        uint32_t old = order[k];
        uint32_t guard = g->rules[old].guard;
        uint32_t start = written;
        for (uint32_t s = g->symbols[guard].next; s != guard; s = g->symbols[s].next) {
            uint32_t value = g->symbols[s].value;
            if (is_rule(value)) {
                uint32_t target = rule_of(value);
                if (renumbered[target] == 0) {
                    renumbered[target] = ++count;
                    order[count - 1] = target;
                }
                value = ADT_SKELETON_RULE_BIT | (renumbered[target] - 1);
            }
            out->values[written] = value;
            out->exponents[written] = g->symbols[s].exponent;
            written++;
        }
        order[k] = start;
    }
    out->starts[count] = written;
    out->rule_count = count;
}

typedef struct expansion {
    const adt_skeleton_rules *rules;
    adt_skeleton_visit visit;
    void *arg;
} expansion;

static bool expand_rule(const expansion *e, uint32_t r)
{
    const adt_skeleton_rules *rules = e->rules;
    for (uint32_t i = rules->starts[r]; i < rules->starts[r + 1]; ++i) {
        uint32_t value = rules->values[i];
        for (uint32_t n = 0; n < rules->exponents[i]; ++n) {
            bool go_on = is_rule(value) ? expand_rule(e, rule_of(value)) : e->visit(value, e->arg);
            if (!go_on)
                return false;
        }
    }
    return true;
}

bool adt_skeleton_rules_expand(const adt_skeleton_rules *rules, adt_skeleton_visit visit, void *arg)
{
    expansion e = { rules, visit, arg };
    return rules->rule_count == 0 || expand_rule(&e, 0);
}
