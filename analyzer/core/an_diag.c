/* an_diag: helpers over the shared diagnostics model. */
#include "analyzer/core/an_diag.h"
#include "analyzer/core/an_rule.h"
#include <stdio.h>

const char *an_severity_name(an_severity s) {
    switch (s) {
    case AN_SEV_ERROR: return "error";
    case AN_SEV_WARNING: return "warning";
    default: return "info";
    }
}

const char *an_applicability_name(an_applicability a) {
    switch (a) {
    case AN_FIX_SAFE: return "safe";
    case AN_FIX_UNSAFE: return "unsafe";
    default: return "none";
    }
}

void an_fix_free(an_fix *f) {
    if (!f) return;
    for (size_t i = 0; i < f->edits.len; i++) ut_free(f->edits.items[i].text);
    ut_vec_free(&f->edits);
    ut_free(f->title);
    ut_free(f);
}

void an_diag_list_free(an_diag_list *l) {
    for (size_t i = 0; i < l->len; i++) {
        ut_free(l->items[i].message);
        an_fix_free(l->items[i].fix);
    }
    ut_vec_free(l);
}

void an_diag_drop(an_diag *d) {
    ut_free(d->message);
    an_fix_free(d->fix);
    d->message = NULL, d->fix = NULL, d->rule = NULL;
}

void an_diag_locate(an_diag *d, const an_source *src) {
    an_source_position(src, d->start, &d->line, &d->col);
    an_source_position(src, d->end, &d->end_line, &d->end_col);
    if (d->scope_end) {
        an_source_position(src, d->scope_start, &d->scope_line, &d->scope_col);
        an_source_position(src, d->scope_end, &d->scope_end_line, &d->scope_end_col);
    }
}

static int cmp(const void *a, const void *b) {
    const an_diag *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    int c = strcmp(x->rule->code, y->rule->code);
    if (c) return c;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return 0;
}

size_t an_diag_list_first_from(const an_diag_list *l, uint32_t pos) {
    size_t lo = 0, hi = l->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->items[mid].start < pos) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

void an_diag_list_sort(an_diag_list *l) {
    /* a list in order already (a front end's findings, sorted before its filters) is left as it is: glibc's qsort
     * is a merge sort, stable, that would not move anything either, but copies the list through a buffer as large */
    bool sorted = true;
    for (size_t i = 1; i < l->len && sorted; i++) sorted = cmp(&l->items[i - 1], &l->items[i]) <= 0;
    if (l->len > 1 && !sorted) qsort(l->items, l->len, sizeof(an_diag), cmp);
    size_t w = 0;
    for (size_t i = 0; i < l->len; i++) {
        if (w && l->items[w - 1].rule == l->items[i].rule && l->items[w - 1].start == l->items[i].start &&
            l->items[w - 1].end == l->items[i].end) {
            ut_free(l->items[i].message);
            an_fix_free(l->items[i].fix);
            continue;
        }
        l->items[w++] = l->items[i];
    }
    l->len = w;
}

char *an_edits_apply(const char *text, size_t len, const an_edit *e, size_t n, size_t *out_len) {
    ut_buf b;
    ut_buf_init(&b);
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].start < pos || e[i].end > len) continue; /* defensive: callers pass sorted, disjoint edits */
        ut_buf_append(&b, text + pos, e[i].start - pos);
        if (e[i].text) ut_buf_puts(&b, e[i].text);
        pos = e[i].end;
    }
    ut_buf_append(&b, text + pos, len - pos);
    *out_len = b.len;
    return ut_buf_take(&b);
}

bool an_version_newer(const char *v, int major, int minor) {
    if (!v || (!major && !minor)) return false;
    int a = 0, b = 0;
    if (sscanf(v, "%d.%d", &a, &b) < 1) return false;
    return a > major || (a == major && b > minor);
}
