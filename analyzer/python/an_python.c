/* an_python: the Python front end (tree-sitter + tree-sitter-python). */
#include "analyzer/python/an_python.h"
#include "util/ut_find.h"
#include "analyzer/python/an_pyfield.h"
#include "analyzer/python/an_pynest.h"
#include "analyzer/core/an_message.h"
#include "analyzer/python/an_context.h"
#include "analyzer/python/an_dispatch.h"
#include "analyzer/python/an_flow.h"
#include "analyzer/python/an_query.h"
#include "analyzer/python/an_pyfix.h"
#include "analyzer/python/an_pyregion.h"
#include "analyzer/python/an_resolve.h"
#include "analyzer/core/an_suppress.h"
#include <ctype.h>
#include <strings.h>
#include <stdio.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);

struct an_python {
    TSParser *parser;
    const TSLanguage *lang;
    TSSymbol s_attribute, s_identifier, s_import_from, s_if, s_conditional, s_comment, s_error, s_dotted_name,
        s_keyword_argument, s_function_definition, s_class_definition, s_parameters, s_default_parameter,
        s_typed_parameter, s_typed_default_parameter, s_lambda_parameters, s_aliased_import, s_global, s_nonlocal,
        s_assignment, s_augmented_assignment, s_import_statement, s_try;
    TSFieldId f_object, f_left, f_name, f_module_name, f_condition;
};

typedef struct { uint32_t start, end; } range;

/* A scope the context facts leave as CUDA by design, where a finding was left out for it: XPU812 says so once per
 * scope, at `at`, and carries the scope in the report (as XPU810 and XPU811 do). */
struct design_scope {
    uint32_t start, end;     /* the scope left as it is */
    uint32_t at_start, at_end; /* where the finding goes: the test, the backend's name, the scope's first line */
    char *why;               /* the reason, a phrase */
};

typedef struct {
    an_python *py;
    const an_catalog *cat;
    const an_source *src;
    const bool *enabled;
    an_pyscope scope;
    an_pynodes nodes; /* the tree's nodes in cursor order, built once: every collector reads them */
    an_diag_list *out;
    UT_VEC(range) errors;   /* syntax-error regions */
    UT_VEC(range) agnostic; /* if/conditional expressions that already branch on XPU or torch.accelerator */
    UT_VEC(range) cuda_guarded;     /* bodies of `if DEV == "cuda":` and the like */
    UT_VEC(range) cuda_guard_conds; /* their conditions */
    UT_VEC(range) try_bodies;       /* bodies of try statements */
    UT_VEC(range) cuda_branches;    /* bodies of `if x.device.type == "cuda":` that have an else branch */
    UT_VEC(struct design_scope) design; /* what findings were left out of as CUDA by design (XPU812) */
    uint32_t lo, hi;                /* the region walked and queried (everything: 0, UINT32_MAX) */
    const an_span_vec *only;        /* when not NULL: walk and query these statements only (query_ranges) */
    const an_span *spans;           /* the ranges the tree was parsed from (an_pyrun.spans) */
    size_t nspans;
    ut_buf tmp;
    bool compat;       /* fixes target the device helper: messages name the helper's function */
    bool too_deep;     /* the tree is nested deeper than AN_PY_MAX_DEPTH: the file is not analyzed */
    uint32_t deep_at;  /* where the walk passed that depth */
    /* the last query finding's rule, reported text and message: the next with the same two copies the message */
    const an_rule *memo_rule;
    char *memo_text, *memo_msg;
} ctx;

/* Deeper syntax trees are not analyzed (one XPU001 finding says so). CPython compiles nothing nested much deeper
 * than 3000 levels (its compiler's recursion limit; 200 levels of brackets, 100 of indentation), which is about
 * 3000 tree levels; only `a and b and ...` chains compile at any length. Beyond this depth tree-sitter's query
 * cursor and node API cost grows with the square of the depth. */
#ifndef AN_PY_MAX_DEPTH
#define AN_PY_MAX_DEPTH 4000
#endif

static TSSymbol sym(const TSLanguage *l, const char *name) {
    return ts_language_symbol_for_name(l, name, (uint32_t)strlen(name), true);
}

an_python *an_python_new(void) {
    an_python *py = ut_calloc(1, sizeof *py);
    py->lang = tree_sitter_python();
    py->parser = ts_parser_new();
    ts_parser_set_language(py->parser, py->lang);
    const TSLanguage *l = py->lang;
    py->s_attribute = sym(l, "attribute");
    py->s_identifier = sym(l, "identifier");
    py->s_import_from = sym(l, "import_from_statement");
    py->s_import_statement = sym(l, "import_statement");
    py->s_if = sym(l, "if_statement");
    py->s_try = sym(l, "try_statement");
    py->s_conditional = sym(l, "conditional_expression");
    py->s_comment = sym(l, "comment");
    py->s_error = (TSSymbol)-1; /* tree-sitter's ERROR symbol */
    py->s_dotted_name = sym(l, "dotted_name");
    py->s_keyword_argument = sym(l, "keyword_argument");
    py->s_function_definition = sym(l, "function_definition");
    py->s_class_definition = sym(l, "class_definition");
    py->s_parameters = sym(l, "parameters");
    py->s_default_parameter = sym(l, "default_parameter");
    py->s_typed_parameter = sym(l, "typed_parameter");
    py->s_typed_default_parameter = sym(l, "typed_default_parameter");
    py->s_lambda_parameters = sym(l, "lambda_parameters");
    py->s_aliased_import = sym(l, "aliased_import");
    py->s_global = sym(l, "global_statement");
    py->s_nonlocal = sym(l, "nonlocal_statement");
    py->s_assignment = sym(l, "assignment");
    py->s_augmented_assignment = sym(l, "augmented_assignment");
    py->f_object = ts_language_field_id_for_name(l, "object", 6);
    py->f_left = ts_language_field_id_for_name(l, "left", 4);
    py->f_name = ts_language_field_id_for_name(l, "name", 4);
    py->f_module_name = ts_language_field_id_for_name(l, "module_name", 11);
    py->f_condition = ts_language_field_id_for_name(l, "condition", 9);
    return py;
}

void an_python_free(an_python *py) {
    if (!py) return;
    ts_parser_delete(py->parser);
    ut_free(py);
}

static bool enabled(const ctx *c, const an_rule *r) { return !c->enabled || c->enabled[r->index]; }

static an_diag *emit(ctx *c, const an_rule *r, uint32_t start, uint32_t end, char *message) {
    an_diag d = {0};
    d.rule = r;
    d.origin = r->builtin ? AN_ORIGIN_BUILTIN : r->query ? AN_ORIGIN_QUERY : AN_ORIGIN_REF;
    d.start = start;
    d.end = end;
    d.message = message;
    ut_vec_push(c->out, d);
    return &c->out->items[c->out->len - 1];
}

/* The message's replacement: the upstream API, or under the compat target the device helper's function (which runs
 * on every torch the helper supports, so no version is named). */
static an_message_vars entry_vars(const ctx *c, const an_entry *e, const char *qual) {
    an_message_vars v = {qual, e->replacement, e->min_torch, NULL, e->note};
    if (c->compat && e->compat) v.replacement = e->compat, v.min_torch = NULL;
    return v;
}

static void emit_entry(ctx *c, const an_entry *e, const char *qual, TSNode n) {
    if (!enabled(c, e->rule) || e->ignore) return;
    an_message_vars v = entry_vars(c, e, qual);
    char *msg = an_message_format(e->message ? e->message : e->rule->message, &v);
    emit(c, e->rule, ts_node_start_byte(n), ts_node_end_byte(n), msg)->entry = e;
}

/* Longest exact prefix of the chain first, then a wildcard over the whole chain. */
static void check_chain(ctx *c, TSNode top) {
    ut_buf_clear(&c->tmp);
    if (!an_pyscope_qualname(&c->scope, top, c->src->text, &c->tmp)) return;
    char *q = c->tmp.data;
    size_t len = c->tmp.len;
    TSNode n = top;
    for (;;) {
        const an_entry *e = an_catalog_lookup(c->cat, q, true);
        if (e) { emit_entry(c, e, q, n); return; }
        if (ts_node_symbol(n) != c->py->s_attribute) break;
        char *dot = strrchr(q, '.');
        if (!dot) break;
        *dot = 0;
        n = an_py_field(n, "object", 6);
        if (!strchr(q, '.')) break; /* a bare root name is never an API */
    }
    q[len] = 0;
    for (size_t i = 0; i < len; i++)
        if (!q[i]) q[i] = '.';
    const an_entry *e = an_catalog_lookup(c->cat, q, false);
    if (e) emit_entry(c, e, q, top);
}

static void check_identifier(ctx *c, TSNode n) {
    const char *s = c->src->text + ts_node_start_byte(n);
    size_t len = ts_node_end_byte(n) - ts_node_start_byte(n);
    /* a name right after a dot is an attribute that error recovery left outside an attribute node
     * (`def d(h:m:.device_count)`): never a free name. Reporting it made the fixer loop, replacing
     * `device_count` with `torch.accelerator.device_count` pass after pass (found by fz_python). */
    for (const char *p = s; p > c->src->text;) {
        char ch = *--p;
        if (ch == ' ' || ch == '\t') continue;
        if (ch == '.') return;
        break;
    }
    bool bound;
    const char *q = an_pyscope_lookup(&c->scope, s, len, &bound);
    if (q) {
        if (an_pyscope_shadowed(&c->scope, n, c->src->text)) return;
        /* a bare module object (`ipex` after `import intel_extension_for_pytorch as ipex`) is not an API use */
        for (size_t i = 0; i < c->scope.bindings.len; i++) {
            const an_binding *b = &c->scope.bindings.items[i];
            if (b->module && strlen(b->local) == len && !memcmp(b->local, s, len)) return;
        }
        const an_entry *e = an_catalog_lookup(c->cat, q, false);
        if (e) emit_entry(c, e, q, n);
        return;
    }
    if (bound) return;
    for (size_t i = 0; i < c->scope.stars.len; i++) {
        ut_buf_clear(&c->tmp);
        ut_buf_printf(&c->tmp, "%s.%.*s", c->scope.stars.items[i], (int)len, s);
        const an_entry *e = an_catalog_lookup(c->cat, c->tmp.data, true);
        if (e) { emit_entry(c, e, c->tmp.data, n); return; }
    }
}

/* `from torch.cuda.amp import GradScaler`, `import torch.cuda.amp as amp`: each imported name in a table. */
static void check_import_from(ctx *c, TSNode st) {
    for (size_t i = 0; i < c->scope.bindings.len; i++) {
        const an_binding *b = &c->scope.bindings.items[i];
        if (b->start < ts_node_start_byte(st) || b->end > ts_node_end_byte(st)) continue;
        bool bound;
        /* a fallback import of a name that is also imported from elsewhere is a compatibility shim */
        if (b->in_fallback) {
            const char *primary = an_pyscope_lookup(&c->scope, b->local, strlen(b->local), &bound);
            if (!primary || strcmp(primary, b->qual)) continue;
        }
        const an_entry *e = an_catalog_lookup(c->cat, b->qual, true);
        if (e) {
            if (!enabled(c, e->rule) || e->ignore) continue;
            an_message_vars v = entry_vars(c, e, b->qual);
            char *msg = an_message_format(e->message ? e->message : e->rule->message, &v);
            an_diag *d = emit(c, e->rule, b->start, b->end, msg);
            d->entry = e;
            d->origin = AN_ORIGIN_IMPORT;
        }
    }
}

