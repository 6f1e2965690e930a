/* ut_hash: SHA-1 via libgit2 (git_odb_hash of a blob), initialized once per process. */
#include "ut_hash.h"
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
