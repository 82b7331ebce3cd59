/* Minimal C test harness: CHECK records failures and continues; main()
 * returns non-zero if any check failed (ctest reads the exit code). */
#ifndef VOXA_VTEST_H
#define VOXA_VTEST_H

#include "voxa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int vtest_failures;
static int vtest_checks;

#define CHECK(cond)                                                            \
    do {                                                                       \
        vtest_checks++;                                                        \
        if (!(cond)) {                                                         \
            vtest_failures++;                                                  \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
        }                                                                      \
    } while (0)

/* Check a status and print the library message when it differs. */
#define CHECK_STATUS(expr, want)                                               \
    do {                                                                       \
        voxa_status got_ = (expr);                                             \
        vtest_checks++;                                                        \
        if (got_ != (want)) {                                                  \
            vtest_failures++;                                                  \
            fprintf(stderr, "%s:%d: %s returned %s, want %s (%s)\n", __FILE__,  \
                    __LINE__, #expr, voxa_status_name(got_),                   \
                    voxa_status_name(want), voxa_last_error());                \
        }                                                                      \
    } while (0)

#define CHECK_OK(expr) CHECK_STATUS(expr, VOXA_OK)

/* Check that the last error message contains `needle`. */
#define CHECK_MSG(needle)                                                      \
    do {                                                                       \
        vtest_checks++;                                                        \
        if (!strstr(voxa_last_error(), (needle))) {                            \
            vtest_failures++;                                                  \
            fprintf(stderr, "%s:%d: message '%s' lacks '%s'\n", __FILE__,      \
                    __LINE__, voxa_last_error(), (needle));                    \
        }                                                                      \
    } while (0)

#define RUN(test)                                                              \
    do {                                                                       \
        int before_ = vtest_failures;                                          \
        test();                                                                \
        fprintf(stderr, "%s %s\n", vtest_failures == before_ ? "ok  " : "FAIL", \
                #test);                                                        \
    } while (0)

#define VTEST_END()                                                            \
    do {                                                                       \
        fprintf(stderr, "%d checks, %d failed\n", vtest_checks, vtest_failures); \
        return vtest_failures ? 1 : 0;                                         \
    } while (0)

/* Deterministic xorshift for test data. */
static inline unsigned long long vtest_rand(unsigned long long *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

#endif
