/* an_cachekey: the per-machine secret that authenticates the results cache's entries (HMAC-SHA-256): 32 random
 * bytes in $XDG_CACHE_HOME/xpuify/key (else ~/.cache/xpuify/key), created 0600 by the first run of this user and
 * never inside a project, so a cache file committed to a repository or written by someone else cannot be forged. */
#ifndef AN_CACHEKEY_H
#define AN_CACHEKEY_H
#include <stdbool.h>
#include <stdint.h>

#define AN_CACHEKEY_LEN 32

/* Reads the key, creating it when there is none. false with *why (heap) when there is no usable key (no home, a
 * key file that is not a regular file owned by this user, readable by others, or of the wrong length): the caller
 * then runs without the cache. */
bool an_cachekey_load(uint8_t key[AN_CACHEKEY_LEN], char **why);
/* Where the key is (heap), or NULL without $XDG_CACHE_HOME and $HOME. */
char *an_cachekey_path(void);
#endif
