/* ut_hash: content hashes (SHA-1, through libgit2: the hash git uses to tell file contents apart). */
#ifndef UT_HASH_H
#define UT_HASH_H
#include <stddef.h>
#include <stdint.h>

#define UT_HASH_LEN 20

void ut_sha1(const void *data, size_t len, uint8_t out[UT_HASH_LEN]);
#endif
