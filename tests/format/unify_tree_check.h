/* The tree unification among threads standing for ranks, compared with
 * the flat merge in rank order (unify_tree_check.c). */
#ifndef ADAPTRACE_TESTS_FORMAT_UNIFY_TREE_CHECK_H
#define ADAPTRACE_TESTS_FORMAT_UNIFY_TREE_CHECK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs adt_unify among `ranks` threads and merges the same ranks' sets in
 * rank order; returns (malloc'd) one line per difference in the global
 * definitions or in a rank's id maps, or per missing definition; "" when
 * the tree and the flat merge agree. */
char *unify_tree_differences(uint32_t ranks);

/* Runs adt_unify among `ranks` threads where rank garbling_rank receives
 * garbled bytes from its first child; returns one line per rank that did
 * not fail, or failed with another message than its own cause (that rank)
 * or "failed on another rank" (all others), or kept maps; "" when all is
 * as expected. */
char *unify_tree_failure_differences(uint32_t ranks, uint32_t garbling_rank);

#ifdef __cplusplus
}
#endif

#endif
