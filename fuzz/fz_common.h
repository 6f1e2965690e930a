/* fz_common: what the libFuzzer targets share: the built-in catalog (loaded once), the input gate that mirrors
 * an_source_load (files with NUL bytes or invalid UTF-8 never reach a front end), options taken from the first
 * input byte, and a loud abort for a broken invariant (libFuzzer records the input as a crash). */
#ifndef FZ_COMMON_H
#define FZ_COMMON_H
#include "analyzer/core/an_engine.h"
#include "analyzer/core/an_rule.h"
#include "analyzer/core/an_source.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FZ_ASSERT(cond, ...)                                                                                      \
    do {                                                                                                          \
        if (!(cond)) {                                                                                            \
            fprintf(stderr, "fuzz invariant broken at %s:%d: %s: ", __FILE__, __LINE__, #cond);                   \
            fprintf(stderr, __VA_ARGS__);                                                                         \
            fputc('\n', stderr);                                                                                  \
            abort();                                                                                              \
        }                                                                                                         \
    } while (0)

static inline const an_catalog *fz_builtin_catalog(void) {
    static an_catalog *cat;
    if (!cat) {
        ut_buf err;
        ut_buf_init(&err);
        cat = an_catalog_new();
        if (an_catalog_load_builtin(cat, &err) || an_catalog_finalize(cat, &err)) {
            fprintf(stderr, "fuzz: the built-in rules do not load:\n%s", err.data ? err.data : "");
            abort();
        }
        ut_buf_free(&err);
    }
    return cat;
}

/* The bytes an_source_load would accept as a source file. */
static inline bool fz_loadable(const uint8_t *p, size_t n) {
    return !memchr(p, 0, n) && an_utf8_invalid_at((const char *)p, n) < 0;
}

/* Fix options from one byte: target, the oldest torch the project supports, unsafe fixes, helper import. */
static inline void fz_fix_options(uint8_t b, an_fix_options *fo, bool *unsafe) {
    static const int minors[4] = {0, 4, 6, 8};
    memset(fo, 0, sizeof *fo);
    fo->target = (b & 1) ? AN_TARGET_COMPAT : AN_TARGET_ACCELERATOR;
    if (b & 2) fo->torch_major = 2, fo->torch_minor = minors[(b >> 2) & 3];
    fo->helper_module = "xpuify_device";
    fo->helper_import = (b & 16) ? "from pkg import xpuify_device" : NULL;
    *unsafe = (b & 32) != 0;
    fo->unsafe = *unsafe;
}

/* Invariants every diagnostic must keep, whoever produced it. */
static inline void fz_check_diags(const an_catalog *cat, const an_source *src, const an_diag_list *l) {
    for (size_t i = 0; i < l->len; i++) {
        const an_diag *d = &l->items[i];
        FZ_ASSERT(d->rule && d->rule == an_catalog_rule(cat, d->rule->index), "finding %zu without a catalog rule", i);
        FZ_ASSERT(d->message, "finding %zu (%s) without a message", i, d->rule->code);
        FZ_ASSERT(an_utf8_invalid_at(d->message, strlen(d->message)) < 0, "%s message is not UTF-8: %s", d->rule->code,
                  d->message);
        FZ_ASSERT(d->start <= d->end && d->end <= src->len, "%s range %u..%u outside 0..%u", d->rule->code, d->start,
                  d->end, src->len);
        FZ_ASSERT(d->line >= 1 && d->line <= src->nlines && d->end_line >= d->line && d->col >= 1 && d->end_col >= 1,
                  "%s position %u:%u-%u:%u (file has %u lines)", d->rule->code, d->line, d->col, d->end_line,
                  d->end_col, src->nlines);
        if (i) FZ_ASSERT(l->items[i - 1].start <= d->start, "findings not sorted at %zu", i);
        if (!d->fix) continue;
        for (size_t k = 0; k < d->fix->edits.len; k++) {
            const an_edit *e = &d->fix->edits.items[k];
            FZ_ASSERT(e->start <= e->end && e->end <= src->len, "%s edit %u..%u outside 0..%u", d->rule->code, e->start,
                      e->end, src->len);
            FZ_ASSERT(!e->text || an_utf8_invalid_at(e->text, strlen(e->text)) < 0, "%s edit text is not UTF-8",
                      d->rule->code);
            if (k) {
                const an_edit *p = &d->fix->edits.items[k - 1];
                FZ_ASSERT(p->start <= e->start && (p->end <= e->start || p->start == p->end),
                          "%s edits overlap or are unsorted: %u..%u then %u..%u", d->rule->code, p->start, p->end,
                          e->start, e->end);
            }
        }
    }
}
#endif
