/* an_suppress: parsing suppression comments (xpuify directives, clang-tidy's NOLINT family), applying them to
 * findings, and reporting the ones that hid nothing. */
#include "analyzer/core/an_suppress.h"
#include "util/ut_find.h"
#include "analyzer/core/an_rule.h"
#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>

bool an_rule_matches_selector(const an_rule *r, const char *sel) {
    size_t n = strlen(sel);
    return !strcmp(r->name, sel) || (n && !strncasecmp(r->code, sel, n)) || !strcasecmp(sel, "ALL");
}

bool an_suppress_may_have_directives(const char *text, size_t len) {
    return ut_memmem(text, len, "xpuify:", 7) || ut_memmem(text, len, "NOLINT", 6);
}

void an_line_info_init(an_line_info *li, uint32_t nlines) {
    li->nlines = nlines;
    li->logical_end = ut_calloc(nlines + 2, sizeof(uint32_t));
    li->stmt_start = ut_calloc(nlines + 2, sizeof(uint32_t));
    li->comment_ok = ut_calloc(nlines + 2, sizeof(bool));
}

void an_line_info_free(an_line_info *li) {
    ut_free(li->logical_end);
    ut_free(li->stmt_start);
    ut_free(li->comment_ok);
    memset(li, 0, sizeof *li);
}

static const char *skip_ws(const char *p, const char *e) {
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    return p;
}

static const char *trim_back(const char *b, const char *e) {
    while (e > b && isspace((unsigned char)e[-1])) e--;
    return e;
}

static bool word_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

static void add_code(an_directive *d, const an_source *src, const char *b, const char *e, bool nolint) {
    an_sup_code c = {0};
    c.start = (uint32_t)(b - src->text), c.end = (uint32_t)(e - src->text);
    if (nolint) {
        if (e - b == 1 && *b == '*') {
            c.text = ut_strdup("*");
            c.glob = true;
        } else if (e - b > 7 && !memcmp(b, "xpuify-", 7)) {
            c.text = ut_strndup(b + 7, (size_t)(e - b - 7));
            c.glob = strpbrk(c.text, "*?[") != NULL;
        } else {
            c.text = ut_strndup(b, (size_t)(e - b));
            c.foreign = true;
        }
    } else {
        c.text = ut_strndup(b, (size_t)(e - b));
    }
    ut_vec_push(&d->codes, c);
}

/* Splits "a, b ,c" between open and close into codes. */
static void parse_list(an_directive *d, const an_source *src, const char *open, const char *close, bool nolint) {
    d->has_list = true;
    d->list_start = (uint32_t)(open + 1 - src->text);
    d->list_end = (uint32_t)(close - src->text);
    const char *q = open + 1;
    while (q < close) {
        q = skip_ws(q, close);
        const char *c = q;
        while (q < close && *q != ',') q++;
        const char *ce = trim_back(c, q);
        if (ce > c) add_code(d, src, c, ce, nolint);
        if (q < close) q++;
    }
}

static void locate(an_directive *d, const an_source *src, uint32_t comment_start) {
    uint32_t col, ls, le;
    an_source_position(src, comment_start, &d->line, &col);
    an_source_line_span(src, d->line, &ls, &le);
    d->own_line = true;
    for (uint32_t i = ls; i < comment_start; i++)
        if (!isspace((unsigned char)src->text[i])) d->own_line = false;
    d->first = d->last = d->line;
    d->pair = -1;
}

/* `xpuify: KIND[...] reason` at marker m (the '#' or '//' that opens it). */
static void parse_xpuify(an_suppressions *s, const an_source *src, uint32_t cstart, uint32_t cend, const char *m,
                         const char *p, const char *e, const char *next_marker, char marker) {
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
        parse_list(&d, src, p, close, false);
        p = close + 1;
    } else if (p < e && !isspace((unsigned char)*p)) {
        return; /* `ignoreX`: not a directive */
    } else {
        d.list_start = d.list_end = (uint32_t)(p - src->text);
    }
    const char *end = next_marker ? next_marker : e;
    if (end < p) end = p;
    end = trim_back(p, end);
    d.syntax = AN_SUP_XPUIFY;
    d.marker = marker;
    d.start = (uint32_t)(m - src->text);
    d.end = (uint32_t)(end - src->text);
    d.comment_start = cstart, d.comment_end = cend;
    locate(&d, src, cstart);
    d.next_line = d.kind == AN_SUP_LINE && d.own_line && d.start == cstart;
    ut_vec_push(&s->items, d);
}

