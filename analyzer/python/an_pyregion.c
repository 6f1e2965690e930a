/* an_pyregion: statement-level region selection for the Python front end. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "analyzer/python/an_pyregion.h"
#include "util/ut_find.h"
#include "analyzer/python/an_context.h"
#include "analyzer/core/an_literal.h"
#include <ctype.h>
#include <pcre2.h>

typedef struct {
    uint32_t start;  /* start of its first physical line (indentation included) */
    uint32_t first;  /* first non-blank byte */
    uint32_t end;    /* byte after its last newline */
    uint32_t indent; /* columns, tabs to multiples of 8 */
} lline;

typedef struct {
    uint32_t first, last; /* lline indices */
    uint32_t start, end;  /* bytes; end = start of the next unit (or of the parent's end) */
    int header;           /* lline index of the def/class line or of a compound statement's first line, else -1 */
    bool compound;        /* header is a compound statement's (if, for, while, with, try): its clauses' headers
                           * are kept, each clause keeps a member */
    uint16_t clause;      /* a member of a compound statement: which clause it is in */
    bool whole, any_member;
    int8_t grouped;          /* members found: 0 not yet, 1 yes, -1 unsure (then the unit is taken whole) */
    uint32_t mfirst, mcount; /* members in the unit array */
} unit;

typedef UT_VEC(lline) lline_vec;
typedef UT_VEC(unit) unit_vec;
typedef UT_VEC(char *) str_vec;

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

static bool word_is(const char *t, size_t avail, const char *w) {
    size_t n = strlen(w);
    return avail >= n && !memcmp(t, w, n) && (avail == n || !ident_char(t[n]));
}

/* past blanks, line continuations and line breaks (inside an import's parentheses) */
static const char *skip_blanks(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\\' || *p == '\r' || *p == '\n')) p++;
    return p;
}

static bool string_prefix(const char *t, uint32_t i, uint32_t n, uint32_t *q) {
    /* r"", u"", b"", rb"", br"" (not f-strings: they hold code) */
    uint32_t k = i;
    while (k < n && k - i < 2 && strchr("rRuUbB", t[k])) k++;
    if (k == i || k >= n || (t[k] != '"' && t[k] != '\'')) return false;
    *q = k;
    return true;
}

/* The comment at cs (a `#`): recorded as inert text, and among the suppression comments when it holds
 * "xpuify:". Returns where it ends (its newline, or n). */
static uint32_t comment(const char *t, uint32_t n, uint32_t cs, an_span_vec *comments, an_span_vec *inert) {
    uint32_t i = cs;
    while (i < n && t[i] != '\n') i++;
    an_span c = {cs, i};
    ut_vec_push(inert, c);
    if (ut_memmem(t + cs, i - cs, "xpuify:", 7)) {
        if (i > cs && t[i - 1] == '\r') c.end = i - 1;
        ut_vec_push(comments, c);
    }
    return i;
}

/* the bytes scan() acts on inside a logical line's code: comments, strings, brackets, continuations, newlines */
static const bool special[256] = {['#'] = 1, ['"'] = 1, ['\''] = 1, ['('] = 1, ['['] = 1, ['{'] = 1, [')'] = 1,
                                  [']'] = 1, ['}'] = 1, ['\\'] = 1, ['\n'] = 1};

/* Splits the text into logical lines. Returns false when unsure (unterminated string or bracket). inert receives
 * the text no rule reads: every comment, and every statement that is nothing but string literals (docstrings). */
