/* Unit tests for util/ut_hash: MurmurHash3_x64_128 against its published test vectors (the results cache's content
 * hash), SHA-1 against git's blob id of a known text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "util/ut_hash.h"
#include <stdio.h>
#include <string.h>

static void hex(const uint8_t *h, size_t n, char *out) {
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", h[i]);
}

static void murmur3_vectors(void **s) {
    (void)s;
    static const char *const v[][2] = {
        {"", "00000000000000000000000000000000"},
        {"a", "897859f6655555855a890e51483ab5e6"},
        {"The quick brown fox jumps over the lazy dog", "6c1b07bc7bbc4be347939ac4a93c437a"},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        uint8_t h[16];
        char x[33];
        ut_murmur3_128(v[i][0], strlen(v[i][0]), 0, h);
        hex(h, 16, x);
        assert_string_equal(x, v[i][1]);
    }
    /* every tail length (0-15 bytes after the blocks) feeds the hash: no two prefixes of a text collide */
    const char *t = "0123456789abcdefghijklmnopqrstuvwxyz0123456789ABCDEF";
    uint8_t seen[53][16];
    for (size_t n = 0; n <= 52; n++) {
        ut_murmur3_128(t, n, 0, seen[n]);
        for (size_t m = 0; m < n; m++) assert_memory_not_equal(seen[m], seen[n], 16);
    }
    /* the seed changes the result */
    uint8_t a[16], b[16];
    ut_murmur3_128(t, 20, 0, a);
    ut_murmur3_128(t, 20, 1, b);
    assert_memory_not_equal(a, b, 16);
}

/* ut_hash20: the seeded MurmurHash3 and the length, so that texts of different lengths never share a fingerprint */
static void hash20_is_murmur_and_length(void **s) {
    (void)s;
    const char *t = "import torch\ntorch.cuda.synchronize()\n";
    uint8_t h[UT_HASH_LEN], m[16];
    ut_hash20(t, strlen(t), h);
    ut_murmur3_128(t, strlen(t), 0x58505531u, m);
    assert_memory_equal(h, m, 16);
    uint32_t n;
    memcpy(&n, h + 16, 4);
    assert_int_equal(n, strlen(t));
}

static void sha1_is_git_blob_id(void **s) {
    (void)s;
    uint8_t h[UT_HASH_LEN];
    char x[41];
    ut_sha1("hello\n", 6, h); /* `echo hello | git hash-object --stdin` */
    hex(h, UT_HASH_LEN, x);
    assert_string_equal(x, "ce013625030ba8dba906f756967f9e9ca394464a");
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(murmur3_vectors), cmocka_unit_test(hash20_is_murmur_and_length),
                                       cmocka_unit_test(sha1_is_git_blob_id)};
    return cmocka_run_group_tests_name("hash", tests, NULL, NULL);
}
