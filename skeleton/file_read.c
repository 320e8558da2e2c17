/*
 * file_read.c: skeleton.adts read back and checked whole (tools, after
 * the run). Every count is checked against the bytes left before anything
 * is allocated for it; any error is one line, said once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skeleton.h"
#include "skeleton_file.h"

typedef struct cursor {
    const uint8_t *at;
    const uint8_t *end;
} cursor;

static bool take(cursor *c, size_t size, const uint8_t **data)
{
    if ((size_t)(c->end - c->at) < size)
        return false;
    *data = c->at;
    c->at += size;
    return true;
}

static bool take_u32(cursor *c, uint32_t *value)
{
    const uint8_t *b;
    if (!take(c, 4, &b))
        return false;
    *value = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return true;
}

static bool take_u64(cursor *c, uint64_t *value)
{
    uint32_t low, high;
    if (!take_u32(c, &low) || !take_u32(c, &high))
        return false;
    *value = (uint64_t)high << 32 | low;
    return true;
}

static size_t left(const cursor *c)
{
    return (size_t)(c->end - c->at);
}

static void say(char *error, size_t error_size, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(error, error_size, format, args);
    va_end(args);
}

/* Every allocation of a parse, freed together. */
typedef struct arena {
    void **blocks;
    size_t count;
    size_t capacity;
    bool failed;
} arena;

static void *arena_alloc(arena *a, size_t bytes)
{
    if (a->failed)
        return NULL;
    if (a->count == a->capacity) {
        size_t capacity = a->capacity ? a->capacity * 2 : 16;
        void **grown = realloc(a->blocks, capacity * sizeof *grown);
        if (!grown) {
            a->failed = true;
            return NULL;
        }
        a->blocks = grown;
        a->capacity = capacity;
    }
    void *block = calloc(1, bytes ? bytes : 1);
    if (!block) {
        a->failed = true;
        return NULL;
    }
    a->blocks[a->count++] = block;
    return block;
}

static void arena_free(arena *a)
{
    for (size_t i = 0; i < a->count; ++i)
        free(a->blocks[i]);
    free(a->blocks);
}

/* The terminals a rule expands to, saturating at UINT64_MAX; -1 state
 * marks a rule being expanded (a cycle). */
static bool rule_length(const adt_skeleton_rules *rules, uint32_t r, int8_t *state, uint64_t *lengths)
{
    if (state[r] == 2)
        return true;
    if (state[r] == 1)
        return false;
    state[r] = 1;
    uint64_t total = 0;
    for (uint32_t i = rules->starts[r]; i < rules->starts[r + 1]; ++i) {
        uint32_t value = rules->values[i];
        uint64_t one = 1;
        if (value & ADT_SKELETON_RULE_BIT) {
            if (!rule_length(rules, value & ~ADT_SKELETON_RULE_BIT, state, lengths))
                return false;
            one = lengths[value & ~ADT_SKELETON_RULE_BIT];
        }
        uint64_t times = rules->exponents[i];
        uint64_t add = (one != 0 && times > UINT64_MAX / one) ? UINT64_MAX : one * times;
        total = total > UINT64_MAX - add ? UINT64_MAX : total + add;
    }
    lengths[r] = total;
    state[r] = 2;
    return true;
}