/* `NOLINT`, `NOLINTNEXTLINE`, `NOLINTBEGIN`, `NOLINTEND`, each with an optional `(check, glob-*)` list. */
static void parse_nolint(an_suppressions *s, const an_source *src, uint32_t cstart, uint32_t cend, const char *n,
                         const char *e) {
    static const struct { const char *w; an_sup_kind k; bool next; } kinds[] = {
        {"NOLINTNEXTLINE", AN_SUP_LINE, true}, {"NOLINTBEGIN", AN_SUP_DISABLE, false},
        {"NOLINTEND", AN_SUP_ENABLE, false}, {"NOLINT", AN_SUP_LINE, false}};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        size_t wl = strlen(kinds[k].w);
        if ((size_t)(e - n) < wl || memcmp(n, kinds[k].w, wl)) continue;
        const char *p = n + wl;
        if (p < e && word_char(*p)) return; /* NOLINTFOO */
        an_directive d = {0};
        d.kind = kinds[k].k;
        d.syntax = AN_SUP_NOLINT;
        d.marker = '/';
        if (p < e && *p == '(') {
            const char *close = memchr(p, ')', (size_t)(e - p));
            if (!close) return;
            parse_list(&d, src, p, close, true);
            p = close + 1;
            bool ours = !d.codes.len;
            for (size_t i = 0; i < d.codes.len; i++) ours |= !d.codes.items[i].foreign;
            if (!d.codes.len) d.foreign = true; /* NOLINT(): every check, everyone's */
            else if (!ours) d.foreign = true;
        } else {
            d.foreign = true; /* a bare NOLINT is clang-tidy's as much as ours */
            d.list_start = d.list_end = (uint32_t)(p - src->text);
        }
        d.start = (uint32_t)(n - src->text);
        d.end = (uint32_t)(p - src->text);
        d.comment_start = cstart, d.comment_end = cend;
        locate(&d, src, cstart);
        d.next_line = kinds[k].next;
        ut_vec_push(&s->items, d);
        return;
    }
}

void an_suppress_add_comment(an_suppressions *s, const an_source *src, uint32_t start, uint32_t end,
                             const char *prefix) {
    const char *t = src->text + start, *e = src->text + end;
    bool c_family = prefix[0] == '/';
    if (c_family && e - t >= 4 && t[1] == '*' && e[-1] == '/' && e[-2] == '*') e -= 2; /* drop the closing */
    char marker = c_family ? '/' : prefix[0]; /* '#', or ';' in INI files */
    /* xpuify directives: where a comment opening (or, after other text, another one) is followed by `xpuify:` */
    for (const char *m = t; m < e; m++) {
        size_t ml;
        if (!c_family && *m == marker) ml = 1;
        else if (c_family && m + 1 < e && m[0] == '/' && (m[1] == '/' || m[1] == '*')) ml = 2;
        else continue;
        const char *p = skip_ws(m + ml, e);
        if ((size_t)(e - p) < 7 || memcmp(p, "xpuify:", 7)) continue;
        const char *next = NULL;
        for (const char *q = p + 7; q < e && !next; q++)
            if ((!c_family && *q == marker) || (c_family && q + 1 < e && q[0] == '/' && (q[1] == '/' || q[1] == '*')))
                next = q;
        parse_xpuify(s, src, start, end, m, skip_ws(p + 7, e), e, next, marker);
        if (next) m = next - 1;
        else break;
    }
    if (!c_family) return;
    for (const char *n = t; (n = ut_memmem(n, (size_t)(e - n), "NOLINT", 6)); n += 6)
        if (n == t || !word_char(n[-1])) parse_nolint(s, src, start, end, n, e);
}

