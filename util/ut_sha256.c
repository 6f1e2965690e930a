/* ut_sha256: SHA-256 as FIPS 180-4 section 6.2 states it, and HMAC over it as RFC 2104 does. Written here because
 * OpenSSL is not a dependency and libgit2 exposes only SHA-1 in its public API; checked against the FIPS 180-4
 * examples and RFC 4231's HMAC test cases (tests/unit/test_sha256.c).
 *
 * On x86-64 processors with the SHA extensions (Intel since Goldmont and Ice Lake, AMD since Zen) the compression
 * function runs on them (sha256rnds2, sha256msg1/2: a block in about a fifth of the portable code's time), chosen
 * once by CPUID; a warm run authenticates every results-cache entry it reads, ~20,000 MACs on a large tree. The
 * portable function stays the reference: the unit tests run both on the same inputs. */
#include "util/ut_sha256.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define SHA_NI_BUILD 1
#endif

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static inline uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress_portable(uint32_t h[8], const uint8_t *p) {
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 | (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

#ifdef SHA_NI_BUILD
/* four rounds: the message words w (already scheduled) plus their constants, two rounds per sha256rnds2 */
#define NI_ROUNDS(w, i)                                                                                  \
    do {                                                                                                 \
        __m128i m_ = _mm_add_epi32((w), _mm_loadu_si128((const __m128i *)&K[4 * (i)]));                  \
        cdgh = _mm_sha256rnds2_epu32(cdgh, abef, m_);                                                    \
        abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(m_, 0x0E));                           \
    } while (0)
/* the next four message words from the sixteen before them: w[t-16..t-13] + s0(w[t-15..t-12]) (msg1), + w[t-7..t-4]
 * (the two previous groups joined), + s1(w[t-2..t+1]) (msg2) */
#define NI_SCHEDULE(w0, w1, w2, w3) \
    _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32((w0), (w1)), _mm_alignr_epi8((w3), (w2), 4)), (w3))

__attribute__((target("sha,sse4.1,ssse3"))) static void compress_ni(uint32_t h[8], const uint8_t *p) {
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL); /* big-endian words */
    /* the state as the instructions hold it: {F, E, B, A} and {H, G, D, C} from the low lane up */
    __m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xB1);
    __m128i hgfe = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1B);
    __m128i abef = _mm_alignr_epi8(dcba, hgfe, 8), cdgh = _mm_blend_epi16(hgfe, dcba, 0xF0);
    const __m128i abef0 = abef, cdgh0 = cdgh;
    __m128i w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 0)), swap);
    __m128i w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), swap);
    __m128i w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), swap);
    __m128i w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), swap);
    NI_ROUNDS(w0, 0);
    NI_ROUNDS(w1, 1);
    NI_ROUNDS(w2, 2);
    NI_ROUNDS(w3, 3);
    for (int i = 4; i < 16; i += 4) {
        w0 = NI_SCHEDULE(w0, w1, w2, w3);
        NI_ROUNDS(w0, i);
        w1 = NI_SCHEDULE(w1, w2, w3, w0);
        NI_ROUNDS(w1, i + 1);
        w2 = NI_SCHEDULE(w2, w3, w0, w1);
        NI_ROUNDS(w2, i + 2);
        w3 = NI_SCHEDULE(w3, w0, w1, w2);
        NI_ROUNDS(w3, i + 3);
    }
    abef = _mm_add_epi32(abef, abef0);
    cdgh = _mm_add_epi32(cdgh, cdgh0);
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B), dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(dchg, feba, 8));
}

static bool cpu_has_sha(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 9)) || !(c & (1u << 19))) return false; /* SSSE3, SSE4.1 */
    if (__get_cpuid_max(0, NULL) < 7) return false;
    __cpuid_count(7, 0, a, b, c, d);
    return (b >> 29) & 1; /* SHA */
}
#endif

/* 0: not decided yet, 1: portable, 2: the SHA extensions */
static _Atomic int engine;

static int engine_now(void) {
    int e = atomic_load_explicit(&engine, memory_order_relaxed);
    if (!e) {
#ifdef SHA_NI_BUILD
        e = cpu_has_sha() ? 2 : 1;
#else
        e = 1;
#endif
        atomic_store_explicit(&engine, e, memory_order_relaxed);
    }
    return e;
}

