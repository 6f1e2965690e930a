/* lsp_doc: the document store. */
#include "lsp/lsp_doc.h"
#include "analyzer/core/an_walk.h"
#include "util/ut_buf.h"
#include <ctype.h>
#include <stdio.h>

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

char *lsp_uri_to_path(const char *uri) {
    if (strncmp(uri, "file://", 7)) return ut_strdup(uri);
    const char *p = uri + 7;
    if (*p != '/') { /* file://host/path: keep the path */
        p = strchr(p, '/');
        if (!p) return ut_strdup(uri);
    }
    ut_buf b;
    ut_buf_init(&b);
    for (; *p && *p != '?' && *p != '#'; p++) {
        int h, l;
        if (*p == '%' && (h = hexval(p[1])) >= 0 && (l = hexval(p[2])) >= 0) {
            ut_buf_putc(&b, (char)(h * 16 + l));
            p += 2;
        } else {
            ut_buf_putc(&b, *p);
        }
    }
    return ut_buf_take(&b);
}

char *lsp_path_to_uri(const char *path) {
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_puts(&b, "file://");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (isalnum(*p) || strchr("/-._~", *p)) ut_buf_putc(&b, (char)*p);
        else ut_buf_printf(&b, "%%%02X", *p);
    }
    return ut_buf_take(&b);
}

lsp_doc *lsp_docs_find(lsp_docs *d, const char *uri) {
    for (size_t i = 0; i < d->items.len; i++)
        if (!strcmp(d->items.items[i]->uri, uri)) return d->items.items[i];
    return NULL;
}

static void doc_free(lsp_doc *doc) {
    ut_free(doc->uri);
    an_source_free(&doc->src);
    an_incr_free(doc->inc);
    for (size_t i = 0; i < doc->deps.len; i++) ut_free(doc->deps.items[i]);
    ut_vec_free(&doc->deps);
    ut_free(doc->enabled);
    ut_free(doc);
}

lsp_doc *lsp_docs_open(lsp_docs *d, const char *uri, const char *language_id, int version, const char *text, size_t len) {
    lsp_docs_close(d, uri); /* a second didOpen replaces the first */
    lsp_doc *doc = ut_calloc(1, sizeof *doc);
    doc->uri = ut_strdup(uri);
    doc->src.path = lsp_uri_to_path(uri);
    doc->version = version;
    doc->inc = an_incr_new();
    doc->analyzable = an_lang_for_path(doc->src.path, &doc->lang);
    if (language_id && !strcmp(language_id, "python")) doc->lang = AN_LANG_PYTHON, doc->analyzable = true;
    lsp_doc_set_text(doc, text, len);
    ut_vec_push(&d->items, doc);
    return doc;
}

void lsp_docs_close(lsp_docs *d, const char *uri) {
    for (size_t i = 0; i < d->items.len; i++)
        if (!strcmp(d->items.items[i]->uri, uri)) {
            doc_free(d->items.items[i]);
            d->items.items[i] = d->items.items[--d->items.len];
            return;
        }
}

void lsp_docs_free(lsp_docs *d) {
    for (size_t i = 0; i < d->items.len; i++) doc_free(d->items.items[i]);
    ut_vec_free(&d->items);
}

static void reserve(lsp_doc *doc, size_t n) {
    if (n + 1 <= doc->cap && doc->src.text) return;
    size_t c = doc->cap ? doc->cap : 4096;
    while (c < n + 1) c *= 2;
    doc->src.text = ut_realloc(doc->src.text, c);
    doc->cap = c;
}

/* one counter for every document, so a result id never repeats even after a document is closed and reopened */
static uint64_t generation;

void lsp_doc_invalidate(lsp_doc *doc) {
    doc->pending = true;
    doc->gen = ++generation;
}

static void changed(lsp_doc *doc) { lsp_doc_invalidate(doc); }

void lsp_doc_set_text(lsp_doc *doc, const char *text, size_t len) {
    if (len >= UINT32_MAX) len = UINT32_MAX - 1;
    reserve(doc, len);
    memcpy(doc->src.text, text, len);
    doc->src.text[len] = 0;
    doc->src.len = (uint32_t)len;
    an_source_index(&doc->src);
    an_incr_reset(doc->inc);
    changed(doc);
}

void lsp_doc_change(lsp_doc *doc, lsp_encoding enc, uint32_t l0, uint32_t c0, uint32_t l1, uint32_t c1,
                    const char *text, size_t len) {
    uint32_t a = lsp_pos_to_byte(&doc->src, enc, l0, c0), b = lsp_pos_to_byte(&doc->src, enc, l1, c1);
    if (b < a) { uint32_t t = a; a = b; b = t; }
    size_t nlen = (size_t)doc->src.len - (b - a) + len;
    if (nlen >= UINT32_MAX) return;
    an_incr_edit(doc->inc, doc->src.text, doc->src.len, a, b, text, (uint32_t)len);
    reserve(doc, nlen);
    memmove(doc->src.text + a + len, doc->src.text + b, doc->src.len - b);
    memcpy(doc->src.text + a, text, len);
    doc->src.len = (uint32_t)nlen;
    doc->src.text[nlen] = 0;
    an_source_index(&doc->src);
    changed(doc);
}
