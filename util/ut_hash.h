/* ut_hash: content hashes (SHA-1, through libgit2: the hash git uses to tell file contents apart; MurmurHash3's
 * 128-bit x64 variant where SHA-1 is too slow for what is hashed), and FNV-1a for in-memory hash tables and
 * signatures. */
#ifndef UT_HASH_H
#define UT_HASH_H
#include <stddef.h>
#include <stdint.h>

#define UT_HASH_LEN 20

void ut_sha1(const void *data, size_t len, uint8_t out[UT_HASH_LEN]);
/* MurmurHash3_x64_128 (Austin Appleby's public-domain design) of data with seed, its two 64-bit halves stored
 * little-endian: several GB/s, not collision-resistant against someone who crafts inputs. */
void ut_murmur3_128(const void *data, size_t len, uint32_t seed, uint8_t out[16]);
/* A 20-byte fingerprint of data for the results cache and the rule catalog: MurmurHash3 (128 bits) and the length.
 * What it guards against is change and damage, not an adversary. */
void ut_hash20(const void *data, size_t len, uint8_t out[UT_HASH_LEN]);

#define UT_FNV_SEED 1469598103934665603ull
/* 64-bit FNV-1a of p[0..n), continuing from h (UT_FNV_SEED to start). Not for anything stored on disk. */
static inline uint64_t ut_fnv1a(uint64_t h, const void *p, size_t n) {
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
    return h;
}
#endif
