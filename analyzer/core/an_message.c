/* an_message: template expansion for diagnostic messages. Unknown or empty placeholders expand to nothing; a
 * parenthesized group holding an empty placeholder is left out whole. */
#include "analyzer/core/an_message.h"

char *an_message_format(const char *t, const an_message_vars *v) { return an_message_format_c(t, v, NULL); }

/* Expands t[0..n) into b. *empty is set when a known placeholder expanded to nothing. */
static void expand(const char *t, const char *end, const an_message_vars *v, const an_message_cvars *cv, ut_buf *b,
                   bool *empty, bool *used_note) {
    while (t < end) {
        if (*t == '(') {
            /* a parenthesized group whose placeholder is empty is left out whole ("(torch >= {min_torch})") */
            const char *close = memchr(t, ')', (size_t)(end - t));
            const char *open2 = close ? memchr(t + 1, '(', (size_t)(close - t - 1)) : NULL;
            if (close && !open2) {
                ut_buf inner;
                ut_buf_init(&inner);
                bool inner_empty = false;
                expand(t + 1, close, v, cv, &inner, &inner_empty, used_note);
                if (inner_empty) {
                    while (b->len && b->data[b->len - 1] == ' ') b->data[--b->len] = 0;
                } else {
                    ut_buf_putc(b, '(');
                    ut_buf_append(b, inner.data ? inner.data : "", inner.len);
                    ut_buf_putc(b, ')');
                }
                ut_buf_free(&inner);
                t = close + 1;
                continue;
            }
        }
        if (*t == '{') {
            const char *close = memchr(t, '}', (size_t)(end - t));
            if (close) {
                size_t n = (size_t)(close - t - 1);
                const char *val = NULL;
                bool known = true;
                if (n == 4 && !strncmp(t + 1, "name", 4)) val = v->name;
                else if (n == 11 && !strncmp(t + 1, "replacement", 11)) val = v->replacement;
                else if (n == 9 && !strncmp(t + 1, "min_torch", 9)) val = v->min_torch;
                else if (n == 4 && !strncmp(t + 1, "text", 4)) val = v->text;
                else if (n == 4 && !strncmp(t + 1, "note", 4)) val = v->note, *used_note = true;
                else if (n == 4 && !strncmp(t + 1, "kind", 4)) val = cv->kind;
                else if (n == 7 && !strncmp(t + 1, "section", 7)) val = cv->section;
                else if (n == 7 && !strncmp(t + 1, "library", 7)) val = cv->library;
                else if (n == 4 && !strncmp(t + 1, "sycl", 4)) val = cv->sycl;
                else if (n == 10 && !strncmp(t + 1, "level_zero", 10)) val = cv->level_zero;
                else if (n == 6 && !strncmp(t + 1, "oneccl", 6)) val = cv->oneccl;
                else if (n == 7 && !strncmp(t + 1, "mapping", 7)) val = cv->mapping;
                else known = false;
                if (known) {
                    if (val && *val) ut_buf_puts(b, val);
                    else *empty = true;
                    t = close + 1;
                    continue;
                }
            }
        }
        ut_buf_putc(b, *t++);
    }
}

char *an_message_format_c(const char *t, const an_message_vars *v, const an_message_cvars *cv) {
    static const an_message_cvars none;
    if (!cv) cv = &none;
    ut_buf b;
    ut_buf_init(&b);
    bool used_note = false, empty = false;
    expand(t, t + strlen(t), v, cv, &b, &empty, &used_note);
    if (!used_note && v->note && *v->note) {
        ut_buf_puts(&b, ". ");
        ut_buf_puts(&b, v->note);
    }
    return ut_buf_take(&b);
}

void an_message_cvars_of(const an_entry *e, const an_entry *via, const char *name, an_message_vars *v,
                         an_message_cvars *cv) {
    memset(v, 0, sizeof *v);
    memset(cv, 0, sizeof *cv);
    v->name = name;
    v->replacement = e->replacement;
    v->note = e->note;
    cv->kind = an_kind_name(e->kind);
    cv->section = e->section;
    cv->library = e->rule->library;
    cv->sycl = e->sycl, cv->level_zero = e->level_zero, cv->oneccl = e->oneccl;
    ut_buf b;
    ut_buf_init(&b);
    const an_entry *own = e;
    if (via && !e->replacement && !e->sycl && !e->oneccl && !e->level_zero &&
        (via->replacement || via->sycl || via->oneccl || via->level_zero)) {
        ut_buf_printf(&b, " (of `%s`)", via->name);
        e = via;
    }
    if (own->removed) ut_buf_printf(&b, " (removed in %s)", own->removed);
    else if (own->deprecated) ut_buf_printf(&b, " (deprecated in %s)", own->deprecated);
    const an_rule *r = own->rule;
    if (e->replacement) ut_buf_printf(&b, "; %s: `%s`", r->portable_label ? r->portable_label : "portable layer", e->replacement);
    if (e->sycl) ut_buf_printf(&b, "; %s: `%s`", r->sycl_label ? r->sycl_label : "SYCL", e->sycl);
    if (e->oneccl) ut_buf_printf(&b, "; oneCCL: `%s`", e->oneccl);
    if (e->level_zero) ut_buf_printf(&b, "; Level Zero: `%s`", e->level_zero);
    if (!e->replacement && !e->sycl && !e->oneccl && !e->level_zero) ut_buf_puts(&b, "; no direct SYCL or Level Zero equivalent in the tables");
    cv->owned = ut_buf_take(&b);
    cv->mapping = cv->owned;
}

void an_message_cvars_free(an_message_cvars *cv) {
    ut_free(cv->owned);
    cv->owned = NULL;
}
