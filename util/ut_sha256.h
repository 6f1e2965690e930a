/* ut_sha256: SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), the keyed construction that authenticates what
 * xpuify reads back from places a checked-out tree controls (the results cache). Streaming contexts, no allocation;
 * the one-shot helpers are the same code. */
#ifndef UT_SHA256_H
#define UT_SHA256_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UT_SHA256_LEN 32
#define UT_SHA256_BLOCK 64

typedef struct {
    uint32_t h[8];
    uint64_t bytes;                 /* message length so far */
    uint8_t block[UT_SHA256_BLOCK]; /* a partial block */
    size_t fill;
} ut_sha256;

void ut_sha256_init(ut_sha256 *s);
void ut_sha256_update(ut_sha256 *s, const void *data, size_t len);
void ut_sha256_final(ut_sha256 *s, uint8_t out[UT_SHA256_LEN]);
void ut_sha256_once(const void *data, size_t len, uint8_t out[UT_SHA256_LEN]);

typedef struct {
    ut_sha256 inner, outer; /* both keyed: update feeds inner */
} ut_hmac256;

/* Keys longer than a block are hashed first (RFC 2104). */
void ut_hmac256_init(ut_hmac256 *m, const void *key, size_t keylen);
void ut_hmac256_update(ut_hmac256 *m, const void *data, size_t len);
void ut_hmac256_final(ut_hmac256 *m, uint8_t out[UT_SHA256_LEN]);
void ut_hmac256_once(const void *key, size_t keylen, const void *data, size_t len, uint8_t out[UT_SHA256_LEN]);
/* Whether the compression function runs on the processor's SHA extensions (x86-64, decided once by CPUID). */
bool ut_sha256_accelerated(void);
/* Tests only: on, the portable compression function from now on; off, the processor's choice again. */
void ut_sha256_force_portable(bool on);
/* Compares two MACs in time that does not depend on where they differ. */
int ut_mac_equal(const uint8_t *a, const uint8_t *b, size_t n);
#endif