static bool scan(const an_source *src, lline_vec *out, an_span_vec *comments, an_span_vec *inert) {
    const char *t = src->text;
    uint32_t n = src->len, i = src->body;
    while (i < n) {
        /* a physical line that starts a logical line */
        uint32_t ls = i, col = 0;
        while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\f')) {
            col = t[i] == '\t' ? (col / 8 + 1) * 8 : col + 1;
            i++;
        }
        if (i >= n) break;
        if (t[i] == '\n' || t[i] == '\r' || t[i] == '#') { /* blank or comment-only line */
            if (t[i] == '#') i = comment(t, n, i, comments, inert);
            while (i < n && t[i] != '\n') i++;
            if (i < n) i++;
            continue;
        }
        lline l = {ls, i, 0, col};
        int depth = 0;
        uint32_t q0;
        bool strings_only = t[i] == '"' || t[i] == '\'' || string_prefix(t, i, n, &q0);
        for (;;) {
            if (!strings_only)
                while (i < n && !special[(unsigned char)t[i]]) i++; /* nothing but code: skip to what matters */
            if (i >= n) { l.end = n; break; }
            char ch = t[i];
            if (strings_only && !(ch == '"' || ch == '\'' || ch == '#' || ch == ' ' || ch == '\t' || ch == '\f' ||
                                  ch == '\r' || ch == '\n' || ch == '\\')) {
                if (string_prefix(t, i, n, &q0)) {
                    i = q0;
                    continue;
                }
                strings_only = false;
            }
            if (ch == '#') {
                i = comment(t, n, i, comments, inert);
                continue;
            }
            if (ch == '"' || ch == '\'') {
                bool triple = i + 2 < n && t[i + 1] == ch && t[i + 2] == ch;
                i += triple ? 3 : 1;
                for (;;) {
                    if (i >= n) return false;
                    if (t[i] == '\\') { i += 2; continue; }
                    if (t[i] == ch) {
                        if (!triple) { i++; break; }
                        if (i + 2 < n && t[i + 1] == ch && t[i + 2] == ch) { i += 3; break; }
                    }
                    if (!triple && t[i] == '\n') return false; /* unterminated: let the parser decide */
                    i++;
                }
                continue;
            }
            if (ch == '(' || ch == '[' || ch == '{') depth++;
            else if (ch == ')' || ch == ']' || ch == '}') {
                if (--depth < 0) return false;
            } else if (ch == '\\' && i + 1 < n && (t[i + 1] == '\n' || t[i + 1] == '\r')) {
                i += t[i + 1] == '\r' && i + 2 < n && t[i + 2] == '\n' ? 3 : 2;
                continue;
            } else if (ch == '\n' && depth == 0) {
                l.end = i + 1;
                i++;
                break;
            }
            i++;
        }
        if (depth) return false;
        if (strings_only) {
            an_span d = {l.first, l.end};
            ut_vec_push(inert, d);
        }
        ut_vec_push(out, l);
        if (i >= n) break;
    }
    return true;
}

static bool continues(const char *t, const lline *l, uint32_t avail) {
    const char *p = t + l->first;
    return word_is(p, avail, "else") || word_is(p, avail, "elif") || word_is(p, avail, "except") ||
           word_is(p, avail, "finally");
}

static uint32_t avail_of(const an_source *src, const lline *l) { return src->len - l->first; }

/* the keyword that opens logical line l, past an `async`; *a receives the bytes from it to the end of the text */
static const char *keyword(const an_source *src, const lline *l, uint32_t *a) {
    const char *p = src->text + l->first;
    *a = avail_of(src, l);
    if (word_is(p, *a, "async")) {
        p += 5, *a -= 5;
        while (*a && (*p == ' ' || *p == '\t')) p++, (*a)--;
    }
    return p;
}

/* a statement whose block the selection may go into: its other clauses are kept (headers, a member each) */
static bool is_compound(const an_source *src, const lline *l) {
    uint32_t a;
    const char *p = keyword(src, l, &a);
    return word_is(p, a, "if") || word_is(p, a, "for") || word_is(p, a, "while") || word_is(p, a, "with") ||
           word_is(p, a, "try");
}

static bool is_def(const an_source *src, const lline *l) {
    uint32_t a;
    const char *p = keyword(src, l, &a);
    return word_is(p, a, "def") || word_is(p, a, "class");
}

/* Groups lines [from, to) whose indent is `level` into units (decorators, else/elif/except/finally merged). */
static bool group(const an_source *src, const lline_vec *ls, uint32_t from, uint32_t to, uint32_t level,
                  uint32_t end_byte, unit_vec *out) {
    for (uint32_t k = from; k < to; k++) {
        const lline *l = &ls->items[k];
        if (l->indent < level) return false; /* a dedent below the block: unsure */
        bool starts = l->indent == level && !continues(src->text, l, avail_of(src, l));
        if (starts && out->len) {
            unit *prev = &out->items[out->len - 1];
            /* a decorator run continues into the definition it decorates */
            bool prev_decorators = true;
            for (uint32_t j = prev->first; j <= prev->last; j++)
                if (src->text[ls->items[j].first] != '@') prev_decorators = false;
            if (prev_decorators) starts = false;
        }
        if (starts || !out->len) {
            if (!starts && !out->len) return false;
            unit u = {k, k, l->start, 0, -1, false, 0, false, false, 0, 0, 0};
            ut_vec_push(out, u);
        } else {
            out->items[out->len - 1].last = k;
        }
    }
    for (size_t j = 0; j < out->len; j++) {
        unit *u = &out->items[j];
        u->end = j + 1 < out->len ? out->items[j + 1].start : end_byte;
        for (uint32_t k = u->first; k <= u->last; k++) {
            if (src->text[ls->items[k].first] == '@') continue;
            if (ls->items[k].indent == level && is_def(src, &ls->items[k])) u->header = (int)k;
            else if (k == u->first && k < u->last && is_compound(src, &ls->items[k])) u->header = (int)k, u->compound = true;
            break;
        }
    }
    return true;
}

