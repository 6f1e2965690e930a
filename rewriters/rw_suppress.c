/* rw_suppress: placing suppression comments for findings (see rw_suppress.h). */
#include "rewriters/rw_suppress.h"
#include <ctype.h>
#include <stdio.h>

typedef UT_VEC(const char *) codes_t;

typedef struct {
    uint32_t line;  /* trailing: the finding's line; own-line: the statement's first line */
    bool own_line;
    codes_t codes;
} slot;

typedef UT_VEC(slot) slots_t;

static void add_code(codes_t *c, const char *code) {
    for (size_t i = 0; i < c->len; i++)
        if (!strcmp(c->items[i], code)) return;
    ut_vec_push(c, code);
}

static slot *slot_for(slots_t *s, uint32_t line, bool own) {
    for (size_t i = 0; i < s->len; i++)
        if (s->items[i].line == line && s->items[i].own_line == own) return &s->items[i];
    slot n = {line, own, {0}};
    ut_vec_push(s, n);
    return &s->items[s->len - 1];
}

static int str_cmp(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static void code_list(ut_buf *out, const an_directive *existing, const an_source *src, codes_t *codes) {
    ut_buf list;
    ut_buf_init(&list);
    ut_buf *b = &list;
    if (codes->len > 1) qsort(codes->items, codes->len, sizeof(char *), str_cmp);
    if (existing)
        for (size_t i = 0; i < existing->codes.len; i++) {
            const an_sup_code *c = &existing->codes.items[i];
            if (b->len) ut_buf_puts(b, ", ");
            ut_buf_append(b, src->text + c->start, c->end - c->start);
        }
    for (size_t i = 0; i < codes->len; i++) {
        bool have = false;
        if (existing)
            for (size_t k = 0; k < existing->codes.len && !have; k++)
                have = !strcasecmp(existing->codes.items[k].text, codes->items[i]);
        if (have) continue;
        if (b->len) ut_buf_puts(b, ", ");
        ut_buf_puts(b, codes->items[i]);
    }
    if (list.len) ut_buf_append(out, list.data, list.len);
    ut_buf_free(&list);
}

static int edit_cmp(const void *a, const void *b) {
    const an_edit *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...) {
    ut_buf b;
    ut_buf_init(&b);
    va_list ap;
    va_start(ap, f);
    ut_buf_vprintf(&b, f, ap);
    va_end(ap);
    return ut_buf_take(&b);
}

void rw_add_ignores(const an_catalog *cat, an_lang lang, const an_source *src, const an_diag_list *diags,
                    const bool *enabled, const char *reason, rw_ignore_result *out) {
    memset(out, 0, sizeof *out);
    an_line_info li = {0};
    an_suppressions sup = {0};
    bool have_li = an_engine_line_info(lang, src, &li, &sup);
    const char *open = lang == AN_LANG_PYTHON || lang == AN_LANG_TEXT ? "#" : "//";
    slots_t slots = {0};
    size_t wanted = 0;
    for (size_t i = 0; i < diags->len; i++) {
        const an_diag *d = &diags->items[i];
        if (d->rule->builtin || !d->line || d->line > src->nlines) continue;
        bool ok = !have_li || li.comment_ok[d->line];
        uint32_t line = d->line;
        if (!ok) line = li.stmt_start[d->line] ? li.stmt_start[d->line] : d->line;
        add_code(&slot_for(&slots, line, !ok)->codes, d->rule->code);
        wanted++;
    }
    UT_VEC(an_edit) edits = {0};
    UT_VEC(uint32_t) inserted_at = {0}; /* lines above which a line was inserted */
    for (size_t i = 0; i < slots.len; i++) {
        slot *s = &slots.items[i];
        uint32_t ls, le;
        an_source_line_span(src, s->line, &ls, &le);
        /* an `ignore` already there: add the codes to its list */
        const an_directive *there = NULL;
        for (size_t k = 0; k < sup.items.len && !there; k++) {
            const an_directive *x = &sup.items.items[k];
            if (x->kind != AN_SUP_LINE || x->syntax != AN_SUP_XPUIFY || !x->has_list || !x->codes.len) continue;
            if (!s->own_line && x->line == s->line && !x->next_line) there = x;
            if (s->own_line && x->next_line && x->first == s->line) there = x;
        }
        ut_buf b;
        ut_buf_init(&b);
        an_edit e = {0};
        if (there) {
            code_list(&b, there, src, &s->codes);
            e.start = there->list_start, e.end = there->list_end;
        } else if (!s->own_line) {
            uint32_t end = le;
            while (end > ls && (src->text[end - 1] == ' ' || src->text[end - 1] == '\t')) end--;
            ut_buf_printf(&b, "%s%s xpuify: ignore[", end > ls ? "  " : "", open);
            code_list(&b, NULL, src, &s->codes);
            ut_buf_putc(&b, ']');
            if (reason && *reason) ut_buf_printf(&b, " %s", reason);
            e.start = end, e.end = le;
        } else {
            uint32_t ind = ls;
            while (ind < le && (src->text[ind] == ' ' || src->text[ind] == '\t')) ind++;
            ut_buf_append(&b, src->text + ls, ind - ls);
            ut_buf_printf(&b, "%s xpuify: ignore[", open);
            code_list(&b, NULL, src, &s->codes);
            ut_buf_putc(&b, ']');
            if (reason && *reason) ut_buf_printf(&b, " %s", reason);
            ut_buf_puts(&b, le + 1 < src->len && src->text[le] == '\r' && src->text[le + 1] == '\n' ? "\r\n" : "\n");
            e.start = e.end = ls;
            ut_vec_push(&inserted_at, s->line);
        }
        e.text = ut_buf_take(&b);
        ut_vec_push(&edits, e);
    }
    if (edits.len) {
        if (edits.len > 1) qsort(edits.items, edits.len, sizeof(an_edit), edit_cmp);
        size_t nlen;
        char *next = an_edits_apply(src->text, src->len, edits.items, edits.len, &nlen);
        /* the new text must still parse and must hide every finding it was meant to */
        bool parsed_before = an_engine_parses(lang, src->path, src->text, src->len);
        if (parsed_before && !an_engine_parses(lang, src->path, next, nlen)) {
            out->error = fmt("adding suppressions would break the file's syntax; file left untouched: this is a bug in xpuify, please report it");
            ut_free(next);
        } else {
            an_source ns;
            an_source_init_mem(&ns, src->path, next, nlen);
            an_diag_list after = {0};
            an_engine_analyze_source(cat, lang, &ns, enabled, NULL, &after);
            for (size_t i = 0; i < diags->len && !out->error; i++) {
                const an_diag *d = &diags->items[i];
                if (d->rule->builtin) continue;
                uint32_t shift = 0;
                for (size_t k = 0; k < inserted_at.len; k++) shift += inserted_at.items[k] <= d->line;
                for (size_t k = 0; k < after.len; k++) {
                    const an_diag *a = &after.items[k];
                    if (a->rule == d->rule && a->line == d->line + shift && a->col == d->col) {
                        out->error = fmt("%s at line %u, column %u could not be suppressed by a comment; file left untouched",
                                         d->rule->code, d->line, d->col);
                        break;
                    }
                }
            }
            an_diag_list_free(&after);
            an_source_free(&ns);
            if (out->error) {
                ut_free(next);
            } else {
                out->text = next;
                out->len = nlen;
                out->added = wanted;
            }
        }
    }
    for (size_t i = 0; i < edits.len; i++) ut_free(edits.items[i].text);
    ut_vec_free(&edits);
    ut_vec_free(&inserted_at);
    for (size_t i = 0; i < slots.len; i++) ut_vec_free(&slots.items[i].codes);
    ut_vec_free(&slots);
    an_suppress_free(&sup);
    an_line_info_free(&li);
}

void rw_ignore_result_free(rw_ignore_result *r) {
    ut_free(r->text);
    ut_free(r->error);
    memset(r, 0, sizeof *r);
}
