/* out_dirs: the per-directory roll-up. */
#include "output/out_dirs.h"
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *prefix;
    bool exact;
    size_t count, n[OUT_FIX_CLASSES];
} cand;

typedef UT_VEC(cand) cand_vec;

static bool covers(const char *prefix, bool exact, const char *dir) {
    if (exact) return !strcmp(prefix, dir);
    size_t k = strlen(prefix);
    return !k || (!strncmp(dir, prefix, k) && (dir[k] == 0 || dir[k] == '/'));
}

bool out_dir_row_covers(const out_dir_row *row, const char *dir) {
    for (size_t i = 0; i < row->nmatch; i++)
        if (covers(row->match[i].prefix, row->match[i].exact, dir)) return true;
    return false;
}

static void add_leaf(cand *c, const out_dir_leaf *l) {
    for (int k = 0; k < OUT_FIX_CLASSES; k++) c->n[k] += l->n[k], c->count += l->n[k];
}

/* The rows a non-exact candidate splits into: its own files (exact) and one per subdirectory. */
static void children(const out_dir_leaf *leaves, size_t n, const cand *p, cand_vec *out) {
    size_t plen = strlen(p->prefix);
    for (size_t i = 0; i < n; i++) {
        const char *d = leaves[i].dir;
        if (!covers(p->prefix, false, d)) continue;
        char *key;
        bool exact = !strcmp(d, p->prefix);
        if (exact) key = ut_strdup(d);
        else {
            /* an absolute path's first component is "/name", not "" */
            const char *rest = plen ? d + plen + 1 : d, *sl = strchr(rest + (rest[0] == '/'), '/');
            key = ut_strndup(d, (size_t)((sl ? sl : rest + strlen(rest)) - d));
        }
        cand *c = NULL;
        for (size_t k = 0; k < out->len && !c; k++)
            if (out->items[k].exact == exact && !strcmp(out->items[k].prefix, key)) c = &out->items[k];
        if (c) ut_free(key);
        else {
            cand x = {key, exact, 0, {0}};
            ut_vec_push(out, x);
            c = &out->items[out->len - 1];
        }
        add_leaf(c, &leaves[i]);
    }
}

/* A directory with one subdirectory and no files of its own is that subdirectory. */
static void compress(const out_dir_leaf *leaves, size_t n, cand *c) {
    while (!c->exact) {
        cand_vec ch = {0};
        children(leaves, n, c, &ch);
        bool descend = ch.len == 1 && !ch.items[0].exact && strcmp(ch.items[0].prefix, c->prefix);
        if (descend) {
            ut_free(c->prefix);
            c->prefix = ch.items[0].prefix;
            ch.items[0].prefix = NULL;
        }
        for (size_t k = 0; k < ch.len; k++) ut_free(ch.items[k].prefix);
        ut_vec_free(&ch);
        if (!descend) break;
    }
}

static int by_count(const void *a, const void *b) {
    const cand *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    if (x->exact != y->exact) return x->exact ? 1 : -1;
    return strcmp(x->prefix, y->prefix);
}

static void split(const out_dir_leaf *leaves, size_t n, cand_vec *rows, size_t at, cand_vec *ch) {
    ut_free(rows->items[at].prefix);
    rows->items[at] = ch->items[0];
    for (size_t k = 1; k < ch->len; k++) ut_vec_push(rows, ch->items[k]);
    for (size_t k = 0; k < ch->len; k++) compress(leaves, n, &rows->items[k ? rows->len - ch->len + k : at]);
    ut_vec_free(ch);
}

static char *label_of(const cand *c, bool split_parent) {
    ut_buf b;
    ut_buf_init(&b);
    if (!*c->prefix) ut_buf_puts(&b, c->exact ? "(top-level files)" : "./");
    else ut_buf_printf(&b, "%s/%s", c->prefix, c->exact && split_parent ? " (its own files)" : "");
    return ut_buf_take(&b);
}