static size_t find_unit(const unit *u, size_t n, uint32_t pos) {
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (u[mid].start <= pos) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* local names bound by an import logical line: `import a.b as x, c` -> x, c; `from m import (a as b, c)` -> b, c */
static void import_locals(const char *t, uint32_t s, uint32_t e, str_vec *names, bool *star) {
    const char *p = t + s, *end = t + e;
    bool from = word_is(p, (size_t)(end - p), "from");
    if (from) {
        const char *imp = NULL;
        for (const char *q = p; q + 6 < end; q++)
            if (word_is(q, (size_t)(end - q), "import") && (q[-1] == ' ' || q[-1] == ')' || q[-1] == '\t')) { imp = q; break; }
        if (!imp) return;
        p = imp + 6;
    } else {
        p += 6;
    }
    while (p < end) {
        while (p < end && !(isalpha((unsigned char)*p) || *p == '_' || *p == '*')) p++;
        if (p >= end) break;
        if (*p == '*') { *star = true; p++; continue; }
        const char *a = p;
        while (p < end && (ident_char(*p) || *p == '.')) p++;
        const char *ae = p;
        const char *q = skip_blanks(p, end);
        if (word_is(q, (size_t)(end - q), "as")) {
            q += 2;
            while (q < end && !(isalpha((unsigned char)*q) || *q == '_')) q++;
            a = q;
            while (q < end && ident_char(*q)) q++;
            ae = q;
            p = q;
        } else if (!from) {
            const char *dot = memchr(a, '.', (size_t)(ae - a));
            if (dot) ae = dot; /* `import a.b` binds a */
        }
        if (ae > a) ut_vec_push(names, ut_strndup(a, (size_t)(ae - a)));
        while (p < end && *p != ',') p++;
    }
}

static const char *next_word(const char *t, const char *p, const char *e, const char *w, size_t n);

/* Whether the import logical line [s, e) binds a name some rule resolves, or one that shadows the first part of
 * such a name (an_catalog_resolves_under): `import a.b` binds a (a.b asked too), `import a.b as x` binds a.b,
 * `from m import a as b` binds m.a; of a relative import only the local names count. Star imports and lines it
 * cannot read count as binding one. An import of a library that runs on NVIDIA GPUs only counts too: the code after
 * it is CUDA-only (an_context.c). */
static bool import_relevant(const an_catalog *cat, const char *t, uint32_t s, uint32_t e) {
    const char *p = t + s, *end = t + e;
    char q[256];
    size_t mlen = 0;
    bool from = word_is(p, (size_t)(end - p), "from"), relative = false;
    if (from) {
        p = skip_blanks(p + 4, end);
        const char *m = p;
        while (p < end && (ident_char(*p) || *p == '.')) p++;
        mlen = (size_t)(p - m);
        if (!mlen || mlen + 2 >= sizeof q) return true;
        relative = *m == '.'; /* a module of this project: only the local names can matter */
        if (an_ctx_nvidia_only_module(m, mlen)) return true; /* a context fact: the code after it is CUDA-only */
        memcpy(q, m, mlen);
        q[mlen++] = '.';
        const char *imp = next_word(t, p, end, "import", 6);
        if (!imp) return true;
        p = imp + 6;
    } else {
        p += 6;
    }
    bool any = false;
    while (p < end) {
        while (p < end && !(ident_char(*p) || *p == '*' || *p == '#')) p++;
        if (p >= end) break;
        if (*p == '*') return true;
        if (*p == '#') { /* a comment inside parentheses */
            while (p < end && *p != '\n') p++;
            continue;
        }
        const char *a = p;
        while (p < end && (ident_char(*p) || *p == '.')) p++;
        size_t an = (size_t)(p - a);
        if (mlen + an >= sizeof q) return true;
        memcpy(q + mlen, a, an);
        any = true;
        if (!from && an_ctx_nvidia_only_module(a, an)) return true;
        if (!relative && an_catalog_resolves_under(cat, AN_LANG_PYTHON, q, mlen + an)) return true;
        const char *w = skip_blanks(p, end);
        if (word_is(w, (size_t)(end - w), "as")) {
            w += 2;
            while (w < end && !ident_char(*w)) w++;
            const char *l = w;
            while (w < end && ident_char(*w)) w++;
            if (an_catalog_resolves_under(cat, AN_LANG_PYTHON, l, (size_t)(w - l))) return true;
            p = w;
        } else {
            /* the local name: `a` of `import a.b`, the name itself after `from m import` */
            const char *dot = from ? NULL : memchr(a, '.', an);
            if (an_catalog_resolves_under(cat, AN_LANG_PYTHON, a, dot ? (size_t)(dot - a) : an)) return true;
        }
        while (p < end && *p != ',' && *p != '#') p++;
    }
    return !any;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_span(const void *a, const void *b) {
    const an_span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

TSPoint an_py_point_at(const an_source *src, uint32_t byte) {
    uint32_t lo = 0, hi = src->nlines;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (src->line_starts[mid] <= byte) lo = mid;
        else hi = mid;
    }
    return (TSPoint){lo, byte - src->line_starts[lo]};
}

void an_spans_merge(an_span_vec *v) {
    if (v->len < 2) return;
    qsort(v->items, v->len, sizeof *v->items, cmp_span);
    size_t w = 0;
    for (size_t i = 1; i < v->len; i++) {
        if (v->items[i].start <= v->items[w].end) {
            if (v->items[i].end > v->items[w].end) v->items[w].end = v->items[i].end;
        } else {
            v->items[++w] = v->items[i];
        }
    }
    v->len = w + 1;
}

bool an_spans_meet(const an_span_vec *v, uint32_t a, uint32_t b) {
    size_t lo = 0, hi = v->len;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v->items[mid].end <= a) lo = mid + 1;
        else hi = mid;
    }
    return lo < v->len && v->items[lo].start < b;
}