static bool codes_overlap(const an_directive *a, const an_directive *b) {
    if (!a->codes.len || !b->codes.len) return true;
    for (size_t i = 0; i < a->codes.len; i++)
        for (size_t j = 0; j < b->codes.len; j++)
            if (!strcasecmp(a->codes.items[i].text, b->codes.items[j].text)) return true;
    return false;
}

static bool is_comment_line(const an_source *src, uint32_t l, char marker) {
    uint32_t a, b;
    an_source_line_span(src, l, &a, &b);
    while (a < b && isspace((unsigned char)src->text[a])) a++;
    if (a == b) return true;
    if (marker != '/') return src->text[a] == marker;
    return b - a >= 2 && src->text[a] == '/' && (src->text[a + 1] == '/' || src->text[a + 1] == '*');
}

void an_suppress_finish(an_suppressions *s, const an_source *src, const an_line_info *li) {
    for (size_t i = 0; i < s->items.len; i++) {
        an_directive *d = &s->items.items[i];
        if (d->kind == AN_SUP_FILE) {
            d->first = 1, d->last = src->nlines;
        } else if (d->kind == AN_SUP_LINE && d->next_line) {
            uint32_t l = d->line + 1;
            if (d->syntax == AN_SUP_XPUIFY)
                while (l <= src->nlines && is_comment_line(src, l, d->marker)) l++;
            d->first = d->last = l;
            /* an xpuify directive covers the whole logical line (statement, compound statement header) */
            if (d->syntax == AN_SUP_XPUIFY && li && li->nlines == src->nlines && l <= src->nlines &&
                li->logical_end[l] > l)
                d->last = li->logical_end[l];
        } else if (d->kind == AN_SUP_DISABLE) {
            d->last = src->nlines;
            for (size_t j = i + 1; j < s->items.len; j++) {
                an_directive *e = &s->items.items[j];
                if (e->kind == AN_SUP_ENABLE && e->pair < 0 && e->syntax == d->syntax && e->line > d->line &&
                    codes_overlap(d, e)) {
                    d->last = e->line;
                    d->pair = (int)j;
                    e->pair = (int)i;
                    break;
                }
            }
        }
    }
}

static bool code_covers(an_sup_code *c, const an_rule *r) {
    if (c->foreign) return false;
    if (c->glob) {
        if (!strcmp(c->text, "*")) return true;
        char code[128], name[256];
        snprintf(code, sizeof code, "%s", r->code);
        snprintf(name, sizeof name, "%s", r->name);
        return !fnmatch(c->text, code, FNM_CASEFOLD) || !fnmatch(c->text, name, 0);
    }
    return an_rule_matches_selector(r, c->text);
}

static bool covers(an_directive *d, const an_rule *r) {
    if (d->foreign && d->codes.len) {
        /* NOLINT(other-tool-check): nothing of ours */
        bool any = false;
        for (size_t i = 0; i < d->codes.len; i++) any |= !d->codes.items[i].foreign;
        if (!any) return false;
    }
    bool ours = false, hit = false;
    for (size_t i = 0; i < d->codes.len; i++) {
        an_sup_code *c = &d->codes.items[i];
        if (c->foreign) continue;
        ours = true;
        if (code_covers(c, r)) c->used = hit = true;
    }
    return ours ? hit : true;
}

bool an_suppress_hides(an_suppressions *s, const an_diag *d) {
    bool hidden = false;
    for (size_t i = 0; i < s->items.len; i++) {
        an_directive *x = &s->items.items[i];
        if (x->kind == AN_SUP_ENABLE) continue;
        bool in = d->line >= x->first && d->line <= x->last;
        if (in && covers(x, d->rule)) x->used = hidden = true;
    }
    return hidden;
}

bool an_suppress_hides_unused(const an_suppressions *s, const an_rule *rule) {
    for (size_t i = 0; i < s->items.len; i++) {
        const an_directive *x = &s->items.items[i];
        if (x->kind != AN_SUP_FILE) continue;
        for (size_t j = 0; j < x->codes.len; j++)
            if (!strcasecmp(x->codes.items[j].text, rule->code) || !strcmp(x->codes.items[j].text, rule->name))
                return true;
    }
    return false;
}

