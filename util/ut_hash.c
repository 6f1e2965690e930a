/* ut_hash: SHA-1 via libgit2 (git_odb_hash of a blob), initialized once per process; MurmurHash3_x64_128. */
#include "util/ut_hash.h"
#include <git2.h>
#include <pthread.h>
#include <string.h>

static void init_once(void) { git_libgit2_init(); }

void ut_sha1(const void *data, size_t len, uint8_t out[UT_HASH_LEN]) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_once);
    git_oid oid;
    git_odb_hash(&oid, data, len, GIT_OBJECT_BLOB);
    memcpy(out, oid.id, UT_HASH_LEN);
}

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t fmix64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

/* eight bytes as a little-endian number: one load (the byte loop it replaces cost ~8 instructions a byte) */
static inline uint64_t load_le64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static void store_le64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

void ut_murmur3_128(const void *data, size_t len, uint32_t seed, uint8_t out[16]) {
    const uint8_t *d = data;
    const uint64_t c1 = 0x87c37b91114253d5ull, c2 = 0x4cf5ad432745937full;
    uint64_t h1 = seed, h2 = seed;
    size_t nblocks = len / 16;
    for (size_t i = 0; i < nblocks; i++) {
        uint64_t k1 = load_le64(d + 16 * i), k2 = load_le64(d + 16 * i + 8);
        k1 *= c1, k1 = rotl64(k1, 31), k1 *= c2, h1 ^= k1;
        h1 = rotl64(h1, 27), h1 += h2, h1 = h1 * 5 + 0x52dce729;
        k2 *= c2, k2 = rotl64(k2, 33), k2 *= c1, h2 ^= k2;
        h2 = rotl64(h2, 31), h2 += h1, h2 = h2 * 5 + 0x38495ab5;
    }
    const uint8_t *tail = d + 16 * nblocks;
    size_t rest = len & 15;
    uint64_t k1 = 0, k2 = 0;
    for (size_t i = rest; i > 8; i--) k2 ^= (uint64_t)tail[i - 1] << (8 * (i - 9));
    if (rest > 8) k2 *= c2, k2 = rotl64(k2, 33), k2 *= c1, h2 ^= k2;
    for (size_t i = rest < 8 ? rest : 8; i > 0; i--) k1 ^= (uint64_t)tail[i - 1] << (8 * (i - 1));
    if (rest) k1 *= c1, k1 = rotl64(k1, 31), k1 *= c2, h1 ^= k1;
    h1 ^= (uint64_t)len, h2 ^= (uint64_t)len;
    h1 += h2, h2 += h1;
    h1 = fmix64(h1), h2 = fmix64(h2);
    h1 += h2, h2 += h1;
    store_le64(out, h1);
    store_le64(out + 8, h2);
}

void ut_hash20(const void *data, size_t len, uint8_t out[UT_HASH_LEN]) {
    ut_murmur3_128(data, len, 0x58505531u, out);
    uint32_t n = (uint32_t)len;
    memcpy(out + 16, &n, 4);
}