static bool in_spans(const an_span_vec *v, uint32_t pos) { return an_spans_meet(v, pos, pos + 1); }

static void add_span(an_pyregions *r, uint32_t s, uint32_t e) {
    if (e <= s) return;
    if (r->spans.len && r->spans.items[r->spans.len - 1].end >= s) {
        if (e > r->spans.items[r->spans.len - 1].end) r->spans.items[r->spans.len - 1].end = e;
        return;
    }
    an_span sp = {s, e};
    ut_vec_push(&r->spans, sp);
}

/* Appends members ms (when ok) to units as unit u's; frees ms. Returns ok. */
static bool adopt(unit_vec *units, uint32_t u, unit_vec *ms, bool ok) {
    if (ok) {
        units->items[u].mfirst = (uint32_t)units->len;
        units->items[u].mcount = (uint32_t)ms->len;
        for (size_t k = 0; k < ms->len; k++) ut_vec_push(units, ms->items[k]);
    }
    ut_vec_free(ms);
    return ok;
}

/* Finds the members of compound statement u: the statements of each clause's block (a one-line clause has none). */
static bool open_compound(const an_source *src, const lline_vec *ls, unit_vec *units, uint32_t u) {
    unit d = units->items[u];
    uint32_t level = ls->items[d.header].indent;
    unit_vec ms = {0};
    bool ok = true;
    uint16_t clause = 0;
    for (uint32_t h = (uint32_t)d.header; ok && h <= d.last; clause++) {
        uint32_t next = h + 1;
        while (next <= d.last && ls->items[next].indent > level) next++;
        if (next <= d.last && ls->items[next].indent < level) ok = false;
        if (clause == UINT16_MAX) ok = false;
        if (ok && next > h + 1) {
            size_t before = ms.len;
            uint32_t end = next <= d.last ? ls->items[next].start : d.end;
            ok = group(src, ls, h + 1, next, ls->items[h + 1].indent, end, &ms) && ms.len > before;
            for (size_t k = before; k < ms.len; k++) ms.items[k].clause = clause;
        }
        h = next;
    }
    return adopt(units, u, &ms, ok && ms.len);
}