static bool word_at(const char *s, size_t n, size_t i, size_t wl) {
    bool l = i == 0 || !(isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_');
    bool r = i + wl >= n || !(isalnum((unsigned char)s[i + wl]) || s[i + wl] == '_');
    return l && r;
}

static bool mentions_agnostic(const char *s, size_t n) { return an_py_mentions_agnostic(s, n); }

static bool mentions_name(const char *s, size_t n, char *const *names, size_t k) {
    for (size_t j = 0; j < k; j++) {
        size_t wl = strlen(names[j]);
        for (const char *p = s; (p = ut_memmem(p, n - (size_t)(p - s), names[j], wl)); p++)
            if (word_at(s, n, (size_t)(p - s), wl)) return true;
    }
    return false;
}

/* one of the NULL-ended pats occurs in s[0..n) */
static bool contains_any(const char *s, size_t n, const char *const *pats) {
    for (int i = 0; pats[i]; i++)
        if (ut_memmem(s, n, pats[i], strlen(pats[i]))) return true;
    return false;
}

/* `x.device.type == "cuda"` or `x.is_cuda`: a branch for CUDA devices (not an availability test) */
static bool mentions_cuda_device_test(const char *s, size_t n) {
    static const char *const pats[] = {"== \"cuda\"", "== 'cuda'", "\"cuda\" ==", "'cuda' ==", "is_cuda",
                                       "startswith(\"cuda", "startswith('cuda", NULL};
    return contains_any(s, n, pats);
}

/* A condition that limits its branch to CUDA: `DEV == "cuda"`, `x.device.type == 'cuda'`, torch.cuda.is_available(),
 * `str(dev).startswith("cuda")` */
static bool mentions_cuda_guard(const char *s, size_t n) {
    static const char *const more[] = {"==\"cuda\"", "=='cuda'", "cuda.is_available()", NULL};
    return mentions_cuda_device_test(s, n) || contains_any(s, n, more);
}

/* `"CUDA"` (any case) as a string, `.CUDA` as an attribute (an enum's member), `is_cuda_available` */
static bool asks_cuda_kind(const char *s, size_t n) {
    for (size_t i = 0; i + 4 <= n; i++) {
        if (strncasecmp(s + i, "cuda", 4)) continue;
        char l = i ? s[i - 1] : 0, r = i + 4 < n ? s[i + 4] : 0;
        if ((l == '"' || l == '\'') && r == l) return true;
        if (l == '.' && !strncmp(s + i, "CUDA", 4) && !(isalnum((unsigned char)r) || r == '_')) return true;
    }
    return ut_memmem(s, n, "is_cuda_available", 17) != NULL;
}

/* s[0..n) names XPU outside list and set displays: `torch.xpu.is_available()`, `device.type == "xpu"`, `prefer_xpu`;
 * not `distributed_type in [MULTI_GPU, MULTI_XPU]`, which lists device kinds without probing one (accelerate's
 * distributed ladder beside a `device.type == "cuda"` test) */
static bool probes_xpu(const char *s, size_t n) {
    char *t = ut_malloc(n + 1);
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '[' || s[i] == '{') depth++;
        t[i] = depth ? ' ' : s[i];
        if ((s[i] == ']' || s[i] == '}') && depth) depth--;
    }
    bool r = mentions_agnostic(t, n);
    ut_free(t);
    return r;
}

/* the indentation (columns) of the line [a, b), and whether it holds code (not blank, not only a comment) */
static uint32_t indent_of(const char *t, uint32_t a, uint32_t b, bool *code) {
    uint32_t k = a;
    while (k < b && (t[k] == ' ' || t[k] == '\t')) k++;
    *code = k < b && t[k] != '#' && t[k] != '\r';
    return k - a;
}

static bool head_is(const char *p, size_t n, const char *kw) {
    size_t kl = strlen(kw);
    return n > kl && !memcmp(p, kw, kl) && (p[kl] == ' ' || p[kl] == '(' || p[kl] == ':');
}

#define SIBLING_SPAN 6    /* statements of the block on either side of the if that are read */
#define SIBLING_LINES 400 /* lines read on either side */

/* An if chain of the block that holds the if statement starting at s, other than that statement's own chain,
 * within SIBLING_SPAN statements of it, whose conditions probe XPU and name no CUDA (a chain with both is a dispatch
 * of its own): `if prefer_xpu: return "xpu"` before `if torch.cuda.is_available(): return "cuda"`, or `xpu =
 * getattr(torch, "xpu", None); if xpu is not None and xpu.is_available(): ...` after it. Read from the text: check
 * parses only the statements that can hold a finding, so the sibling may be no node of the tree. */
static bool xpu_sibling_if(const char *t, size_t n, uint32_t s) {
    uint32_t ls = s;
    while (ls > 0 && t[ls - 1] != '\n') ls--;
    bool code;
    uint32_t ind = indent_of(t, ls, s, &code);
    uint32_t first = ls; /* the block's first line: back to a code line with less indentation */
    for (int k = 0; k < SIBLING_LINES && first > 0; k++) {
        uint32_t b = first - 1, a = b;
        while (a > 0 && t[a - 1] != '\n') a--;
        if (indent_of(t, a, b, &code) < ind && code) break;
        first = a;
    }
    struct { int stmt; bool xpu, cuda; } ch[2 * SIBLING_LINES];
    /* each chain's conditions, read once the own statement is known: only those of the chains within
     * SIBLING_SPAN statements of it are looked into (a block of a thousand ifs read 260 conditions for each) */
    struct { int chain; const char *s; size_t n; } cond[2 * SIBLING_LINES];
    int nch = 0, ncond = 0, stmt = -1, own = -1, after = 0;
    bool in_cond = false; /* reading a condition as far as its colon */
    const char *cs = NULL; /* where it starts */
    for (uint32_t at = first; at < n;) {
        uint32_t b = at;
        while (b < n && t[b] != '\n') b++;
        uint32_t col = indent_of(t, at, b, &code);
        if (at > ls && (code && col < ind)) break; /* the block ends */
        if (at > ls && ++after > SIBLING_LINES) break;
        const char *p = t + at + col;
        size_t pl = 0;
        for (char q = 0; pl < b - at - col && (q || p[pl] != '#'); pl++) /* without its comment */
            if (p[pl] == '"' || p[pl] == '\'') q = !q ? p[pl] : q == p[pl] ? 0 : q;
        while (pl && (p[pl - 1] == ' ' || p[pl - 1] == '\t' || p[pl - 1] == '\r')) pl--;
        if (code && col == ind && !in_cond) {
            bool cont = head_is(p, pl, "elif") || head_is(p, pl, "else");
            if (!cont || !nch || ch[nch - 1].stmt != stmt) {
                stmt++;
                if (own >= 0 && stmt > own + SIBLING_SPAN) break; /* no chain from here on is read */
                if (at == ls) own = stmt;
                if (head_is(p, pl, "if") && nch < (int)(sizeof ch / sizeof *ch))
                    ch[nch].stmt = stmt, ch[nch].xpu = ch[nch].cuda = false, nch++, in_cond = true;
            } else {
                in_cond = !head_is(p, pl, "else");
            }
        }
        if (in_cond) { /* the condition, over its lines as far as its colon, read as one text (a list display may
                        * span lines) */
            if (!cs) cs = p;
            in_cond = !(pl && p[pl - 1] == ':');
            if (!in_cond) {
                size_t cl = (size_t)(p + pl - cs);
                if (ncond < (int)(sizeof cond / sizeof *cond)) {
                    cond[ncond].chain = nch - 1, cond[ncond].s = cs, cond[ncond].n = cl, ncond++;
                } else {
                    ch[nch - 1].xpu |= probes_xpu(cs, cl);
                    ch[nch - 1].cuda |= an_py_word_part(cs, cl, "cuda");
                }
                cs = NULL;
            }
        }
        if (b >= n) break;
        at = b + 1;
    }
    if (own < 0) return false;
    for (int i = 0; i < ncond; i++) {
        int k = cond[i].chain;
        if (ch[k].stmt == own || abs(ch[k].stmt - own) > SIBLING_SPAN) continue;
        ch[k].xpu |= probes_xpu(cond[i].s, cond[i].n);
        ch[k].cuda |= an_py_word_part(cond[i].s, cond[i].n, "cuda");
    }
    for (int i = 0; i < nch; i++)
        if (ch[i].stmt != own && ch[i].xpu && !ch[i].cuda && abs(ch[i].stmt - own) <= SIBLING_SPAN) return true;
    return false;
}

/* An if-chain or conditional expression whose conditions already consider XPU or torch.accelerator is
 * device-agnostic code: nothing inside it is reported. */
