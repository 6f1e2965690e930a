/* an_c: the C/C++/CUDA front end. One file: build the clang arguments for its mode, parse with libclang, take the
 * file's tokens, walk them against the API tables (AST-checked), then kernel launches, include directives, error
 * macros and pattern rules; drop what sits in `#if 0` or in #if chains that already handle SYCL/XPU; apply
 * suppression comments. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "analyzer/c/an_c.h"
#include "analyzer/c/an_ckernel.h"
#include <pthread.h>
#include "analyzer/c/an_cargs.h"
#include "analyzer/c/an_cdecls.h"
#include "analyzer/c/an_clang.h"
#include "analyzer/core/an_message.h"
#include "analyzer/core/an_suppress.h"
#include <ctype.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>

struct an_c {
    an_c_options opt;
    CXIndex index;
};

an_c *an_c_new(const an_c_options *opt) {
    an_c *c = ut_calloc(1, sizeof *c);
    if (opt) c->opt = *opt;
    return c;
}

void an_c_free(an_c *c) {
    if (!c) return;
    if (c->index) CL(clang_disposeIndex)(c->index);
    ut_free(c);
}

static bool ensure_index(an_c *c, const char **why) {
    if (c->index) return true;
    if (!an_clang_load(why)) return false;
    c->index = CL(clang_createIndex)(0, 0);
    return c->index != NULL;
}

char *an_c_fast_header(const an_catalog *cat, const char *path, const char *text, size_t len) {
    ut_buf h;
    ut_buf_init(&h);
    an_cdecls_generate(cat, an_cargs_mode(path), text, len, false, &h);
    return ut_buf_take(&h);
}

/* ---- the analysis of one file -------------------------------------------------------------------------------- */

typedef struct {
    uint32_t s, e;
    CXTokenKind k;
} tok;

typedef struct { uint32_t s, e; } range;

typedef struct {
    uint32_t hash, start, end; /* the directive: from `#` to the end of its (continued) line */
    uint32_t name_tok;         /* the token after `#` */
} directive;

typedef struct {
    an_c *c;
    const an_catalog *cat;
    const an_source *src;
    const bool *enabled;
    CXTranslationUnit tu;
    CXFile file;
    bool precise;
    UT_VEC(tok) toks;
    char *masked; /* the text with comments and string/char literals blanked (newlines kept) */
    char *masked_comments; /* the text with comments blanked only (pattern rules with `strings: true`) */
    UT_VEC(directive) dirs;
    UT_VEC(range) dead;     /* `#if 0` branches */
    UT_VEC(range) agnostic; /* #if chains with a SYCL/XPU branch */
    UT_VEC(range) comments; /* comments that may be suppression directives */
    an_diag_list *out;
    ut_buf tmp;
    UT_VEC(char *) declared; /* fast mode: names this file declares (sorted), see user_owned */
    UT_VEC(uint32_t) redeclared; /* fast mode: where clang saw the file redeclare a generated declaration */
    char *rule_error;       /* the first pattern rule that failed (PCRE2 limit): the file is not completely checked */
} ctx;

static const char *text(const ctx *c, const tok *t) { return c->src->text + t->s; }
static size_t tlen(const tok *t) { return t->e - t->s; }
static bool is(const ctx *c, size_t i, const char *s) {
    if (i >= c->toks.len) return false;
    const tok *t = &c->toks.items[i];
    size_t n = strlen(s);
    return tlen(t) == n && !memcmp(text(c, t), s, n);
}
static bool is_ident(const ctx *c, size_t i) {
    return i < c->toks.len && (c->toks.items[i].k == CXToken_Identifier || c->toks.items[i].k == CXToken_Keyword);
}
static bool enabled(const ctx *c, const an_rule *r) { return !c->enabled || c->enabled[r->index]; }

static bool inside(const range *rs, size_t n, uint32_t s, uint32_t e) {
    for (size_t i = 0; i < n; i++)
        if (s >= rs[i].s && e <= rs[i].e) return true;
    return false;
}

static an_diag *emit(ctx *c, const an_rule *r, an_origin origin, uint32_t s, uint32_t e, char *msg) {
    an_diag d = {0};
    d.rule = r;
    d.origin = origin;
    d.start = s;
    d.end = e;
    d.message = msg;
    ut_vec_push(c->out, d);
    return &c->out->items[c->out->len - 1];
}

static void tokenize(ctx *c) {
    CXSourceLocation a = CL(clang_getLocationForOffset)(c->tu, c->file, 0);
    CXSourceLocation b = CL(clang_getLocationForOffset)(c->tu, c->file, c->src->len);
    CXToken *ts = NULL;
    unsigned n = 0;
    CL(clang_tokenize)(c->tu, CL(clang_getRange)(a, b), &ts, &n);
    ut_vec_reserve(&c->toks, n);
    for (unsigned i = 0; i < n; i++) {
        CXSourceRange r = CL(clang_getTokenExtent)(c->tu, ts[i]);
        unsigned s, e;
        CXFile f;
        CL(clang_getFileLocation)(CL(clang_getRangeStart)(r), &f, NULL, NULL, &s);
        CL(clang_getFileLocation)(CL(clang_getRangeEnd)(r), NULL, NULL, NULL, &e);
        if (e < s || e > c->src->len) continue;
        tok t = {s, e, CL(clang_getTokenKind)(ts[i])};
        ut_vec_push(&c->toks, t);
    }
    if (ts) CL(clang_disposeTokens)(c->tu, ts, n);
}

static void blank(char *m, uint32_t s, uint32_t e) {
    for (uint32_t i = s; i < e; i++)
        if (m[i] != '\n' && m[i] != '\r') m[i] = ' ';
}

