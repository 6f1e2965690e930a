/* Unit tests for util/ut_find: ut_memmem gives memmem's answer for every needle length, at every alignment, at the
 * haystack's ends, with candidates that match the first and last bytes only, and on random texts of few letters
 * (many near misses). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "util/ut_find.h"
#include <stdlib.h>
#include <string.h>

static void same_as_memmem(const char *h, size_t hn, const char *n, size_t nn) {
    const char *want = memmem(h, hn, n, nn), *got = ut_memmem(h, hn, n, nn);
    if (want != got) fail_msg("needle %.*s (%zu) in %zu bytes: memmem %td, ut_memmem %td", (int)nn, n, nn, hn,
                              want ? want - h : -1, got ? got - h : -1);
}

static void edges(void **s) {
    (void)s;
    char h[80];
    /* the needle at every offset of haystacks of every length up to 80, needles of 1 to 20 bytes */
    for (size_t nn = 1; nn <= 20; nn++) {
        char n[21];
        for (size_t k = 0; k < nn; k++) n[k] = (char)('a' + k % 26);
        for (size_t hn = 0; hn <= sizeof h; hn++)
            for (size_t at = 0; at + nn <= hn || at == 0; at++) {
                memset(h, 'z', sizeof h);
                if (at + nn <= hn) memcpy(h + at, n, nn);
                same_as_memmem(h, hn, n, nn);
                if (at + nn > hn) break;
            }
    }
    /* first and last bytes match, the middle does not; the real one after */
    const char *t = "cXXa cYYa cuda_cuda";
    same_as_memmem(t, strlen(t), "cuda", 4);
    assert_ptr_equal(ut_memmem(t, strlen(t), "cuda", 4), t + 10);
    assert_null(ut_memmem(t, strlen(t), "cudax", 5));
    assert_ptr_equal(ut_memmem(t, 3, "", 0), t); /* an empty needle: the haystack */
    assert_null(ut_memmem(t, 3, "cXXa", 4));     /* longer than the haystack */
    /* bytes above 0x7f (signed char) */
    const char u[] = "\xc3\xa9t\xc3\xa9 \xe2\x84\xaa x";
    same_as_memmem(u, sizeof u - 1, "\xe2\x84\xaa", 3);
    assert_non_null(ut_memmem(u, sizeof u - 1, "\xe2\x84\xaa", 3));
}

static void random_texts(void **s) {
    (void)s;
    srand(7);
    char h[300], n[9];
    for (int round = 0; round < 20000; round++) {
        size_t hn = (size_t)(rand() % (int)sizeof h), nn = 1 + (size_t)(rand() % 8);
        int alpha = 2 + rand() % 3; /* "ab", "abc", "abcd": most windows are near misses */
        for (size_t i = 0; i < hn; i++) h[i] = (char)('a' + rand() % alpha);
        for (size_t i = 0; i < nn; i++) n[i] = (char)('a' + rand() % alpha);
        same_as_memmem(h, hn, n, nn);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(edges), cmocka_unit_test(random_texts)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