static bool read_thread(cursor *c, arena *a, adt_skeleton_thread_view *thread, uint32_t class_index, char *error,
                        size_t error_size)
{
    uint32_t stop = 0;
    if (!take_u64(c, &thread->thread_index) || !take_u64(c, &thread->calls) || !take_u32(c, &stop) ||
        !take_u32(c, &thread->signature_count)) {
        say(error, error_size, "cut short in class %u's thread header", class_index);
        return false;
    }
    thread->stop = (int32_t)stop;
    if (thread->stop < ADT_SKELETON_RUNNING || thread->stop >= ADT_SKELETON_STOP_CAUSES) {
        say(error, error_size, "corrupt: class %u thread %llu has stop cause %d", class_index,
            (unsigned long long)thread->thread_index, thread->stop);
        return false;
    }
    if (thread->signature_count > left(c) / 4) {
        say(error, error_size, "cut short: class %u claims %u signatures", class_index, thread->signature_count);
        return false;
    }
    const uint8_t **keys = arena_alloc(a, sizeof *keys * thread->signature_count);
    uint32_t *lengths = arena_alloc(a, sizeof *lengths * thread->signature_count);
    if (!keys || !lengths)
        return false;
    for (uint32_t t = 0; t < thread->signature_count; ++t) {
        const uint8_t *key;
        if (!take_u32(c, &lengths[t]) || !take(c, lengths[t], &key)) {
            say(error, error_size, "cut short in class %u's signature %u", class_index, t);
            return false;
        }
        /* A copy: the file's bytes are the caller's. */
        uint8_t *copy = arena_alloc(a, lengths[t]);
        if (!copy)
            return false;
        memcpy(copy, key, lengths[t]);
        keys[t] = copy;
    }
    thread->keys = keys;
    thread->key_lengths = lengths;
    uint32_t rule_count, symbol_count;
    if (!take_u32(c, &rule_count) || !take_u32(c, &symbol_count) || rule_count > left(c) / 4 ||
        symbol_count > left(c) / 8) {
        say(error, error_size, "cut short in class %u's grammar", class_index);
        return false;
    }
    adt_skeleton_rules *rules = &thread->rules;
    rules->rule_count = rule_count;
    rules->starts = arena_alloc(a, sizeof(uint32_t) * ((size_t)rule_count + 1));
    rules->values = arena_alloc(a, sizeof(uint32_t) * symbol_count);
    rules->exponents = arena_alloc(a, sizeof(uint32_t) * symbol_count);
    if (!rules->starts || !rules->values || !rules->exponents)
        return false;
    uint64_t total = 0;
    for (uint32_t r = 0; r < rule_count; ++r) {
        uint32_t length;
        if (!take_u32(c, &length)) {
            say(error, error_size, "cut short in class %u's rule lengths", class_index);
            return false;
        }
        rules->starts[r] = (uint32_t)total;
        total += length;
        if (total > symbol_count || length == 0) {
            say(error, error_size, "corrupt: class %u's rule %u has %u symbols", class_index, r, length);
            return false;
        }
    }
    rules->starts[rule_count] = (uint32_t)total;
    if (total != symbol_count) {
        say(error, error_size, "corrupt: class %u's rules hold %llu symbols, not %u", class_index,
            (unsigned long long)total, symbol_count);
        return false;
    }
    for (uint32_t i = 0; i < symbol_count; ++i) {
        if (!take_u32(c, &rules->values[i]) || !take_u32(c, &rules->exponents[i])) {
            say(error, error_size, "cut short in class %u's symbols", class_index);
            return false;
        }
        uint32_t value = rules->values[i];
        bool valid = (value & ADT_SKELETON_RULE_BIT) ? (value & ~ADT_SKELETON_RULE_BIT) < rule_count
                                                     : value < thread->signature_count;
        if (!valid || rules->exponents[i] == 0) {
            say(error, error_size, "corrupt: class %u's symbol %u (value %#x, exponent %u) names nothing", class_index, i,
                value, rules->exponents[i]);
            return false;
        }
    }
    if (rule_count == 0)
        return thread->calls == 0 ||
               (say(error, error_size, "corrupt: class %u has %llu calls and no grammar", class_index,
                    (unsigned long long)thread->calls),
                false);
    int8_t *state = arena_alloc(a, rule_count);
    uint64_t *lengths_of = arena_alloc(a, sizeof(uint64_t) * rule_count);
    if (!state || !lengths_of)
        return false;
    if (!rule_length(rules, 0, state, lengths_of)) {
        say(error, error_size, "corrupt: class %u's rules refer to themselves", class_index);
        return false;
    }
    if (lengths_of[0] != thread->calls) {
        say(error, error_size, "corrupt: class %u's grammar expands to %llu calls, its header says %llu", class_index,
            (unsigned long long)lengths_of[0], (unsigned long long)thread->calls);
        return false;
    }
    return true;
}

/* Class k's timing, after its structure: every pair names signatures of
 * its thread (calls_agree checks their counts once the class's ranks are
 * known). */
