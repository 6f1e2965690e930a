/* ut_smap: open-addressing map from byte strings to a pointer and a number. */
#include "util/ut_smap.h"
#include "util/ut_mem.h"
#include <string.h>

/* the key's hash: eight bytes a step, each mixed by a multiply and a shift (FNV-1a's byte loop made the map's puts
 * ~240 instructions each on the project model's paths and dotted names); any function works, nothing depends on
 * the slots' order */
static uint64_t key_hash(const char *k, size_t n) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull);
    for (; n >= 8; k += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, k, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, k, n);
        h = (h ^ w) * 0x94d049bb133111ebull;
    }
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
}

static size_t slot_of(const ut_smap *m, const char *k, size_t n, uint64_t h) {
    size_t i = (size_t)h & (m->cap - 1);
    while (m->s[i].key && !(m->s[i].h == h && m->s[i].n == n && !memcmp(m->s[i].key, k, n))) i = (i + 1) & (m->cap - 1);
    return i;
}

ut_smap_slot *ut_smap_find(const ut_smap *m, const char *k, size_t n) {
    if (!m->cap) return NULL;
    ut_smap_slot *s = &m->s[slot_of(m, k, n, key_hash(k, n))];
    return s->key ? s : NULL;
}

static void grow(ut_smap *m) {
    ut_smap g = {ut_calloc(m->cap ? m->cap * 2 : 64, sizeof(ut_smap_slot)), m->cap ? m->cap * 2 : 64, m->len};
    for (size_t i = 0; i < m->cap; i++)
        if (m->s[i].key) g.s[slot_of(&g, m->s[i].key, m->s[i].n, m->s[i].h)] = m->s[i];
    ut_free(m->s);
    *m = g;
}

ut_smap_slot *ut_smap_put(ut_smap *m, const char *k, size_t n, bool *added) {
    if ((m->len + 1) * 2 > m->cap) grow(m);
    uint64_t h = key_hash(k, n);
    ut_smap_slot *s = &m->s[slot_of(m, k, n, h)];
    if (added) *added = !s->key;
    if (!s->key) {
        s->key = ut_strndup(k, n), s->n = n, s->h = h, s->val = NULL, s->num = 0;
        m->len++;
    }
    return s;
}

void ut_smap_free(ut_smap *m, void (*free_val)(void *)) {
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->s[i].key) continue;
        ut_free(m->s[i].key);
        if (free_val && m->s[i].val) free_val(m->s[i].val);
    }
    ut_free(m->s);
    memset(m, 0, sizeof *m);
}