static void check_agnostic(ctx *c, TSNode n, bool is_if) {
    const char *src = c->src->text;
    bool hit = false;
    if (is_if) {
        uint32_t cnt = ts_node_named_child_count(n);
        TSNode cond = an_py_field(n, "condition", 9);
        if (!ts_node_is_null(cond)) {
            const char *cs = src + ts_node_start_byte(cond);
            size_t cn = ts_node_end_byte(cond) - ts_node_start_byte(cond);
            hit = mentions_agnostic(cs, cn) || mentions_name(cs, cn, c->scope.agnostic_names.items, c->scope.agnostic_names.len);
            /* `if x.device.type == "cuda": ... else: ...`: the CUDA branch of code that handles other devices */
            TSNode alt = an_py_field(n, "alternative", 11);
            TSNode body = an_py_field(n, "consequence", 11);
            if (!hit && !ts_node_is_null(alt) && !ts_node_is_null(body) && mentions_cuda_device_test(cs, cn)) {
                range r = {ts_node_start_byte(body), ts_node_end_byte(body)};
                ut_vec_push(&c->cuda_branches, r);
            }
        }
        for (uint32_t i = 0; i < cnt && !hit; i++) {
            TSNode ch = ts_node_named_child(n, i);
            if (strcmp(ts_node_type(ch), "elif_clause")) continue;
            TSNode ec = an_py_field(ch, "condition", 9);
            if (!ts_node_is_null(ec))
                hit = mentions_agnostic(src + ts_node_start_byte(ec), ts_node_end_byte(ec) - ts_node_start_byte(ec));
        }
    } else {
        hit = mentions_agnostic(src + ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
    }
    /* additive code written as sibling ifs of one block: `if cuda: ...` and, before or after it, `if xpu: ...`
     * (a probe sequence that returns at the first device found, in either order: diffusers' print_env.py, unsloth's
     * hardware detection) */
    if (is_if && !hit) {
        TSNode cond = an_py_field(n, "condition", 9);
        /* the test is a CUDA guard, or asks for the CUDA device kind otherwise (`_device_is(dev, DeviceType,
         * "CUDA")`, `device == DeviceType.CUDA`, accelerate's `is_cuda_available()`) */
        if (!ts_node_is_null(cond) &&
            (mentions_cuda_guard(src + ts_node_start_byte(cond), ts_node_end_byte(cond) - ts_node_start_byte(cond)) ||
             asks_cuda_kind(src + ts_node_start_byte(cond), ts_node_end_byte(cond) - ts_node_start_byte(cond))))
            hit = xpu_sibling_if(src, c->src->len, ts_node_start_byte(n));
    }
    if (hit) {
        range r = {ts_node_start_byte(n), ts_node_end_byte(n)};
        ut_vec_push(&c->agnostic, r);
    }
    /* `if DEV == "cuda": torch.cuda.ipc_collect()`: the body is CUDA-only by design */
    if (is_if && !hit) {
        TSNode cond = an_py_field(n, "condition", 9);
        TSNode body = an_py_field(n, "consequence", 11);
        if (!ts_node_is_null(cond) && !ts_node_is_null(body) &&
            mentions_cuda_guard(src + ts_node_start_byte(cond), ts_node_end_byte(cond) - ts_node_start_byte(cond))) {
            range r = {ts_node_start_byte(body), ts_node_end_byte(body)};
            ut_vec_push(&c->cuda_guarded, r);
            range cr = {ts_node_start_byte(cond), ts_node_end_byte(cond)};
            ut_vec_push(&c->cuda_guard_conds, cr);
        }
    }
}

static bool skip_identifier(const an_python *py, TSSymbol parent, TSFieldId field) {
    if (parent == py->s_attribute || parent == py->s_dotted_name || parent == py->s_aliased_import) return true;
    if (parent == py->s_parameters || parent == py->s_lambda_parameters || parent == py->s_typed_parameter) return true;
    if (parent == py->s_global || parent == py->s_nonlocal) return true;
    if (field == py->f_name &&
        (parent == py->s_keyword_argument || parent == py->s_function_definition ||
         parent == py->s_class_definition || parent == py->s_default_parameter ||
         parent == py->s_typed_default_parameter))
        return true;
    if (field == py->f_left && (parent == py->s_assignment || parent == py->s_augmented_assignment)) return true;
    return false;
}

static bool within(const an_span_vec *v, uint32_t a, uint32_t b);

static void walk(ctx *c, const an_pynodes *nodes) {
    an_python *py = c->py;
    /* the symbols of the open ancestors, by depth: parents[d] is the symbol of the node at depth d above */
    TSSymbol *parents = ut_malloc((AN_PY_MAX_DEPTH + 2) * sizeof(TSSymbol));
    /* the nodes before inside_until lie inside a node found wholly inside the region: not tested again (only in a
     * tree without errors: a MISSING node has no width, and one at a span's start does not meet the span) */
    uint32_t inside_until = 0;
    bool clean = nodes->len && !ts_node_has_error(nodes->items[0].node);
    for (uint32_t i = 0; i < nodes->len;) {
        const an_pynode *p = &nodes->items[i];
        TSNode n = p->node;
        TSSymbol s = p->sym;
        TSSymbol parent = p->depth ? parents[p->depth - 1] : 0;
        TSFieldId field = p->field;
        bool descend = true, outside = false;
        if (i >= inside_until) {
            uint32_t sb = ts_node_start_byte(n), eb = ts_node_end_byte(n);
            outside = eb <= c->lo || sb >= c->hi || (c->only && !an_spans_meet(c->only, sb, eb));
            if (clean && !outside && sb >= c->lo && eb <= c->hi && (!c->only || within(c->only, sb, eb)))
                inside_until = p->next;
        }
        if (outside) {
            descend = false; /* outside the region being re-analyzed, or the statements that can hold a finding */
        } else if (s == py->s_attribute) {
            if (!(parent == py->s_attribute && field == py->f_object)) check_chain(c, n);
        } else if (s == py->s_identifier) {
            if (!skip_identifier(py, parent, field)) check_identifier(c, n);
        } else if (s == py->s_import_from) {
            check_import_from(c, n);
            descend = false;
        } else if (s == py->s_import_statement) {
            check_import_from(c, n); /* only aliased imports bind a CUDA-only name: `import torch.cuda.amp as a` */
            descend = false;
        } else if (s == py->s_comment) {
            descend = false;
        } else if (s == py->s_if) {
            check_agnostic(c, n, true);
        } else if (s == py->s_try) {
            TSNode body = an_py_field(n, "body", 4);
            if (!ts_node_is_null(body)) {
                range r = {ts_node_start_byte(body), ts_node_end_byte(body)};
                ut_vec_push(&c->try_bodies, r);
            }
        } else if (s == py->s_conditional) {
            check_agnostic(c, n, false);
        }
        if (descend && p->next > i + 1) { /* into the first child */
            parents[p->depth] = s;
            if (p->depth + 1u > AN_PY_MAX_DEPTH) {
                c->too_deep = true;
                c->deep_at = ts_node_start_byte(nodes->items[i + 1].node);
                break;
            }
            i++;
            continue;
        }
        i = p->next;
    }
    ut_free(parents);
}

/* The outermost ERROR and MISSING nodes, in document order. A tree cursor, not recursion: the tree of a file can
 * be nested as deep as the file is long. */
static void collect_errors(ctx *c, TSNode root) {
    if (!ts_node_has_error(root)) return;
    TSTreeCursor cur = ts_tree_cursor_new(root);
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&cur);
        bool descend = false;
        if (ts_node_symbol(n) == (TSSymbol)-1 || ts_node_is_missing(n)) {
            range r = {ts_node_start_byte(n), ts_node_end_byte(n)};
            ut_vec_push(&c->errors, r);
        } else {
            descend = ts_node_has_error(n);
        }
        if (descend && ts_tree_cursor_goto_first_child(&cur)) continue;
        while (!ts_tree_cursor_goto_next_sibling(&cur))
            if (!ts_tree_cursor_goto_parent(&cur)) goto done;
    }
done:
    ts_tree_cursor_delete(&cur);
}

/* n bytes of s cut to at most max without splitting a UTF-8 sequence (messages quote source text) */
static uint32_t utf8_clip(const char *s, uint32_t n, uint32_t max) {
    if (n <= max) return n;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    return n;
}

static const an_rule *syntax_error_rule(const ctx *c) {
    const an_rule *r = NULL;
    for (size_t i = 0; i < an_catalog_count(c->cat); i++) {
        const an_rule *x = an_catalog_rule(c->cat, i);
        if (x->lang == AN_LANG_PYTHON && x->builtin && !strcmp(x->builtin, "syntax-error")) r = x;
    }
    return r && enabled(c, r) ? r : NULL;
}

static void report_too_deep(ctx *c) {
    const an_rule *r = syntax_error_rule(c);
    if (!r) return;
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_printf(&b, "the syntax tree is nested more than %d levels deep here, deeper than CPython compiles; "
                      "the file is not analyzed", AN_PY_MAX_DEPTH);
    an_message_vars v = {NULL, NULL, NULL, b.data, NULL};
    char *msg = an_message_format(r->message, &v);
    ut_buf_free(&b);
    uint32_t line, col, ls, le;
    an_source_position(c->src, c->deep_at, &line, &col);
    an_source_line_span(c->src, line, &ls, &le);
    emit(c, r, c->deep_at, le > c->deep_at ? le : c->deep_at, msg);
}

static void report_syntax_error(ctx *c, TSNode root) {
    const an_rule *r = syntax_error_rule(c);
    if (!r || !c->errors.len) return;
    (void)root;
    range e = c->errors.items[0];
    ut_buf b;
    ut_buf_init(&b);
    uint32_t s = e.start, end = e.end;
    if (s == end) {
        ut_buf_puts(&b, "syntax error: missing token");
    } else {
        uint32_t n = end - s;
        const char *t = c->src->text + s;
        const char *nl = memchr(t, '\n', n);
        if (nl) n = (uint32_t)(nl - t);
        n = utf8_clip(t, n, 40);
        ut_buf_printf(&b, "syntax error: cannot parse `%.*s`", (int)n, t);
    }
    if (c->errors.len > 1) ut_buf_printf(&b, " (and %zu more error regions)", c->errors.len - 1);
    ut_buf_puts(&b, "; findings inside the broken region are not reported");
    an_message_vars v = {NULL, NULL, NULL, b.data, NULL};
    char *msg = an_message_format(r->message, &v);
    ut_buf_free(&b);
    /* a one-line range keeps editors readable when the error region spans the rest of the file */
    uint32_t line, col, ls, le;
    an_source_position(c->src, s, &line, &col);
    an_source_line_span(c->src, line, &ls, &le);
    emit(c, r, s, end > le || end == s ? (le > s ? le : s) : end, msg);
}

static void on_query_match(void *vc, const an_rule *r, TSNode report) {
    ctx *c = vc;
    if (!enabled(c, r)) return;
    uint32_t a = ts_node_start_byte(report), b = ts_node_end_byte(report);
    uint32_t n = b - a;
    const char *t = c->src->text + a;
    const char *nl = memchr(t, '\n', n);
    if (nl) n = (uint32_t)(nl - t);
    n = utf8_clip(t, n, 60);
    if (c->memo_rule == r && strlen(c->memo_text) == n && !memcmp(c->memo_text, t, n)) {
        emit(c, r, a, b, ut_strdup(c->memo_msg));
        return;
    }
    char *text = ut_strndup(t, n);
    an_message_vars v = {NULL, NULL, r->min_torch, text, NULL};
    char *msg = an_message_format(r->message, &v);
    emit(c, r, a, b, msg);
    ut_free(c->memo_text), ut_free(c->memo_msg);
    c->memo_rule = r, c->memo_text = text, c->memo_msg = ut_strdup(msg);
}

static bool resolve_cb(void *vc, TSNode n, ut_buf *out) {
    ctx *c = vc;
    return an_pyscope_qualname(&c->scope, n, c->src->text, out);
}

/* ---- range sets: node ranges nest or are disjoint, so the outermost ones, sorted, answer by binary search ---- */

static int range_cmp(const void *a, const void *b) {
    const range *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end; /* the outer one first */
}

/* a sorted copy without the ranges that lie inside another */
static range *outermost(const range *rs, size_t n, size_t *out_n) {
    range *o = ut_malloc((n ? n : 1) * sizeof(range));
    if (n) memcpy(o, rs, n * sizeof(range));
    if (n > 1) qsort(o, n, sizeof(range), range_cmp);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (w && o[i].start >= o[w - 1].start && o[i].end <= o[w - 1].end) continue;
        o[w++] = o[i];
    }
    *out_n = w;
    return o;
}

/* index of the last range starting at or before s (n when none) */
static size_t last_at_or_before(const range *rs, size_t n, uint32_t s) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rs[mid].start <= s) lo = mid + 1;
        else hi = mid;
    }
    return lo ? lo - 1 : n;
}

/* [s, e) lies inside one of the outermost ranges rs */
static bool inside(const range *rs, size_t n, uint32_t s, uint32_t e) {
    size_t i = last_at_or_before(rs, n, s);
    return i < n && e <= rs[i].end;
}

/* [s, e) overlaps one of the outermost ranges rs (whose ends are sorted too) */
static bool overlaps(const range *rs, size_t n, uint32_t s, uint32_t e) {
    size_t lo = 0, hi = n; /* the first range ending after s */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rs[mid].end <= s) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && rs[lo].start < e;
}

/* A call the compat helper ports for every device (an entry of a cuda_guard_ok rule with a `compat` form that is
 * fixed there: `xpuify_device.memory_summary`, `ipc_collect`): a CUDA test around it does not make it CUDA-only by
 * design, so it is reported and fixed as outside one, and the test is judged like any other (an_guard). */
static bool helper_ports(const an_fix_options *fix, const an_diag *d) {
    const an_entry *e = d->entry;
    if (!fix || fix->target != AN_TARGET_COMPAT || !e || !e->compat) return false;
    return (e->has_compat_fix ? e->compat_fix : e->fix) != AN_FIX_NONE;
}

/* d lies in a branch whose test asks the device type (`if DEV == "cuda":`, the rule's own advice, followed), not
 * only whether CUDA is available (a test that XPU105 reports and judges) */
static bool device_type_guarded(const ctx *c, const an_diag_list *mine, const an_diag *d) {
    for (size_t k = 0; k < c->cuda_guarded.len; k++) {
        range body = c->cuda_guarded.items[k], cond = c->cuda_guard_conds.items[k];
        if (d->start < body.start || d->end > body.end) continue;
        bool availability = false;
        for (size_t j = an_diag_list_first_from(mine, cond.start); j < mine->len && mine->items[j].start < cond.end && !availability; j++)
            availability = mine->items[j].rule && mine->items[j].rule->guard_condition && mine->items[j].end <= cond.end;
        if (!availability) return true;
    }
    return false;
}


/* the dropped findings (no rule) out of v, keeping the others' order */
static void compact_dropped(an_diag_list *v) {
    size_t k = 0;
    for (size_t i = 0; i < v->len; i++)
        if (v->items[i].rule) v->items[k++] = v->items[i];
    v->len = k;
}

static bool supersedes(const an_rule *r, const char *code) {
    for (size_t i = 0; i < r->supersedes.len; i++)
        if (!strcmp(r->supersedes.items[i], code)) return true;
    return false;
}


/* ---- context facts (an_context.c) ------------------------------------------------------------------------- */

/* a name that is read, not called: `torch.backends.cudnn.benchmark` in `assert ... is False` (a call such as
 * `cudnn.version()` queries CUDA whatever surrounds it) */
static bool called(const an_source *src, uint32_t end) {
    while (end < src->len && (src->text[end] == ' ' || src->text[end] == '\t')) end++;
    return end < src->len && src->text[end] == '(';
}

