/* an_deps: the other files an analysis read (see an_deps.h). */
#include "analyzer/core/an_deps.h"
#include "analyzer/core/an_cache.h"
#include "analyzer/core/an_source.h"
#include "util/ut_mem.h"
#include <stdio.h>
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

#define FIXED_TAG "\x01" "fixed" "\x01"
static bool (*run_fixed)(const char *path);
static uint8_t run_key[20];

void an_deps_set_fixed_run(bool (*fixed)(const char *path), const uint8_t key[20]) {
    run_fixed = fixed;
    if (key) memcpy(run_key, key, 20);
    else memset(run_key, 0, 20);
}

/* the content of a run-membership dependency: the run's options and its answer for the path */
static void fixed_state(bool fixed, uint8_t out[20]) {
    uint8_t buf[21];
    memcpy(buf, run_key, 20);
    buf[20] = fixed ? 1 : 2;
    an_cache_content((const char *)buf, sizeof buf, out);
}

void an_deps_note_fixed(const char *path, bool fixed) {
    if (!rec || !path) return;
    size_t n = strlen(FIXED_TAG) + strlen(path) + 1;
    char *k = ut_malloc(n);
    snprintf(k, n, "%s%s", FIXED_TAG, path);
    uint8_t h[20];
    fixed_state(fixed, h);
    an_deps_note_hash(k, h);
    ut_free(k);
}

bool an_deps_hold(const an_dep *d, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (d[i].buffer) return false;
        if (!strncmp(d[i].path, FIXED_TAG, strlen(FIXED_TAG))) {
            uint8_t h[20];
            if (!run_fixed) return false;
            fixed_state(run_fixed(d[i].path + strlen(FIXED_TAG)), h);
            if (memcmp(h, d[i].content, 20)) return false;
            continue;
        }
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
