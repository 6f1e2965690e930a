/* ut_smap: open-addressing map from byte strings to a pointer and a number. */
#include "util/ut_smap.h"
#include "util/ut_hash.h"
#include "util/ut_mem.h"
#include <string.h>

static size_t slot_of(const ut_smap *m, const char *k, size_t n) {
    size_t i = (size_t)ut_fnv1a(UT_FNV_SEED, k, n) & (m->cap - 1);
    while (m->s[i].key && !(m->s[i].n == n && !memcmp(m->s[i].key, k, n))) i = (i + 1) & (m->cap - 1);
    return i;
}

ut_smap_slot *ut_smap_find(const ut_smap *m, const char *k, size_t n) {
    if (!m->cap) return NULL;
    ut_smap_slot *s = &m->s[slot_of(m, k, n)];
    return s->key ? s : NULL;
}

static void grow(ut_smap *m) {
    ut_smap g = {ut_calloc(m->cap ? m->cap * 2 : 64, sizeof(ut_smap_slot)), m->cap ? m->cap * 2 : 64, m->len};
    for (size_t i = 0; i < m->cap; i++)
        if (m->s[i].key) g.s[slot_of(&g, m->s[i].key, m->s[i].n)] = m->s[i];
    ut_free(m->s);
    *m = g;
}

ut_smap_slot *ut_smap_put(ut_smap *m, const char *k, size_t n, bool *added) {
    if ((m->len + 1) * 2 > m->cap) grow(m);
    ut_smap_slot *s = &m->s[slot_of(m, k, n)];
    if (added) *added = !s->key;
    if (!s->key) {
        s->key = ut_strndup(k, n), s->n = n, s->val = NULL, s->num = 0;
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
