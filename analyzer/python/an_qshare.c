/* an_qshare: query patterns that differ only in their capture names and predicates, written once (see an_qshare.h). */
#include "analyzer/python/an_qshare.h"
#include "util/ut_mem.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>

typedef enum { T_END, T_OPEN, T_CLOSE, T_PRED, T_CAPTURE, T_STRING, T_ATOM, T_BAD } tkind;

typedef struct {
    tkind k;
    const char *s;
    size_t n;
} tok;

/* past the string that opens at p (its closing quote included), or NULL when it is unterminated */
static const char *string_end(const char *p) {
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1]) p++;
    return *p ? p + 1 : NULL;
}

static const char *skip_space(const char *p) {
    for (;;) {
        while (isspace((unsigned char)*p)) p++;
        if (*p != ';') return p;
        while (*p && *p != '\n') p++;
    }
}

/* tree-sitter's identifier characters (captures, predicate names) */
static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.' || c == '?' || c == '!'; }

static tok next_tok(const char **pp) {
    const char *p = skip_space(*pp);
    tok t = {T_END, p, 0};
    if (!*p) return *pp = p, t;
    const char *q = p + 1;
    if (*p == '(' && *skip_space(p + 1) == '#') { /* a predicate: up to its balanced closing parenthesis */
        int depth = 1;
        while (*q && depth) {
            if (*q == '"') {
                if (!(q = string_end(q))) return t.k = T_BAD, t;
                continue;
            }
            if (*q == ';') {
                while (*q && *q != '\n') q++;
                continue;
            }
            if (*q == '(' || *q == '[') depth++;
            else if (*q == ')' || *q == ']') depth--;
            q++;
        }
        if (depth) return t.k = T_BAD, t;
        t.k = T_PRED;
    } else if (*p == '(' || *p == '[') {
        t.k = T_OPEN;
    } else if (*p == ')' || *p == ']') {
        t.k = T_CLOSE;
    } else if (*p == '"') {
        if (!(q = string_end(p))) return t.k = T_BAD, t;
        t.k = T_STRING;
    } else if (*p == '@') {
        while (ident_char(*q)) q++;
        t.k = q > p + 1 ? T_CAPTURE : T_BAD;
    } else {
        q = p;
        while (*q && !isspace((unsigned char)*q) && !strchr("()[]\";@", *q)) q++;
        t.k = q > p ? T_ATOM : T_BAD;
        if (q == p) q = p + 1;
    }
    t.n = (size_t)(q - p);
    *pp = q;
    return t;
}

/* one top-level pattern of a rule's text while it is read */
typedef struct {
    uint32_t rule;
    ut_buf shape; /* tokens, captures renamed, one space apart */
    ut_buf preds; /* its predicates as written, captures renamed */
    UT_VEC(char *) names;
} rawpat;

static int name_index(const rawpat *r, const char *s, size_t n) {
    for (size_t i = 0; i < r->names.len; i++)
        if (strlen(r->names.items[i]) == n && !memcmp(r->names.items[i], s, n)) return (int)i;
    return -1;
}

static void put_capture(rawpat *r, const char *s, size_t n) {
    int k = name_index(r, s, n);
    if (k < 0) {
        ut_vec_push(&r->names, ut_strndup(s, n));
        k = (int)r->names.len - 1;
    }
    ut_buf_printf(&r->shape, " @c%d", k);
}

/* a predicate's text with its captures renamed (false: it names a capture the pattern lacks) */
static bool put_pred(rawpat *r, const char *s, size_t n) {
    const char *e = s + n, *run = s;
    ut_buf_putc(&r->preds, ' ');
    for (const char *p = s; p < e;) {
        if (*p == '"') {
            p = string_end(p); /* next_tok checked that it ends inside the predicate */
            continue;
        }
        if (*p == ';') {
            while (p < e && *p != '\n') p++;
            continue;
        }
        if (*p != '@') {
            p++;
            continue;
        }
        const char *q = p + 1;
        while (q < e && ident_char(*q)) q++;
        int k = name_index(r, p + 1, (size_t)(q - p - 1));
        if (k < 0) return false;
        ut_buf_append(&r->preds, run, (size_t)(p - run));
        ut_buf_printf(&r->preds, "@c%d", k);
        p = run = q;
    }
    ut_buf_append(&r->preds, run, (size_t)(e - run));
    return true;
}

static void rawpat_free(rawpat *r) {
    ut_buf_free(&r->shape);
    ut_buf_free(&r->preds);
    for (size_t i = 0; i < r->names.len; i++) ut_free(r->names.items[i]);
    ut_vec_free(&r->names);
}

/* Renames the captures in the predicates a finished pattern holds. */
static bool finish(rawpat *cur, tok *held, size_t *nheld) {
    for (size_t i = 0; i < *nheld; i++)
        if (!put_pred(cur, held[i].s, held[i].n)) return false;
    *nheld = 0;
    return true;
}

