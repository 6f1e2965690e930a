/* an_deps: the other files an analysis read (see an_deps.h). */
#include "analyzer/core/an_deps.h"
#include "analyzer/core/an_cache.h"
#include "analyzer/core/an_source.h"
#include "util/ut_mem.h"
#include <string.h>

static _Thread_local an_deps *rec; /* NULL: not recording */

void an_deps_free(an_deps *d) {
    for (size_t i = 0; i < d->len; i++) ut_free(d->items[i].path);
    ut_free(d->items);
    memset(d, 0, sizeof *d);
}

void an_deps_begin(void) {
    if (!rec) rec = ut_calloc(1, sizeof *rec);
    an_deps_free(rec);
}

static an_dep *add(const char *path) {
    for (size_t i = 0; i < rec->len; i++)
        if (!strcmp(rec->items[i].path, path)) return NULL;
    if (rec->len == rec->cap) {
        rec->cap = rec->cap ? rec->cap * 2 : 4;
        rec->items = ut_realloc(rec->items, rec->cap * sizeof *rec->items);
    }
    an_dep *d = &rec->items[rec->len++];
    d->path = ut_strdup(path);
    d->buffer = false;
    return d;
}

void an_deps_note_hash(const char *path, const uint8_t content[20]) {
    an_dep *d = rec && path ? add(path) : NULL;
    if (d) memcpy(d->content, content, 20);
}

void an_deps_note(const char *path, const char *text, size_t len, bool buffer) {
    if (!rec || !path) return;
    for (size_t i = 0; i < rec->len; i++)
        if (!strcmp(rec->items[i].path, path)) return;
    if (rec->len == rec->cap) {
        rec->cap = rec->cap ? rec->cap * 2 : 4;
        rec->items = ut_realloc(rec->items, rec->cap * sizeof *rec->items);
    }
    an_dep *d = &rec->items[rec->len++];
    d->path = ut_strdup(path);
    an_cache_content(text, len, d->content);
    d->buffer = buffer;
}

void an_deps_end(an_deps *out) {
    an_deps_free(out);
    if (!rec) return;
    *out = *rec;
    ut_free(rec);
    rec = NULL;
}

bool an_deps_hold(const an_dep *d, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (d[i].buffer) return false;
        an_source src = {0};
        char *why = NULL;
        uint8_t h[20];
        bool ok = an_source_load(&src, d[i].path, (size_t)64 << 20, &why) == AN_LOAD_OK;
        if (ok) an_cache_content(src.text, src.len, h);
        an_source_free(&src);
        ut_free(why);
        if (!ok || memcmp(h, d[i].content, 20)) return false;
    }
    return true;
}