bool ut_sha256_accelerated(void) { return engine_now() == 2; }

void ut_sha256_force_portable(bool on) { atomic_store_explicit(&engine, on ? 1 : 0, memory_order_relaxed); }

static void compress(uint32_t h[8], const uint8_t *p) {
#ifdef SHA_NI_BUILD
    if (engine_now() == 2) {
        compress_ni(h, p);
        return;
    }
#endif
    compress_portable(h, p);
}

void ut_sha256_init(ut_sha256 *s) {
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, iv, sizeof iv);
    s->bytes = 0;
    s->fill = 0;
}

void ut_sha256_update(ut_sha256 *s, const void *data, size_t len) {
    const uint8_t *p = data;
    s->bytes += len;
    if (s->fill) {
        size_t take = UT_SHA256_BLOCK - s->fill < len ? UT_SHA256_BLOCK - s->fill : len;
        memcpy(s->block + s->fill, p, take);
        s->fill += take, p += take, len -= take;
        if (s->fill < UT_SHA256_BLOCK) return;
        compress(s->h, s->block);
        s->fill = 0;
    }
    for (; len >= UT_SHA256_BLOCK; p += UT_SHA256_BLOCK, len -= UT_SHA256_BLOCK) compress(s->h, p);
    memcpy(s->block, p, len);
    s->fill = len;
}

void ut_sha256_final(ut_sha256 *s, uint8_t out[UT_SHA256_LEN]) {
    uint64_t bits = s->bytes * 8;
    s->block[s->fill++] = 0x80;
    if (s->fill > 56) {
        memset(s->block + s->fill, 0, UT_SHA256_BLOCK - s->fill);
        compress(s->h, s->block);
        s->fill = 0;
    }
    memset(s->block + s->fill, 0, 56 - s->fill);
    for (int i = 0; i < 8; i++) s->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
    compress(s->h, s->block);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24), out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8), out[4 * i + 3] = (uint8_t)s->h[i];
    }
    memset(s, 0, sizeof *s);
}

void ut_sha256_once(const void *data, size_t len, uint8_t out[UT_SHA256_LEN]) {
    ut_sha256 s;
    ut_sha256_init(&s);
    ut_sha256_update(&s, data, len);
    ut_sha256_final(&s, out);
}

void ut_hmac256_init(ut_hmac256 *m, const void *key, size_t keylen) {
    uint8_t k[UT_SHA256_BLOCK] = {0}, pad[UT_SHA256_BLOCK];
    if (keylen > UT_SHA256_BLOCK) ut_sha256_once(key, keylen, k);
    else if (keylen) memcpy(k, key, keylen);
    for (int i = 0; i < UT_SHA256_BLOCK; i++) pad[i] = k[i] ^ 0x36;
    ut_sha256_init(&m->inner);
    ut_sha256_update(&m->inner, pad, sizeof pad);
    for (int i = 0; i < UT_SHA256_BLOCK; i++) pad[i] = k[i] ^ 0x5c;
    ut_sha256_init(&m->outer);
    ut_sha256_update(&m->outer, pad, sizeof pad);
    memset(k, 0, sizeof k);
    memset(pad, 0, sizeof pad);
}

void ut_hmac256_update(ut_hmac256 *m, const void *data, size_t len) { ut_sha256_update(&m->inner, data, len); }

void ut_hmac256_final(ut_hmac256 *m, uint8_t out[UT_SHA256_LEN]) {
    uint8_t ih[UT_SHA256_LEN];
    ut_sha256_final(&m->inner, ih);
    ut_sha256_update(&m->outer, ih, sizeof ih);
    ut_sha256_final(&m->outer, out);
}

void ut_hmac256_once(const void *key, size_t keylen, const void *data, size_t len, uint8_t out[UT_SHA256_LEN]) {
    ut_hmac256 m;
    ut_hmac256_init(&m, key, keylen);
    ut_hmac256_update(&m, data, len);
    ut_hmac256_final(&m, out);
}

int ut_mac_equal(const uint8_t *a, const uint8_t *b, size_t n) {
    volatile uint8_t d = 0;
    for (size_t i = 0; i < n; i++) d |= a[i] ^ b[i];
    return d == 0;
}
