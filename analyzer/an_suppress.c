/* an_suppress: parsing and applying suppression comments. */
#include "an_suppress.h"
#include "an_rule.h"
#include <ctype.h>

bool an_rule_matches_selector(const an_rule *r, const char *sel) {
    size_t n = strlen(sel);
    return !strcmp(r->name, sel) || (n && !strncasecmp(r->code, sel, n)) || !strcasecmp(sel, "ALL");
}

static const char *skip_ws(const char *p, const char *e) {
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    return p;
}

void an_suppress_add_comment(an_suppressions *s, const an_source *src, uint32_t start, uint32_t end,
                             const char *prefix) {
    const char *t = src->text + start, *e = src->text + end;
    size_t pl = strlen(prefix);
    if ((size_t)(e - t) < pl || memcmp(t, prefix, pl)) return;
    const char *p = skip_ws(t + pl, e);
    static const char tag[] = "xpuify:";
    if ((size_t)(e - p) < sizeof tag - 1 || memcmp(p, tag, sizeof tag - 1)) return;
    p = skip_ws(p + sizeof tag - 1, e);
    an_directive d = {0};
    const char *w = p;
    while (p < e && (isalpha((unsigned char)*p) || *p == '-')) p++;
    size_t wl = (size_t)(p - w);
    if (wl == 6 && !memcmp(w, "ignore", 6)) d.kind = AN_SUP_LINE;
    else if (wl == 11 && !memcmp(w, "ignore-file", 11)) d.kind = AN_SUP_FILE;
    else if (wl == 7 && !memcmp(w, "disable", 7)) d.kind = AN_SUP_DISABLE;
    else if (wl == 6 && !memcmp(w, "enable", 6)) d.kind = AN_SUP_ENABLE;
    else return;
    if (p < e && *p == '[') {
        const char *close = memchr(p, ']', (size_t)(e - p));
        if (!close) return;
        const char *q = p + 1;
        while (q < close) {
            q = skip_ws(q, close);
            const char *c = q;
            while (q < close && *q != ',') q++;
            const char *ce = q;
            while (ce > c && isspace((unsigned char)ce[-1])) ce--;
            if (ce > c) {
                ut_vec_push(&d.codes, ut_strndup(c, (size_t)(ce - c)));
                ut_vec_push(&d.code_used, false);
            }
            if (q < close) q++;
        }
    }
    d.start = start, d.end = end;
    uint32_t col;
    an_source_position(src, start, &d.line, &col);
    /* alone on its line: applies to the next line that holds code */
    uint32_t ls, le;
    an_source_line_span(src, d.line, &ls, &le);
    bool alone = true;
    for (uint32_t i = ls; i < start; i++)
        if (!isspace((unsigned char)src->text[i])) alone = false;
    if (d.kind == AN_SUP_LINE && alone) {
        uint32_t l = d.line + 1;
        for (; l <= src->nlines; l++) {
            uint32_t a, b;
            an_source_line_span(src, l, &a, &b);
            while (a < b && isspace((unsigned char)src->text[a])) a++;
            /* the next line that is not a comment of the same syntax (C: a `#include` line is code) */
            if (a < b && (b - a < pl || memcmp(src->text + a, prefix, pl))) break;
        }
        d.line = l;
    }
    ut_vec_push(&s->items, d);
}

static bool codes_overlap(const an_directive *a, const an_directive *b) {
    if (!a->codes.len || !b->codes.len) return true;
    for (size_t i = 0; i < a->codes.len; i++)
        for (size_t j = 0; j < b->codes.len; j++)
            if (!strcasecmp(a->codes.items[i], b->codes.items[j])) return true;
    return false;
}

void an_suppress_finish(an_suppressions *s, const an_source *src) {
    for (size_t i = 0; i < s->items.len; i++) {
        an_directive *d = &s->items.items[i];
        if (d->kind != AN_SUP_DISABLE) continue;
        d->until = src->nlines;
        for (size_t j = i + 1; j < s->items.len; j++) {
            an_directive *e = &s->items.items[j];
            if (e->kind == AN_SUP_ENABLE && e->line > d->line && codes_overlap(d, e)) {
                d->until = e->line;
                e->used = true; /* an enable is never "unused" */
                break;
            }
        }
    }
}

static bool covers(an_directive *d, const an_rule *r) {
    if (!d->codes.len) return true;
    for (size_t i = 0; i < d->codes.len; i++)
        if (an_rule_matches_selector(r, d->codes.items[i])) {
            d->code_used.items[i] = true;
            return true;
        }
    return false;
}

bool an_suppress_hides(an_suppressions *s, const an_diag *d) {
    bool hidden = false;
    for (size_t i = 0; i < s->items.len; i++) {
        an_directive *x = &s->items.items[i];
        bool in = x->kind == AN_SUP_FILE || (x->kind == AN_SUP_LINE && x->line == d->line) ||
                  (x->kind == AN_SUP_DISABLE && d->line >= x->line && d->line <= x->until);
        if (in && covers(x, d->rule)) x->used = hidden = true;
    }
    return hidden;
}

void an_suppress_free(an_suppressions *s) {
    for (size_t i = 0; i < s->items.len; i++) {
        an_directive *d = &s->items.items[i];
        for (size_t j = 0; j < d->codes.len; j++) ut_free(d->codes.items[j]);
        ut_vec_free(&d->codes);
        ut_vec_free(&d->code_used);
    }
    ut_vec_free(&s->items);
}
