/* Unit tests for util/ut_sha256: SHA-256 against the FIPS 180-4 examples (NIST's "Example Algorithms" document),
 * HMAC-SHA-256 against RFC 4231 test cases 1-7, streaming in pieces equal to one shot, and the MAC comparison. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "util/ut_sha256.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hex(const uint8_t *h, size_t n, char *out) {
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", h[i]);
}

static void sha256_fips_180_4(void **s) {
    (void)s;
    static const char *const v[][2] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        uint8_t h[UT_SHA256_LEN];
        char x[65];
        ut_sha256_once(v[i][0], strlen(v[i][0]), h);
        hex(h, sizeof h, x);
        assert_string_equal(x, v[i][1]);
    }
    /* one million "a", fed in uneven pieces: blocks that straddle update calls */
    char *a = malloc(1000000);
    memset(a, 'a', 1000000);
    ut_sha256 st;
    ut_sha256_init(&st);
    for (size_t off = 0, step = 1; off < 1000000; off += step, step = step % 97 + 1)
        ut_sha256_update(&st, a + off, off + step > 1000000 ? 1000000 - off : step);
    uint8_t h[UT_SHA256_LEN];
    char x[65];
    ut_sha256_final(&st, h);
    hex(h, sizeof h, x);
    assert_string_equal(x, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

/* every length around the padding boundaries (55, 56, 63, 64 bytes): one shot equals byte by byte */
static void sha256_streaming_equals_one_shot(void **s) {
    (void)s;
    char t[200];
    for (size_t i = 0; i < sizeof t; i++) t[i] = (char)(i * 7 + 3);
    for (size_t n = 0; n <= sizeof t; n++) {
        uint8_t a[UT_SHA256_LEN], b[UT_SHA256_LEN];
        ut_sha256_once(t, n, a);
        ut_sha256 st;
        ut_sha256_init(&st);
        for (size_t i = 0; i < n; i++) ut_sha256_update(&st, t + i, 1);
        ut_sha256_final(&st, b);
        assert_memory_equal(a, b, UT_SHA256_LEN);
    }
}

static void fill(uint8_t *p, uint8_t v, size_t n) { memset(p, v, n); }

static void hmac_rfc4231(void **s) {
    (void)s;
    uint8_t k1[20], k3[20], d3[50], k4[25], d4[50], k5[20], k6[131];
    fill(k1, 0x0b, 20), fill(k3, 0xaa, 20), fill(d3, 0xdd, 50), fill(d4, 0xcd, 50), fill(k5, 0x0c, 20);
    fill(k6, 0xaa, 131);
    for (int i = 0; i < 25; i++) k4[i] = (uint8_t)(i + 1);
    const char *d6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    const char *d7 = "This is a test using a larger than block-size key and a larger than block-size data. The key "
                     "needs to be hashed before being used by the HMAC algorithm.";
    struct { const void *k; size_t kn; const void *d; size_t dn; const char *mac; } v[] = {
        {k1, 20, "Hi There", 8, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
        {"Jefe", 4, "what do ya want for nothing?", 28,
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
        {k3, 20, d3, 50, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
        {k4, 25, d4, 50, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
        {k5, 20, "Test With Truncation", 20, "a3b6167473100ee06e0c796c2955552b"}, /* truncated to 128 bits */
        {k6, 131, d6, strlen(d6), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
        {k6, 131, d7, strlen(d7), "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        uint8_t mac[UT_SHA256_LEN];
        char x[65];
        ut_hmac256_once(v[i].k, v[i].kn, v[i].d, v[i].dn, mac);
        hex(mac, sizeof mac, x);
        x[strlen(v[i].mac)] = 0;
        assert_string_equal(x, v[i].mac);
        /* streaming: the data in two pieces */
        ut_hmac256 m;
        uint8_t mac2[UT_SHA256_LEN];
        ut_hmac256_init(&m, v[i].k, v[i].kn);
        ut_hmac256_update(&m, v[i].d, v[i].dn / 3);
        ut_hmac256_update(&m, (const char *)v[i].d + v[i].dn / 3, v[i].dn - v[i].dn / 3);
        ut_hmac256_final(&m, mac2);
        assert_memory_equal(mac, mac2, UT_SHA256_LEN);
    }
}

/* another key, or one changed byte of the message, changes the MAC; ut_mac_equal tells them apart */
static void hmac_depends_on_key_and_message(void **s) {
    (void)s;
    uint8_t a[UT_SHA256_LEN], b[UT_SHA256_LEN], c[UT_SHA256_LEN];
    ut_hmac256_once("key-one", 7, "0 findings", 10, a);
    ut_hmac256_once("key-two", 7, "0 findings", 10, b);
    ut_hmac256_once("key-one", 7, "1 findings", 10, c);
    assert_false(ut_mac_equal(a, b, UT_SHA256_LEN));
    assert_false(ut_mac_equal(a, c, UT_SHA256_LEN));
    memcpy(b, a, UT_SHA256_LEN);
    assert_true(ut_mac_equal(a, b, UT_SHA256_LEN));
    b[31] ^= 1;
    assert_false(ut_mac_equal(a, b, UT_SHA256_LEN));
}

/* the FIPS examples again on the portable compression function (the others ran on the processor's choice) */
static void sha256_fips_portable(void **s) {
    ut_sha256_force_portable(true);
    sha256_fips_180_4(s);
    hmac_rfc4231(s);
    ut_sha256_force_portable(false);
}

/* where the processor has the SHA extensions: both compression functions give the same digests and MACs for
 * messages of every length up to several blocks, with random content (skipped, and said so, elsewhere) */
static void sha256_accelerated_equals_portable(void **s) {
    (void)s;
    if (!ut_sha256_accelerated()) {
        printf("sha256: this processor has no SHA extensions; only the portable function ran\n");
        return;
    }
    uint8_t msg[700];
    unsigned seed = 12345;
    for (size_t i = 0; i < sizeof msg; i++) seed = seed * 1103515245u + 12345u, msg[i] = (uint8_t)(seed >> 16);
    for (size_t n = 0; n <= sizeof msg; n++) {
        uint8_t a[UT_SHA256_LEN], b[UT_SHA256_LEN], ma[UT_SHA256_LEN], mb[UT_SHA256_LEN];
        ut_sha256_force_portable(false);
        assert_true(ut_sha256_accelerated());
        ut_sha256_once(msg, n, a);
        ut_hmac256_once(msg, n % 97, msg, n, ma);
        ut_sha256_force_portable(true);
        assert_false(ut_sha256_accelerated());
        ut_sha256_once(msg, n, b);
        ut_hmac256_once(msg, n % 97, msg, n, mb);
        assert_memory_equal(a, b, UT_SHA256_LEN);
        assert_memory_equal(ma, mb, UT_SHA256_LEN);
    }
    ut_sha256_force_portable(false);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_fips_180_4),
        cmocka_unit_test(sha256_streaming_equals_one_shot),
        cmocka_unit_test(hmac_rfc4231),
        cmocka_unit_test(hmac_depends_on_key_and_message),
        cmocka_unit_test(sha256_fips_portable),
        cmocka_unit_test(sha256_accelerated_equals_portable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