/* ---- unused directives ------------------------------------------------------------------------------------- */

static uint32_t line_start_of(const an_source *src, uint32_t line) {
    return line <= src->nlines ? src->line_starts[line - 1] : src->len;
}

/* The edit that deletes directive x: the whole comment (and its line, when it stood alone) when nothing else is
 * in it, otherwise the directive and the blanks before it. */
static void removal(const an_source *src, const an_directive *x, an_fix *fix) {
    const char *t = src->text;
    uint32_t cs = x->comment_start, ce = x->comment_end;
    /* what the comment holds besides the directive */
    uint32_t open_end = cs + (x->marker == '#' ? 1 : 2);
    uint32_t before = open_end;
    while (before < x->start && isspace((unsigned char)t[before])) before++;
    uint32_t close = ce;
    if (x->marker == '/' && ce - cs >= 4 && t[cs + 1] == '*') close = ce - 2;
    uint32_t after = x->end;
    while (after < close && isspace((unsigned char)t[after])) after++;
    bool alone = (before == x->start || x->start == cs) && after == close;
    an_edit e = {0};
    if (alone) {
        uint32_t ls, le;
        an_source_line_span(src, x->line, &ls, &le);
        uint32_t tail = ce;
        while (tail < le && isspace((unsigned char)t[tail])) tail++;
        if (x->own_line && tail == le) {
            e.start = ls;
            e.end = line_start_of(src, x->line + 1);
            if (x->line >= src->nlines && ls > 0) e.end = le; /* last line, no newline after it */
        } else {
            e.start = cs;
            while (e.start > ls && (t[e.start - 1] == ' ' || t[e.start - 1] == '\t')) e.start--;
            e.end = ce;
        }
    } else if (x->start == cs || before == x->start) {
        /* first thing in the comment, more follows: `# xpuify: ignore[X]  # noqa` -> `# noqa` */
        e.start = x->start == cs ? cs : x->start;
        e.end = after;
    } else {
        e.start = x->start;
        while (e.start > cs && (t[e.start - 1] == ' ' || t[e.start - 1] == '\t')) e.start--;
        e.end = x->end;
    }
    e.text = ut_strdup("");
    ut_vec_push(&fix->edits, e);
}

/* Rewrites x's list without the selectors named in drop (compared case-insensitively). */
static void rewrite_list(const an_source *src, const an_directive *x, char **drop, size_t ndrop, an_fix *fix) {
    ut_buf b;
    ut_buf_init(&b);
    for (size_t i = 0; i < x->codes.len; i++) {
        const an_sup_code *c = &x->codes.items[i];
        bool dropped = false;
        for (size_t k = 0; k < ndrop && !dropped; k++) dropped = !c->foreign && !strcasecmp(c->text, drop[k]);
        if (dropped) continue;
        if (b.len) ut_buf_puts(&b, ", ");
        ut_buf_append(&b, src->text + c->start, c->end - c->start);
    }
    an_edit e = {x->list_start, x->list_end, ut_buf_take(&b)};
    if (!e.text) e.text = ut_strdup("");
    ut_vec_push(&fix->edits, e);
}