/* ---- XPU812: CUDA by design, said once per scope ------------------------------------------------------------ */

/* the first non-blank byte at or after s, and the end of its line (not past e) */
static void first_line(const an_source *src, uint32_t s, uint32_t e, uint32_t *a, uint32_t *b) {
    for (;;) { /* blank lines and comment lines are no code */
        while (s < e && isspace((unsigned char)src->text[s])) s++;
        if (s >= e || src->text[s] != '#') break;
        while (s < e && src->text[s] != '\n') s++;
    }
    uint32_t t = s;
    char q = 0; /* a comment ends the line's code (not a # inside a string) */
    for (; t < e && src->text[t] != '\n' && (q || src->text[t] != '#'); t++)
        if (src->text[t] == '"' || src->text[t] == '\'') q = !q ? src->text[t] : q == src->text[t] ? 0 : q;
    while (t > s && isspace((unsigned char)src->text[t - 1])) t--;
    *a = s, *b = t;
}

/* one candidate (its why is copied); the first for a scope wins */
static void note_design(ctx *c, uint32_t s, uint32_t e, uint32_t at_s, uint32_t at_e, const char *why) {
    for (size_t i = c->design.len; i-- > 0;)
        if (c->design.items[i].start == s && c->design.items[i].end == e) return;
    if (at_e <= at_s) first_line(c->src, s, e, &at_s, &at_e);
    struct design_scope d = {s, e, at_s, at_e, ut_strdup(why ? why : "is CUDA by design")};
    ut_vec_push(&c->design, d);
}

/* the syntax node that spans exactly [s, e), or a null node */
static TSNode node_spanning(TSNode root, uint32_t s, uint32_t e) {
    TSNode n = ts_node_descendant_for_byte_range(root, s, e > s ? e - 1 : s);
    while (!ts_node_is_null(n) && (ts_node_start_byte(n) > s || ts_node_end_byte(n) < e)) n = ts_node_parent(n);
    return !ts_node_is_null(n) && ts_node_start_byte(n) == s && ts_node_end_byte(n) == e ? n : (TSNode){0};
}

/* a dispatch that already serves XPU (an if-chain or conditional expression: the `agnostic` ranges): at its test */
static void note_agnostic(ctx *c, TSNode root, range r) {
    TSNode n = node_spanning(root, r.start, r.end), cond = {0};
    if (!ts_node_is_null(n) && !strcmp(ts_node_type(n), "if_statement")) cond = ts_node_child_by_field_name(n, "condition", 9);
    uint32_t a = 0, b = 0;
    if (!ts_node_is_null(cond)) first_line(c->src, ts_node_start_byte(cond), ts_node_end_byte(cond), &a, &b);
    note_design(c, r.start, r.end, a, b, "heads a device dispatch that already has an XPU (or torch.accelerator) branch");
}

/* the CUDA branch of `if x.device.type == "cuda": ... else: ...` (the body range): at its test */
/* the test of the if statement whose branch spans r (null: none), and its first line in *a, *b */
static TSNode if_test_at(ctx *c, TSNode root, range r, uint32_t *a, uint32_t *b) {
    TSNode p = node_spanning(root, r.start, r.end);
    for (int up = 0; up < 4 && !ts_node_is_null(p) && strcmp(ts_node_type(p), "if_statement"); up++) p = ts_node_parent(p);
    TSNode cond = !ts_node_is_null(p) ? ts_node_child_by_field_name(p, "condition", 9) : (TSNode){0};
    *a = *b = 0;
    if (!ts_node_is_null(cond)) first_line(c->src, ts_node_start_byte(cond), ts_node_end_byte(cond), a, b);
    return cond;
}

static void note_cuda_branch(ctx *c, TSNode root, range r) {
    uint32_t a, b;
    if_test_at(c, root, r, &a, &b);
    note_design(c, r.start, r.end, a, b, "is the CUDA branch of a device test whose else branch serves the other devices");
}

/* the body of `if DEV == "cuda":` (a device-type test with no else branch), whose CUDA-only calls are left out: at
 * its test */
static void note_cuda_guarded(ctx *c, TSNode root, range r) {
    uint32_t a, b;
    TSNode cond = if_test_at(c, root, r, &a, &b);
    if (ts_node_is_null(cond)) return;
    const char *cs = c->src->text + ts_node_start_byte(cond);
    size_t cn = ts_node_end_byte(cond) - ts_node_start_byte(cond);
    /* a device-type test only: an availability test is XPU105's, whose guidance (add an XPU branch) stands */
    if (!mentions_cuda_device_test(cs, cn) || ut_memmem(cs, cn, "is_available", 12)) return;
    note_design(c, r.start, r.end, a, b, "is a device test whose branch runs only on CUDA devices");
}

/* "cuda" in any case (torch.cuda, CUDA_HOME, "cuda") */
static bool names_cuda(const char *s, size_t n) {
    for (size_t i = 0; i + 4 <= n; i++)
        if (!strncasecmp(s + i, "cuda", 4)) return true;
    return false;
}

/* the device helper that fix writes (xpuify_device.py): its own device table is no design finding */
static bool helper_file(const char *path) {
    const char *b = path ? strrchr(path, '/') : NULL;
    b = b ? b + 1 : path;
    return b && !strcmp(b, "xpuify_device.py");
}

/* the XPU812 findings of the candidates, into out (the design findings); frees the candidates. Not where XPU811
 * (a dispatch without an XPU branch) or XPU810 (a CUDA backend without an XPU sibling) speaks for the code. */
static void report_design(ctx *c, const an_dispatches *disp, const an_pycontext *cx, an_diag_list *out) {
    const an_rule *r = an_catalog_builtin(c->cat, "cuda-by-design");
    bool *skip = ut_calloc(c->design.len ? c->design.len : 1, sizeof(bool));
    for (size_t i = 0; i < c->design.len; i++) {
        struct design_scope *x = &c->design.items[i];
        bool other = false;
        for (size_t j = 0; j < disp->len && !other; j++)
            other = disp->items[j].branch_start < x->end && x->start < disp->items[j].branch_end;
        const an_ctx_fact *b = an_pycontext_find(cx, AN_CTX_CUDA_BACKEND, x->start, x->end);
        other |= b && !b->xpu_sibling;
        /* code with no CUDA in it (what fix writes: `torch.accelerator... if torch.accelerator.is_available() else
         * "cpu"`), and the device helper xpuify writes itself, are no CUDA code left as it is */
        other |= !names_cuda(c->src->text + x->start, x->end - x->start) || helper_file(c->src->path);
        skip[i] = other;
    }
    /* a scope inside another one reported is said by that one */
    for (size_t i = 0; i < c->design.len; i++)
        for (size_t j = 0; j < c->design.len && !skip[i]; j++) {
            const struct design_scope *x = &c->design.items[i], *y = &c->design.items[j];
            skip[i] = j != i && !skip[j] && y->start <= x->start && x->end <= y->end &&
                      (y->start < x->start || x->end < y->end || j < i);
        }
    for (size_t i = 0; i < c->design.len; i++) {
        struct design_scope *x = &c->design.items[i];
        if (r && enabled(c, r) && !skip[i] && x->at_start >= c->lo && x->at_start < c->hi) {
            const char *src = c->src->text;
            uint32_t tl = utf8_clip(src + x->at_start, x->at_end - x->at_start, 80);
            ut_buf b;
            ut_buf_init(&b);
            ut_buf_printf(&b, "`%.*s%s` %s: CUDA by design, left as it is (nothing to port here)",
                          (int)tl, src + x->at_start, tl < x->at_end - x->at_start ? "..." : "", x->why);
            an_message_vars mv = {NULL, NULL, NULL, b.data, NULL};
            an_diag d = {0};
            d.rule = r;
            d.origin = AN_ORIGIN_BUILTIN;
            d.start = x->at_start, d.end = x->at_end;
            d.scope_start = x->start, d.scope_end = x->end;
            d.message = an_message_format(r->message, &mv);
            ut_buf_free(&b);
            ut_vec_push(out, d);
        }
        ut_free(x->why);
    }
    ut_free(skip);
    c->design.len = 0;
}

/* A guard the fix computation found routing CUDA devices to a kernel the project compiles for the CPU and CUDA only
 * (an_pyfix: a guard finding with a scope, its message the reason): CUDA by design, said by XPU812 in its place (or
 * nothing where XPU812 is off), with no fix. */
static void design_guards(ctx *c, an_diag_list *mine) {
    const an_rule *r = an_catalog_builtin(c->cat, "cuda-by-design");
    for (size_t i = 0; i < mine->len; i++) {
        an_diag *d = &mine->items[i];
        if (!d->rule || !d->rule->guard_condition || !d->scope_end) continue;
        if (!r || !enabled(c, r)) {
            an_diag_drop(d);
            continue;
        }
        an_message_vars mv = {NULL, NULL, NULL, d->message, NULL};
        char *m = an_message_format(r->message, &mv);
        ut_free(d->message);
        d->message = m;
        d->rule = r;
        d->entry = NULL;
        d->origin = AN_ORIGIN_BUILTIN;
        if (d->fix) an_fix_free(d->fix), d->fix = NULL;
    }
    compact_dropped(mine);
}

/* The XPU spelling of a CUDA backend's name: CUDAAccelerator -> XPUAccelerator, cuda.py -> xpu.py. */
static char *xpu_name(const char *name) {
    size_t tok;
    if (!an_ctx_named_for_cuda(name, strlen(name), &tok)) return NULL;
    ut_buf b;
    ut_buf_init(&b);
    const char *w = !memcmp(name + tok, "CUDA", 4) ? "XPU" : !memcmp(name + tok, "Cuda", 4) ? "Xpu" : "xpu";
    ut_buf_printf(&b, "%.*s%s%s", (int)tok, name, w, name + tok + 4);
    return ut_buf_take(&b);
}

static void report_backend(ctx *c, const an_rule *r, const an_ctx_fact *f, const an_diag *first, an_diag_list *out) {
    uint32_t s = f->name_end ? f->name_start : first->start, e = f->name_end ? f->name_end : first->end;
    if (s < c->lo || s >= c->hi) return;
    bool registered = !strncmp(f->why, "registered", 10);
    char *x = registered ? NULL : xpu_name(f->name);
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_printf(&b, "`%s` is the CUDA backend of a multi-backend design (%s); its CUDA-only code is left as it is: "
                      "add an XPU sibling%s%s%s for Intel GPUs",
                  f->name, f->why, registered ? " (registered for \"xpu\")" : x ? " (`" : "", x ? x : "", x ? "`)" : "");
    ut_free(x);
    an_message_vars v = {NULL, NULL, NULL, b.data, NULL};
    an_diag d = {0};
    d.rule = r;
    d.origin = AN_ORIGIN_BUILTIN;
    d.start = s, d.end = e;
    d.scope_start = f->start, d.scope_end = f->end;
    d.message = an_message_format(r->message, &v);
    ut_buf_free(&b);
    ut_vec_push(out, d);
}

/* The XPU call that does what `torch.cuda.NAME` does, where the catalog knows one: a note naming it ("XPU has
 * torch.xpu.MemPool"), or a device-generic replacement of the same name (torch.accelerator.synchronize,
 * xpuify_device.empty_cache, the device module's Stream). NULL: none known. */
static char *xpu_equivalent(const an_catalog *cat, const char *q) {
    const an_entry *e = an_catalog_lookup(cat, q, true);
    if (!e || e->ignore || strncmp(q, "torch.cuda.", 11)) return NULL;
    const char *name = q + 11, *x;
    ut_buf b;
    ut_buf_init(&b);
    if (e->note && (x = strstr(e->note, "torch.xpu."))) {
        size_t n = 10;
        while (isalnum((unsigned char)x[n]) || x[n] == '_' || x[n] == '.') n++;
        while (n && x[n - 1] == '.') n--;
        ut_buf_printf(&b, "%.*s", (int)n, x);
        return ut_buf_take(&b);
    }
    size_t nl = strlen(name);
    const char *forms[] = {e->replacement, e->compat};
    for (int i = 0; i < 2; i++) {
        const char *f = forms[i];
        if (!f) continue;
        size_t fl = strlen(f);
        bool same = fl > nl && f[fl - nl - 1] == '.' && !strcmp(f + fl - nl, name);
        if (same || (strstr(f, "get_device_module") && strstr(f, name))) {
            ut_buf_printf(&b, "torch.xpu.%s", name);
            return ut_buf_take(&b);
        }
    }
    ut_buf_free(&b);
    return NULL;
}