static bool read_class_timing(cursor *c, arena *a, adt_skeleton_class_view *class_view, uint32_t k, char *error,
                              size_t error_size)
{
    uint32_t threads = class_view->thread_count;
    adt_skeleton_timing_part *parts = arena_alloc(a, sizeof *parts * threads);
    if (!parts)
        return false;
    char why[160];
    if (!adt_skeleton_timing_decode(&c->at, c->end, threads, parts, why, sizeof why)) {
        say(error, error_size, "%s in class %u", why, k);
        return false;
    }
    bool ok = true;
    for (uint32_t t = 0; t < threads; ++t) {
        adt_skeleton_thread_view *thread = &class_view->threads[t];
        adt_skeleton_timing_part *part = &parts[t];
        for (uint32_t p = 0; ok && p < part->pair_count; ++p) {
            const adt_skeleton_pair *pair = &part->pairs[p];
            bool names = pair->signature < thread->signature_count &&
                         (pair->previous == ADT_SKELETON_NO_PREVIOUS || pair->previous < thread->signature_count);
            if (!names) {
                say(error, error_size, "corrupt: class %u thread %u's timing pair %u names no signature", k, t, p);
                ok = false;
            }
        }
        /* The arena frees the pairs with the rest. */
        void *kept = ok ? arena_alloc(a, sizeof *part->pairs * (part->pair_count ? part->pair_count : 1)) : NULL;
        if (kept)
            memcpy(kept, part->pairs, sizeof *part->pairs * part->pair_count);
        ok = ok && kept;
        thread->untimed = part->untimed;
        thread->span = part->span;
        thread->span_rank = part->span_rank;
        thread->pair_count = part->pair_count;
        thread->pairs = kept;
    }
    adt_skeleton_timing_parts_free(parts, threads);
    return ok;
}

static bool take_varint32(cursor *c, uint32_t *value)
{
    uint32_t length = left(c) > UINT32_MAX ? UINT32_MAX : (uint32_t)left(c), offset = 0;
    uint64_t wide;
    if (!adt_skeleton_key_next(c->at, length, &offset, &wide) || wide > UINT32_MAX)
        return false;
    c->at += offset;
    *value = (uint32_t)wide;
    return true;
}

static bool take_varint(cursor *c, uint64_t *value)
{
    uint32_t length = left(c) > UINT32_MAX ? UINT32_MAX : (uint32_t)left(c), offset = 0;
    if (!adt_skeleton_key_next(c->at, length, &offset, value))
        return false;
    c->at += offset;
    return true;
}

/* Class k's parameters that differ by rank, after its timing: each names
 * a field after the function and the calling context of one of its keys,
 * in rising (thread, signature, field) order, with two or more values,
 * each with one or more strided ranges (their ranks are checked against
 * the class once the ranks are known: rank_variants). */
static bool read_class_parameters(cursor *c, arena *a, adt_skeleton_class_view *class_view, uint32_t k,
                                  char *error, size_t error_size)
{
    uint32_t count;
    if (!take_varint32(c, &count) || count > left(c) / 6) {
        say(error, error_size, "cut short in class %u's parameters", k);
        return false;
    }
    adt_skeleton_parameter *parameters = arena_alloc(a, sizeof *parameters * count);
    if (!parameters)
        return false;
    class_view->parameters = parameters;
    class_view->parameter_count = count;
    for (uint32_t i = 0; i < count; ++i) {
        adt_skeleton_parameter *p = &parameters[i];
        if (!take_varint32(c, &p->thread) || !take_varint32(c, &p->signature) || !take_varint32(c, &p->field) ||
            !take_varint32(c, &p->value_count) || p->value_count > left(c) / 5) {
            say(error, error_size, "cut short in class %u's parameter %u", k, i);
            return false;
        }
        const adt_skeleton_parameter *before = i > 0 ? &parameters[i - 1] : NULL;
        bool rising = !before || p->thread > before->thread ||
                      (p->thread == before->thread &&
                       (p->signature > before->signature ||
                        (p->signature == before->signature && p->field > before->field)));
        const adt_skeleton_thread_view *thread = p->thread < class_view->thread_count ? &class_view->threads[p->thread] : NULL;
        uint32_t fields = thread && p->signature < thread->signature_count
                              ? adt_skeleton_key_fields(thread->keys[p->signature], thread->key_lengths[p->signature])
                              : UINT32_MAX;
        bool names = fields != UINT32_MAX && p->field >= 2 && p->field < fields;
        if (!rising || !names || p->value_count < 2) {
            say(error, error_size, "corrupt: class %u's parameter %u (thread %u, signature %u, field %u, %u values)", k,
                i, p->thread, p->signature, p->field, p->value_count);
            return false;
        }
        adt_skeleton_parameter_value *values = arena_alloc(a, sizeof *values * p->value_count);
        if (!values)
            return false;
        p->values = values;
        for (uint32_t v = 0; v < p->value_count; ++v) {
            if (!take_varint(c, &values[v].value) || !take_varint32(c, &values[v].range_count) ||
                values[v].range_count == 0 || values[v].range_count > left(c) / 3) {
                say(error, error_size, "corrupt: class %u's parameter %u, value %u", k, i, v);
                return false;
            }
            adt_skeleton_rank_range *ranges = arena_alloc(a, sizeof *ranges * values[v].range_count);
            if (!ranges)
                return false;
            values[v].ranges = ranges;
            for (uint32_t g = 0; g < values[v].range_count; ++g) {
                ranges[g].class_index = k;
                if (!take_varint32(c, &ranges[g].first) || !take_varint32(c, &ranges[g].count) ||
                    !take_varint32(c, &ranges[g].stride) || ranges[g].count == 0 || ranges[g].stride == 0) {
                    say(error, error_size, "corrupt: class %u's parameter %u, value %u, range %u", k, i, v, g);
                    return false;
                }
            }
        }
    }
    return true;
}

