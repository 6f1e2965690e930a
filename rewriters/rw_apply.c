/* rw_apply: conflict handling between fixes of one pass. */
#include "rewriters/rw_apply.h"
#include "analyzer/core/an_rule.h"

typedef struct {
    const an_diag *d;
    uint32_t first;
} cand;

static int cand_cmp(const void *a, const void *b) {
    const cand *x = a, *y = b;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return strcmp(x->d->rule->code, y->d->rule->code);
}

static bool same(const an_edit *a, const an_edit *b) {
    return a->start == b->start && a->end == b->end && !strcmp(a->text ? a->text : "", b->text ? b->text : "");
}

/* Overlap, with insertions at one point conflicting only when they differ and touching ranges allowed. */
static bool clash(const an_edit *a, const an_edit *b) {
    if (same(a, b)) return false;
    if (a->start == a->end && b->start == b->end) return a->start == b->start;
    if (a->start == a->end) return a->start > b->start && a->start < b->end;
    if (b->start == b->end) return b->start > a->start && b->start < a->end;
    return a->start < b->end && b->start < a->end;
}

/* The accepted edits of a pass, sorted by start. They never clash with each other, so their replacements do not
 * overlap: an edit can clash only with the nearest replacement that starts before it and with the edits that start
 * within it. Comparing each fix with every accepted edit was quadratic: 1.2 of the 3.8 s of `fix` on a line with 40,000
 * fixes. */
typedef struct {
    an_edit *items;
    size_t len, cap;
} edit_set;

/* the first index whose edit starts at or after s */
static size_t lower_bound(const edit_set *a, uint32_t s) {
    size_t lo = 0, hi = a->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->items[mid].start < s) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static bool set_clashes(const edit_set *a, const an_edit *e) {
    size_t i = lower_bound(a, e->start);
    for (size_t j = i; j-- > 0;) {
        if (a->items[j].start == a->items[j].end) continue; /* an insertion before e cannot clash with it */
        if (clash(e, &a->items[j])) return true;
        break;
    }
    for (size_t j = i; j < a->len && a->items[j].start <= e->end; j++)
        if (clash(e, &a->items[j])) return true;
    return false;
}

/* adds e unless an equal edit is there */
static void set_add(edit_set *a, const an_edit *e) {
    size_t i = lower_bound(a, e->start);
    for (; i < a->len && a->items[i].start == e->start; i++)
        if (same(e, &a->items[i])) return;
    if (a->len == a->cap) a->cap = a->cap ? a->cap * 2 : 16, a->items = ut_realloc(a->items, a->cap * sizeof(an_edit));
    memmove(a->items + i + 1, a->items + i, (a->len - i) * sizeof(an_edit));
    a->items[i] = *e;
    a->len++;
}

static int edit_cmp(const void *a, const void *b) {
    const an_edit *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    /* an insertion goes before a replacement that starts at the same point */
    return (x->end - x->start) < (y->end - y->start) ? -1 : (x->end - x->start) > (y->end - y->start);
}

void rw_apply_pass(const char *text, size_t len, an_diag_list *diags, bool unsafe, rw_pass *out,
                   void (*on_applied)(void *ctx, const an_diag *d), void *ctx) {
    UT_VEC(cand) cands = {0};
    for (size_t i = 0; i < diags->len; i++) {
        const an_diag *d = &diags->items[i];
        if (!d->fix || !d->fix->edits.len) continue;
        if (d->fix->applicability == AN_FIX_UNSAFE && !unsafe) continue;
        if (d->fix->applicability == AN_FIX_NONE) continue;
        uint32_t first = UINT32_MAX;
        for (size_t k = 0; k < d->fix->edits.len; k++)
            if (d->fix->edits.items[k].start < first) first = d->fix->edits.items[k].start;
        cand c = {d, first};
        ut_vec_push(&cands, c);
    }
    if (cands.len > 1) qsort(cands.items, cands.len, sizeof(cand), cand_cmp);
    edit_set accepted = {0};
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < cands.len; i++) {
        const an_fix *f = cands.items[i].d->fix;
        bool ok = true;
        for (size_t k = 0; k < f->edits.len && ok; k++) ok = !set_clashes(&accepted, &f->edits.items[k]);
        if (!ok) { out->waiting++; continue; }
        for (size_t k = 0; k < f->edits.len; k++) set_add(&accepted, &f->edits.items[k]);
        out->applied++;
        if (on_applied) on_applied(ctx, cands.items[i].d);
    }
    if (accepted.len > 1) qsort(accepted.items, accepted.len, sizeof(an_edit), edit_cmp);
    out->text = an_edits_apply(text, len, accepted.items, accepted.len, &out->len);
    ut_free(accepted.items);
    ut_vec_free(&cands);
}