/* XPU811: a dispatch over devices with a CUDA branch and none for XPU (an_dispatch.c); one informational finding at
 * the CUDA branch's test, its scope the branch. Not inside a CUDA backend (XPU810 speaks for it). */
static void report_dispatches(ctx *c, const an_dispatches *v, const an_pycontext *cx, an_diag_list *out) {
    const an_rule *r = an_catalog_builtin(c->cat, "device-dispatch-without-xpu");
    if (!r || !enabled(c, r)) return;
    for (size_t i = 0; i < v->len; i++) {
        const an_dispatch *x = &v->items[i];
        if (x->test_start < c->lo || x->test_start >= c->hi) continue;
        if (an_pycontext_find(cx, AN_CTX_CUDA_BACKEND, x->branch_start, x->branch_end)) continue;
        const char *src = c->src->text;
        char *q = x->call_end ? ut_strndup(src + x->call_start, x->call_end - x->call_start) : NULL;
        char *eq = q ? xpu_equivalent(c->cat, q) : NULL;
        uint32_t tl = utf8_clip(src + x->test_start, x->test_end - x->test_start, 80);
        ut_buf b;
        ut_buf_init(&b);
        ut_buf_printf(&b, "`%.*s%s` routes to CUDA in a dispatch with %s for %s but none for XPU: the CUDA %s stays "
                          "as it is; add an XPU %s beside it%s%s%s for Intel GPUs",
                      (int)tl, src + x->test_start, tl < x->test_end - x->test_start ? "..." : "",
                      x->dict ? "entries" : "branches", x->others, x->dict ? "entry" : "branch",
                      x->dict ? "entry (\"xpu\")" : "branch",
                      eq ? " (`" : !q ? " (`.to(\"xpu\")`)" : " (`torch.xpu`)", eq ? eq : "", eq ? "`)" : "");
        an_message_vars mv = {NULL, NULL, NULL, b.data, NULL};
        an_diag d = {0};
        d.rule = r;
        d.origin = AN_ORIGIN_BUILTIN;
        d.start = x->test_start, d.end = x->test_end;
        d.scope_start = x->branch_start, d.scope_end = x->branch_end;
        d.message = an_message_format(r->message, &mv);
        ut_buf_free(&b);
        ut_free(q), ut_free(eq);
        ut_vec_push(out, d);
    }
}

/* the CUDA branch of a dispatch without an XPU branch that holds [s, e) */
static bool in_dispatch(const an_dispatches *v, uint32_t s, uint32_t e) {
    for (size_t i = 0; i < v->len; i++)
        if (v->items[i].branch_start <= s && e <= v->items[i].branch_end) return true;
    return false;
}

/* The line holding d carries, in a comment, a marker by which the project says the line is CUDA-specific on purpose
 * (rule cuda-by-design's `markers`: DeepSpeed's `#ignore-cuda`, which its check-torchcuda hook asks for on every
 * deliberate torch.cuda line). The marker found, or NULL; *ls, *le: the line. A line's answer is kept in *memo
 * (findings come in order, many to a line: each line is read once, not once per finding). */
typedef struct {
    uint32_t a, b;       /* the line last read, [a, b) (empty: none yet) */
    const char *marker;  /* its answer */
} marked_memo;

static const char *marked_cuda(const ctx *c, const an_diag *d, marked_memo *memo, uint32_t *ls, uint32_t *le) {
    const an_rule *r = an_catalog_builtin(c->cat, "cuda-by-design");
    if (!r || !r->markers.len) return NULL;
    const char *t = c->src->text;
    if (memo->a <= d->start && d->start < memo->b) {
        *ls = memo->a, *le = memo->b;
        return memo->marker;
    }
    uint32_t a = d->start, b = d->start;
    while (a > 0 && t[a - 1] != '\n') a--;
    while (b < c->src->len && t[b] != '\n') b++;
    memo->a = a, memo->b = b, memo->marker = NULL;
    *ls = a, *le = b;
    char q = 0;
    uint32_t h = a; /* the comment: the first `#` outside a string */
    for (; h < b && (q || t[h] != '#'); h++)
        if (t[h] == '"' || t[h] == '\'') q = !q ? t[h] : q == t[h] ? 0 : q;
    if (h >= b) return NULL;
    for (size_t i = 0; i < r->markers.len; i++) {
        const char *m = r->markers.items[i];
        size_t ml = strlen(m);
        for (const char *p = t + h; (p = ut_memmem(p, b - (uint32_t)(p - t), m, ml)); p++)
            if (p + ml == t + b || !(isalnum((unsigned char)p[ml]) || p[ml] == '_' || p[ml] == '-'))
                return memo->marker = m;
    }
    return NULL;
}

/* the assignment whose side (`left` or `right`) holds n, through tuples and parentheses, or a null node */
static TSNode assignment_side(TSNode n, const char *side) {
    static const char *const through[] = {"tuple", "parenthesized_expression", "expression_list", "pattern_list",
                                          "tuple_pattern", NULL};
    for (int up = 0; up < 8; up++) {
        TSNode p = ts_node_parent(n);
        if (ts_node_is_null(p)) break;
        if (!strcmp(ts_node_type(p), "assignment")) {
            TSNode f = ts_node_child_by_field_name(p, side, (uint32_t)strlen(side));
            return !ts_node_is_null(f) && ts_node_eq(f, n) ? p : (TSNode){0};
        }
        bool ok = false;
        for (int i = 0; through[i] && !ok; i++) ok = !strcmp(ts_node_type(p), through[i]);
        if (!ok) break;
        n = p;
    }
    return (TSNode){0};
}

static bool same_text(const char *t, TSNode a, TSNode b) {
    uint32_t al = ts_node_end_byte(a) - ts_node_start_byte(a), bl = ts_node_end_byte(b) - ts_node_start_byte(b);
    return al == bl && !memcmp(t + ts_node_start_byte(a), t + ts_node_start_byte(b), al);
}

/* `saved = torch.cuda.is_available` (not called) where the file later puts it back, `torch.cuda.is_available =
 * saved` (also in tuples: `self._saved = (torch.cuda.is_available, ...)` ... `torch.cuda.is_available, ... =
 * self._saved`): the original kept to undo a test's spoof, part of the write */
static bool spoof_save(const an_source *src, TSNode root, const an_pycontext *cx, const an_diag *d) {
    size_t n = d->end - d->start;
    if (n < 12 || memcmp(src->text + d->start, "torch.cuda.", 11)) return false;
    TSNode use = node_spanning(root, d->start, d->end);
    TSNode save = ts_node_is_null(use) ? use : assignment_side(use, "right");
    if (ts_node_is_null(save)) return false;
    TSNode kept = ts_node_child_by_field_name(save, "left", 4);
    const an_ctx_facts *v = &cx->kinds[AN_CTX_ASSIGN_TARGET];
    for (size_t i = 0; i < v->len; i++) {
        if (v->items[i].end - v->items[i].start != n || v->items[i].start == d->start ||
            memcmp(src->text + v->items[i].start, src->text + d->start, n))
            continue;
        TSNode tn = node_spanning(root, v->items[i].start, v->items[i].end);
        TSNode back = ts_node_is_null(tn) ? tn : assignment_side(tn, "left");
        TSNode from = ts_node_is_null(back) ? back : ts_node_child_by_field_name(back, "right", 5);
        if (!ts_node_is_null(from) && !ts_node_is_null(kept) && same_text(src->text, from, kept)) return true;
    }
    return false;
}

/* Drops what the context facts say is no finding: code that already handles several devices or runs on CUDA only,
 * correct guards, assignment targets, flag reads, the CUDA branch of a dispatch over other accelerators without an
 * XPU branch (one XPU811 finding there says so); and the findings inside a CUDA backend, which stay as they are
 * (one informational finding per backend without an XPU sibling says so, into design). */
static void filter_context(ctx *c, TSNode root, an_diag_list *mine, an_diag_list *design) {
    an_pycontext cx;
    an_pycontext_collect_nodes(&cx, &c->nodes, c->src->text, c->src->path);
    an_dispatches disp;
    an_dispatch_collect_nodes(&disp, &c->nodes, c->src->text, c->spans, c->nspans);
    size_t nb = cx.kinds[AN_CTX_CUDA_BACKEND].len;
    size_t *count = ut_calloc(nb ? nb : 1, sizeof(size_t));
    an_diag *first = ut_calloc(nb ? nb : 1, sizeof(an_diag));
    marked_memo memo = {0, 0, NULL};
    for (size_t i = 0; i < mine->len; i++) {
        an_diag *d = &mine->items[i];
        if (!d->rule || d->rule->builtin) continue;
        const an_rule *r = d->rule;
        const an_ctx_fact *t, *why = NULL; /* the fact that makes it CUDA by design (XPU812) */
        bool drop = (why = an_pycontext_find(&cx, AN_CTX_CORRECT_GUARD, d->start, d->end)) ||
                    (why = an_pycontext_find(&cx, AN_CTX_COUNTERPART, d->start, d->end));
        if (!drop && !r->in_guarded_code)
            drop = (why = an_pycontext_find(&cx, AN_CTX_MULTI_DEVICE, d->start, d->end)) ||
                   (why = an_pycontext_find(&cx, AN_CTX_CUDA_ONLY, d->start, d->end)) ||
                   in_dispatch(&disp, d->start, d->end); /* a CUDA branch beside other devices' (XPU811) */
        if (why && why->why) note_design(c, why->start, why->end, 0, 0, why->why);
        uint32_t ms, me;
        const char *mk = drop ? NULL : marked_cuda(c, d, &memo, &ms, &me);
        if (mk) {
            ut_buf b;
            ut_buf_init(&b);
            ut_buf_printf(&b, "is marked CUDA-specific by the project (`%s`)", mk);
            note_design(c, ms, me, 0, 0, b.data);
            ut_buf_free(&b);
            drop = true;
        }
        if (!drop && d->entry && !strncmp(d->entry->name, "torch.xpu", 9) && strchr(".", d->entry->name[9]))
            drop = an_pycontext_find(&cx, AN_CTX_XPU_BACKEND, d->start, d->end);
        if (!drop && !r->reads_ok)
            drop = (t = an_pycontext_find(&cx, AN_CTX_ASSIGN_TARGET, d->start, d->end)) && t->start == d->start;
        if (!drop && !called(c->src, d->end)) drop = spoof_save(c->src, root, &cx, d);
        if (!drop && r->reads_ok)
            drop = an_pycontext_find(&cx, AN_CTX_READ, d->start, d->end) && !called(c->src, d->end);
        if (!drop && r->reports_ok) drop = an_pycontext_find(&cx, AN_CTX_REPORT, d->start, d->end);
        if (!drop && !r->in_guarded_code && (t = an_pycontext_find(&cx, AN_CTX_CUDA_BACKEND, d->start, d->end))) {
            size_t k = (size_t)(t - cx.kinds[AN_CTX_CUDA_BACKEND].items);
            if (!count[k]++) first[k] = *d;
            drop = true;
            if (t->xpu_sibling) { /* no XPU810 for this scope, but it is CUDA by design all the same */
                ut_buf b;
                ut_buf_init(&b);
                ut_buf_printf(&b, "is the CUDA backend of a multi-backend design (%s) whose family has an XPU member (`%s`)",
                              t->why, t->xpu_sibling);
                note_design(c, t->start, t->end, t->name_end ? t->name_start : 0, t->name_end, b.data);
                ut_buf_free(&b);
            }
        }
        if (drop) {
            an_diag_drop(d);
        } else if (r->guard_condition && an_pycontext_find(&cx, AN_CTX_RESULT_GUARD, d->start, d->end)) {
            char *m = d->message;
            ut_buf b;
            ut_buf_init(&b);
            ut_buf_printf(&b, "%s. Here the branch reads CUDA-only results (compute capability, the device index, "
                              "cuDNN or NVTX): keep this test and add an XPU branch beside it", m);
            d->message = ut_buf_take(&b);
            ut_free(m);
        }
    }
    /* every class or function backend without an XPU sibling; a module only where no backend inside it speaks for
     * it, and only when it holds a finding (whose place the report takes). Where one does, and the module holds
     * CUDA code of its own besides (Lightning's accelerators/cuda.py: CUDAAccelerator and module-level functions),
     * the first such backend's finding speaks for the whole module: its scope is the module's. */
    const an_rule *r = an_catalog_builtin(c->cat, "cuda-backend-family");
    size_t *module_of = ut_calloc(nb ? nb : 1, sizeof(size_t)); /* 1 + the module fact a named backend speaks for */
    for (size_t k = 0; k < nb; k++) {
        const an_ctx_fact *f = &cx.kinds[AN_CTX_CUDA_BACKEND].items[k];
        if (f->name_end || !count[k] || f->xpu_sibling) continue;
        for (size_t j = 0; j < nb; j++) {
            const an_ctx_fact *g = &cx.kinds[AN_CTX_CUDA_BACKEND].items[j];
            if (j != k && g->name_end && !g->xpu_sibling && g->start >= f->start && g->end <= f->end) {
                module_of[j] = k + 1;
                break;
            }
        }
    }
    for (size_t k = 0; k < nb && r && enabled(c, r); k++) {
        const an_ctx_fact *f = &cx.kinds[AN_CTX_CUDA_BACKEND].items[k];
        bool inner = false;
        for (size_t j = 0; j < nb && !f->name_end; j++)
            inner |= j != k && cx.kinds[AN_CTX_CUDA_BACKEND].items[j].start >= f->start &&
                     cx.kinds[AN_CTX_CUDA_BACKEND].items[j].end <= f->end;
        if (f->xpu_sibling || inner || !(f->name_end || count[k])) continue;
        an_ctx_fact g = *f;
        if (module_of[k]) {
            g.start = cx.kinds[AN_CTX_CUDA_BACKEND].items[module_of[k] - 1].start;
            g.end = cx.kinds[AN_CTX_CUDA_BACKEND].items[module_of[k] - 1].end;
        }
        report_backend(c, r, &g, &first[k], design);
    }
    ut_free(module_of);
    report_dispatches(c, &disp, &cx, design);
    report_design(c, &disp, &cx, design);
    an_dispatch_free(&disp);
    ut_free(count), ut_free(first);
    an_pycontext_free(&cx);
}