static int edit_cmp(const void *a, const void *b) {
    const an_edit *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static bool lang_fully_enabled(const an_catalog *cat, const bool *enabled, int lang, const an_rule *self) {
    if (!enabled) return true;
    for (size_t i = 0; i < an_catalog_count(cat); i++) {
        const an_rule *r = an_catalog_rule(cat, i);
        if ((int)r->lang == lang && !r->builtin && r != self && !enabled[r->index]) return false;
    }
    return true;
}

/* 1: every rule the selector names ran; 0: some did not (cannot tell); -1: it names no rule at all */
static int selector_ran(const an_catalog *cat, const bool *enabled, const an_sup_code *c) {
    int named = 0;
    for (size_t i = 0; i < an_catalog_count(cat); i++) {
        const an_rule *r = an_catalog_rule(cat, i);
        an_sup_code tmp = *c;
        if (!code_covers(&tmp, r)) continue;
        named++;
        if (enabled && !enabled[r->index]) return 0;
    }
    return named ? 1 : -1;
}

void an_suppress_report_unused(an_suppressions *s, const an_source *src, const an_catalog *cat, const an_rule *rule,
                               const bool *enabled, int lang, an_diag_list *out) {
    for (size_t i = 0; i < s->items.len; i++) {
        an_directive *x = &s->items.items[i];
        if (x->foreign || x->kind == AN_SUP_ENABLE) continue;
        bool immune = false;
        size_t ours = 0;
        for (size_t j = 0; j < x->codes.len; j++) {
            const an_sup_code *c = &x->codes.items[j];
            if (c->foreign) continue;
            ours++;
            immune |= !strcasecmp(c->text, rule->code) || !strcmp(c->text, rule->name);
        }
        if (immune) continue;
        ut_buf msg;
        ut_buf_init(&msg);
        UT_VEC(char *) drop = {0};
        bool whole = false;
        if (!ours) {
            if (x->used || !lang_fully_enabled(cat, enabled, lang, rule)) { ut_buf_free(&msg); continue; }
            whole = true;
            ut_buf_puts(&msg, "unused suppression: it hides no finding");
        } else {
            for (size_t j = 0; j < x->codes.len; j++) {
                an_sup_code *c = &x->codes.items[j];
                if (c->foreign || c->used) continue;
                int ran = selector_ran(cat, enabled, c);
                if (!ran) continue;
                ut_buf_printf(&msg, "%s`%s` %s", drop.len ? "; " : "", c->text,
                              ran < 0 ? "names no rule (code, code prefix or name)" : "hides no finding here");
                ut_vec_push(&drop, c->text);
            }
            if (!drop.len) { ut_buf_free(&msg); continue; }
            bool foreign_left = false;
            for (size_t j = 0; j < x->codes.len; j++) foreign_left |= x->codes.items[j].foreign;
            whole = drop.len == ours && !foreign_left;
        }
        an_diag d = {0};
        d.rule = rule;
        d.origin = AN_ORIGIN_BUILTIN;
        d.start = x->start;
        d.end = x->end;
        ut_buf full;
        ut_buf_init(&full);
        ut_buf_printf(&full, "unused suppression `%.*s`: %s", (int)(x->end - x->start > 80 ? 80 : x->end - x->start),
                      src->text + x->start, ours ? msg.data : "it hides no finding");
        d.message = ut_buf_take(&full);
        ut_buf_free(&msg);
        an_fix *fix = ut_calloc(1, sizeof *fix);
        fix->applicability = AN_FIX_SAFE;
        if (whole) {
            fix->title = ut_strdup("Remove the unused suppression");
            removal(src, x, fix);
            if (x->pair >= 0) removal(src, &s->items.items[x->pair], fix);
        } else {
            fix->title = ut_strdup("Remove the unused rule selectors from the suppression");
            rewrite_list(src, x, drop.items, drop.len, fix);
            if (x->pair >= 0) {
                const an_directive *p = &s->items.items[x->pair];
                bool listed = false;
                for (size_t j = 0; j < p->codes.len; j++)
                    for (size_t k = 0; k < drop.len; k++) listed |= !strcasecmp(p->codes.items[j].text, drop.items[k]);
                if (listed) rewrite_list(src, p, drop.items, drop.len, fix);
            }
        }
        ut_vec_free(&drop);
        if (fix->edits.len > 1) qsort(fix->edits.items, fix->edits.len, sizeof(an_edit), edit_cmp);
        d.fix = fix;
        an_diag_locate(&d, src);
        ut_vec_push(out, d);
    }
}

void an_suppress_free(an_suppressions *s) {
    for (size_t i = 0; i < s->items.len; i++) {
        an_directive *d = &s->items.items[i];
        for (size_t j = 0; j < d->codes.len; j++) ut_free(d->codes.items[j].text);
        ut_vec_free(&d->codes);
    }
    ut_vec_free(&s->items);
}