/* Finds the members of definition u (the statements of its body), appended to units; false when unsure. */
static bool open_definition(const an_source *src, const lline_vec *ls, unit_vec *units, uint32_t u) {
    unit d = units->items[u];
    if (d.header < 0 || (uint32_t)d.header >= d.last) return false; /* not a definition, or a one-line one */
    if (d.compound) return open_compound(src, ls, units, u);
    uint32_t level = ls->items[d.header + 1].indent;
    if (level <= ls->items[d.header].indent) return false;
    unit_vec ms = {0};
    return adopt(units, u, &ms, group(src, ls, (uint32_t)d.header + 1, d.last + 1, level, d.end, &ms) && ms.len);
}

/* Definition u's members, found on first use (units may move): false when it has none or they are unsure. */
static bool opened(const an_source *src, const lline_vec *ls, unit_vec *units, uint32_t u) {
    if (!units->items[u].grouped) {
        int8_t g = open_definition(src, ls, units, u) ? 1 : -1;
        units->items[u].grouped = g;
    }
    return units->items[u].grouped > 0;
}

/* Definition u is parsed as its header (decorators and signature) and the members that hold a hit, or its smallest
 * member when none does (emit picks it): it still parses as a definition. */
static void keep_header(const an_source *src, const lline_vec *ls, unit_vec *units, uint32_t u) {
    if (!opened(src, ls, units, u)) units->items[u].whole = true;
    else units->items[u].any_member = true;
}

/* Marks what a hit at pos needs: from unit u down through nested definitions and compound statements (class ->
 * method -> for -> statement), the innermost statement holding pos, whole; the headers on the way are kept. A hit
 * in a definition's header keeps the header; one in a compound statement's header (a condition, a with item, an
 * except clause) takes the statement whole. Below MAX_DEPTH levels a unit is taken whole (emit recurses that deep). */
#define MAX_DEPTH 16
static void place(const an_source *src, const lline_vec *ls, unit_vec *units, uint32_t u, uint32_t pos) {
    for (int depth = 0;; depth++) {
        unit *d = &units->items[u];
        if (d->whole) return;
        if (d->header < 0 || depth == MAX_DEPTH || (d->compound && pos < ls->items[d->header].end)) {
            d->whole = true;
            return;
        }
        if (pos < ls->items[d->header].end) { keep_header(src, ls, units, u); return; }
        if (!opened(src, ls, units, u)) { units->items[u].whole = true; return; }
        d = &units->items[u]; /* units may have moved */
        uint32_t m = d->mfirst + (uint32_t)find_unit(units->items + d->mfirst, d->mcount, pos);
        /* before the first member or after its clause's last: in a header (a compound statement's other clause) */
        if (pos < units->items[m].start || pos >= units->items[m].end) { d->whole = true; return; }
        d->any_member = true;
        u = m;
    }
}

/* Members [first, end) of a block: when none holds a hit, the smallest is kept whole (a block needs a statement). */
static void keep_one(unit_vec *units, uint32_t first, uint32_t end) {
    uint32_t best = first;
    for (uint32_t k = first; k < end; k++) {
        const unit *x = &units->items[k];
        if (x->whole || x->any_member) return;
        if (x->end - x->start < units->items[best].end - units->items[best].start) best = k;
    }
    if (end > first) units->items[best].whole = true;
}

/* Compound statement u, some of whose members hold a hit: each clause's header line, and its members that hold a
 * hit or, in a clause with none, its smallest member (a block needs one statement). A try statement's other
 * clauses (its handlers) are kept whole: rules read what a handler does around the try body. */
static void emit_compound(const an_source *src, const lline_vec *ls, unit_vec *units, uint32_t u, an_pyregions *out);

static void emit(const an_source *src, const lline_vec *ls, unit_vec *units, uint32_t u, an_pyregions *out) {
    unit *d = &units->items[u];
    if (d->whole) add_span(out, d->start, d->end);
    else if (d->any_member && d->compound) emit_compound(src, ls, units, u, out);
    else if (d->any_member) {
        add_span(out, d->start, ls->items[d->header].end);
        uint32_t first = d->mfirst, end = d->mfirst + d->mcount;
        keep_one(units, first, end);
        for (uint32_t k = first; k < end; k++) emit(src, ls, units, k, out);
    }
}

static void emit_compound(const an_source *src, const lline_vec *ls, unit_vec *units, uint32_t u, an_pyregions *out) {
    const unit d = units->items[u];
    uint32_t level = ls->items[d.header].indent;
    bool is_try = word_is(src->text + ls->items[d.header].first, avail_of(src, &ls->items[d.header]), "try");
    uint32_t m = d.mfirst, mend = d.mfirst + d.mcount;
    uint16_t clause = 0;
    for (uint32_t h = (uint32_t)d.header; h <= d.last; h++) {
        if (ls->items[h].indent != level) continue;
        add_span(out, h == (uint32_t)d.header ? d.start : ls->items[h].start, ls->items[h].end);
        uint32_t first = m;
        for (; m < mend && units->items[m].clause == clause; m++)
            if (is_try && clause > 0) units->items[m].whole = true;
        keep_one(units, first, m);
        for (uint32_t k = first; k < m; k++) emit(src, ls, units, k, out);
        clause++;
    }
}