/* ---- line facts for suppressions ------------------------------------------------------------------------- */

static uint32_t end_row(TSNode n) {
    TSPoint e = ts_node_end_point(n), b = ts_node_start_point(n);
    return e.column == 0 && e.row > b.row ? e.row - 1 : e.row;
}

static bool is_statement(TSNode n) {
    TSNode p = ts_node_parent(n);
    if (ts_node_is_null(p)) return false;
    const char *pt = ts_node_type(p), *t = ts_node_type(n);
    if (!strcmp(t, "comment") || !strcmp(t, "block")) return false;
    if (!strcmp(pt, "module") || !strcmp(pt, "block")) return true;
    return !strcmp(t, "elif_clause") || !strcmp(t, "else_clause") || !strcmp(t, "except_clause") ||
           !strcmp(t, "except_group_clause") || !strcmp(t, "finally_clause") || !strcmp(t, "case_clause");
}

/* Last row of a statement's logical line: a compound statement's header ends where its block begins. */
static uint32_t logical_end_row(TSNode n) {
    TSNode def = n;
    if (!strcmp(ts_node_type(n), "decorated_definition")) {
        TSNode d = an_py_field(n, "definition", 10);
        if (!ts_node_is_null(d)) def = d;
    }
    uint32_t cnt = ts_node_child_count(def);
    for (uint32_t i = 0; i < cnt; i++) {
        TSNode c = ts_node_child(def, i);
        if (strcmp(ts_node_type(c), "block")) continue;
        TSNode prev = ts_node_prev_sibling(c);
        return ts_node_is_null(prev) ? ts_node_start_point(n).row : end_row(prev);
    }
    return end_row(n);
}

static void fill_line_info(TSNode root, const an_source *src, an_line_info *li) {
    an_line_info_init(li, src->nlines);
    for (uint32_t l = 1; l <= src->nlines; l++) {
        uint32_t a, b;
        an_source_line_span(src, l, &a, &b);
        li->comment_ok[l] = !(b > a && src->text[b - 1] == '\\');
    }
    TSTreeCursor cur = ts_tree_cursor_new(root);
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&cur);
        const char *t = ts_node_type(n);
        bool descend = true;
        if (!strcmp(t, "string")) {
            /* the end of a line inside a multi-line string is no place for a comment */
            uint32_t a = ts_node_start_point(n).row, b = ts_node_end_point(n).row;
            for (uint32_t r = a; r < b && r + 1 <= src->nlines; r++) li->comment_ok[r + 1] = false;
            descend = false;
        } else if (ts_node_is_named(n) && is_statement(n)) {
            uint32_t first = ts_node_start_point(n).row + 1, last = logical_end_row(n) + 1;
            if (last > src->nlines) last = src->nlines;
            if (first <= src->nlines) {
                if (last < first) last = first;
                if (li->logical_end[first] < last) li->logical_end[first] = last;
                for (uint32_t l = first; l <= last; l++) li->stmt_start[l] = first;
            }
        }
        if (descend && ts_tree_cursor_goto_first_child(&cur)) continue;
        while (!ts_tree_cursor_goto_next_sibling(&cur))
            if (!ts_tree_cursor_goto_parent(&cur)) goto done;
    }
done:
    ts_tree_cursor_delete(&cur);
}

static void set_ranges(an_python *py, const an_source *src) {
    if (src->body) {
        TSRange r = {{0, src->body}, {UINT32_MAX, UINT32_MAX}, src->body, UINT32_MAX};
        ts_parser_set_included_ranges(py->parser, &r, 1);
    } else {
        ts_parser_set_included_ranges(py->parser, NULL, 0);
    }
}

static void collect_comments(an_python *py, TSNode root, const an_source *src, an_suppressions *sup) {
    TSTreeCursor cur = ts_tree_cursor_new(root);
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&cur);
        if (ts_node_symbol(n) == py->s_comment) {
            uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
            if (b - a > 8 && ut_memmem(src->text + a, b - a, "xpuify:", 7)) an_suppress_add_comment(sup, src, a, b, "#");
        } else if (ts_tree_cursor_goto_first_child(&cur)) {
            continue;
        }
        while (!ts_tree_cursor_goto_next_sibling(&cur))
            if (!ts_tree_cursor_goto_parent(&cur)) goto done;
    }
done:
    ts_tree_cursor_delete(&cur);
}

/* Never hands tree-sitter a file nested deeper than it survives (an_pynest.h): NULL then. */
static TSTree *parse_text(an_python *py, const an_source *src, const TSTree *old) {
    if (an_py_nesting_over(src->text, src->len, AN_PY_MAX_NESTING, NULL)) return NULL;
    return ts_parser_parse_string(py->parser, (TSTree *)old, src->text, src->len);
}

bool an_python_line_info(an_python *py, const an_source *src, an_line_info *li, an_suppressions *sup) {
    set_ranges(py, src);
    TSTree *tree = parse_text(py, src, NULL);
    if (!tree) return false;
    TSNode root = ts_tree_root_node(tree);
    fill_line_info(root, src, li);
    if (sup) {
        collect_comments(py, root, src, sup);
        an_suppress_finish(sup, src, li);
    }
    ts_tree_delete(tree);
    return true;
}

static bool has_scoped(const an_diag_list *out, size_t first) {
    for (size_t i = first; i < out->len; i++)
        if (out->items[i].scope_end) return true;
    return false;
}

static void drop_findings(an_diag_list *out, size_t first) {
    for (size_t i = first; i < out->len; i++) ut_free(out->items[i].message), an_fix_free(out->items[i].fix);
    out->len = first;
}

/* [a, b) lies inside one of the sorted, disjoint spans */
static bool within(const an_span_vec *v, uint32_t a, uint32_t b) {
    size_t lo = 0, hi = v->len;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (v->items[m].end <= a) lo = m + 1;
        else hi = m;
    }
    return lo < v->len && v->items[lo].start <= a && b <= v->items[lo].end;
}

/* spans plus every top-level statement that meets a scoped finding of out (from first) or its scope; false when the
 * scanner is unsure of the statements */
static bool widen(const an_source *src, const an_span_vec *spans, const an_diag_list *out, size_t first,
                  an_span_vec *wide) {
    /* a scope that runs to the end of the parsed text (the rest of the module) ends where the whole file does */
    uint32_t last = spans->len ? spans->items[spans->len - 1].end : 0;
    for (size_t i = first; i < out->len; i++)
        if (out->items[i].scope_end && out->items[i].scope_end >= last && last < src->len) return false;
    an_pyunits pu;
    if (!an_pyregion_units(src, &pu)) return false;
    for (size_t i = 0; i < spans->len; i++) ut_vec_push(wide, spans->items[i]);
    for (size_t i = first; i < out->len; i++) {
        const an_diag *d = &out->items[i];
        if (!d->scope_end) continue;
        uint32_t a = d->start < d->scope_start ? d->start : d->scope_start;
        uint32_t b = d->end > d->scope_end ? d->end : d->scope_end;
        for (size_t u = 0; u < pu.units.len; u++) {
            an_span s = pu.units.items[u].span;
            if (s.start < (b > a ? b : a + 1) && a < s.end) ut_vec_push(wide, s);
        }
    }
    an_pyunits_free(&pu);
    an_spans_merge(wide);
    return true;
}

/* a tree of the spans only (included ranges; byte offsets stay those of the whole file); bytes: their size */
static TSTree *parse_spans(an_python *py, const an_source *src, const an_span_vec *spans, uint32_t *bytes) {
    TSRange *rs = ut_malloc((spans->len ? spans->len : 1) * sizeof(TSRange));
    uint32_t n = 0;
    for (size_t i = 0; i < spans->len; i++) {
        uint32_t s = spans->items[i].start < src->body ? src->body : spans->items[i].start;
        rs[i].start_byte = s;
        rs[i].end_byte = spans->items[i].end;
        rs[i].start_point = an_py_point_at(src, s);
        rs[i].end_point = an_py_point_at(src, spans->items[i].end);
        n += spans->items[i].end - s;
    }
    ts_parser_set_included_ranges(py->parser, rs, (uint32_t)spans->len);
    ut_free(rs);
    *bytes = n;
    return ts_parser_parse_string(py->parser, NULL, src->text, src->len);
}

/* some integer device index in a device position of the text (XPU109, when enabled) */
static bool int_devices_in(const an_catalog *cat, const bool *en, const an_source *src) {
    const an_rule *ix = an_catalog_builtin(cat, "integer-device");
    if (!ix || (en && !en[ix->index])) return false;
    an_flow_facts iv = {0};
    an_flow_int_devices(src->text, (uint32_t)src->len, 0, UINT32_MAX, &iv);
    bool any = iv.len > 0;
    an_flow_free(&iv);
    return any;
}