static void build_mask(ctx *c) {
    c->masked = ut_strndup(c->src->text, c->src->len);
    c->masked_comments = ut_strndup(c->src->text, c->src->len);
    for (size_t i = 0; i < c->toks.len; i++) {
        const tok *t = &c->toks.items[i];
        const char *s = text(c, t);
        if (t->k == CXToken_Comment) {
            blank(c->masked, t->s, t->e);
            blank(c->masked_comments, t->s, t->e);
            if (tlen(t) > 8 && memmem(s, tlen(t), "xpuify:", 7)) {
                range r = {t->s, t->e};
                ut_vec_push(&c->comments, r);
            }
        } else if (t->k == CXToken_Literal) {
            /* strings and characters (with L, u, U, u8 or R prefixes); numbers stay */
            size_t k = 0;
            while (k < tlen(t) && k < 3 && (s[k] == 'L' || s[k] == 'u' || s[k] == 'U' || s[k] == '8' || s[k] == 'R')) k++;
            if (k < tlen(t) && (s[k] == '"' || s[k] == '\'')) blank(c->masked, t->s, t->e);
        }
    }
}

static bool first_on_line(const ctx *c, uint32_t off) {
    for (uint32_t i = off; i > 0; i--) {
        char ch = c->masked[i - 1];
        if (ch == '\n') return true;
        if (ch != ' ' && ch != '\t' && ch != '\r' && ch != '\f' && ch != '\v') return false;
    }
    return true;
}

static uint32_t directive_end(const ctx *c, uint32_t from) {
    const char *t = c->masked;
    uint32_t n = c->src->len, i = from;
    for (;;) {
        while (i < n && t[i] != '\n') i++;
        if (i >= n) return n;
        uint32_t k = i;
        if (k > from && t[k - 1] == '\r') k--;
        if (k > from && t[k - 1] == '\\') { i++; continue; }
        return i;
    }
}

/* A condition that already gives SYCL/XPU its own branch: the chain is device-agnostic code. */
static bool mentions_agnostic(const char *s, size_t n) {
    static const char *const words[] = {"sycl", "xpu", "oneapi", "level_zero", "__intel_llvm_compiler", NULL};
    for (size_t i = 0; i < n; i++)
        for (int w = 0; words[w]; w++) {
            size_t wl = strlen(words[w]);
            if (i + wl <= n && !strncasecmp(s + i, words[w], wl)) return true;
        }
    return false;
}

static bool cond_is_zero(const char *s, size_t n) {
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    return n == 1 && *s == '0';
}

/* Directives; `#if 0` branches and agnostic chains. */
static void scan_directives(ctx *c) {
    typedef struct {
        uint32_t start;
        bool agnostic;
        bool dead_open;
        uint32_t dead_start;
    } frame;
    UT_VEC(frame) st = {0};
    for (size_t i = 0; i < c->toks.len; i++) {
        const tok *t = &c->toks.items[i];
        if (t->k != CXToken_Punctuation || tlen(t) != 1 || *text(c, t) != '#' || !first_on_line(c, t->s)) continue;
        directive d = {t->s, t->s, directive_end(c, t->s), (uint32_t)(i + 1)};
        if (i + 1 >= c->toks.len || c->toks.items[i + 1].s >= d.end) continue; /* a null directive */
        ut_vec_push(&c->dirs, d);
        const tok *nt = &c->toks.items[i + 1];
        const char *cond = c->masked + nt->e;
        size_t cn = d.end > nt->e ? d.end - nt->e : 0;
        if (is(c, i + 1, "if") || is(c, i + 1, "ifdef") || is(c, i + 1, "ifndef")) {
            frame f = {d.start, mentions_agnostic(cond, cn), false, 0};
            if (is(c, i + 1, "if") && cond_is_zero(cond, cn)) f.dead_open = true, f.dead_start = d.end;
            ut_vec_push(&st, f);
        } else if ((is(c, i + 1, "elif") || is(c, i + 1, "else") || is(c, i + 1, "endif")) && st.len) {
            frame *f = &st.items[st.len - 1];
            if (f->dead_open) {
                range r = {f->dead_start, d.start};
                ut_vec_push(&c->dead, r);
                f->dead_open = false;
            }
            if (is(c, i + 1, "elif")) {
                f->agnostic |= mentions_agnostic(cond, cn);
                if (cond_is_zero(cond, cn)) f->dead_open = true, f->dead_start = d.end;
            } else if (is(c, i + 1, "endif")) {
                if (f->agnostic) {
                    range r = {f->start, d.end};
                    ut_vec_push(&c->agnostic, r);
                }
                st.len--;
            }
        }
    }
    for (size_t k = 0; k < st.len; k++) { /* unterminated: to the end of the file */
        frame *f = &st.items[k];
        range r = {f->dead_open ? f->dead_start : f->start, c->src->len};
        if (f->dead_open) ut_vec_push(&c->dead, r);
        r.s = f->start;
        if (f->agnostic) ut_vec_push(&c->agnostic, r);
    }
    ut_vec_free(&st);
}

static const directive *directive_at(const ctx *c, uint32_t off) {
    size_t lo = 0, hi = c->dirs.len;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->dirs.items[mid].end < off) lo = mid + 1;
        else hi = mid;
    }
    if (lo < c->dirs.len && c->dirs.items[lo].start <= off && off <= c->dirs.items[lo].end) return &c->dirs.items[lo];
    return NULL;
}

static bool excluded(const ctx *c, uint32_t s, uint32_t e) {
    return inside(c->dead.items, c->dead.len, s, e) || inside(c->agnostic.items, c->agnostic.len, s, e);
}

/* ---- AST checks ---------------------------------------------------------------------------------------------- */

static bool cursor_in_main(const ctx *c, CXCursor cur, unsigned *off) {
    CXFile f = NULL;
    CL(clang_getExpansionLocation)(CL(clang_getCursorLocation)(cur), &f, NULL, NULL, off);
    return f && f == c->file;
}

static bool spelled(CXCursor cur, const char *name, size_t n) {
    CXString s = CL(clang_getCursorSpelling)(cur);
    const char *p = CL(clang_getCString)(s);
    bool eq = p && strlen(p) == n && !memcmp(p, name, n);
    CL(clang_disposeString)(s);
    return eq;
}

/* A declaration clang made up at a use (a CUDA builtin like __syncthreads, a called undeclared function in C):
 * its extent is its name alone, or nothing. */
