/* hb_check.h - CHECK for the unit tests of the C clients (cc_test, hft's test_unit): count a
 * failed condition and say where. One translation unit per test binary includes it; main
 * returns failures != 0. */
#ifndef HB_CHECK_H
#define HB_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (0)

#endif