void out_dirs_rollup(const out_dir_leaf *leaves, size_t n, size_t limit, out_dir_rows *out) {
    out->items = NULL, out->len = 0;
    if (!n) return;
    if (limit < 2) limit = 2;
    cand_vec rows = {0}, ch = {0};
    cand root = {ut_strdup(""), false, 0, {0}};
    for (size_t i = 0; i < n; i++) add_leaf(&root, &leaves[i]);
    ut_vec_push(&rows, root);
    compress(leaves, n, &rows.items[0]);
    children(leaves, n, &rows.items[0], &ch);
    if (ch.len > 1) split(leaves, n, &rows, 0, &ch);
    else {
        for (size_t k = 0; k < ch.len; k++) ut_free(ch.items[k].prefix);
        ut_vec_free(&ch);
    }
    /* split where the work is: the largest directory first, while the rows fit; never a smaller one while a larger
     * one stays whole, so that the chart reads the same for directories of the same size */
    for (;;) {
        size_t best = rows.len;
        cand_vec best_ch = {0};
        for (size_t i = 0; i < rows.len; i++) {
            if (rows.items[i].exact || (best < rows.len && rows.items[i].count <= rows.items[best].count)) continue;
            cand_vec c = {0};
            children(leaves, n, &rows.items[i], &c);
            if (c.len < 2) { /* files only: nothing to split */
                for (size_t k = 0; k < c.len; k++) ut_free(c.items[k].prefix);
                ut_vec_free(&c);
                continue;
            }
            for (size_t k = 0; k < best_ch.len; k++) ut_free(best_ch.items[k].prefix);
            ut_vec_free(&best_ch);
            best = i, best_ch = c;
        }
        if (best == rows.len) break;
        if (rows.len - 1 + best_ch.len > limit) {
            for (size_t k = 0; k < best_ch.len; k++) ut_free(best_ch.items[k].prefix);
            ut_vec_free(&best_ch);
            break;
        }
        split(leaves, n, &rows, best, &best_ch);
    }
    if (rows.len > 1) qsort(rows.items, rows.len, sizeof(cand), by_count);
    size_t keep = rows.len <= limit ? rows.len : limit - 1;
    out->items = ut_calloc(keep + 1, sizeof(out_dir_row));
    for (size_t i = 0; i < keep; i++) {
        cand *c = &rows.items[i];
        out_dir_row *r = &out->items[out->len++];
        bool sibling = false; /* its own files beside rows for its subdirectories */
        for (size_t k = 0; k < rows.len && c->exact && !sibling; k++)
            sibling = !rows.items[k].exact && covers(c->prefix, false, rows.items[k].prefix) &&
                      strcmp(rows.items[k].prefix, c->prefix);
        r->label = label_of(c, sibling || (c->exact && !*c->prefix));
        r->match = ut_calloc(1, sizeof(out_dir_match));
        r->match[0] = (out_dir_match){ut_strdup(c->prefix), c->exact};
        r->nmatch = 1;
        r->count = c->count;
        memcpy(r->n, c->n, sizeof r->n);
    }
    if (keep < rows.len) {
        out_dir_row *r = &out->items[out->len++];
        r->other = true;
        r->match = ut_calloc(rows.len - keep, sizeof(out_dir_match));
        for (size_t i = keep; i < rows.len; i++) {
            cand *c = &rows.items[i];
            r->match[r->nmatch++] = (out_dir_match){ut_strdup(c->prefix), c->exact};
            r->count += c->count;
            for (int k = 0; k < OUT_FIX_CLASSES; k++) r->n[k] += c->n[k];
        }
        ut_buf b;
        ut_buf_init(&b);
        ut_buf_printf(&b, "other (%zu directories)", rows.len - keep);
        r->label = ut_buf_take(&b);
    }
    for (size_t i = 0; i < rows.len; i++) ut_free(rows.items[i].prefix);
    ut_vec_free(&rows);
}

void out_dir_rows_free(out_dir_rows *rows) {
    for (size_t i = 0; i < rows->len; i++) {
        for (size_t k = 0; k < rows->items[i].nmatch; k++) ut_free(rows->items[i].match[k].prefix);
        ut_free(rows->items[i].match);
        ut_free(rows->items[i].label);
    }
    ut_free(rows->items);
    rows->items = NULL, rows->len = 0;
}