/* The first occurrence of w (n bytes) in [p, e) of text t that is a whole word (not part of an identifier), or
 * NULL. */
static const char *next_word(const char *t, const char *p, const char *e, const char *w, size_t n) {
    for (; n && (p = ut_memmem(p, (size_t)(e - p), w, n)); p++) {
        bool l = p == t || !ident_char(p[-1]);
        bool r = p + n >= e || !ident_char(p[n]);
        if (l && r) return p;
    }
    return NULL;
}

void an_pyregion_select(const an_catalog *cat, const an_source *src, const uint8_t *found, const char *helper,
                        an_pyregions *out) {
    memset(out, 0, sizeof *out);
    const struct pcre2_real_code_8 *const *locs;
    size_t nloc = an_catalog_locality(cat, AN_LANG_PYTHON, &locs);
    lline_vec ls = {0};
    unit_vec units = {0}; /* the top-level units first, then members as definitions are opened */
    uint32_t ntop = 0;
    UT_VEC(uint32_t) hits = {0};
    str_vec extra = {0};
    pcre2_match_data *md = NULL;
    bool *live = NULL;
    an_span_vec inert = {0};
    out->whole = true;
    if (!nloc || !scan(src, &ls, &out->comments, &inert) || !ls.len) goto done;
    an_spans_merge(&inert);
    if (!group(src, &ls, 0, (uint32_t)ls.len, 0, src->len, &units)) goto done;
    units.items[0].start = src->body; /* leading comments belong to the opening */
    ntop = (uint32_t)units.len;
    /* hits: locality matches; import lines (top level always, nested ones when they name a relevant root) */
    md = pcre2_match_data_create(1, NULL);
    live = ut_malloc(nloc);
    an_catalog_locality_live(cat, AN_LANG_PYTHON, src->text, src->len, found, live);
    bool caseless_safe = an_plain_caseless_safe(src->text, src->len);
    for (size_t k = 0; k < nloc; k++)
        for (size_t off = 0; live[k] && off < src->len;) {
            size_t ms, me;
            int rc = an_catalog_locality_match(cat, AN_LANG_PYTHON, k, src->text, src->len, off, caseless_safe, md,
                                               &ms, &me);
            if (rc < PCRE2_ERROR_NOMATCH) goto done; /* a match limit: hits unknown, the whole file is parsed */
            if (rc < 0) break;
            if (!in_spans(&inert, (uint32_t)ms)) { /* a comment or a docstring holds nothing to report */
                ut_vec_push(&hits, (uint32_t)ms);
                ut_vec_push(&out->hits, (uint32_t)ms);
            }
            off = me > ms ? me : ms + 1;
        }
    for (size_t k = 0; k < ls.len; k++) {
        const lline *l = &ls.items[k];
        const char *p = src->text + l->first;
        uint32_t a = avail_of(src, l);
        if (!word_is(p, a, "import") && !word_is(p, a, "from")) continue;
        bool relevant = import_relevant(cat, src->text, l->first, l->end) ||
                        (helper && next_word(src->text, src->text + l->first, src->text + l->end, helper, strlen(helper)));
        bool hit = false;
        for (size_t q = 0; q < nloc && !hit; q++) {
            size_t ms, me;
            int rc = live[q] ? an_catalog_locality_match(cat, AN_LANG_PYTHON, q, src->text, l->end, l->first,
                                                         caseless_safe, md, &ms, &me)
                             : PCRE2_ERROR_NOMATCH;
            if (rc < PCRE2_ERROR_NOMATCH) goto done; /* as above: parse the whole file */
            hit = rc >= 0;
        }
        if (relevant || hit) ut_vec_push(&hits, l->first);
        if (hit) {
            ut_vec_push(&out->hits, l->first);
            /* an alias hides the CUDA-ish name: `from torch.cuda import amp as A` makes `A` a hit too */
            bool star = false;
            import_locals(src->text, l->first, l->end, &extra, &star);
            if (star) goto done;
        }
    }
    for (size_t e = 0; e < extra.len; e++) {
        size_t wl = strlen(extra.items[e]);
        for (const char *p = src->text; (p = next_word(src->text, p, src->text + src->len, extra.items[e], wl)); p++) {
            if (!in_spans(&inert, (uint32_t)(p - src->text))) {
                ut_vec_push(&hits, (uint32_t)(p - src->text));
                ut_vec_push(&out->hits, (uint32_t)(p - src->text));
            }
        }
    }
    /* the file's opening (docstring, __future__, the import block, and the statement that ends it): the fixer's
     * header analysis reads it to place new imports */
    int opening_end = -1; /* a definition that ends the opening: parsed as its header and one member at least */
    bool prev_plain = false;  /* the unit before was an import that need not be parsed */
    bool past_opening = false; /* after it, up to the first definition: the environment set-up is parsed */
    bool path_set = false;     /* ... and, once it wrote sys.path, the imports that follow */
    for (size_t j = 0; j < ntop; j++) {
        const lline *l = &ls.items[units.items[j].first];
        const char *p = src->text + l->first;
        uint32_t a = avail_of(src, l);
        if (past_opening) {
            /* writes to os.environ and sys.path before the first definition: the fixer puts new imports after them */
            if (units.items[j].header >= 0 && !units.items[j].compound) break;
            uint32_t ulen = ls.items[units.items[j].last].end - l->first;
            if (ut_memmem(p, ulen, "environ", 7) || ut_memmem(p, ulen, "sys.path", 8) || ut_memmem(p, ulen, "putenv", 6)) {
                units.items[j].whole = true;
                path_set |= ut_memmem(p, ulen, "sys.path", 8) != NULL;
            } else if (path_set && (word_is(p, a, "import") || word_is(p, a, "from"))) {
                /* the imports after a sys.path set-up: a helper import naming a package of the project goes after
                 * the file's own first import of it, which may resolve only once the set-up ran */
                units.items[j].whole = true;
            }
            continue;
        }
        /* imports are parsed when they bind a name a rule resolves (below); in the opening, also the last one of
         * each run of imports (the fixer's header analysis finds where the import block ends) and the first unit
         * (its leading comments), and every __future__ import */
        bool plain_import = (word_is(p, a, "import") || word_is(p, a, "from")) && j > 0 &&
                            !ut_memmem(p, ls.items[units.items[j].last].end - l->first, "__future__", 10);
        if (prev_plain && !plain_import) units.items[j - 1].whole = true;
        prev_plain = plain_import;
        if (units.items[j].header >= 0 && !units.items[j].compound) {
            opening_end = (int)j;
            break;
        }
        if (!plain_import) units.items[j].whole = true;
        if (!(*p == '"' || *p == '\'' || word_is(p, a, "import") || word_is(p, a, "from") || word_is(p, a, "try") ||
              word_is(p, a, "if") || isalpha((unsigned char)*p) == 0)) {
            past_opening = true;
            path_set = ut_memmem(p, ls.items[units.items[j].last].end - l->first, "sys.path", 8) != NULL;
            continue;
        }
        if (prev_plain && j + 1 == ntop) units.items[j].whole = true;
    }
    for (size_t h = 0; h < hits.len; h++) {
        uint32_t pos = hits.items[h];
        if (pos < units.items[0].start) continue;
        place(src, &ls, &units, (uint32_t)find_unit(units.items, ntop, pos), pos);
    }
    if (opening_end >= 0 && !units.items[opening_end].whole && !units.items[opening_end].any_member)
        keep_header(src, &ls, &units, (uint32_t)opening_end);
    for (uint32_t j = 0; j < ntop; j++) emit(src, &ls, &units, j, out);
    out->hits_known = true;
    for (size_t k = 0; k < out->spans.len; k++) out->selected += out->spans.items[k].end - out->spans.items[k].start;
    /* no match outside comments and docstrings: no rule can report anything, nothing needs parsing */
    out->nothing = !out->hits.len;
    /* not worth it when most of the file is selected, nor over very many statements apart: tree-sitter 0.20.7's
     * lexer finds its place among the included ranges by a scan from the first at each token, so a parse of n
     * ranges costs n times the tokens (20,000 classes, each moved to CUDA once right after it: 3.5 G instructions
     * of lexer resets for a 1.2 MB file, against 0.6 G for the whole of it) */
    out->whole = !out->nothing &&
                 (out->selected * 20 > (src->len - src->body) * 19 || out->spans.len > AN_PYREGION_MAX_SPANS);
done:
    if (md) pcre2_match_data_free(md);
    ut_free(live);
    ut_vec_free(&inert);
    for (size_t e = 0; e < extra.len; e++) ut_free(extra.items[e]);
    ut_vec_free(&extra);
    ut_vec_free(&hits);
    ut_vec_free(&ls);
    ut_vec_free(&units);
    if (out->whole || out->nothing) out->spans.len = 0, out->selected = 0;
    if (out->hits.len > 1) qsort(out->hits.items, out->hits.len, sizeof(uint32_t), cmp_u32);
}