static bool implicit_decl(CXCursor d, unsigned loc_off) {
    if (CL(clang_getCursorKind)(d) != CXCursor_FunctionDecl) return false;
    CXFile f = NULL;
    unsigned start = 0;
    CL(clang_getExpansionLocation)(CL(clang_getRangeStart)(CL(clang_getCursorExtent)(d)), &f, NULL, NULL, &start);
    return !f || start >= loc_off;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static enum CXChildVisitResult collect_decl(CXCursor cur, CXCursor parent, CXClientData data) {
    ctx *c = data;
    enum CXCursorKind k = CL(clang_getCursorKind)(cur);
    CXFile f = NULL;
    unsigned off = 0;
    CL(clang_getExpansionLocation)(CL(clang_getCursorLocation)(cur), &f, NULL, NULL, &off);
    if (f != c->file) return CXChildVisit_Continue;
    if (implicit_decl(cur, off)) return CXChildVisit_Continue;
    switch (k) {
    case CXCursor_FunctionDecl: case CXCursor_VarDecl: case CXCursor_ParmDecl: case CXCursor_TypedefDecl:
    case CXCursor_StructDecl: case CXCursor_UnionDecl: case CXCursor_ClassDecl: case CXCursor_EnumDecl:
    case CXCursor_EnumConstantDecl: case CXCursor_MacroDefinition: case CXCursor_FunctionTemplate:
    case CXCursor_ClassTemplate: case CXCursor_TypeAliasDecl: {
        char *n = an_clang_take(CL(clang_getCursorSpelling)(cur));
        if (*n) ut_vec_push(&c->declared, n);
        else ut_free(n);
        break;
    }
    default: break;
    }
    return CXChildVisit_Recurse;
}

/* Fast mode: the generated declarations can clash with a project's own (a CPU shim that defines cudaMalloc):
 * clang may then resolve the project's uses to the generated ones. The names the file declares settle it. */
static void collect_declared(ctx *c) {
    CL(clang_visitChildren)(CL(clang_getTranslationUnitCursor)(c->tu), collect_decl, c);
    /* a declaration that clashes with a generated one may be dropped from the AST: clang's diagnostic marks it */
    unsigned n = CL(clang_getNumDiagnostics)(c->tu);
    for (unsigned i = 0; i < n; i++) {
        CXDiagnostic d = CL(clang_getDiagnostic)(c->tu, i);
        char *msg = an_clang_take(CL(clang_getDiagnosticSpelling)(d));
        if (strstr(msg, "redefinition") || strstr(msg, "conflicting types") || strstr(msg, "redeclared")) {
            CXFile f = NULL;
            unsigned off;
            CL(clang_getExpansionLocation)(CL(clang_getDiagnosticLocation)(d), &f, NULL, NULL, &off);
            if (f == c->file && off < c->src->len) {
                ut_vec_push(&c->redeclared, (uint32_t)off);
                /* and the name, for the uses that now resolve to the generated declaration */
                const char *t = c->src->text;
                uint32_t e = off;
                while (e < c->src->len && (isalnum((unsigned char)t[e]) || t[e] == '_')) e++;
                if (e > off) ut_vec_push(&c->declared, ut_strndup(t + off, e - off));
            }
        }
        ut_free(msg);
        CL(clang_disposeDiagnostic)(d);
    }
    if (c->declared.len > 1) qsort(c->declared.items, c->declared.len, sizeof(char *), cmp_str);
}

static bool declared_here(const ctx *c, const char *name, size_t n) {
    size_t lo = 0, hi = c->declared.len;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int r = strncmp(c->declared.items[mid], name, n);
        if (!r && c->declared.items[mid][n]) r = 1;
        if (r < 0) lo = mid + 1;
        else if (r > 0) hi = mid;
        else return true;
    }
    return false;
}

/* The name at this token is the file's own: it declares it (a function, variable, parameter or macro of that
 * name) or refers to such a declaration made in this file. */
static bool user_owned(ctx *c, const tok *t) {
    if (!c->tu) return false;
    for (size_t i = 0; i < c->redeclared.len; i++)
        if (c->redeclared.items[i] == t->s) return true;
    CXSourceLocation loc = CL(clang_getLocationForOffset)(c->tu, c->file, t->s);
    CXCursor cur = CL(clang_getCursor)(c->tu, loc);
    enum CXCursorKind k = CL(clang_getCursorKind)(cur);
    /* no cursor for the token (a statement clang dropped): the names the file declares decide */
    bool own_name = declared_here(c, text(c, t), tlen(t));
    if (CL(clang_Cursor_isNull)(cur) || CL(clang_isInvalid)(k) || k == CXCursor_TranslationUnit) return own_name;
    unsigned off;
    if ((CL(clang_isDeclaration)(k) || k == CXCursor_MacroDefinition) && spelled(cur, text(c, t), tlen(t)))
        return cursor_in_main(c, cur, &off) && off == t->s;
    if (CL(clang_isReference)(k) || CL(clang_isExpression)(k) || k == CXCursor_MacroExpansion) {
        CXCursor r = CL(clang_getCursorReferenced)(cur);
        enum CXCursorKind rk = CL(clang_getCursorKind)(r);
        /* an overload set (or a name lookup clang left unresolved): the file's own if a candidate is */
        if (rk == CXCursor_OverloadedDeclRef) {
            unsigned n = CL(clang_getNumOverloadedDecls)(r);
            for (unsigned i = 0; i < n; i++) {
                CXCursor d = CL(clang_getOverloadedDecl)(r, i);
                if (spelled(d, text(c, t), tlen(t)) && cursor_in_main(c, d, &off)) return true;
            }
            return own_name;
        }
        /* an unresolved or overloaded name refers to itself: no declaration to judge by */
        if (CL(clang_Cursor_isNull)(r) || !(CL(clang_isDeclaration)(rk) || rk == CXCursor_MacroDefinition)) return own_name;
        if (!spelled(r, text(c, t), tlen(t))) return own_name; /* an enclosing expression (a macro use, a call) */
        /* clang declares builtins (__syncthreads in CUDA, and any called undeclared function in C) implicitly,
         * at their first use: such a declaration is only its name (no type before it), and not the file's own */
        if (cursor_in_main(c, r, &off)) return !implicit_decl(r, off);
        return !c->precise && own_name; /* fast mode: the generated declaration took the file's own */
    }
    /* the token sits in a statement or declaration clang kept but did not resolve it in */
    return own_name && !spelled(cur, text(c, t), tlen(t));
}