bool an_python_analyze(an_python *py, const an_catalog *cat, const an_source *src, const bool *en,
                       const an_fix_options *fix, bool regions, const uint8_t *found, an_diag_list *out,
                       uint32_t *bytes) {
    TSTree *tree = NULL;
    *bytes = src->len - src->body;
    an_pyregions reg = {0};
    if (an_py_nesting_over(src->text, src->len, AN_PY_MAX_NESTING, NULL)) { /* an_engine says why */
        *bytes = 0;
        return false;
    }
    /* suppression directives need the statements around them (an_python_line_info): such files parse whole */
    if (regions && !ut_memmem(src->text, src->len, "xpuify:", 7)) {
        an_pyregion_select(cat, src, found, fix && fix->target == AN_TARGET_COMPAT ? fix->helper_module : NULL, &reg);
        /* integer device indexes are found in the text, not by the locality patterns: a file whose only CUDA word is
         * a comment (`device = 0  # shorthand for cuda:0`) still passes the index to `.to(gpu_id)`; it is parsed
         * whole, as --whole-files does */
        if (reg.nothing && int_devices_in(cat, en, src)) reg.nothing = false, reg.whole = true;
        if (reg.nothing) {
            an_pyregions_free(&reg);
            *bytes = 0;
            return false;
        }
        if (!reg.whole) {
            /* only the statements that can hold a finding: byte offsets stay those of the whole file */
            tree = parse_spans(py, src, &reg.spans, bytes);
            *bytes = reg.selected;
        }
    }
    an_pyrun run = {tree, 0, UINT32_MAX, 0, 0, NULL, NULL, NULL, 0, NULL, 0, false, found};
    if (reg.hits_known && reg.hits.len) run.hits = reg.hits.items, run.nhits = reg.hits.len;
    if (tree) run.spans = reg.spans.items, run.nspans = reg.spans.len;
    run.probe_scoped = tree != NULL; /* see below */
    size_t first = out->len;
    an_python_run(py, cat, src, en, fix, &run, out);
    /* a design finding's scope (a CUDA backend, a dispatch's CUDA branch) reaches over statements the regions left
     * out: such a file is analyzed again with every top-level statement that meets a scoped finding taken whole
     * (a scope never leaves its top-level statement unless it is the module's), so its scopes are those of a whole
     * run; where that cannot be shown (the scanner is unsure of the statements, a scope outside them), whole. */
    if (tree && has_scoped(out, first)) {
        an_span_vec wide = {0};
        bool ok = widen(src, &reg.spans, out, first, &wide) && wide.len <= AN_PYREGION_MAX_SPANS;
        drop_findings(out, first);
        ts_tree_delete(tree);
        tree = NULL;
        if (ok) {
            tree = parse_spans(py, src, &wide, bytes);
            an_pyrun again = {tree, 0, UINT32_MAX, 0, 0, NULL, NULL, NULL, 0, NULL, 0, false, found};
            if (reg.hits_known && reg.hits.len) again.hits = reg.hits.items, again.nhits = reg.hits.len;
            again.spans = wide.items, again.nspans = wide.len;
            an_python_run(py, cat, src, en, fix, &again, out);
            /* a scope the widened statements do not hold whole (not seen in the first run): whole after all */
            uint32_t last = wide.len ? wide.items[wide.len - 1].end : 0;
            for (size_t i = first; ok && i < out->len; i++)
                if (out->items[i].scope_end)
                    ok = (out->items[i].scope_end < last || last == src->len) &&
                         within(&wide, out->items[i].start < out->items[i].scope_start ? out->items[i].start
                                                                                       : out->items[i].scope_start,
                                out->items[i].end > out->items[i].scope_end ? out->items[i].end : out->items[i].scope_end);
            if (!ok) {
                drop_findings(out, first);
                ts_tree_delete(tree);
                tree = NULL;
            }
        }
        ut_vec_free(&wide);
        if (!ok) {
            an_pyrun whole = {NULL, 0, UINT32_MAX, 0, 0, NULL, NULL, NULL, 0, NULL, 0, false, found};
            *bytes = src->len - src->body;
            an_python_run(py, cat, src, en, fix, &whole, out);
        }
    }
    an_pyregions_free(&reg);
    if (tree) ts_tree_delete(tree);
    return true;
}

TSTree *an_python_parse(an_python *py, const an_source *src, const TSTree *old) {
    set_ranges(py, src);
    if (src->body) old = NULL; /* the included range starts after the BOM: always parse from scratch */
    return parse_text(py, src, old);
}

/* ---- where the queries run ------------------------------------------------------------------------------------ */

static bool is_type(TSNode n, const char *t) { return !ts_node_is_null(n) && !strcmp(ts_node_type(n), t); }

/* the child of n that holds byte pos (NULL node when pos falls between children) */
static TSNode child_at(TSNode n, uint32_t pos) {
    TSTreeCursor cur = ts_tree_cursor_new(n);
    TSNode r = {0};
    if (ts_tree_cursor_goto_first_child_for_byte(&cur, pos) >= 0) {
        TSNode c = ts_tree_cursor_current_node(&cur);
        if (ts_node_start_byte(c) <= pos) r = c;
    }
    ts_tree_cursor_delete(&cur);
    return r;
}

/* the definition inside a statement (itself, or what a decorated_definition decorates), or a NULL node */
static TSNode def_of(TSNode st) {
    TSNode d = is_type(st, "decorated_definition") ? an_py_field(st, "definition", 10) : st;
    return is_type(d, "function_definition") || is_type(d, "class_definition") ? d : (TSNode){0};
}

/* The statements that can hold a query match: for each locality match, the outermost statement around it inside a
 * unit's body (a top-level definition, or a member of a top-level class), a top-level statement, or (a match in a
 * unit's decorators, name or parameters) that unit's header. Found from the root down, a few levels deep (a walk
 * up with ts_node_parent costs the depth at each step). Every pattern of the query set is rooted at a statement
 * or below (an_query.c checks), and a match holds a locality match, so the matches found are those of the whole
 * tree. Sorted and joined. */
static void query_ranges(const an_pynodes *nodes, const uint32_t *hits, size_t n, an_span_vec *out) {
    /* hits ascend: the top-level statements (the root's children: depth 1 of the node index) are stepped through once */
    uint32_t top = 1;
    for (size_t i = 0; i < n; i++) {
        uint32_t h = hits[i];
        if (out->len && out->items[out->len - 1].start <= h && h < out->items[out->len - 1].end) continue;
        while (top < nodes->len && ts_node_end_byte(nodes->items[top].node) <= h) top = nodes->items[top].next;
        if (top >= nodes->len) break;
        TSNode st = nodes->items[top].node; /* a top-level statement */
        if (ts_node_start_byte(st) > h) continue;
        an_span r = {0, 0};
        for (int level = 0; level < 2 && !ts_node_is_null(st); level++) {
            TSNode def = def_of(st), body = ts_node_is_null(def) ? def : an_py_field(def, "body", 4);
            r.start = ts_node_start_byte(st), r.end = ts_node_end_byte(st);
            if (ts_node_is_null(body)) break;          /* not a unit: the statement whole */
            if (h < ts_node_start_byte(body)) {        /* the unit's header */
                r.end = ts_node_start_byte(body);
                break;
            }
            TSNode inner = child_at(body, h);
            if (ts_node_is_null(inner)) break;         /* between the body's statements: the unit whole */
            /* members of a top-level class are units too; statements of a function are not */
            bool members_are_units = level == 0 && is_type(def, "class_definition");
            if (!members_are_units || ts_node_is_null(def_of(inner))) {
                r.start = ts_node_start_byte(inner), r.end = ts_node_end_byte(inner);
                break;
            }
            st = inner;
        }
        if (r.end > r.start) ut_vec_push(out, r);
    }
    an_spans_merge(out);
}

/* The query matches inside the spans (ascending, disjoint), found from the top-level statements each span overlaps
 * rather than from the root: a cursor at the root narrowed to a byte range still steps over every statement before
 * the range, so one such cursor per span made a file with a finding on every line quadratic (10,000 lines: 22 s).
 * No pattern is rooted above a statement (query_ranges is used only then), so the matches are the same ones. */
static void run_spans(const an_query_set *qs, const an_pynodes *nodes, const an_span_vec *spans, ctx *c) {
    uint32_t top = 1; /* the top-level statements: depth 1 of the node index */
    for (size_t i = 0; i < spans->len && top < nodes->len; i++) {
        an_span s = spans->items[i];
        while (top < nodes->len && ts_node_end_byte(nodes->items[top].node) <= s.start) top = nodes->items[top].next;
        /* a span may cover several statements; the next span may start in the last of them */
        for (uint32_t it = top; it < nodes->len; it = nodes->items[it].next) {
            TSNode st = nodes->items[it].node;
            if (ts_node_start_byte(st) >= s.end) break;
            an_query_run_within(qs, st, s.start, s.end, c->src->text, resolve_cb, c, on_query_match, c);
        }
    }
}

/* Device strings and NCCL backends that reach a device position through a name (an_flow): reported at the literal
 * by the rule that reports such a literal written in the position itself (XPU103, XPU401), naming the position. */
static void report_flow(ctx *c, TSNode root, an_diag_list *mine) {
    an_flow_facts ff = {0};
    an_flow_collect_nodes(&c->nodes, c->src->text, c->src->len, c->lo, c->hi, &ff);
    const an_rule *dev = an_catalog_find(c->cat, "XPU103"), *be = an_catalog_find(c->cat, "XPU401");
    const an_rule *sel = an_catalog_find(c->cat, "XPU104");
    const char *t = c->src->text;
    size_t known = mine->len;
    for (size_t i = 0; i < ff.len; i++) {
        const an_flow_fact *f = &ff.items[i];
        const an_rule *r = f->kind == AN_FLOW_DEVICE ? dev : be;
        if (!r || !enabled(c, r)) continue;
        bool covered = false; /* the literal is reported already (written in a device position, or a selection) */
        for (size_t j = 0; j < known && !covered; j++) {
            const an_diag *d = &mine->items[j];
            covered = (d->rule == r || (d->rule && d->rule == sel)) && d->start <= f->lit_start && d->end >= f->lit_end;
        }
        if (covered) continue;
        uint32_t n = utf8_clip(t + f->lit_start, f->lit_end - f->lit_start, 60);
        const char *nl = memchr(t + f->lit_start, '\n', n);
        if (nl) n = (uint32_t)(nl - (t + f->lit_start));
        char *text = ut_strndup(t + f->lit_start, n);
        an_message_vars v = {NULL, NULL, r->min_torch, text, NULL};
        char *base = an_message_format(r->message, &v);
        ut_free(text);
        uint32_t sn = utf8_clip(t + f->ctx_start, f->sink_end - f->ctx_start, 60);
        bool call = memchr(t + f->ctx_start, '(', f->sink_start - f->ctx_start) != NULL;
        uint32_t line, col;
        an_source_position(c->src, f->sink_start, &line, &col);
        ut_buf b;
        ut_buf_init(&b);
        if (f->named) {
            ut_buf_printf(&b, "%s (the default of `%s`, line %u)", base, f->via, line);
            ut_free(base);
            emit(c, r, f->lit_start, f->lit_end, ut_buf_take(&b));
            continue;
        }
        ut_buf_printf(&b, "%s (it reaches `", base);
        for (uint32_t k = 0; k < sn; k++) {
            char ch = t[f->ctx_start + k];
            if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
            if (ch != ' ' || !b.len || b.data[b.len - 1] != ' ') ut_buf_putc(&b, ch);
        }
        ut_buf_printf(&b, "%s` on line %u through `%s`)", call ? ")" : "", line, f->via ? f->via : "?");
        ut_free(base);
        emit(c, r, f->lit_start, f->lit_end, ut_buf_take(&b));
    }
    an_flow_free(&ff);
    /* integer device indexes: `.to(rank)` */
    const an_rule *ix = an_catalog_builtin(c->cat, "integer-device");
    if (!ix || !enabled(c, ix)) return;
    an_flow_facts iv = {0};
    an_flow_int_devices(t, c->src->len, c->lo, c->hi, &iv);
    for (size_t i = 0; i < iv.len; i++) {
        const an_flow_fact *f = &iv.items[i];
        an_message_vars v = {NULL, NULL, NULL, f->via, NULL};
        char *m;
        if (f->mixed) { /* `device = device or torch.cuda.current_device()`: the index only where no device is given */
            ut_buf b;
            ut_buf_init(&b);
            ut_buf_printf(&b, "`%s` is a caller's device or else the current device's index (an int, which torch reads as a CUDA "
                              "device); use the run-time device with this index", f->via);
            m = ut_buf_take(&b);
        } else {
            m = an_message_format(ix->message, &v);
        }
        an_diag *d = emit(c, ix, f->sink_start, f->sink_end, m);
        d->origin = AN_ORIGIN_QUERY; /* filtered like a query's finding (guards, agnostic code), fixed by its fixer */
    }
    an_flow_free(&iv);
}