void an_pyregions_free(an_pyregions *r) {
    ut_vec_free(&r->spans);
    ut_vec_free(&r->hits);
    ut_vec_free(&r->comments);
}

/* The import statements of the function or class definition d (its logical lines after its header): see an_pyunit. */
static void unit_imports(const an_source *src, const lline_vec *ls, const unit *d, an_pyunit *pu, an_span_vec *out) {
    const char *t = src->text;
    size_t first = out->len, words = 0;
    /* the block openers around the line, by indent: whether each is an except clause's */
    struct opener {
        uint32_t indent;
        bool except;
    } stack[64];
    size_t depth = 0;
    for (uint32_t k = (uint32_t)d->header + 1; k <= d->last; k++) {
        const lline *l = &ls->items[k];
        while (depth && stack[depth - 1].indent >= l->indent) depth--;
        uint32_t a = avail_of(src, l);
        const char *p = t + l->first;
        bool in_except = false;
        for (size_t i = 0; i < depth; i++) in_except |= stack[i].except;
        if (depth == sizeof stack / sizeof *stack) goto unsure;
        stack[depth++] = (struct opener){l->indent, word_is(p, a, "except")};
        if (!word_is(p, a, "import") && !word_is(p, a, "from")) continue;
        if (in_except || memchr(p, ';', l->end - l->first)) goto unsure;
        const char *e = t + l->end;
        size_t here = 0;
        for (const char *w = p; (w = next_word(t, w, e, "import", 6)); w++) here++;
        if (!here) goto unsure;
        words += here;
        ut_vec_push(out, ((an_span){l->first, l->end}));
    }
    {
        /* every `import` word of the definition is in those statements (not in a docstring, a comment, a one-line
         * `if x: import y`) */
        size_t all = 0;
        for (const char *w = t + d->start, *e = t + d->end; (w = next_word(t, w, e, "import", 6)); w++) all++;
        if (all != words) goto unsure;
    }
    pu->imports_known = true, pu->ifirst = first, pu->nimports = out->len - first;
    return;
unsure:
    out->len = first;
}