/* ---- table rows by token ------------------------------------------------------------------------------------- */

/* The name a qualifier (`__shared__`, `__global__`) applies to: the declarator that follows it. */
static bool qualified_name(const ctx *c, size_t i, uint32_t *ns, uint32_t *ne) {
    size_t last = SIZE_MAX;
    for (size_t k = i + 1; k < c->toks.len && k < i + 64; k++) {
        const tok *t = &c->toks.items[k];
        if (t->k == CXToken_Comment) continue;
        if (is_ident(c, k)) {
            if ((is(c, k, "__launch_bounds__") || is(c, k, "__attribute__") || is(c, k, "alignas") ||
                 is(c, k, "__align__") || is(c, k, "__declspec")) && is(c, k + 1, "(")) {
                int depth = 0;
                for (k = k + 1; k < c->toks.len; k++) {
                    if (is(c, k, "(")) depth++;
                    else if (is(c, k, ")") && --depth == 0) break;
                }
                continue;
            }
            last = k;
            continue;
        }
        if (is(c, k, "<") && last != SIZE_MAX && !is(c, last, "operator")) { /* template arguments */
            int depth = 0;
            for (; k < c->toks.len && k < i + 64; k++) {
                if (is(c, k, "<")) depth++;
                else if (is(c, k, ">") && --depth == 0) break;
                else if (is(c, k, ">>") && (depth -= 2) <= 0) break;
            }
            continue;
        }
        if (is(c, k, "*") || is(c, k, "&") || is(c, k, "::") || is(c, k, "&&")) continue;
        break;
    }
    if (last == SIZE_MAX) return false;
    *ns = c->toks.items[last].s, *ne = c->toks.items[last].e;
    return true;
}

static void report_row(ctx *c, const an_entry *e, uint32_t s, uint32_t end, const char *name, const char *txt) {
    if (!enabled(c, e->rule)) return;
    an_message_vars v;
    an_message_cvars cv;
    const an_entry *via = e->parent ? an_catalog_lookup_c(c->cat, e->parent, strlen(e->parent)) : NULL;
    an_message_cvars_of(e, via, name, &v, &cv);
    v.text = txt;
    char *msg = an_message_format_c(e->message ? e->message : e->rule->message, &v, &cv);
    an_message_cvars_free(&cv);
    emit(c, e->rule, AN_ORIGIN_REF, s, end, msg)->entry = e;
}

static void scan_identifiers(ctx *c) {
    UT_VEC(size_t) comps = {0};
    for (size_t i = 0; i < c->toks.len; i++) {
        if (c->toks.items[i].k != CXToken_Identifier) continue;
        if (is(c, i + 1, "::") && is_ident(c, i + 2)) continue; /* a qualifier: the chain is judged at its end */
        const tok *t = &c->toks.items[i];
        /* the chain a::b::name, and what precedes it */
        comps.len = 0;
        size_t j = i;
        ut_vec_push(&comps, j);
        while (j >= 2 && is(c, j - 1, "::") && is_ident(c, j - 2)) {
            j -= 2;
            ut_vec_push(&comps, j);
        }
        uint32_t start = c->toks.items[j].s;
        size_t before = j; /* index of the token before the chain, or j itself when there is none */
        if (j >= 1 && is(c, j - 1, "::")) start = c->toks.items[j - 1].s, before = j - 1;
        bool member = before >= 1 && (is(c, before - 1, ".") || is(c, before - 1, "->"));
        /* longest suffix first (a::b::name, b::name, name); an exact row beats a `prefix*` family row */
        const an_entry *e = NULL, *family = NULL;
        for (size_t k = comps.len; k-- > 0 && !e;) {
            ut_buf_clear(&c->tmp);
            for (size_t q = k + 1; q-- > 0;) {
                const tok *x = &c->toks.items[comps.items[q]];
                if (q != k) ut_buf_puts(&c->tmp, "::");
                ut_buf_append(&c->tmp, text(c, x), tlen(x));
            }
            const an_entry *hit = an_catalog_lookup_c(c->cat, c->tmp.data, c->tmp.len);
            if (hit && !hit->wildcard) e = hit;
            else if (hit && !family) family = hit;
        }
        if (!e) e = family;
        if (!e || e->kind == AN_KIND_HEADER) continue;
        if ((e->kind == AN_KIND_METHOD) != member) continue;
        if (e->kind == AN_KIND_METHOD && !is(c, i + 1, "(")) continue;
        /* a constant is never called: `CUBLAS_CHECK(x)` is a project macro, not a CUBLAS_* constant */
        if (e->kind == AN_KIND_ENUMERATOR && is(c, i + 1, "(")) continue;
        /* a family row does not match include guards (`#ifndef CUBLAS_API_H_`) */
        if (e->wildcard && tlen(t) > 2 && (!memcmp(t->e - 2 + c->src->text, "_H", 2) ||
                                           (tlen(t) > 3 && !memcmp(t->e - 3 + c->src->text, "_H_", 3))))
            continue;
        if (excluded(c, start, t->e)) continue;
        const directive *d = directive_at(c, t->s);
        if (d) {
            /* in a directive: `#define NAME` declares NAME; include lines are read elsewhere */
            if (d->name_tok < c->toks.len && (is(c, d->name_tok, "include") || is(c, d->name_tok, "include_next") ||
                                              is(c, d->name_tok, "import")))
                continue;
            if (is(c, d->name_tok, "define") && d->name_tok + 1 == i) continue;
            if (is(c, d->name_tok, "undef")) continue;
        } else if (user_owned(c, t)) {
            continue;
        }
        char *name = ut_strndup(c->src->text + start, t->e - start);
        char *decl = NULL;
        uint32_t ns, ne;
        if (e->kind == AN_KIND_QUALIFIER && qualified_name(c, i, &ns, &ne)) decl = ut_strndup(c->src->text + ns, ne - ns);
        report_row(c, e, start, t->e, name, decl);
        ut_free(name);
        ut_free(decl);
    }
    ut_vec_free(&comps);
}