/* Splits one rule's text into its top-level patterns (appended to pats); false for anything not understood. */
static bool split(const char *text, uint32_t rule, void *patsv) {
    UT_VEC(rawpat) *pats = patsv;
    const char *p = text;
    int depth = 0;
    rawpat *cur = NULL;
    UT_VEC(tok) held = {0}; /* the current pattern's predicates: renamed once all its captures are known */
    bool ok = true;
    for (;;) {
        tok t = next_tok(&p);
        if (t.k == T_BAD) { ok = false; break; }
        if (t.k == T_END) break;
        if (depth == 0) {
            if (t.k == T_OPEN) {
                if (cur && !(ok = finish(cur, held.items, &held.len))) break;
                rawpat r = {0};
                r.rule = rule;
                ut_buf_init(&r.shape), ut_buf_init(&r.preds);
                ut_vec_push(pats, r);
                cur = &pats->items[pats->len - 1];
            } else if (!(t.k == T_CAPTURE && cur)) {
                ok = false; /* a top-level predicate, string, atom or quantifier, or a stray closing parenthesis */
                break;
            }
        }
        if (t.k == T_PRED) {
            ut_vec_push(&held, t);
            continue;
        }
        if (t.k == T_OPEN) depth++;
        else if (t.k == T_CLOSE) depth--;
        if (t.k == T_CAPTURE) put_capture(cur, t.s + 1, t.n - 1);
        else ut_buf_printf(&cur->shape, "%s%.*s", cur->shape.len ? " " : "", (int)t.n, t.s);
    }
    if (ok && (depth != 0 || (cur && !finish(cur, held.items, &held.len)))) ok = false;
    ut_vec_free(&held);
    return ok;
}

bool an_qshare_build(const char *const *texts, size_t ntexts, an_qshare *out) {
    memset(out, 0, sizeof *out);
    ut_buf_init(&out->text);
    UT_VEC(rawpat) pats = {0};
    bool ok = true;
    for (size_t i = 0; i < ntexts && ok; i++) {
        size_t before = pats.len;
        ok = !strstr(texts[i], AN_QSHARE_MARKER) && split(texts[i], (uint32_t)i, &pats) && pats.len > before;
    }
    uint32_t *shape_of = ok ? ut_calloc(pats.len ? pats.len : 1, sizeof *shape_of) : NULL;
    UT_VEC(uint32_t) firsts = {0}; /* the first owner of each shape */
    for (size_t i = 0; ok && i < pats.len; i++) {
        size_t s = 0;
        while (s < firsts.len && strcmp(pats.items[firsts.items[s]].shape.data, pats.items[i].shape.data)) s++;
        if (s == firsts.len) ut_vec_push(&firsts, (uint32_t)i);
        shape_of[i] = (uint32_t)s;
    }
    if (ok) {
        out->owners = ut_calloc(pats.len, sizeof *out->owners);
        out->nowners = (uint32_t)pats.len;
        out->nshapes = (uint32_t)firsts.len;
        for (size_t s = 0; s < firsts.len; s++) {
            ut_buf_printf(&out->text, "(%s\n", pats.items[firsts.items[s]].shape.data);
            for (size_t i = 0; i < pats.len; i++) {
                if (shape_of[i] != s) continue;
                ut_buf_printf(&out->text, "  (#" AN_QSHARE_MARKER " \"%zu\")%s\n", i,
                              pats.items[i].preds.len ? pats.items[i].preds.data : "");
            }
            ut_buf_puts(&out->text, ")\n");
        }
        for (size_t i = 0; i < pats.len; i++) {
            an_qshare_owner *o = &out->owners[i];
            o->rule = pats.items[i].rule;
            o->shape = shape_of[i];
            o->nnames = (uint32_t)pats.items[i].names.len;
            o->names = pats.items[i].names.items; /* taken */
            pats.items[i].names.items = NULL, pats.items[i].names.len = 0;
        }
    }
    for (size_t i = 0; i < pats.len; i++) rawpat_free(&pats.items[i]);
    ut_vec_free(&pats);
    ut_vec_free(&firsts);
    ut_free(shape_of);
    if (!ok) an_qshare_free(out);
    return ok;
}

int an_qshare_capture(const an_qshare_owner *o, const char *name, size_t len) {
    for (uint32_t i = 0; i < o->nnames; i++)
        if (strlen(o->names[i]) == len && !memcmp(o->names[i], name, len)) return (int)i;
    return -1;
}

void an_qshare_free(an_qshare *q) {
    for (uint32_t i = 0; i < q->nowners; i++) {
        for (uint32_t k = 0; k < q->owners[i].nnames; k++) ut_free(q->owners[i].names[k]);
        ut_free(q->owners[i].names);
    }
    ut_free(q->owners);
    ut_buf_free(&q->text);
    memset(q, 0, sizeof *q);
}