bool an_pyregion_units(const an_source *src, an_pyunits *out) {
    memset(out, 0, sizeof *out);
    lline_vec ls = {0};
    unit_vec units = {0};
    an_span_vec comments = {0}, inert = {0};
    bool ok = scan(src, &ls, &comments, &inert) && ls.len && group(src, &ls, 0, (uint32_t)ls.len, 0, src->len, &units);
    if (ok) {
        units.items[0].start = src->body;
        size_t ntop = units.len;
        for (size_t j = 0; j < ntop; j++) {
            an_pyunit pu = {{units.items[j].start, units.items[j].end}, 0, 0, false, 0, 0};
            uint32_t a = 0;
            const unit *d = &units.items[j];
            const char *kw = d->header >= 0 && !d->compound ? keyword(src, &ls.items[d->header], &a) : NULL;
            if (kw && (word_is(kw, a, "def") || word_is(kw, a, "class"))) unit_imports(src, &ls, d, &pu, &out->imports);
            if (kw && word_is(kw, a, "class") && opened(src, &ls, &units, (uint32_t)j)) {
                d = &units.items[j]; /* units may have moved */
                pu.mfirst = out->members.len, pu.mcount = d->mcount;
                for (uint32_t m = 0; m < d->mcount; m++) {
                    const unit *x = &units.items[d->mfirst + m];
                    ut_vec_push(&out->members, ((an_span){x->start, x->end}));
                }
            }
            ut_vec_push(&out->units, pu);
        }
    }
    ut_vec_free(&ls);
    ut_vec_free(&units);
    ut_vec_free(&comments);
    ut_vec_free(&inert);
    return ok;
}

void an_pyunits_free(an_pyunits *u) {
    ut_vec_free(&u->units);
    ut_vec_free(&u->members);
    ut_vec_free(&u->imports);
}