/* ---- include directives -------------------------------------------------------------------------------------- */

static void scan_includes(ctx *c) {
    for (size_t i = 0; i < c->dirs.len; i++) {
        const directive *d = &c->dirs.items[i];
        if (!(is(c, d->name_tok, "include") || is(c, d->name_tok, "include_next") || is(c, d->name_tok, "import")))
            continue;
        const char *t = c->src->text;
        uint32_t p = c->toks.items[d->name_tok].e;
        while (p < d->end && (t[p] == ' ' || t[p] == '\t')) p++;
        if (p >= d->end || (t[p] != '<' && t[p] != '"')) continue;
        char close = t[p] == '<' ? '>' : '"';
        uint32_t s = p + 1, e = s;
        while (e < d->end && t[e] != close && t[e] != '\n') e++;
        if (e >= d->end || t[e] != close || e == s) continue;
        if (excluded(c, d->start, d->end)) continue;
        const an_entry *h = an_catalog_lookup_c(c->cat, t + s, e - s);
        if (!h || h->kind != AN_KIND_HEADER) continue;
        char *name = ut_strndup(t + s, e - s);
        report_row(c, h, s, e, name, NULL);
        ut_free(name);
    }
}

/* ---- built-in matchers --------------------------------------------------------------------------------------- */

static const an_rule *builtin(const ctx *c, const char *name) {
    for (size_t i = 0; i < an_catalog_count(c->cat); i++) {
        const an_rule *r = an_catalog_rule(c->cat, i);
        if (r->lang == AN_LANG_C && r->builtin && !strcmp(r->builtin, name)) return enabled(c, r) ? r : NULL;
    }
    return NULL;
}

static char *squeeze(const char *s, size_t n, size_t max) {
    ut_buf b;
    ut_buf_init(&b);
    bool sp = false;
    for (size_t i = 0; i < n && b.len < max; i++) {
        if (isspace((unsigned char)s[i])) { sp = b.len > 0; continue; }
        if (sp) ut_buf_putc(&b, ' ');
        sp = false;
        ut_buf_putc(&b, s[i]);
    }
    if (b.len >= max) ut_buf_puts(&b, "...");
    return ut_buf_take(&b);
}

/* `<<<` (CUDA lexing) or `<<` `<` (C++ lexing of a .h file) */
static size_t launch_open(const ctx *c, size_t i) {
    if (is(c, i, "<<<")) return 1;
    if (is(c, i, "<<") && is(c, i + 1, "<") && c->toks.items[i + 1].s == c->toks.items[i].e) return 2;
    return 0;
}

static size_t launch_close(const ctx *c, size_t i) {
    if (is(c, i, ">>>")) return 1;
    if (is(c, i, ">>") && is(c, i + 1, ">") && c->toks.items[i + 1].s == c->toks.items[i].e) return 2;
    if (is(c, i, ">") && is(c, i + 1, ">>") && c->toks.items[i + 1].s == c->toks.items[i].e) return 2;
    return 0;
}

static void scan_launches(ctx *c) {
    const an_rule *r = builtin(c, "cuda-kernel-launch");
    if (!r) return;
    for (size_t i = 1; i < c->toks.len; i++) {
        size_t w = launch_open(c, i);
        if (!w) continue;
        /* the callee: name, name<targs>, ns::name */
        size_t k = i - 1;
        if (is(c, k, ">")) {
            int depth = 0;
            for (;; k--) {
                if (is(c, k, ">")) depth++;
                else if (is(c, k, "<") && --depth == 0) break;
                if (!k) break;
            }
            if (k) k--;
        }
        if (!is_ident(c, k)) continue;
        while (k >= 2 && is(c, k - 1, "::") && is_ident(c, k - 2)) k -= 2;
        size_t end = i + w;
        int paren = 0;
        size_t cw = 0;
        for (; end < c->toks.len; end++) {
            if (is(c, end, "(")) paren++;
            else if (is(c, end, ")")) paren--;
            else if (paren <= 0 && (cw = launch_close(c, end))) break;
            else if (is(c, end, ";")) break;
        }
        if (end >= c->toks.len || !cw) continue;
        uint32_t s = c->toks.items[k].s, e = c->toks.items[end + cw - 1].e;
        if (excluded(c, s, e)) continue;
        char *txt = squeeze(c->src->text + s, e - s, 80);
        char *kname = ut_strndup(c->src->text + s, c->toks.items[i - 1].e - s);
        an_message_vars v = {kname, NULL, NULL, txt, NULL};
        emit(c, r, AN_ORIGIN_BUILTIN, s, e, an_message_format(r->message, &v));
        ut_free(kname);
        ut_free(txt);
        i = end + cw - 1;
    }
}

/* A macro defined here whose body checks CUDA/NCCL/library status codes (rows of section `error`). */
static void scan_error_macros(ctx *c) {
    const an_rule *r = builtin(c, "error-check-macro");
    if (!r) return;
    for (size_t i = 0; i < c->dirs.len; i++) {
        const directive *d = &c->dirs.items[i];
        if (!is(c, d->name_tok, "define") || !is_ident(c, d->name_tok + 1)) continue;
        size_t ni = d->name_tok + 1;
        if (excluded(c, d->start, d->end)) continue;
        ut_buf used;
        ut_buf_init(&used);
        size_t count = 0;
        for (size_t k = ni + 1; k < c->toks.len && c->toks.items[k].s < d->end; k++) {
            if (!is_ident(c, k)) continue;
            const an_entry *e = an_catalog_lookup_c(c->cat, text(c, &c->toks.items[k]), tlen(&c->toks.items[k]));
            if (!e || !e->section || strcmp(e->section, "error")) continue;
            char nm[128];
            snprintf(nm, sizeof nm, "`%.*s`", (int)tlen(&c->toks.items[k]), text(c, &c->toks.items[k]));
            if (used.len && strstr(used.data, nm)) continue;
            if (count++ < 3) ut_buf_printf(&used, "%s%s", used.len ? ", " : "", nm);
        }
        if (count) {
            const tok *n = &c->toks.items[ni];
            char *name = ut_strndup(text(c, n), tlen(n));
            an_message_vars v = {name, NULL, NULL, used.data, NULL};
            emit(c, r, AN_ORIGIN_BUILTIN, n->s, n->e, an_message_format(r->message, &v));
            ut_free(name);
        }
        ut_buf_free(&used);
    }
}

