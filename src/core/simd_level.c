/* The SIMD level a kernel family may use, from a test/benchmark switch.
 *
 * Families with run-time dispatched loop sets (the EDT's windowed column
 * passes, morphology's clamped passes) let an environment variable force a
 * lower set so that every set is tested on one machine. The names are the
 * same for every family; anything else, or no variable, means "best" (a
 * stale value never fails a user's run). The family still checks what the
 * CPU supports at or below the level returned. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int voxa__simd_level_from_env(const char *var) {
    const char *e = getenv(var);
    if (!e || !*e) return VOXA__SIMD_BEST;
    if (!strcmp(e, "envelope")) return VOXA__SIMD_NONE;
    if (!strcmp(e, "c")) return VOXA__SIMD_C;
    if (!strcmp(e, "avx2")) return VOXA__SIMD_AVX2;
    if (!strcmp(e, "avx512")) return VOXA__SIMD_AVX512;
    return VOXA__SIMD_BEST;
}
