/* hb_test.h - the check counter the hb_test files share, and the suites hb_test.c runs. */
#ifndef HB_TEST_H
#define HB_TEST_H

#include <stdio.h>

extern int hb_test_failures;
extern int hb_test_checks;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        hb_test_checks++;                                                    \
        if (!(cond)) {                                                       \
            hb_test_failures++;                                              \
            (void)fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            (void)fprintf(stderr, __VA_ARGS__);                              \
            (void)fputc('\n', stderr);                                       \
        }                                                                    \
    } while (0)

/* hb_test_output.c: the result JSON and the interval recorder and its log. */
void test_result(void);
void test_intervals(void);

#endif