static void scan_patterns(ctx *c) {
    pcre2_match_data *md = NULL;
    for (size_t i = 0; i < an_catalog_count(c->cat); i++) {
        const an_rule *r = an_catalog_rule(c->cat, i);
        if (r->lang != AN_LANG_C || !r->pattern || !enabled(c, r)) continue;
        const pcre2_code *re = an_catalog_pattern(c->cat, r);
        if (!re) continue;
        if (!md) md = pcre2_match_data_create(16, NULL);
        uint32_t grp = 0;
        int g = pcre2_substring_number_from_name(re, (PCRE2_SPTR) "report");
        if (g > 0) grp = (uint32_t)g;
        PCRE2_SIZE at = 0;
        while (at <= c->src->len) {
            const char *subject = r->strings ? c->masked_comments : c->masked;
            int rc = pcre2_match(re, (PCRE2_SPTR)subject, c->src->len, at, PCRE2_NO_UTF_CHECK, md, NULL);
            if (rc < PCRE2_ERROR_NOMATCH && !c->rule_error) c->rule_error = an_rule_match_error(r, rc, at);
            if (rc < 0) break;
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            uint32_t s = (uint32_t)ov[2 * grp], e = (uint32_t)ov[2 * grp + 1];
            if (ov[2 * grp] == PCRE2_UNSET) s = (uint32_t)ov[0], e = (uint32_t)ov[1];
            if (!excluded(c, s, e)) {
                char *txt = squeeze(c->src->text + s, e - s, 60);
                an_message_vars v = {NULL, NULL, NULL, txt, NULL};
                emit(c, r, AN_ORIGIN_QUERY, s, e, an_message_format(r->message, &v));
                ut_free(txt);
            }
            at = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
        }
    }
    if (md) pcre2_match_data_free(md);
}

/* Each construct that keeps a kernel CUDA-only when `xpuify fix` translates the file's kernels to OpenCL C: the
 * translator's own issues (an_ckernel.c) on this parse, one finding per kernel, construct and line. */
static void scan_untranslatable(ctx *c) {
    const an_rule *r = builtin(c, "cuda-kernel-untranslatable");
    if (!r || !c->tu || !an_ckernel_applies(c->src)) return;
    an_ck_result res;
    if (!an_ckernel_translate_tu(c->tu, c->file, c->src, "check.cl", &res)) return;
    for (size_t i = 0; i < res.issues.len; i++) {
        const an_ck_issue *is = &res.issues.items[i];
        uint32_t s = is->off, e = s;
        while (e < c->src->len && (isalnum((unsigned char)c->src->text[e]) || c->src->text[e] == '_')) e++;
        if (e == s && s < c->src->len) e = s + 1;
        if (excluded(c, s, e)) continue;
        an_message_vars v = {is->kernel, NULL, NULL, is->what, NULL};
        emit(c, r, AN_ORIGIN_BUILTIN, s, e, an_message_format(r->message, &v));
    }
    an_ck_result_free(&res);
}

/* Precise mode: the first error in this file, so that a clean report is never mistaken for a parse that failed. */
static void report_parse_error(ctx *c) {
    const an_rule *r = builtin(c, "c-parse-error");
    if (!r || !c->precise || !c->tu) return;
    unsigned n = CL(clang_getNumDiagnostics)(c->tu), errors = 0;
    uint32_t first = UINT32_MAX;
    char *msg = NULL;
    for (unsigned i = 0; i < n; i++) {
        CXDiagnostic d = CL(clang_getDiagnostic)(c->tu, i);
        enum CXDiagnosticSeverity sev = CL(clang_getDiagnosticSeverity)(d);
        if (sev >= CXDiagnostic_Error) {
            CXFile f;
            unsigned off;
            CL(clang_getExpansionLocation)(CL(clang_getDiagnosticLocation)(d), &f, NULL, NULL, &off);
            errors++;
            if (f == c->file && first == UINT32_MAX) {
                first = off;
                msg = an_clang_take(CL(clang_getDiagnosticSpelling)(d));
            } else if (!msg) {
                char *m = an_clang_take(CL(clang_getDiagnosticSpelling)(d));
                CXString fn = f ? CL(clang_getFileName)(f) : (CXString){0};
                const char *fs = f ? CL(clang_getCString)(fn) : NULL;
                ut_buf b;
                ut_buf_init(&b);
                ut_buf_printf(&b, "%s%s%s", fs ? fs : "", fs ? ": " : "", m);
                msg = ut_buf_take(&b);
                ut_free(m);
                if (f) CL(clang_disposeString)(fn);
            }
        }
        CL(clang_disposeDiagnostic)(d);
    }
    if (!errors) { ut_free(msg); return; }
    if (first == UINT32_MAX) first = 0;
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_printf(&b, "%s", msg ? msg : "error");
    if (errors > 1) ut_buf_printf(&b, " (and %u more error%s)", errors - 1, errors > 2 ? "s" : "");
    an_message_vars v = {NULL, NULL, NULL, b.data, NULL};
    uint32_t line, col, ls, le;
    an_source_position(c->src, first, &line, &col);
    an_source_line_span(c->src, line, &ls, &le);
    emit(c, r, AN_ORIGIN_BUILTIN, first, le > first ? le : first, an_message_format(r->message, &v));
    ut_buf_free(&b);
    ut_free(msg);
}