static void put_varint(uint8_t **at, uint64_t value)
{
    for (; value >= 0x80; value >>= 7)
        *(*at)++ = (uint8_t)(value | 0x80);
    *(*at)++ = (uint8_t)value;
}

/* The key model with the parameters [*p, ...) of its thread and
 * signature in place (values chosen by choice), into the arena; *p
 * advanced past them. NULL when out of memory. */
static const uint8_t *key_with(arena *a, const adt_skeleton_class_view *class_view, const uint32_t *choice,
                               uint32_t *p, const uint8_t *model, uint32_t length, uint32_t *new_length)
{
    const adt_skeleton_parameter *parameters = class_view->parameters;
    uint32_t thread = parameters[*p].thread, signature = parameters[*p].signature;
    /* A field of n bytes becomes at most 10. */
    uint8_t *key = arena_alloc(a, (size_t)length * 10);
    if (!key)
        return NULL;
    uint8_t *at = key;
    uint32_t offset = 0;
    uint64_t value;
    for (uint32_t f = 0; adt_skeleton_key_next(model, length, &offset, &value); ++f) {
        if (*p < class_view->parameter_count && parameters[*p].thread == thread &&
            parameters[*p].signature == signature && parameters[*p].field == f) {
            value = parameters[*p].values[choice[*p]].value;
            ++*p;
        }
        put_varint(&at, value);
    }
    *new_length = (uint32_t)(at - key);
    return key;
}

/* A variant of a class: its threads with the keys of the ranks whose
 * parameters take the values choice[p] (an index into parameter p's
 * values). NULL when out of memory. */
static adt_skeleton_thread_view *variant_threads(arena *a, const adt_skeleton_class_view *class_view,
                                                 const uint32_t *choice)
{
    adt_skeleton_thread_view *threads = arena_alloc(a, sizeof *threads * class_view->thread_count);
    if (!threads)
        return NULL;
    memcpy(threads, class_view->threads, sizeof *threads * class_view->thread_count);
    const adt_skeleton_parameter *parameters = class_view->parameters;
    for (uint32_t p = 0; p < class_view->parameter_count;) {
        adt_skeleton_thread_view *thread = &threads[parameters[p].thread];
        const uint8_t **keys = arena_alloc(a, sizeof *keys * thread->signature_count);
        uint32_t *lengths = arena_alloc(a, sizeof *lengths * thread->signature_count);
        if (!keys || !lengths)
            return NULL;
        memcpy(keys, thread->keys, sizeof *keys * thread->signature_count);
        memcpy(lengths, thread->key_lengths, sizeof *lengths * thread->signature_count);
        for (uint32_t t = parameters[p].thread; p < class_view->parameter_count && parameters[p].thread == t;) {
            uint32_t s = parameters[p].signature;
            keys[s] = key_with(a, class_view, choice, &p, keys[s], lengths[s], &lengths[s]);
            if (!keys[s])
                return NULL;
        }
        thread->keys = keys;
        thread->key_lengths = lengths;
    }
    return threads;
}

/* The rank views of class k's ranks given their own keys: each
 * parameter's ranges must name ranks of the class, each once; ranks with
 * the same values share one variant. slot[r]: rank r's index among its
 * class's ranks. */
