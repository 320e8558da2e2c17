/* The unification benchmark's directly built unions against merging the
 * same synthetic ranks one by one (unify_synthetic_check.c). */
#ifndef ADAPTRACE_TESTS_FORMAT_UNIFY_SYNTHETIC_CHECK_H
#define ADAPTRACE_TESTS_FORMAT_UNIFY_SYNTHETIC_CHECK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CP2K's share of a rank's calling contexts that are its own. */
uint32_t synthetic_cp2k_own_calling_contexts(void);

/* Builds the union of ranks first .. first + count - 1 of rank_count
 * (own_calling_contexts each) both ways; returns (malloc'd) "" when the
 * bytes are the same, else where they first differ; NULL when out of
 * memory. */
char *synthetic_union_differences(uint32_t rank_count, uint32_t own_calling_contexts, uint32_t first,
                                  uint32_t count);

#ifdef __cplusplus
}
#endif

#endif
