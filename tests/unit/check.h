/*
 * The unit tests' assertions: each failed check prints where it failed
 * and makes the test function return 0.
 */
#ifndef GGP_CHECK_H
#define GGP_CHECK_H

#include <stdio.h>
#include <string.h>

#define EXPECT(cond)                                                         \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
            return 0;                                                        \
        }                                                                    \
    } while (0)

#define EXPECT_EQ(a, b)                                                       \
    do {                                                                      \
        const unsigned long long a_ = (unsigned long long)(a);                \
        const unsigned long long b_ = (unsigned long long)(b);                \
        if (a_ != b_) {                                                       \
            fprintf(stderr, "%s:%d: %s is %llu, expected %s = %llu\n", __FILE__, \
                    __LINE__, #a, a_, #b, b_);                                \
            return 0;                                                         \
        }                                                                     \
    } while (0)

#define EXPECT_STR(got, want)                                                \
    do {                                                                     \
        const char *g_ = (got), *w_ = (want);                                \
        if (strcmp(g_, w_) != 0) {                                           \
            fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, \
                    __LINE__, #got, g_, w_);                                 \
            return 0;                                                        \
        }                                                                    \
    } while (0)

#endif