static bool rank_variants(adt_skeleton_file *file, arena *a, uint32_t k, const uint32_t *slot, char *error,
                          size_t error_size)
{
    adt_skeleton_class_view *class_view = &file->classes[k];
    uint32_t members = class_view->rank_count, count = class_view->parameter_count;
    class_view->variant_count = 1;
    if (count == 0)
        return true;
    /* choice[m * count + p]: member m's value of parameter p. */
    uint32_t *choice = malloc(sizeof(uint32_t) * (size_t)members * count);
    uint32_t *rank_of = malloc(sizeof(uint32_t) * members);
    uint32_t slots = 2;
    while (slots < 2 * members)
        slots *= 2;
    uint32_t *table = malloc(sizeof(uint32_t) * slots); /* a member whose values start a variant */
    adt_skeleton_thread_view **variant_of = calloc(members, sizeof *variant_of);
    bool ok = choice && rank_of && table && variant_of;
    if (!ok)
        say(error, error_size, "out of memory reading the skeleton");
    if (ok) {
        memset(choice, 0xff, sizeof(uint32_t) * (size_t)members * count);
        memset(table, 0xff, sizeof(uint32_t) * slots);
    }
    for (uint32_t r = 0; ok && r < file->rank_count; ++r)
        if (file->ranks[r].class_index == k)
            rank_of[slot[r]] = r;
    for (uint32_t p = 0; ok && p < count; ++p) {
        const adt_skeleton_parameter *parameter = &class_view->parameters[p];
        uint64_t named = 0;
        for (uint32_t v = 0; ok && v < parameter->value_count; ++v) {
            for (uint32_t g = 0; ok && g < parameter->values[v].range_count; ++g) {
                const adt_skeleton_rank_range *range = &parameter->values[v].ranges[g];
                uint64_t last = range->first + (uint64_t)(range->count - 1) * range->stride;
                for (uint64_t r = range->first; ok && r <= last; r += range->stride) {
                    uint32_t *chosen = r < file->rank_count && file->ranks[r].class_index == k
                                           ? &choice[(size_t)slot[r] * count + p]
                                           : NULL;
                    if (!chosen || *chosen != UINT32_MAX) {
                        say(error, error_size, "corrupt: class %u's parameter %u names rank %llu %s", k, p,
                            (unsigned long long)r, chosen ? "twice" : "outside the class");
                        ok = false;
                        break;
                    }
                    *chosen = v;
                    named++;
                }
            }
        }
        if (ok && named != members) {
            say(error, error_size, "corrupt: class %u's parameter %u names %llu of its %u ranks", k, p,
                (unsigned long long)named, members);
            ok = false;
        }
    }
    class_view->variant_count = 0;
    for (uint32_t m = 0; ok && m < members; ++m) {
        const uint32_t *values = &choice[(size_t)m * count];
        uint64_t hash = adt_skeleton_checksum((const uint8_t *)values, sizeof *values * count);
        uint32_t at = (uint32_t)hash & (slots - 1);
        while (table[at] != UINT32_MAX &&
               memcmp(&choice[(size_t)table[at] * count], values, sizeof *values * count) != 0)
            at = (at + 1) & (slots - 1);
        if (table[at] == UINT32_MAX) {
            table[at] = m;
            variant_of[m] = variant_threads(a, class_view, values);
            class_view->variant_count++;
            if (!variant_of[m]) {
                say(error, error_size, "out of memory reading the skeleton");
                ok = false;
            }
        } else {
            variant_of[m] = variant_of[table[at]];
        }
        if (ok)
            file->ranks[rank_of[m]].threads = variant_of[m];
    }
    free(choice);
    free(rank_of);
    free(table);
    free(variant_of);
    return ok;
}

/* Each thread's timed and untimed calls are its calls on every rank of
 * its class. */
static bool calls_agree(const adt_skeleton_file *file, char *error, size_t error_size)
{
    for (uint32_t k = 0; k < file->class_count; ++k) {
        const adt_skeleton_class_view *class_view = &file->classes[k];
        for (uint32_t t = 0; t < class_view->thread_count; ++t) {
            const adt_skeleton_thread_view *thread = &class_view->threads[t];
            uint64_t counted = thread->untimed;
            for (uint32_t p = 0; p < thread->pair_count; ++p)
                counted += thread->pairs[p].compute.count;
            if (counted != thread->calls * class_view->rank_count) {
                say(error, error_size, "corrupt: class %u thread %u's timing counts %llu calls, not %llu on %u ranks", k,
                    t, (unsigned long long)counted, (unsigned long long)thread->calls, class_view->rank_count);
                return false;
            }
        }
    }
    return true;
}