/* The portable-layer names the fixer writes (xpuMalloc, xpuStream_t, ...) and the CUDA names they stand for,
 * sorted by portable name: the syntax check reads a fixed file with its CUDA names back, so that the fast mode's
 * declarations (made from the CUDA tables) cover it exactly as they covered the original. */
typedef struct { const char *portable, *cuda; } name_pair;
static struct { const an_catalog *cat; name_pair *v; size_t n; } back_names;
static pthread_mutex_t back_lock = PTHREAD_MUTEX_INITIALIZER;

static int pair_cmp(const void *a, const void *b) {
    return strcmp(((const name_pair *)a)->portable, ((const name_pair *)b)->portable);
}

bool an_c_identifier(const char *s, size_t n) {
    if (!s || !n || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return false;
    return true;
}

static bool ident_only(const char *s) { return s && an_c_identifier(s, strlen(s)); }

/* a name mapped back must be a name: a (broken) row whose portable form is a keyword keeps its breakage visible */
static bool keyword(const char *s) {
    static const char *const kw[] = {
        "alignas", "alignof", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const", "constexpr",
        "const_cast", "continue", "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum",
        "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long",
        "mutable", "namespace", "new", "noexcept", "nullptr", "operator", "private", "protected", "public",
        "register", "reinterpret_cast", "restrict", "return", "short", "signed", "sizeof", "static",
        "static_assert", "static_cast", "struct", "switch", "template", "this", "throw", "true", "try", "typedef",
        "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "while", "_Bool",
        "_Static_assert", NULL};
    for (int i = 0; kw[i]; i++)
        if (!strcmp(s, kw[i])) return true;
    return false;
}

static void build_back_names(const an_catalog *cat) {
    if (back_names.cat == cat) return;
    free(back_names.v);
    back_names.v = NULL, back_names.n = 0;
    size_t cap = 0;
    for (size_t i = 0; i < an_catalog_count(cat); i++) {
        const an_rule *r = an_catalog_rule(cat, i);
        if (r->lang != AN_LANG_C) continue;
        for (size_t k = 0; k < r->entries.len; k++) {
            const an_entry *e = r->entries.items[k];
            if (e->wildcard || !ident_only(e->replacement) || !ident_only(e->name) || keyword(e->replacement)) continue;
            if (back_names.n == cap) back_names.v = realloc(back_names.v, (cap = cap ? 2 * cap : 256) * sizeof(name_pair));
            back_names.v[back_names.n++] = (name_pair){e->replacement, e->name};
        }
    }
    if (back_names.n) qsort(back_names.v, back_names.n, sizeof(name_pair), pair_cmp);
    back_names.cat = cat;
}

/* text with every portable-layer identifier replaced by its CUDA name (heap) */
static char *cuda_names_back(const an_catalog *cat, const char *t, size_t len, size_t *out_len) {
    pthread_mutex_lock(&back_lock);
    build_back_names(cat);
    ut_buf b;
    ut_buf_init(&b);
    char word[256];
    for (size_t i = 0; i < len;) {
        if ((isalpha((unsigned char)t[i]) || t[i] == '_') && (i == 0 || !(isalnum((unsigned char)t[i - 1]) || t[i - 1] == '_'))) {
            size_t j = i;
            while (j < len && (isalnum((unsigned char)t[j]) || t[j] == '_')) j++;
            const char *rep = NULL;
            if (j - i < sizeof word && back_names.n) {
                memcpy(word, t + i, j - i);
                word[j - i] = 0;
                name_pair key = {word, NULL};
                const name_pair *hit = bsearch(&key, back_names.v, back_names.n, sizeof(name_pair), pair_cmp);
                if (hit) rep = hit->cuda;
            }
            if (rep) ut_buf_puts(&b, rep);
            else ut_buf_append(&b, t + i, j - i);
            i = j;
            continue;
        }
        ut_buf_putc(&b, t[i++]);
    }
    pthread_mutex_unlock(&back_lock);
    *out_len = b.len;
    return ut_buf_take(&b);
}

void *an_c_parse_tu(an_c *cc, const an_catalog *cat, const an_source *src, void **file) {
    const char *lwhy = NULL;
    *file = NULL;
    if (!ensure_index(cc, &lwhy)) return NULL;
    an_cargs s;
    an_c_options o = cc->opt;
    o.launch_calls = true; /* the launches' callees resolve (template arguments deduced at a launch) */
    an_cargs_build(&o, cat, src->path, src->text, src->len, &s);
    struct CXUnsavedFile uf[AN_CARGS_MAX_UNSAVED];
    unsigned nuf = (unsigned)an_cargs_unsaved(&s, src->text, src->len, uf);
    CXTranslationUnit tu = NULL;
    unsigned flags = CXTranslationUnit_KeepGoing | CXTranslationUnit_DetailedPreprocessingRecord;
    enum CXErrorCode ec = CL(clang_parseTranslationUnit2)(cc->index, s.main_path, (const char *const *)s.args.items,
                                                         (int)s.args.len, uf, nuf, flags, &tu);
    if (ec == CXError_Success && tu) *file = CL(clang_getFile)(tu, s.main_path);
    if (tu && !*file) CL(clang_disposeTranslationUnit)(tu), tu = NULL;
    an_cargs_free(&s);
    return tu;
}

void an_c_tu_free(void *tu) {
    if (tu) CL(clang_disposeTranslationUnit)((CXTranslationUnit)tu);
}

int an_c_parse_errors(an_c *cc, const an_catalog *cat, const an_source *src0) {
    return an_c_error_lines(cc, cat, src0, NULL, NULL);
}

int an_c_error_lines(an_c *cc, const an_catalog *cat, const an_source *src0, an_c_lines *parse, an_c_lines *all) {
    const char *lwhy = NULL;
    if (!ensure_index(cc, &lwhy)) return -1;
    size_t blen;
    char *btext = cuda_names_back(cat, src0->text, src0->len, &blen);
    an_source srcb;
    an_source_init_mem(&srcb, src0->path, btext ? btext : "", btext ? blen : 0);
    const an_source *src = &srcb;
    an_cargs s;
    an_cargs_build(&cc->opt, cat, src->path, src->text, src->len, &s);
    struct CXUnsavedFile uf[AN_CARGS_MAX_UNSAVED];
    unsigned nuf = (unsigned)an_cargs_unsaved(&s, src->text, src->len, uf);
    CXTranslationUnit tu = NULL;
    int n = -1;
    enum CXErrorCode ec = CL(clang_parseTranslationUnit2)(cc->index, s.main_path, (const char *const *)s.args.items,
                                                         (int)s.args.len, uf, nuf, CXTranslationUnit_KeepGoing, &tu);
    if (ec == CXError_Success && tu) {
        CXFile file = CL(clang_getFile)(tu, s.main_path);
        n = 0;
        unsigned nd = CL(clang_getNumDiagnostics)(tu);
        for (unsigned i = 0; i < nd; i++) {
            CXDiagnostic d = CL(clang_getDiagnostic)(tu, i);
            if (CL(clang_getDiagnosticSeverity)(d) >= CXDiagnostic_Error) {
                CXFile f;
                unsigned line = 0;
                CL(clang_getExpansionLocation)(CL(clang_getDiagnosticLocation)(d), &f, &line, NULL, NULL);
                if (f == file) {
                    char *cat_text = an_clang_take(CL(clang_getDiagnosticCategoryText)(d));
                    if (cat_text && !strcmp(cat_text, "Parse Issue")) {
                        n++;
                        if (parse) ut_vec_push(parse, (int)line);
                    }
                    if (all) ut_vec_push(all, (int)line);
                    ut_free(cat_text);
                }
            }
            CL(clang_disposeDiagnostic)(d);
        }
        CL(clang_disposeTranslationUnit)(tu);
    }
    an_cargs_free(&s);
    an_source_free(&srcb);
    ut_free(btext);
    return n;
}

bool an_c_analyze(an_c *cc, const an_catalog *cat, const an_source *src, const bool *en, an_diag_list *out,
                  char **why) {
    const char *lwhy = NULL;
    if (!ensure_index(cc, &lwhy)) {
        if (why) {
            ut_buf b;
            ut_buf_init(&b);
            ut_buf_printf(&b, "%s; C, C++ and CUDA files are not analyzed", lwhy ? lwhy : "libclang cannot be used");
            *why = ut_buf_take(&b);
        }
        return false;
    }
    bool ok = false;
    an_cargs s;
    an_c_options o = cc->opt;
    o.launch_calls = true; /* as the kernel translator's parse: check's XPC517 findings are fix's */
    an_cargs_build(&o, cat, src->path, src->text, src->len, &s);
    struct CXUnsavedFile uf[AN_CARGS_MAX_UNSAVED];
    unsigned nuf = (unsigned)an_cargs_unsaved(&s, src->text, src->len, uf);
    ctx c = {0};
    c.c = cc, c.cat = cat, c.src = src, c.enabled = en, c.precise = s.precise;
    an_diag_list mine = {0};
    c.out = &mine;
    ut_buf_init(&c.tmp);
    unsigned flags = CXTranslationUnit_KeepGoing | CXTranslationUnit_DetailedPreprocessingRecord;
    enum CXErrorCode ec = CL(clang_parseTranslationUnit2)(cc->index, s.main_path, (const char *const *)s.args.items,
                                                         (int)s.args.len, uf, nuf, flags, &c.tu);
    if (ec != CXError_Success || !c.tu) {
        if (why) {
            ut_buf b;
            ut_buf_init(&b);
            ut_buf_printf(&b, "libclang could not parse this file (error %d); not analyzed", (int)ec);
            *why = ut_buf_take(&b);
        }
        goto done;
    }
    c.file = CL(clang_getFile)(c.tu, s.main_path);
    if (!c.file) {
        if (why) *why = ut_strdup("libclang lost the file; not analyzed");
        goto done;
    }
    ok = true;
    tokenize(&c);
    collect_declared(&c);
    build_mask(&c);
    scan_directives(&c);
    scan_identifiers(&c);
    scan_includes(&c);
    scan_launches(&c);
    scan_error_macros(&c);
    scan_patterns(&c);
    scan_untranslatable(&c);
    report_parse_error(&c);
    /* suppression comments (`// xpuify: ignore[...]`) */
    an_suppressions sup = {0};
    for (size_t i = 0; i < c.comments.len; i++) {
        const char *t = src->text + c.comments.items[i].s;
        an_suppress_add_comment(&sup, src, c.comments.items[i].s, c.comments.items[i].e, t[1] == '*' ? "/*" : "//");
    }
    an_suppress_finish(&sup, src, NULL);
    for (size_t i = 0; i < mine.len; i++) {
        an_diag *d = &mine.items[i];
        an_diag_locate(d, src);
        if (sup.items.len && !(d->rule->builtin && !strcmp(d->rule->builtin, "c-parse-error")) && an_suppress_hides(&sup, d)) {
            ut_free(d->message);
            an_fix_free(d->fix);
            continue;
        }
        ut_vec_push(out, *d);
    }
    an_suppress_free(&sup);
    an_diag_list_sort(out);
    if (c.rule_error && why && !*why) *why = c.rule_error, c.rule_error = NULL;
done:
    ut_free(c.rule_error);
    ut_vec_free(&mine);
    if (c.tu) CL(clang_disposeTranslationUnit)(c.tu);
    ut_vec_free(&c.toks);
    ut_vec_free(&c.dirs);
    ut_vec_free(&c.dead);
    ut_vec_free(&c.agnostic);
    ut_vec_free(&c.comments);
    ut_free(c.masked);
    ut_free(c.masked_comments);
    for (size_t i = 0; i < c.declared.len; i++) ut_free(c.declared.items[i]);
    ut_vec_free(&c.declared);
    ut_vec_free(&c.redeclared);
    ut_buf_free(&c.tmp);
    an_cargs_free(&s);
    return ok;
}