void an_python_run(an_python *py, const an_catalog *cat, const an_source *src, const bool *en,
                   const an_fix_options *fix, an_pyrun *run, an_diag_list *out) {
    TSTree *tree = run->tree ? NULL : an_python_parse(py, src, NULL);
    if (!run->tree && !tree) return;
    TSNode root = ts_tree_root_node(run->tree ? run->tree : tree);
    ctx c = {0};
    c.py = py, c.cat = cat, c.src = src, c.enabled = en;
    c.lo = run->lo, c.hi = run->hi;
    if (run->tree) c.spans = run->spans, c.nspans = run->nspans;
    c.compat = fix && fix->target == AN_TARGET_COMPAT;
    an_diag_list mine = {0};
    c.out = &mine;
    ut_buf_init(&c.tmp);
    collect_errors(&c, root);
    an_pynodes_build(&c.nodes, root); /* one walk of the tree, read by every collector below */
    const an_pynodes *outer_index = an_py_field_index(&c.nodes); /* an_py_field reads it */
    if (run->scope) c.scope = *run->scope;
    else an_pyscope_collect_nodes(&c.scope, &c.nodes, src->text);
    const an_query_set *qs = an_catalog_queries_for(cat, AN_LANG_PYTHON, run->found, src->len);
    an_span_vec qr = {0};
    if (run->hits && (!qs || an_query_set_statement_level(qs)) && c.lo == 0 && c.hi == UINT32_MAX) {
        query_ranges(&c.nodes, run->hits, run->nhits, &qr);
        c.only = &qr;
    }
    walk(&c, &c.nodes);
    if (c.too_deep) {
        an_diag_list_free(&mine);
        report_too_deep(&c);
        run->needs = 0;
        goto finish;
    }
    if (c.only) {
        run_spans(qs, &c.nodes, &qr, &c);
    } else {
        an_query_run_range(qs, root, c.lo, c.hi, src->text, resolve_cb, &c, on_query_match, &c);
    }
    report_flow(&c, root, &mine);
    report_syntax_error(&c, root);
    /* a re-analyzed region reports the findings that start inside it */
    if (c.lo > 0 || c.hi < UINT32_MAX) {
        size_t kept = 0;
        for (size_t i = 0; i < mine.len; i++) {
            an_diag *d = &mine.items[i];
            if (d->start >= c.lo && d->start < c.hi) {
                mine.items[kept++] = *d;
                continue;
            }
            ut_free(d->message);
            an_fix_free(d->fix);
        }
        mine.len = kept;
    }
    /* every filter below scans findings sorted by start and binary-searches sorted ranges: a file with tens of
     * thousands of findings costs n log n, not n squared */
    an_diag_list_sort(&mine);
    size_t nerr, nagn, ngrd, ntry, nbr;
    range *err = outermost(c.errors.items, c.errors.len, &nerr);
    range *agn = outermost(c.agnostic.items, c.agnostic.len, &nagn);
    range *grd = outermost(c.cuda_guarded.items, c.cuda_guarded.len, &ngrd);
    range *try_b = outermost(c.try_bodies.items, c.try_bodies.len, &ntry);
    range *brs = outermost(c.cuda_branches.items, c.cuda_branches.len, &nbr);
    /* filter: error regions, agnostic guards, try bodies, CUDA-only branches */
    for (size_t i = 0; i < mine.len; i++) {
        an_diag *d = &mine.items[i];
        if (!d->rule || (d->rule->builtin && d->origin == AN_ORIGIN_BUILTIN)) continue;
        if (overlaps(err, nerr, d->start, d->end)) {
            an_diag_drop(d);
        } else if (!d->rule->in_guarded_code && inside(agn, nagn, d->start, d->end)) {
            note_agnostic(&c, root, agn[last_at_or_before(agn, nagn, d->start)]);
            an_diag_drop(d);
        } else if (d->rule->cuda_guard_ok && !(helper_ports(fix, d) && !device_type_guarded(&c, &mine, d)) &&
                   inside(grd, ngrd, d->start, d->end)) {
            note_cuda_guarded(&c, root, grd[last_at_or_before(grd, ngrd, d->start)]);
            an_diag_drop(d);
        } else if (d->rule->in_try_ok && inside(try_b, ntry, d->start, d->end)) {
            an_diag_drop(d);
        } else if (!d->rule->in_guarded_code && inside(brs, nbr, d->start, d->end)) {
            note_cuda_branch(&c, root, brs[last_at_or_before(brs, nbr, d->start)]);
            an_diag_drop(d);
        }
    }
    ut_free(err), ut_free(agn), ut_free(grd), ut_free(try_b), ut_free(brs);
    an_diag_list design = {0}; /* the "add an XPU sibling" findings of CUDA backends */
    filter_context(&c, root, &mine, &design);
    /* superseded findings: inside a finding of a rule that names their code in `supersedes` */
    bool *superseded = ut_calloc(mine.len ? mine.len : 1, sizeof(bool));
    for (size_t j = 0; j < mine.len; j++) {
        const an_diag *o = &mine.items[j];
        if (!o->rule || !o->rule->supersedes.len) continue;
        for (size_t i = an_diag_list_first_from(&mine, o->start); i < mine.len && mine.items[i].start < o->end; i++) {
            const an_diag *d = &mine.items[i];
            if (i != j && d->rule && !d->rule->builtin && d->rule != o->rule && d->end <= o->end &&
                supersedes(o->rule, d->rule->code))
                superseded[i] = true;
        }
    }
    for (size_t i = 0; i < mine.len; i++)
        if (superseded[i]) an_diag_drop(&mine.items[i]);
    ut_free(superseded);
    /* a CUDA test that guards calls which must stay CUDA-only (rules with cuda_guard_ok) is not a finding of
     * rules marked guard_condition: rewriting it to torch.accelerator would run CUDA-only code on XPU */
    for (size_t k = 0; k < c.cuda_guard_conds.len; k++) {
        range cond = c.cuda_guard_conds.items[k], body = c.cuda_guarded.items[k];
        bool guards_cuda_only = false;
        for (size_t j = an_diag_list_first_from(&mine, body.start); j < mine.len && mine.items[j].start < body.end && !guards_cuda_only; j++)
            guards_cuda_only = mine.items[j].rule && mine.items[j].rule->cuda_guard_ok && !helper_ports(fix, &mine.items[j]) &&
                               mine.items[j].end <= body.end;
        if (!guards_cuda_only) continue;
        for (size_t j = an_diag_list_first_from(&mine, cond.start); j < mine.len && mine.items[j].start < cond.end; j++) {
            an_diag *d = &mine.items[j];
            if (d->rule && d->rule->guard_condition && d->end <= cond.end) an_diag_drop(d);
        }
    }
    if (design.len) { /* the dropped findings (no rule) go first: sorting compares rules */
        compact_dropped(&mine);
        for (size_t i = 0; i < design.len; i++) ut_vec_push(&mine, design.items[i]);
        an_diag_list_sort(&mine);
    }
    ut_vec_free(&design);
    an_suppressions sup = {0};
    /* a separate pass: the walk above does not descend into every statement (imports) */
    if (ut_memmem(src->text, src->len, "xpuify:", 7)) collect_comments(py, root, src, &sup);
    an_line_info li = {0};
    bool need_li = false;
    for (size_t i = 0; i < sup.items.len; i++) need_li |= sup.items.items[i].next_line;
    if (need_li) fill_line_info(root, src, &li);
    an_suppress_finish(&sup, src, need_li ? &li : NULL);
    an_line_info_free(&li);
    size_t w = 0;
    for (size_t i = 0; i < mine.len; i++) {
        an_diag *d = &mine.items[i];
        if (!d->rule) continue;
        if (sup.items.len && !d->rule->builtin) {
            an_diag_locate(d, src);
            if (an_suppress_hides(&sup, d)) {
                ut_free(d->message);
                an_fix_free(d->fix);
                continue;
            }
        }
        mine.items[w++] = *d;
    }
    mine.len = w;
    run->needs = 0;
    if (run->probe_scoped)
        for (size_t i = 0; i < mine.len; i++)
            if (mine.items[i].scope_end) { /* analyzed again (an_python_analyze): these findings are dropped */
                an_suppress_free(&sup);
                goto finish;
            }
    /* a tree the caller parsed (an editor buffer's) is of the whole file unless it says its spans */
    if (fix && fix->target != AN_TARGET_NONE) run->needs = an_pyfix_generate(fix, src, root, &c.nodes, !run->tree || !run->nspans, &c.scope, &mine, run->extra_needs);
    design_guards(&c, &mine);
    /* suppressions that hid nothing (after every other finding is known) */
    const an_rule *unused = an_catalog_builtin(cat, "unused-suppression");
    if (unused && enabled(&c, unused) && sup.items.len && !an_suppress_hides_unused(&sup, unused))
        an_suppress_report_unused(&sup, src, cat, unused, en, AN_LANG_PYTHON, &mine);
    an_suppress_free(&sup);
finish:
    ut_vec_free(&qr);
    for (size_t i = 0; i < mine.len; i++) an_diag_locate(&mine.items[i], src);
    if (!out->len) { /* the usual case: the list becomes the output */
        ut_vec_free(out);
        out->items = mine.items, out->len = mine.len, out->cap = mine.cap;
    } else {
        ut_vec_reserve(out, mine.len);
        if (mine.len) memcpy(out->items + out->len, mine.items, mine.len * sizeof *mine.items);
        out->len += mine.len;
        ut_vec_free(&mine);
    }
    an_diag_list_sort(out);
    ut_buf_free(&c.tmp);
    ut_free(c.memo_text), ut_free(c.memo_msg);
    ut_vec_free(&c.errors);
    ut_vec_free(&c.agnostic);
    ut_vec_free(&c.cuda_guarded);
    ut_vec_free(&c.try_bodies);
    ut_vec_free(&c.cuda_branches);
    ut_vec_free(&c.design);
    ut_vec_free(&c.cuda_guard_conds);
    an_py_field_index(outer_index);
    an_pynodes_free(&c.nodes);
    if (run->scope) {} /* borrowed */
    else if (run->keep_scope) *run->keep_scope = c.scope;
    else an_pyscope_free(&c.scope);
    if (tree) ts_tree_delete(tree);
}

/* A block with no statement (its comments are named children, not statements): tree-sitter's grammar accepts one,
 * CPython does not ("expected an indented block"). */
static bool has_empty_block(TSNode root) {
    TSTreeCursor c = ts_tree_cursor_new(root);
    bool empty = false;
    for (bool down = true;;) {
        TSNode n = ts_tree_cursor_current_node(&c);
        if (down && !strcmp(ts_node_type(n), "block")) {
            uint32_t k = ts_node_named_child_count(n), stmts = 0;
            for (uint32_t i = 0; i < k && !stmts; i++) stmts += strcmp(ts_node_type(ts_node_named_child(n, i)), "comment") != 0;
            if (!stmts) {
                empty = true;
                break;
            }
        }
        if (down && ts_tree_cursor_goto_first_child(&c)) continue;
        if (ts_tree_cursor_goto_next_sibling(&c)) {
            down = true;
            continue;
        }
        if (!ts_tree_cursor_goto_parent(&c)) break;
        down = false;
    }
    ts_tree_cursor_delete(&c);
    return empty;
}

bool an_python_parses(an_python *py, const an_source *src) {
    TSTree *tree = an_python_parse(py, src, NULL);
    if (!tree) return false;
    TSNode root = ts_tree_root_node(tree);
    bool ok = !ts_node_has_error(root) && !has_empty_block(root);
    ts_tree_delete(tree);
    return ok;
}