const adt_skeleton_pair *adt_skeleton_thread_pair(const adt_skeleton_thread_view *thread, uint32_t previous,
                                                  uint32_t signature)
{
    uint32_t low = 0, high = thread->pair_count;
    while (low < high) {
        uint32_t middle = low + (high - low) / 2;
        const adt_skeleton_pair *pair = &thread->pairs[middle];
        if (pair->previous == previous && pair->signature == signature)
            return pair;
        bool before = pair->previous < previous || (pair->previous == previous && pair->signature < signature);
        if (before)
            low = middle + 1;
        else
            high = middle;
    }
    return NULL;
}

/* Version 5's ranks without a skeleton, after the rank table: the causes,
 * then strided ranges of ranks, each for one cause; every rank named
 * neither twice nor in a class (seen). How many ranks they name, or
 * UINT64_MAX with one line in error. */
static uint64_t read_missing(cursor *c, arena *a, adt_skeleton_file *file, uint8_t *seen, char *error,
                             size_t error_size)
{
    uint32_t cause_count;
    if (!take_u32(c, &cause_count) || cause_count > left(c) / 4) {
        say(error, error_size, "corrupt: bad count of causes of missing ranks");
        return UINT64_MAX;
    }
    char **causes = arena_alloc(a, sizeof *causes * cause_count);
    if (!causes) {
        say(error, error_size, "out of memory reading the skeleton");
        return UINT64_MAX;
    }
    for (uint32_t k = 0; k < cause_count; ++k) {
        uint32_t length;
        const uint8_t *cause;
        if (!take_u32(c, &length) || !take(c, length, &cause)) {
            say(error, error_size, "corrupt: cause %u of missing ranks cut short", k);
            return UINT64_MAX;
        }
        causes[k] = arena_alloc(a, (size_t)length + 1);
        if (!causes[k]) {
            say(error, error_size, "out of memory reading the skeleton");
            return UINT64_MAX;
        }
        memcpy(causes[k], cause, length);
    }
    uint32_t range_count;
    if (!take_u32(c, &range_count) || range_count == 0 || range_count > left(c) / 16) {
        say(error, error_size, "corrupt: bad count of ranges of missing ranks");
        return UINT64_MAX;
    }
    adt_skeleton_missing_range *ranges = arena_alloc(a, sizeof *ranges * range_count);
    if (!ranges) {
        say(error, error_size, "out of memory reading the skeleton");
        return UINT64_MAX;
    }
    uint64_t named = 0;
    for (uint32_t g = 0; g < range_count; ++g) {
        adt_skeleton_missing_range *range = &ranges[g];
        uint32_t cause = 0;
        take_u32(c, &range->first);
        take_u32(c, &range->count);
        take_u32(c, &range->stride);
        take_u32(c, &cause);
        uint64_t last = range->first + (uint64_t)(range->count - 1) * range->stride;
        if (range->count == 0 || range->stride == 0 || cause >= cause_count || last >= file->rank_count) {
            say(error, error_size, "corrupt: missing rank range %u (%u ranks from %u by %u, cause %u)", g,
                range->count, range->first, range->stride, cause);
            return UINT64_MAX;
        }
        range->cause = causes[cause];
        for (uint64_t r = range->first; r <= last; r += range->stride) {
            if (seen[r]) {
                say(error, error_size, "corrupt: rank %llu is named twice", (unsigned long long)r);
                return UINT64_MAX;
            }
            seen[r] = 1;
            named++;
            file->ranks[r] = (adt_skeleton_rank_view){ (uint32_t)r, ADT_SKELETON_NO_CLASS, 0, NULL, range->cause };
        }
    }
    file->missing_count = (uint32_t)named;
    file->missing_range_count = range_count;
    file->missing_ranges = ranges;
    return named;
}

adt_skeleton_file *adt_skeleton_file_parse(const uint8_t *bytes, size_t size, char *error, size_t error_size)
{
    arena a = { 0 };
    cursor c = { bytes, bytes + size };
    error[0] = '\0';
    const uint8_t *magic;
    uint32_t version;
    if (!take(&c, sizeof ADT_SKELETON_MAGIC, &magic) || memcmp(magic, ADT_SKELETON_MAGIC, sizeof ADT_SKELETON_MAGIC)) {
        say(error, error_size, "not a skeleton file (no %s header)", ADT_SKELETON_MAGIC);
        return NULL;
    }
    if (!take_u32(&c, &version)) {
        say(error, error_size, "cut short after the header");
        return NULL;
    }
    if (version != ADT_SKELETON_VERSION && version != ADT_SKELETON_VERSION_PARTIAL) {
        say(error, error_size, "skeleton format version %u, this adaptrace reads versions %u and %u", version,
            ADT_SKELETON_VERSION, ADT_SKELETON_VERSION_PARTIAL);
        return NULL;
    }
    if (size < sizeof ADT_SKELETON_MAGIC + 4 + 8) {
        say(error, error_size, "cut short after the header");
        return NULL;
    }
    c.end = bytes + size - 8;
    cursor tail = { c.end, bytes + size };
    uint64_t stored;
    take_u64(&tail, &stored);
    if (stored != adt_skeleton_checksum(bytes, size - 8)) {
        say(error, error_size, "corrupt or cut short: checksum mismatch");
        return NULL;
    }
    adt_skeleton_file *file = arena_alloc(&a, sizeof *file);
    if (!file)
        goto no_memory;
    file->version = version;
    if (!take_u64(&c, &file->ticks_per_second) || file->ticks_per_second == 0) {
        say(error, error_size, "corrupt: no clock rate");
        goto failed;
    }
    if (!take_u32(&c, &file->function_count) || file->function_count > left(&c) / 4) {
        say(error, error_size, "corrupt: bad function table");
        goto failed;
    }
    char **names = arena_alloc(&a, sizeof *names * file->function_count);
    if (!names)
        goto no_memory;
    for (uint32_t f = 0; f < file->function_count; ++f) {
        uint32_t length;
        const uint8_t *name;
        if (!take_u32(&c, &length) || !take(&c, length, &name)) {
            say(error, error_size, "corrupt: function name %u cut short", f);
            goto failed;
        }
        names[f] = arena_alloc(&a, (size_t)length + 1);
        if (!names[f])
            goto no_memory;
        memcpy(names[f], name, length);
    }
    file->function_names = (const char *const *)names;
    if (!take_u32(&c, &file->class_count) || file->class_count > left(&c) / 8) {
        say(error, error_size, "corrupt: bad class count");
        goto failed;
    }
    file->classes = arena_alloc(&a, sizeof *file->classes * file->class_count);
    if (!file->classes)
        goto no_memory;
    for (uint32_t k = 0; k < file->class_count; ++k) {
        uint64_t part_bytes;
        const uint8_t *part;
        /* Its structure; its timing follows it. */
        if (!take_u64(&c, &part_bytes) || part_bytes > left(&c) || !take(&c, (size_t)part_bytes, &part)) {
            say(error, error_size, "cut short in class %u", k);
            goto failed;
        }
        cursor p = { part, part + part_bytes };
        adt_skeleton_class_view *class_view = &file->classes[k];
        if (!take_u32(&p, &class_view->thread_count) || class_view->thread_count > left(&p) / 28) {
            say(error, error_size, "corrupt: class %u's header", k);
            goto failed;
        }
        class_view->threads = arena_alloc(&a, sizeof *class_view->threads * class_view->thread_count);
        if (!class_view->threads)
            goto no_memory;
        for (uint32_t t = 0; t < class_view->thread_count; ++t) {
            if (!read_thread(&p, &a, &class_view->threads[t], k, error, error_size))
                goto failed;
        }
        if (left(&p) != 0) {
            say(error, error_size, "corrupt: %zu bytes after class %u's skeletons", left(&p), k);
            goto failed;
        }
        if (!read_class_timing(&c, &a, class_view, k, error, error_size) ||
            !read_class_parameters(&c, &a, class_view, k, error, error_size))
            goto failed;
    }
    if (!take_u32(&c, &file->rank_count) || !take_u32(&c, &file->range_count) ||
        file->range_count > left(&c) / 16 || file->rank_count > ADT_SKELETON_RANKS_MAX) {
        say(error, error_size, "corrupt: bad rank or range count");
        goto failed;
    }
    file->ranges = arena_alloc(&a, sizeof *file->ranges * file->range_count);
    file->ranks = arena_alloc(&a, sizeof *file->ranks * file->rank_count);
    uint8_t *seen = arena_alloc(&a, file->rank_count);
    if (!file->ranges || !file->ranks || !seen)
        goto no_memory;
    uint64_t covered = 0;
    for (uint32_t g = 0; g < file->range_count; ++g) {
        adt_skeleton_rank_range *range = &file->ranges[g];
        take_u32(&c, &range->first);
        take_u32(&c, &range->count);
        take_u32(&c, &range->stride);
        take_u32(&c, &range->class_index);
        uint64_t last = range->first + (uint64_t)(range->count - 1) * range->stride;
        if (range->count == 0 || range->stride == 0 || range->class_index >= file->class_count ||
            last >= file->rank_count) {
            say(error, error_size, "corrupt: rank range %u (%u ranks from %u by %u, class %u)", g, range->count,
                range->first, range->stride, range->class_index);
            goto failed;
        }
        file->classes[range->class_index].rank_count += range->count;
        for (uint64_t r = range->first; r <= last; r += range->stride) {
            if (seen[r]) {
                say(error, error_size, "corrupt: rank %llu is in two ranges", (unsigned long long)r);
                goto failed;
            }
            seen[r] = 1;
            covered++;
            const adt_skeleton_class_view *class_view = &file->classes[range->class_index];
            file->ranks[r] = (adt_skeleton_rank_view){ (uint32_t)r, range->class_index, class_view->thread_count,
                                                       class_view->threads, NULL };
        }
    }
    if (file->version == ADT_SKELETON_VERSION_PARTIAL) {
        uint64_t missing = read_missing(&c, &a, file, seen, error, error_size);
        if (missing == UINT64_MAX)
            goto failed;
        covered += missing;
    }
    if (covered != file->rank_count) {
        say(error, error_size, "corrupt: the ranges name %llu of %u ranks", (unsigned long long)covered,
            file->rank_count);
        goto failed;
    }
    if (left(&c) != 0) {
        say(error, error_size, "corrupt: %zu bytes after the last rank", left(&c));
        goto failed;
    }
    /* Each rank's index among its class's ranks. */
    uint32_t *slot = arena_alloc(&a, sizeof *slot * file->rank_count);
    uint32_t *filled = arena_alloc(&a, sizeof *filled * file->class_count);
    if (!slot || !filled)
        goto no_memory;
    for (uint32_t r = 0; r < file->rank_count; ++r)
        if (file->ranks[r].class_index != ADT_SKELETON_NO_CLASS)
            slot[r] = filled[file->ranks[r].class_index]++;
    for (uint32_t k = 0; k < file->class_count; ++k)
        if (!rank_variants(file, &a, k, slot, error, error_size))
            goto failed;
    if (!calls_agree(file, error, error_size))
        goto failed;
    file->storage = a.blocks;
    /* The block list itself is kept in storage; its count is found again
     * by the NULL that ends it. */
    if (a.count == a.capacity) {
        void **grown = realloc(a.blocks, (a.capacity + 1) * sizeof *grown);
        if (!grown)
            goto no_memory;
        a.blocks = grown;
    }
    a.blocks[a.count] = NULL;
    file->storage = a.blocks;
    return file;
no_memory:
    if (a.failed || !error[0])
        say(error, error_size, "out of memory reading the skeleton");
failed:
    arena_free(&a);
    return NULL;
}

void adt_skeleton_file_free(adt_skeleton_file *file)
{
    if (!file)
        return;
    void **blocks = file->storage;
    size_t count = 0;
    while (blocks[count])
        count++;
    for (size_t i = count; i > 0; --i)
        free(blocks[i - 1]);
    free(blocks);
}

adt_skeleton_file *adt_skeleton_file_read(const char *path, char *error, size_t error_size)
{
    error[0] = '\0';
    FILE *stream = fopen(path, "rb");
    if (!stream) {
        say(error, error_size, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    uint8_t *bytes = NULL;
    size_t size = 0, capacity = 0;
    for (;;) {
        if (size == capacity) {
            capacity = capacity ? capacity * 2 : 65536;
            uint8_t *grown = realloc(bytes, capacity);
            if (!grown) {
                free(bytes);
                fclose(stream);
                say(error, error_size, "out of memory reading %s", path);
                return NULL;
            }
            bytes = grown;
        }
        size_t got = fread(bytes + size, 1, capacity - size, stream);
        size += got;
        if (got == 0)
            break;
    }
    bool failed = ferror(stream);
    fclose(stream);
    if (failed) {
        free(bytes);
        say(error, error_size, "cannot read %s", path);
        return NULL;
    }
    char why[256] = "";
    adt_skeleton_file *file = adt_skeleton_file_parse(bytes, size, why, sizeof why);
    free(bytes);
    if (!file)
        say(error, error_size, "%s: %s", path, why);
    return file;
}
