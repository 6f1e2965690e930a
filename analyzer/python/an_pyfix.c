/* an_pyfix: fix generation for Python findings.
 *
 * Table rules carry templates per target in their entries: a name ("torch.accelerator.synchronize",
 * "torch.get_device_module(DEV).manual_seed") replaces the reference; a call template ending in "...)"
 * ("torch.amp.GradScaler(DEV, ...)") replaces the callee and puts its arguments first. DEV stands for the
 * run-time device type. Query rules name a fix routine (`fixer:`). Every fix that needs `import torch`, the
 * device definition or the helper import carries the same insertion edits, so the fixer applies them once. */
#include "analyzer/core/an_target.h"
#include "util/ut_find.h"
#include "analyzer/python/an_pyfix.h"
#include "analyzer/python/an_pyfield.h"
#include "analyzer/python/an_context.h"
#include "analyzer/python/an_guard.h"
#include "analyzer/python/an_flow.h"
#include "analyzer/python/an_types.h"
#include "analyzer/python/an_query.h"
#include "analyzer/core/an_rule.h"
#include <ctype.h>
#include <stdio.h>

typedef struct {
    const an_fix_options *opt;
    const an_source *src;
    const char *text;
    TSNode root;
    const an_pyscope *scope;
    char *dev;              /* expression of the device type */
    /* header facts */
    uint32_t header;        /* insertion point for imports: after docstring, leading comments, __future__ */
    bool has_torch;         /* a top-level unaliased `import torch` */
    uint32_t after_imports; /* end of the line of the last import of the top block (or of `import torch`) */
    bool has_dev;           /* the device definition already exists */
    bool has_helper;        /* the helper import already exists */
    bool crlf;              /* the file's first line ends in \r\n */
    int *refs;              /* per scope binding: references outside imports (lazily counted) */
    bool refs_done;
    char *dev_name;
    an_types *types;        /* the receivers' type facts, made at the first question */
    /* union of what the applied fixes need */
    bool need_torch, need_dev, need_helper;
    /* guard rewrites: the file parsed whole (lazily), the findings whose fixes count as ported, the last verdict */
    an_guard *guard;
    bool whole;        /* root is a tree of the whole file (not of regions): the guard judges over it */
    const an_diag_list *diags;
    uint32_t *ends_before; /* ends_before[i]: the furthest end of diags 0..i (sorted by start), or NULL: fix_ports */
    size_t nends;          /* diags->len when it was made */
    an_guard_verdict verdict;
    bool guard_judged; /* the last finding's fix was a guard judged by an_guard */
    TSNode *tops;      /* the root's children, in order (tops_collect) */
    const an_pynodes *nodes; /* the tree's node index, or NULL */
    uint32_t nodes_hint;     /* where node_for last found a node in it */
    uint32_t ntops;
    TSNode path[32];   /* the last node_for's descent from its top-level statement: path[i] is path[i+1]'s parent */
    int npath;
    TSTreeCursor cur;  /* node_for's, reset for each descent (a new cursor grows its stack again) */
    bool has_cur;
    /* where an integer-device finding's name holds a caller's device or else the current index (an_flow's facts
     * with `mixed`, found once per file at the first such finding), ascending */
    UT_VEC(uint32_t) mixed_sinks;
    bool mixed_done;
    char *not_fixed; /* why the last finding's fixer made no fix, said in its message (heap; generate_one frees) */
    int lightning;   /* the file calls something named *Trainer( or *Fabric(: -1 not looked yet, 0 no, 1 yes */
    UT_VEC(uint32_t) accel; /* then where each `accelerator=` keyword's value starts (ascending) */
} fx;

typedef struct {
    bool torch, dev, helper;
} needs;

static bool is(TSNode n, const char *t) { return !ts_node_is_null(n) && !strcmp(ts_node_type(n), t); }
static uint32_t S(TSNode n) { return ts_node_start_byte(n); }
static uint32_t E(TSNode n) { return ts_node_end_byte(n); }

static char *slice(const fx *f, TSNode n) { return ut_strndup(f->text + S(n), E(n) - S(n)); }

static uint32_t line_end(const fx *f, uint32_t pos) {
    while (pos < f->src->len && f->text[pos] != '\n') pos++;
    return pos < f->src->len ? pos + 1 : pos;
}

static bool text_has_word(const char *s, const char *w) {
    size_t n = strlen(w);
    for (const char *p = strstr(s, w); p; p = strstr(p + 1, w)) {
        bool l = p == s || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.');
        bool r = !(isalnum((unsigned char)p[n]) || p[n] == '_');
        if (l && r) return true;
    }
    return false;
}

/* ---- header analysis ------------------------------------------------------------------------------------ */

static bool is_import_stmt(TSNode n) {
    return is(n, "import_statement") || is(n, "import_from_statement") || is(n, "future_import_statement");
}

/* a try/if statement that only imports (try: import x / except ImportError: ...) belongs to the import block */
static bool is_import_block(TSNode n) {
    if (!is(n, "try_statement") && !is(n, "if_statement")) return false;
    uint32_t c = ts_node_named_child_count(n);
    bool any = false;
    for (uint32_t i = 0; i < c; i++) {
        TSNode ch = ts_node_named_child(n, i);
        if (is(ch, "block")) {
            uint32_t k = ts_node_named_child_count(ch);
            for (uint32_t j = 0; j < k; j++) {
                TSNode st = ts_node_named_child(ch, j);
                if (is_import_stmt(st)) any = true;
                else if (!is(st, "pass_statement") && !is(st, "comment") && !is(st, "expression_statement"))
                    return false;
            }
        }
    }
    return any;
}

/* A statement that writes the process environment or the import path (os.environ[...] = , setdefault, update,
 * putenv, sys.path.insert/append/extend, sys.path = ...). */
static bool writes_env(const char *t) {
    static const char *const w[] = {"environ.setdefault(", "environ.update(", "putenv(", "sys.path.insert(",
                                    "sys.path.append(", "sys.path.extend(", "sys.path =", "sys.path[", "sys.path +=", NULL};
    for (int i = 0; w[i]; i++)
        if (strstr(t, w[i])) return true;
    for (const char *p = t; (p = strstr(p, "environ[")); p++) {
        const char *q = strchr(p, ']');
        while (q && (q[1] == ' ' || q[1] == ']')) q++;
        if (q && q[1] == '=' && q[2] != '=') return true;
    }
    return false;
}

/* The end of the file's environment set-up: the last top-level statement writing os.environ or sys.path before
 * the first top-level torch import (or before the first definition when the top level imports no torch). Imports
 * the fixes add go after it, so CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER or a sys.path entry set there still
 * precede them. */
static uint32_t env_setup_end(fx *f) {
    uint32_t end = 0;
    for (uint32_t i = 0; i < f->ntops; i++) {
        TSNode st = f->tops[i];
        if (!ts_node_is_named(st)) continue;
        if (is(st, "function_definition") || is(st, "class_definition") || is(st, "decorated_definition")) break;
        if (is_import_stmt(st)) {
            char *t = slice(f, st);
            bool torch = !strncmp(t, "import torch", 12) || !strncmp(t, "from torch", 10);
            ut_free(t);
            if (torch) break;
            continue;
        }
        if (is(st, "comment")) continue;
        char *t = slice(f, st);
        if (writes_env(t)) end = line_end(f, E(st));
        ut_free(t);
    }
    return end;
}

/* Does the top-level import statement st import the package pkg (`from pkg import ...`, `from pkg.sub import ...`,
 * `import pkg`, `import a, pkg.sub as b`)? */
static bool imports_package(const fx *f, TSNode st, const char *pkg, size_t pn) {
    TSNode names[64];
    uint32_t k = 0;
    if (is(st, "import_from_statement")) {
        names[k++] = an_py_field(st, "module_name", 11);
    } else if (is(st, "import_statement")) {
        for (uint32_t i = 0, n = ts_node_named_child_count(st); i < n && k < 64; i++) {
            TSNode c = ts_node_named_child(st, i);
            names[k++] = is(c, "aliased_import") ? an_py_field(c, "name", 4) : c;
        }
    }
    for (uint32_t i = 0; i < k; i++) {
        if (ts_node_is_null(names[i]) || !is(names[i], "dotted_name")) continue;
        uint32_t len = E(names[i]) - S(names[i]);
        const char *t = f->text + S(names[i]);
        if (len >= pn && !memcmp(t, pkg, pn) && (len == pn || t[pn] == '.')) return true;
    }
    return false;
}

/* Where an absolute helper import (`from classify import xpuify_device`, the helper in a package that the file
 * imports itself) can go: after the file's own first top-level import of that package, when a top-level statement
 * before it writes sys.path (yolov5's `classify/train.py` appends the repository root to sys.path after its torch
 * imports, then imports `classify.val`: run by path, `classify` resolves only after that): the end of the run of
 * imports that holds that import. 0 when the helper import is relative or plain, or no such set-up precedes the package's import. */
static uint32_t package_setup_end(fx *f) {
    const char *imp = f->opt->helper_import;
    if (!imp || strncmp(imp, "from ", 5) || imp[5] == '.' || strchr(imp, '\n')) return 0;
    const char *pkg = imp + 5;
    size_t pn = strcspn(pkg, ". ");
    uint32_t setup = 0;
    for (uint32_t i = 0; i < f->ntops; i++) {
        TSNode st = f->tops[i];
        if (!ts_node_is_named(st) || is(st, "comment")) continue;
        if (is(st, "function_definition") || is(st, "class_definition") || is(st, "decorated_definition")) return 0;
        if (is_import_stmt(st)) {
            if (!imports_package(f, st, pkg, pn)) continue;
            if (!setup) return 0;
            /* after the run of imports that one belongs to */
            uint32_t end = line_end(f, E(st));
            for (uint32_t k = i + 1; k < f->ntops; k++) {
                TSNode nx = f->tops[k];
                if (!ts_node_is_named(nx) || is(nx, "comment")) continue;
                if (!is_import_stmt(nx) || is(nx, "future_import_statement")) break;
                end = line_end(f, E(nx));
            }
            return end;
        }
        char *t = slice(f, st);
        if (strstr(t, "sys.path")) setup = line_end(f, E(st));
        ut_free(t);
    }
    return 0;
}

/* Is there top-level code that names CUDA between a and b (what a fix there would need the helper for)? */
static bool cuda_code_between(fx *f, uint32_t a, uint32_t b) {
    for (uint32_t i = 0; i < f->ntops; i++) {
        TSNode st = f->tops[i];
        if (S(st) < a || !ts_node_is_named(st) || is(st, "comment")) continue;
        if (S(st) >= b) break;
        for (uint32_t p = S(st); p + 4 <= E(st); p++) {
            char c0 = (char)(f->text[p] | 0x20);
            if ((c0 == 'c' || c0 == 'n') && (!strncasecmp(f->text + p, "cuda", 4) || !strncasecmp(f->text + p, "nccl", 4)))
                return true;
        }
    }
    return false;
}

/* The root's children, stepped through once by a cursor: ts_node_named_child(root, i) finds the i-th from the root
 * down for each i. */
static void tops_collect(fx *f) {
    uint32_t cap = ts_node_child_count(f->root);
    f->tops = ut_calloc(cap ? cap : 1, sizeof(TSNode));
    f->ntops = 0;
    if (f->nodes) { /* the same children, from the tree's node index: depth 1 */
        for (uint32_t i = 1; i < f->nodes->len && f->ntops < cap; i = f->nodes->items[i].next)
            f->tops[f->ntops++] = f->nodes->items[i].node;
        return;
    }
    TSTreeCursor c = ts_tree_cursor_new(f->root);
    for (bool m = ts_tree_cursor_goto_first_child(&c); m && f->ntops < cap; m = ts_tree_cursor_goto_next_sibling(&c))
        f->tops[f->ntops++] = ts_tree_cursor_current_node(&c);
    ts_tree_cursor_delete(&c);
}

/* The child of the root that tree-sitter's descent from the root to [s, e) goes through (the first whose end reaches
 * e and passes s, if it starts at or before s), or a null node: the fixer looks nodes up from there, not from the
 * root, whose descent costs the depth of the tree's hidden repetition nodes over tens of thousands of statements
 * for every finding. */
static TSNode top_for(const fx *f, uint32_t s, uint32_t e) {
    uint32_t lo = 0, hi = f->ntops; /* the ends ascend */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t end = E(f->tops[mid]);
        if (end >= e && end > s) hi = mid;
        else lo = mid + 1;
    }
    return lo < f->ntops && S(f->tops[lo]) <= s ? f->tops[lo] : (TSNode){0};
}

/* ts_node_parent(n), found by descending from n's top-level statement (ts_node_parent descends from the root):
 * at each level the first child that ends after n's start holds n, or is n (a child of another extent: ask
 * tree-sitter). */
static TSNode up(const fx *f, TSNode n) {
    if (ts_node_is_null(n) || E(n) <= S(n)) return ts_node_parent(n);
    for (int i = f->npath - 1; i > 0; i--)
        if (ts_node_eq(f->path[i], n)) return f->path[i - 1];
    TSNode top = top_for(f, S(n), E(n));
    if (ts_node_is_null(top) || ts_node_eq(top, n) || E(top) < E(n)) return ts_node_parent(n);
    TSTreeCursor c = ts_tree_cursor_new(top);
    TSNode parent = top, r = {0};
    while (ts_tree_cursor_goto_first_child_for_byte(&c, S(n)) >= 0) {
        TSNode ch = ts_tree_cursor_current_node(&c);
        /* tree-sitter 0.20.7 stops at the first child that ends at the byte too (the `.` before `cuda`) */
        while (E(ch) <= S(n) && ts_tree_cursor_goto_next_sibling(&c)) ch = ts_tree_cursor_current_node(&c);
        if (ts_node_eq(ch, n)) {
            r = parent;
            break;
        }
        if (S(ch) > S(n) || E(ch) < E(n)) break; /* not an ancestor: ask tree-sitter */
        parent = ch;
    }
    ts_tree_cursor_delete(&c);
    return ts_node_is_null(r) ? ts_node_parent(n) : r;
}

static void analyze_header(fx *f) {
    const char *dev_line_prefix = NULL;
    tops_collect(f);
    f->header = f->src->body;
    bool in_prologue = true, in_block = true, seen_docstring = false;
    f->after_imports = 0;
    for (uint32_t i = 0; i < f->ntops; i++) {
        TSNode st = f->tops[i];
        if (!ts_node_is_named(st)) continue;
        if (in_prologue) {
            if (is(st, "comment") || is(st, "future_import_statement") ||
                (!seen_docstring && is(st, "expression_statement") && is(ts_node_named_child(st, 0), "string"))) {
                if (is(st, "expression_statement")) seen_docstring = true;
                f->header = line_end(f, E(st));
                if (!is(st, "comment")) f->after_imports = f->header;
                continue;
            }
            in_prologue = false;
        }
        if (in_block && (is_import_stmt(st) || is_import_block(st) || is(st, "comment"))) {
            if (!is(st, "comment")) f->after_imports = line_end(f, E(st));
        } else {
            in_block = false;
        }
        if (is(st, "import_statement")) {
            uint32_t k = ts_node_named_child_count(st);
            for (uint32_t j = 0; j < k; j++) {
                TSNode nm = ts_node_named_child(st, j);
                if (is(nm, "dotted_name") && E(nm) - S(nm) == 5 && !memcmp(f->text + S(nm), "torch", 5)) {
                    /* the device definition needs torch: after the first top-level `import torch` if it comes
                     * after the opening import block */
                    if (!f->has_torch && !in_block && line_end(f, E(st)) > f->after_imports)
                        f->after_imports = line_end(f, E(st));
                    f->has_torch = true;
                }
            }
            char want[256];
            snprintf(want, sizeof want, "%s", f->opt->helper_import ? f->opt->helper_import : "");
            if (f->opt->target == AN_TARGET_COMPAT) {
                char *t = slice(f, st);
                char def[256];
                snprintf(def, sizeof def, "import %s", f->opt->helper_module);
                if (!strcmp(t, def) || (want[0] && !strcmp(t, want))) f->has_helper = true;
                ut_free(t);
            }
        } else if (is(st, "import_from_statement") && f->opt->target == AN_TARGET_COMPAT) {
            char *t = slice(f, st);
            if (f->opt->helper_import && !strcmp(t, f->opt->helper_import)) f->has_helper = true;
            ut_free(t);
        } else if (is(st, "try_statement") && f->opt->target == AN_TARGET_COMPAT && f->opt->helper_import &&
                   strchr(f->opt->helper_import, '\n')) {
            /* the guarded fallback import (try: relative / except ImportError: plain), whatever its line endings */
            char *t = slice(f, st);
            size_t o = 0;
            for (size_t k = 0; t[k]; k++)
                if (t[k] != '\r' || t[k + 1] != '\n') t[o++] = t[k];
            t[o] = 0;
            if (!strcmp(t, f->opt->helper_import)) f->has_helper = true;
            ut_free(t);
        } else if (is(st, "expression_statement")) {
            TSNode a = ts_node_named_child(st, 0);
            if (is(a, "assignment")) {
                TSNode l = an_py_field(a, "left", 4);
                char *t = slice(f, a);
                char *lt = slice(f, l);
                if ((strstr(t, AN_PYFIX_DEV_INIT) || strstr(t, AN_PYFIX_DEV_INIT_OLD)) && is(l, "identifier")) {
                    f->has_dev = true;
                    ut_free(f->dev_name);
                    f->dev_name = ut_strdup(lt);
                }
                ut_free(t), ut_free(lt);
            }
        }
    }
    (void)dev_line_prefix;
    if (f->after_imports < f->header) f->after_imports = f->header;
    uint32_t env = env_setup_end(f);
    if (env > f->after_imports) f->after_imports = env;
    uint32_t pkg = package_setup_end(f);
    if (pkg > f->after_imports && !cuda_code_between(f, f->after_imports, pkg)) f->after_imports = pkg;
}

/* ---- edits -------------------------------------------------------------------------------------------------- */

static an_fix *fix_new(const an_diag *d, an_applicability a, const char *title) {
    an_fix *x = ut_calloc(1, sizeof *x);
    x->applicability = a;
    x->title = ut_strdup(title);
    (void)d;
    return x;
}

static void edit(an_fix *x, uint32_t s, uint32_t e, const char *t) {
    an_edit ed = {s, e, ut_strdup(t)};
    ut_vec_push(&x->edits, ed);
}

static void edit_own(an_fix *x, uint32_t s, uint32_t e, char *t) {
    an_edit ed = {s, e, t};
    ut_vec_push(&x->edits, ed);
}

/* Replaces the word DEV in a template with the device expression. */
static char *subst_dev(const fx *f, const char *t, needs *nd) {
    ut_buf b;
    ut_buf_init(&b);
    for (const char *p = t; *p;) {
        bool start = p == t || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.');
        if (start && !strncmp(p, "DEV", 3) && !(isalnum((unsigned char)p[3]) || p[3] == '_')) {
            ut_buf_puts(&b, f->dev);
            nd->dev = true;
            p += 3;
        } else if (start && !strncmp(p, "xpuify_device.", 14)) {
            /* templates name the helper by its default module name */
            ut_buf_printf(&b, "%s.", f->opt->helper_module);
            p += 14;
        } else {
            ut_buf_putc(&b, *p++);
        }
    }
    char *s = ut_buf_take(&b);
    if (text_has_word(s, "torch")) nd->torch = true;
    if (f->opt->target == AN_TARGET_COMPAT && text_has_word(s, f->opt->helper_module)) nd->helper = true;
    return s;
}

/* ---- templates ---------------------------------------------------------------------------------------------- */

typedef struct {
    char *name; /* callee or reference */
    char *args; /* arguments to put first ("" for none); NULL for a name template */
} tmpl;

static bool parse_tmpl(const char *t, tmpl *out) {
    out->name = out->args = NULL;
    if (!t || !*t) return false;
    size_t n = strlen(t);
    if (n > 4 && !strcmp(t + n - 4, "...)")) {
        /* the last top-level '(' opens the argument template */
        int depth = 0;
        size_t open = 0;
        for (size_t i = 0; i < n - 1; i++) {
            if (t[i] == '(') { if (depth == 0) open = i; depth++; }
            else if (t[i] == ')') depth--;
        }
        if (!open) return false;
        out->name = ut_strndup(t, open);
        const char *a = t + open + 1, *end = t + n - 4;
        while (end > a && (end[-1] == ' ' || end[-1] == ',')) end--;
        out->args = ut_strndup(a, (size_t)(end - a));
    } else {
        for (const char *p = t; *p; p++)
            if (!(isalnum((unsigned char)*p) || strchr("_.()", *p))) return false;
        out->name = ut_strdup(t);
    }
    for (const char *p = out->name; *p; p++)
        if (*p == ' ') { ut_free(out->name), ut_free(out->args); return false; }
    return true;
}

static void tmpl_free(tmpl *t) { ut_free(t->name), ut_free(t->args); }

static bool has_positional(TSNode args) {
    uint32_t c = ts_node_named_child_count(args);
    for (uint32_t i = 0; i < c; i++) {
        TSNode a = ts_node_named_child(args, i);
        if (!is(a, "keyword_argument") && !is(a, "comment") && !is(a, "dictionary_splat")) return true;
    }
    return false;
}

static bool has_named_args(TSNode args) {
    uint32_t c = ts_node_named_child_count(args);
    for (uint32_t i = 0; i < c; i++)
        if (!is(ts_node_named_child(args, i), "comment")) return true;
    return false;
}

/* Puts `first` at the start of an argument list. */
static void insert_first_arg(fx *f, an_fix *x, TSNode args, const char *first) {
    (void)f;
    char *t;
    if (!has_named_args(args)) {
        t = ut_strdup(first);
        edit_own(x, S(args) + 1, E(args) - 1, t);
    } else {
        ut_buf b;
        ut_buf_init(&b);
        ut_buf_printf(&b, "%s, ", first);
        edit_own(x, S(args) + 1, S(args) + 1, ut_buf_take(&b));
    }
}

static bool in_isinstance(const fx *f, TSNode n) {
    TSNode p = up(f, n);
    if (is(p, "tuple")) p = up(f, p);
    if (!is(p, "argument_list")) return false;
    TSNode fn = an_py_field(up(f, p), "function", 8);
    if (!is(fn, "identifier")) return false;
    size_t l = E(fn) - S(fn);
    return (l == 10 && !memcmp(f->text + S(fn), "isinstance", 10)) || (l == 10 && !memcmp(f->text + S(fn), "issubclass", 10));
}

/* Whether a fix computed before rewrites [s, e) safely: the guarded code's torch.cuda calls, device strings and
 * `.cuda()` calls that this pass ports, and the guards inside it already decided. */
static bool fix_ports(void *ctx, uint32_t s, uint32_t e) {
    const fx *f = ctx;
    if (f->ends_before && f->nends == f->diags->len) {
        /* the findings that hold [s, e) start at or before s: back from the last of them, while one of those so
         * far ends at or after e (a guard asks for each CUDA use it holds: a scan of every finding made a file of
         * thousands of guards quadratic) */
        const an_diag *v = f->diags->items;
        size_t a = s == UINT32_MAX ? f->nends : an_diag_list_first_from(f->diags, s + 1);
        for (size_t j = a; j-- > 0 && f->ends_before[j] >= e;)
            if (v[j].fix && v[j].fix->applicability == AN_FIX_SAFE && v[j].end >= e) return true;
        return false;
    }
    for (size_t i = 0; i < f->diags->len; i++) {
        const an_diag *d = &f->diags->items[i];
        if (d->fix && d->fix->applicability == AN_FIX_SAFE && d->start <= s && e <= d->end) return true;
    }
    return false;
}

/* `range(torch.cuda.device_count())` as what a for loop or a comprehension iterates over: the count guards the
 * body as a CUDA test does (it runs no time where CUDA is missing), so its rewrite is judged like a guard's */
static bool loop_bound(const fx *f, const an_diag *d) {
    if (!d->entry || strcmp(d->entry->name, "torch.cuda.device_count") || ts_node_is_null(f->root)) return false;
    TSNode n = ts_node_descendant_for_byte_range(f->root, d->start, d->end);
    while (!ts_node_is_null(n) && (S(n) > d->start || E(n) < d->end)) n = ts_node_parent(n);
    TSNode call = ts_node_parent(n), args = ts_node_parent(call), rng = ts_node_parent(args), loop = ts_node_parent(rng);
    if (!is(call, "call") || !ts_node_eq(an_py_field(call, "function", 8), n) || !is(args, "argument_list") ||
        !is(rng, "call") || !(is(loop, "for_statement") || is(loop, "for_in_clause")) ||
        !ts_node_eq(an_py_field(loop, "right", 5), rng))
        return false;
    TSNode fn = an_py_field(rng, "function", 8);
    return is(fn, "identifier") && E(fn) - S(fn) == 5 && !memcmp(f->text + S(fn), "range", 5);
}

/* judged like a guard: a CUDA availability test, or a device count a loop runs over */
static bool guard_like(const fx *f, const an_diag *d) {
    return (d->rule && d->rule->guard_condition) || loop_bound(f, d);
}

/* A CUDA availability test (a rule marked guard_condition): the rewrite is safe when the code it guards is
 * device-generic after this pass's fixes (an_guard); none when that code does CUDA-only things (`if
 * torch.cuda.is_available(): DEVICE = DeviceType.CUDA` would label an XPU machine as CUDA, `major =
 * get_device_properties(0).major` raises AttributeError on XPU and MPS); unsafe otherwise. The reason goes into the
 * finding's message (an_pyfix_generate). */
static bool judge_guard(fx *f, const an_diag *d, an_applicability *app) {
    an_guard_verdict_clear(&f->verdict);
    if (!f->guard) { /* every test this pass judges: the guard parses the statements that hold them */
        UT_VEC(uint32_t) tests = {0};
        for (size_t i = 0; i < f->diags->len; i++)
            if (guard_like(f, &f->diags->items[i])) ut_vec_push(&tests, f->diags->items[i].start);
        /* over the front end's tree when it parsed the whole file; else the guard parses what it reads */
        f->guard = f->whole ? an_guard_borrow(f->src, f->root, f->scope) : an_guard_new(f->src, tests.items, tests.len);
        an_guard_set_helper(f->guard, f->opt->helper_module);
        ut_vec_free(&tests);
    }
    an_guard_judge(f->guard, d->start, d->end, fix_ports, f, &f->verdict);
    f->guard_judged = true;
    if (f->verdict.kind == AN_GUARD_CUDA) return false;
    *app = f->verdict.kind == AN_GUARD_GENERIC ? AN_FIX_SAFE : AN_FIX_UNSAFE;
    return true;
}

/* A device string inside a call to a CUDA-only function (`torch.cuda.default_stream(torch.device("cuda:0"))`)
 * must stay CUDA. */
static bool inside_cuda_only_call(const fx *f, TSNode n) {
    ut_buf q;
    ut_buf_init(&q);
    bool hit = false;
    for (TSNode p = up(f, n); !ts_node_is_null(p) && !hit; p = up(f, p)) {
        if (is(p, "block") || is(p, "module")) break;
        if (!is(p, "call")) continue;
        ut_buf_clear(&q);
        TSNode fn = an_py_field(p, "function", 8);
        if (an_pyscope_qualname(f->scope, fn, f->text, &q) && !strncmp(q.data, "torch.cuda.", 11)) hit = true;
    }
    ut_buf_free(&q);
    return hit;
}

/* A string node's prefix (lower case), its quote, and the byte range of its content. */
static bool string_parts(const fx *f, TSNode str, char *prefix, size_t psz, char *quote, size_t qsz, uint32_t *cs,
                         uint32_t *ce) {
    if (!is(str, "string")) return false;
    TSNode st = ts_node_child(str, 0);
    if (!is(st, "string_start")) return false;
    size_t p = 0;
    uint32_t i = S(st);
    while (i < E(st) && isalpha((unsigned char)f->text[i]) && p + 1 < psz) prefix[p++] = (char)tolower((unsigned char)f->text[i++]);
    prefix[p] = 0;
    size_t q = E(st) - i;
    if (q + 1 > qsz) return false;
    memcpy(quote, f->text + i, q);
    quote[q] = 0;
    an_py_string_content(str, f->text, cs, ce);
    return true;
}

/* The quote a string literal written at n must use: inside an f-string's {...} (before Python 3.12) not the
 * f-string's own delimiter. */
static char lit_quote(fx *f, TSNode n) {
    for (TSNode p = up(f, n); !ts_node_is_null(p); p = up(f, p)) {
        if (!is(p, "interpolation")) continue;
        char prefix[8], quote[8];
        uint32_t cs, ce;
        return string_parts(f, up(f, p), prefix, sizeof prefix, quote, sizeof quote, &cs, &ce) &&
                       quote[0] == '"' ? '\'' : '"';
    }
    return '"';
}

/* The accelerator APIs raise where no accelerator exists, while the device-agnostic program must still run on
 * the CPU: `torch.cuda.synchronize()` as a statement becomes `if DEV != "cpu": torch.accelerator.synchronize()`,
 * as a value `(torch.accelerator.memory_allocated() if DEV != "cpu" else 0)`. The fix's edits (all inside the
 * call) are folded into one edit of the call. false: no safe shape (a `;` line, a one-line block). */
static bool guard_off_cpu(fx *f, an_fix *x, TSNode call, const char *value) {
    uint32_t s = S(call), e = E(call);
    size_t len;
    an_edit *ed = x->edits.items;
    for (size_t i = 0; i < x->edits.len; i++)
        if (ed[i].start < s || ed[i].end > e) return false;
    /* edits relative to the call's text */
    an_edit rel[8];
    size_t n = x->edits.len < 8 ? x->edits.len : 8;
    for (size_t i = 0; i < n; i++) rel[i] = (an_edit){ed[i].start - s, ed[i].end - s, ed[i].text};
    for (size_t i = 1; i < n; i++) /* sorted by start */
        for (size_t j = i; j > 0 && rel[j - 1].start > rel[j].start; j--) {
            an_edit t = rel[j];
            rel[j] = rel[j - 1], rel[j - 1] = t;
        }
    char *callt = an_edits_apply(f->text + s, e - s, rel, n, &len);
    TSNode p = up(f, call);
    ut_buf b;
    ut_buf_init(&b);
    bool ok = true;
    if (is(p, "expression_statement") && ts_node_named_child_count(p) == 1) {
        TSNode prev = ts_node_prev_sibling(p), next = ts_node_next_sibling(p);
        uint32_t ls = S(p);
        while (ls > 0 && f->text[ls - 1] != '\n') ls--;
        bool starts_line = true;
        for (uint32_t i = ls; i < S(p); i++)
            if (f->text[i] != ' ' && f->text[i] != '\t') starts_line = false;
        if (!starts_line || (!ts_node_is_null(prev) && !strcmp(ts_node_type(prev), ";")) ||
            (!ts_node_is_null(next) && !strcmp(ts_node_type(next), ";")))
            ok = false;
        ut_buf_printf(&b, "if %s != \"cpu\": %s", f->dev, callt);
        s = S(p), e = E(p);
    } else if (*value) {
        {
        char q = lit_quote(f, call);
        ut_buf_printf(&b, "(%s if %s != %ccpu%c else %s)", callt, f->dev, q, q, value);
    }
    } else {
        ok = false;
    }
    ut_free(callt);
    if (!ok) { ut_buf_free(&b); return false; }
    for (size_t i = 0; i < x->edits.len; i++) ut_free(x->edits.items[i].text);
    x->edits.len = 0;
    edit_own(x, s, e, ut_buf_take(&b));
    return true;
}

/* Does an assignment target below n hold the attribute `name` (n bytes of text)? */
static bool assigns_attr(const fx *f, TSNode n, const char *name, size_t len, bool target) {
    if (target && is(n, "attribute") && E(n) - S(n) == len && !memcmp(f->text + S(n), name, len)) return true;
    if (!ut_memmem(f->text + S(n), E(n) - S(n), name, len)) return false;
    uint32_t c = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < c; i++) {
        TSNode ch = ts_node_named_child(n, i);
        bool t = target || ((is(n, "assignment") || is(n, "augmented_assignment")) &&
                            ts_node_eq(ch, an_py_field(n, "left", 4)));
        if (assigns_attr(f, ch, name, len, t)) return true;
    }
    return false;
}

static an_fix *fix_qualname(fx *f, const an_diag *d, TSNode n, needs *nd) {
    const an_entry *e = d->entry;
    an_applicability app = e ? e->fix : AN_FIX_NONE;
    if (e && e->has_compat_fix && f->opt->target == AN_TARGET_COMPAT && e->compat) app = e->compat_fix;
    if (!e || app == AN_FIX_NONE) return NULL;
    if (guard_like(f, d) && !judge_guard(f, d, &app)) return NULL;
    if (f->opt->target == AN_TARGET_ACCELERATOR &&
        an_version_newer(e->min_torch, f->opt->torch_major, f->opt->torch_minor))
        return NULL;
    const char *src_t = f->opt->target == AN_TARGET_COMPAT && e->compat ? e->compat : e->replacement;
    /* a guard of torch.distributed work on the device (DDP, collectives): true only where a backend carries the
     * device's tensors (not on MPS, where the original took its other branch); the helper has that test, and
     * torch.accelerator's is_available() does not say it */
    if (d->rule->guard_condition && f->guard_judged && f->verdict.distributed) {
        if (f->opt->target == AN_TARGET_COMPAT && e->compat) src_t = "xpuify_device.dist_available";
        else app = AN_FIX_UNSAFE;
    }
    tmpl t;
    if (!parse_tmpl(src_t, &t)) return NULL;
    an_fix *x = NULL;
    char title[512];
    snprintf(title, sizeof title, "Replace `%s` with `%s`", e->name, src_t);
    TSNode p = up(f, n);
    char *name = subst_dev(f, t.name, nd);
    bool callee = is(p, "call") && ts_node_eq(an_py_field(p, "function", 8), n);
    if (callee) {
        TSNode args = an_py_field(p, "arguments", 9);
        x = fix_new(d, app, title);
        edit_own(x, S(n), E(n), name), name = NULL;
        if (t.args && *t.args) {
            if (!is(args, "argument_list")) goto none; /* generator argument */
            bool kw = strchr(t.args, '=') != NULL;
            if (kw && has_positional(args)) goto none; /* `f(device_type=DEV, True)` would not parse */
            char *a = subst_dev(f, t.args, nd);
            insert_first_arg(f, x, args, a);
            ut_free(a);
        }
    } else if (is(p, "decorator")) {
        x = fix_new(d, app, title);
        if (t.args && *t.args) {
            char *a = subst_dev(f, t.args, nd);
            ut_buf b;
            ut_buf_init(&b);
            ut_buf_printf(&b, "%s(%s)", name, a);
            ut_free(a);
            edit_own(x, S(n), E(n), ut_buf_take(&b));
        } else {
            edit_own(x, S(n), E(n), name), name = NULL;
        }
    } else if (!t.args || in_isinstance(f, n) || is(p, "type") || is(p, "except_clause") ||
               (is(p, "tuple") && is(up(f, p), "except_clause"))) {
        /* a reference: `sync = torch.cuda.synchronize`, an annotation, isinstance, except; not one the file also
         * assigns (`saved = torch.cuda.is_available` ... `torch.cuda.is_available = saved`: a monkeypatch restored
         * with the helper's function would make torch.cuda's call the helper, which calls torch.cuda's: a loop) */
        if (is(n, "attribute") && assigns_attr(f, f->root, f->text + S(n), E(n) - S(n), false)) goto none;
        x = fix_new(d, app, title);
        edit_own(x, S(n), E(n), name), name = NULL;
    }
    ut_free(name);
    tmpl_free(&t);
    if (x && callee && f->opt->target == AN_TARGET_ACCELERATOR && e->off_cpu) {
        if (!guard_off_cpu(f, x, p, e->off_cpu)) {
            an_fix_free(x);
            *nd = (needs){0};
            return NULL;
        }
        nd->dev = true;
    }
    return x;
none:
    ut_free(name);
    tmpl_free(&t);
    an_fix_free(x);
    *nd = (needs){0};
    return NULL;
}

/* ---- imports ------------------------------------------------------------------------------------------------ */

/* References to each imported local name outside import statements (attribute names and keywords excluded),
 * counted in one walk the first time any is needed. */
static void count_all_refs(fx *f) {
    size_t n = f->scope->bindings.len;
    f->refs = ut_calloc(n ? n : 1, sizeof(int));
    f->refs_done = true;
    if (!n) return;
    TSTreeCursor cur = ts_tree_cursor_new(f->root);
    for (;;) {
        TSNode node = ts_tree_cursor_current_node(&cur);
        bool descend = !(is(node, "import_statement") || is(node, "import_from_statement") || is(node, "comment") ||
                         is(node, "string_content"));
        if (is(node, "identifier")) {
            uint32_t len = E(node) - S(node);
            const char *t = f->text + S(node);
            for (size_t i = 0; i < n; i++) {
                const char *l = f->scope->bindings.items[i].local;
                if (strlen(l) != len || memcmp(l, t, len)) continue;
                TSNode p = up(f, node);
                bool member = is(p, "attribute") && ts_node_eq(an_py_field(p, "attribute", 9), node);
                bool kw = is(p, "keyword_argument") && ts_node_eq(an_py_field(p, "name", 4), node);
                if (!member && !kw) f->refs[i]++;
                break;
            }
        }
        if (descend && ts_tree_cursor_goto_first_child(&cur)) continue;
        while (!ts_tree_cursor_goto_next_sibling(&cur))
            if (!ts_tree_cursor_goto_parent(&cur)) goto done;
    }
done:
    ts_tree_cursor_delete(&cur);
}

static int count_refs(fx *f, const char *name) {
    if (!f->refs_done) count_all_refs(f);
    int total = 0;
    for (size_t i = 0; i < f->scope->bindings.len; i++)
        if (!strcmp(f->scope->bindings.items[i].local, name)) return f->refs[i];
    return total;
}

/* Removes one imported name (the finding's range) from its `from ... import` statement when nothing uses it. */
static an_fix *fix_unused_import(fx *f, const an_diag *d) {
    TSNode n = ts_node_descendant_for_byte_range(f->root, d->start, d->end);
    while (!ts_node_is_null(n) && !is(n, "import_from_statement") && !(is(n, "dotted_name") && S(n) == d->start && E(n) == d->end))
        n = up(f, n);
    if (ts_node_is_null(n)) return NULL;
    TSNode item = n, st = up(f, n);
    if (is(st, "aliased_import")) item = st, st = up(f, st);
    if (!is(st, "import_from_statement")) return NULL;
    /* the local name */
    char *local;
    if (is(item, "aliased_import")) local = slice(f, an_py_field(item, "alias", 5));
    else local = slice(f, n);
    int refs = count_refs(f, local);
    ut_free(local);
    if (refs) return NULL;
    TSNode mod = an_py_field(st, "module_name", 11);
    UT_VEC(TSNode) names = {0};
    uint32_t c = ts_node_named_child_count(st);
    for (uint32_t i = 0; i < c; i++) {
        TSNode ch = ts_node_named_child(st, i);
        if (!ts_node_eq(ch, mod) && (is(ch, "dotted_name") || is(ch, "aliased_import"))) ut_vec_push(&names, ch);
    }
    an_fix *x = fix_new(d, AN_FIX_SAFE, "Remove the unused CUDA-only import");
    if (names.len == 1) {
        /* the whole statement, with its line when it stands alone on it */
        uint32_t s = S(st), e = E(st);
        uint32_t ls = s;
        while (ls > 0 && f->text[ls - 1] != '\n') ls--;
        bool alone_start = true;
        for (uint32_t i = ls; i < s; i++)
            if (f->text[i] != ' ' && f->text[i] != '\t') alone_start = false;
        uint32_t le = line_end(f, e);
        bool alone_end = true;
        for (uint32_t i = e; i < le; i++)
            if (!isspace((unsigned char)f->text[i])) alone_end = false;
        /* a comment after it: `from torch.cuda import X  # why` */
        uint32_t cm = e;
        while (cm < le && (f->text[cm] == ' ' || f->text[cm] == '\t')) cm++;
        bool comment_after = cm < le && f->text[cm] == '#';
        TSNode parent = up(f, st);
        uint32_t stmts = 0; /* the block's statements (its comments are named children too) */
        for (uint32_t i = 0, k = is(parent, "block") ? ts_node_named_child_count(parent) : 0; i < k; i++)
            stmts += !is(ts_node_named_child(parent, i), "comment");
        bool only_stmt_in_block = is(parent, "block") && stmts == 1;
        if (only_stmt_in_block) edit(x, s, e, "pass");
        else if (alone_start && alone_end) edit(x, ls, le, "");
        else if (alone_start && comment_after) edit(x, s, cm, ""); /* the comment stays, where the statement began */
        else edit(x, s, e, "pass");
    } else {
        size_t k = 0;
        while (k < names.len && !ts_node_eq(names.items[k], item)) k++;
        if (k + 1 < names.len) edit(x, S(item), S(names.items[k + 1]), "");
        else edit(x, E(names.items[k - 1]), E(item), "");
    }
    ut_vec_free(&names);
    return x;
}

/* ---- query-rule fixers -------------------------------------------------------------------------------------- */

static bool string_is(const fx *f, TSNode n, const char *want) {
    char prefix[8], quote[8];
    uint32_t cs, ce;
    if (!string_parts(f, n, prefix, sizeof prefix, quote, sizeof quote, &cs, &ce)) return false;
    return !strchr(prefix, 'f') && ce - cs == strlen(want) && !memcmp(f->text + cs, want, ce - cs);
}

/* compat: `torch.autocast("cuda", dtype=...)` becomes `xpuify_device.autocast(dtype=...)`, which disables
 * autocast where the device cannot do the dtype (as torch.cuda.amp.autocast does off CUDA) instead of raising. */
static an_fix *fix_compat_autocast(fx *f, const an_diag *d, TSNode str, needs *nd) {
    TSNode arg = str, p = up(f, str);
    if (is(p, "keyword_argument")) arg = p, p = up(f, p);
    if (!is(p, "argument_list")) return NULL;
    TSNode call = up(f, p), fn = an_py_field(call, "function", 8);
    ut_buf q;
    ut_buf_init(&q);
    bool autocast = an_pyscope_qualname(f->scope, fn, f->text, &q) &&
                    (!strcmp(q.data, "torch.autocast") || !strcmp(q.data, "torch.amp.autocast") ||
                     !strcmp(q.data, "torch.amp.autocast_mode.autocast"));
    ut_buf_free(&q);
    if (!autocast) return NULL;
    /* every other argument must be a keyword: the helper's positional order is torch.cuda.amp.autocast's */
    uint32_t c = ts_node_named_child_count(p);
    TSNode next = {0};
    bool found = false;
    for (uint32_t i = 0; i < c; i++) {
        TSNode a = ts_node_named_child(p, i);
        if (is(a, "comment")) continue;
        if (ts_node_eq(a, arg)) { found = true; continue; }
        if (!is(a, "keyword_argument")) return NULL;
        if (found && ts_node_is_null(next)) next = a;
    }
    an_fix *x = fix_new(d, AN_FIX_SAFE, "Use the device helper's autocast");
    char name[160];
    snprintf(name, sizeof name, "%s.autocast", f->opt->helper_module);
    edit(x, S(fn), E(fn), name);
    edit(x, S(arg), ts_node_is_null(next) ? E(arg) : S(next), "");
    nd->helper = true;
    return x;
}

/* n's place takes a conditional expression without parentheses: an argument, a keyword's value, an assignment's */
static bool bare_position(const fx *f, TSNode n) {
    TSNode p = up(f, n);
    return is(p, "argument_list") || is(p, "keyword_argument") || is(p, "assignment");
}

static an_fix *fix_device_string(fx *f, const an_diag *d, TSNode n, needs *nd) {
    char prefix[8], quote[8];
    uint32_t cs, ce;
    if (inside_cuda_only_call(f, n)) return NULL;
    if (f->opt->target == AN_TARGET_COMPAT && string_is(f, n, "cuda")) {
        an_fix *x = fix_compat_autocast(f, d, n, nd);
        if (x) return x;
    }
    /* `"cuda" if "cuda" in device else "cpu"` (a device type from a device string): torch.device(device).type */
    TSNode cx = up(f, n);
    if (string_is(f, n, "cuda") && is(cx, "conditional_expression") && ts_node_named_child_count(cx) == 3 &&
        ts_node_eq(ts_node_named_child(cx, 0), n) && string_is(f, ts_node_named_child(cx, 2), "cpu")) {
        TSNode cond = ts_node_named_child(cx, 1);
        if (is(cond, "comparison_operator") && ts_node_named_child_count(cond) == 2 &&
            string_is(f, ts_node_named_child(cond, 0), "cuda")) {
            TSNode op = ts_node_child(cond, 1);
            TSNode subj = ts_node_named_child(cond, 1);
            if (!ts_node_is_null(op) && E(op) - S(op) == 2 && !memcmp(f->text + S(op), "in", 2)) {
                an_fix *x = fix_new(d, AN_FIX_SAFE, "Take the device type from the device");
                char *st = slice(f, subj);
                ut_buf b;
                ut_buf_init(&b);
                ut_buf_printf(&b, "torch.device(%s).type", st);
                ut_free(st);
                edit_own(x, S(cx), E(cx), ut_buf_take(&b));
                nd->torch = true;
                return x;
            }
        }
    }
    /* `torch.device("cuda", i)`: the device of index i, and plain CPU on the CPU (`torch.device("cpu", 0)` is "cpu:0",
     * which torch.load's map_location rejects) */
    TSNode al = up(f, n), dc = up(f, al);
    if (string_is(f, n, "cuda") && is(al, "argument_list") && ts_node_named_child_count(al) == 2 &&
        ts_node_eq(ts_node_named_child(al, 0), n) && is(dc, "call")) {
        TSNode ia = ts_node_named_child(al, 1);
        if (is(ia, "keyword_argument")) {
            TSNode k = an_py_field(ia, "name", 4);
            ia = E(k) - S(k) == 5 && !memcmp(f->text + S(k), "index", 5) ? an_py_field(ia, "value", 5) : (TSNode){0};
        }
        ut_buf q;
        ut_buf_init(&q);
        bool tdev = !ts_node_is_null(ia) && !is(ia, "list_splat") && !is(ia, "dictionary_splat") && !is(ia, "comment") &&
                    an_pyscope_qualname(f->scope, an_py_field(dc, "function", 8), f->text, &q) && !strcmp(q.data, "torch.device");
        ut_buf_free(&q);
        if (tdev) {
            char *idx = slice(f, ia), *fn = slice(f, an_py_field(dc, "function", 8));
            ut_buf b;
            ut_buf_init(&b);
            if (f->opt->target == AN_TARGET_COMPAT) {
                ut_buf_printf(&b, "%s.device(%s)", f->opt->helper_module, idx);
                nd->helper = true;
            } else {
                bool bare = bare_position(f, dc);
                ut_buf_printf(&b, "%s%s(%s, %s) if %s != \"cpu\" else %s(\"cpu\")%s", bare ? "" : "(", fn, f->dev, idx,
                              f->dev, fn, bare ? "" : ")");
                nd->dev = true;
            }
            ut_free(idx);
            ut_free(fn);
            an_fix *x = fix_new(d, AN_FIX_SAFE, "Use the run-time device");
            edit_own(x, S(dc), E(dc), ut_buf_take(&b));
            return x;
        }
    }
    if (!string_parts(f, n, prefix, sizeof prefix, quote, sizeof quote, &cs, &ce)) return NULL;
    if (strchr(prefix, 'b') || strchr(prefix, 'u') || ce - cs < 4 || memcmp(f->text + cs, "cuda", 4)) return NULL;
    an_fix *x = fix_new(d, AN_FIX_SAFE, "Use the run-time device type");
    nd->dev = true;
    if (ce - cs == 4) {
        edit(x, S(n), E(n), f->dev);
        return x;
    }
    bool is_f = strchr(prefix, 'f') != NULL;
    ut_buf b;
    ut_buf_init(&b);
    /* "cuda:N" / f"cuda:{i}": an index; on the CPU it must disappear (map_location rejects "cpu:0") */
    const char *rest = f->text + cs + 5;
    uint32_t rn = ce - cs - 5;
    bool digits = ce - cs > 5 && f->text[cs + 4] == ':' && strspn(rest, "0123456789") >= rn;
    bool one_field = is_f && ce - cs > 7 && f->text[cs + 4] == ':' && rest[0] == '{' && rest[rn - 1] == '}' &&
                     !memchr(rest + 1, '{', rn - 2) && !memchr(rest + 1, '}', rn - 2) && !memchr(rest, '!', rn) &&
                     !memchr(rest, ':', rn);
    if (digits || one_field) {
        char *idx = digits ? ut_strndup(rest, rn) : ut_strndup(rest + 1, rn - 2);
        if (f->opt->target == AN_TARGET_COMPAT) {
            ut_buf_printf(&b, "%s.device_str(%s)", f->opt->helper_module, idx);
            nd->helper = true;
        } else {
            TSNode p = up(f, n);
            bool map_location = false;
            if (is(p, "keyword_argument")) {
                TSNode k = an_py_field(p, "name", 4);
                map_location = E(k) - S(k) == 12 && !memcmp(f->text + S(k), "map_location", 12);
            }
            /* a value bound to a name (an_flow) may reach map_location too: the form every position accepts */
            while (is(p, "conditional_expression") || is(p, "parenthesized_expression")) p = up(f, p);
            if (is(p, "assignment") || is(p, "expression_list") || is(p, "list") || is(p, "tuple") || is(p, "pair"))
                map_location = true;
            const char *o = digits ? "" : "{", *cl = digits ? "" : "}";
            if (map_location)
                ut_buf_printf(&b, "(f\"{%s}:%s%s%s\" if %s != \"cpu\" else \"cpu\")", f->dev, o, idx, cl, f->dev);
            else ut_buf_printf(&b, "f%s{%s}:%s%s%s%s", quote, f->dev, o, idx, cl, quote);
        }
        ut_free(idx);
        edit_own(x, S(n), E(n), ut_buf_take(&b));
        return x;
    }
    /* `"cuda:{}".format(i)`, `"cuda:%d" % i`: an index, as above (on the CPU an f-string keeping the ":" would give
     * "cpu:0", which map_location rejects); the whole formatting becomes the device string of that index */
    TSNode idx_node = {0}, whole = {0};
    if (!is_f && ((ce - cs == 7 && !memcmp(f->text + cs, "cuda:{}", 7)) ||
                  (ce - cs == 8 && !memcmp(f->text + cs, "cuda:{0}", 8)))) {
        TSNode attr = up(f, n), call = up(f, attr);
        TSNode an = is(attr, "attribute") ? an_py_field(attr, "attribute", 9) : attr;
        TSNode args = is(call, "call") ? an_py_field(call, "arguments", 9) : call;
        if (is(an, "identifier") && E(an) - S(an) == 6 && !memcmp(f->text + S(an), "format", 6) &&
            ts_node_eq(an_py_field(attr, "object", 6), n) && is(args, "argument_list") &&
            ts_node_named_child_count(args) == 1) {
            TSNode a = ts_node_named_child(args, 0);
            if (!is(a, "keyword_argument") && !is(a, "list_splat") && !is(a, "dictionary_splat") && !is(a, "comment"))
                idx_node = a, whole = call;
        }
    } else if (!is_f && ce - cs == 7 && (!memcmp(f->text + cs, "cuda:%d", 7) || !memcmp(f->text + cs, "cuda:%s", 7) ||
                                         !memcmp(f->text + cs, "cuda:%i", 7))) {
        TSNode op = up(f, n);
        TSNode opr = is(op, "binary_operator") ? an_py_field(op, "operator", 8) : op;
        TSNode right = is(op, "binary_operator") ? an_py_field(op, "right", 5) : op;
        if (is(opr, "%") && ts_node_eq(an_py_field(op, "left", 4), n) && !is(right, "tuple") &&
            !is(right, "parenthesized_expression"))
            idx_node = right, whole = op;
    }
    if (!ts_node_is_null(whole)) {
        char *idx = slice(f, idx_node);
        if (f->opt->target == AN_TARGET_COMPAT) {
            ut_buf_printf(&b, "%s.device_str(%s)", f->opt->helper_module, idx);
            nd->helper = true;
        } else {
            bool bare = bare_position(f, whole);
            ut_buf_printf(&b, "%s\"%%s:%%s\" %% (%s, %s) if %s != \"cpu\" else \"cpu\"%s", bare ? "" : "(", f->dev,
                          idx, f->dev, bare ? "" : ")");
        }
        ut_free(idx);
        edit_own(x, S(whole), E(whole), ut_buf_take(&b));
        return x;
    }
    ut_buf_putc(&b, 'f');
    if (strchr(prefix, 'r')) ut_buf_putc(&b, 'r');
    ut_buf_printf(&b, "%s{%s}", quote, f->dev);
    for (uint32_t i = cs + 4; i < ce; i++) {
        char ch = f->text[i];
        if (!is_f && (ch == '{' || ch == '}')) ut_buf_putc(&b, ch); /* literal braces double in an f-string */
        ut_buf_putc(&b, ch);
    }
    ut_buf_puts(&b, quote);
    edit_own(x, S(n), E(n), ut_buf_take(&b));
    return x;
}


/* The indentation of the line holding pos. */
static uint32_t indent_of(const fx *f, uint32_t pos) {
    uint32_t ls = pos;
    while (ls > 0 && f->text[ls - 1] != '\n') ls--;
    uint32_t i = ls;
    while (i < f->src->len && (f->text[i] == ' ' || f->text[i] == '\t')) i++;
    return i - ls;
}

/* Lightning's `accelerator=` (a call whose name ends in Trainer or Fabric, as XPU605 reads it) takes the device
 * selection's value: the value itself is that keyword's, or the name it is assigned to appears as
 * `accelerator=NAME` later in the file (a text scan: a region parse may not hold that statement). Lightning registers
 * no "xpu" accelerator, so the run-time device would make Trainer/Fabric raise on an XPU host, where the original
 * ran on the CPU. Says so in f->not_fixed. */
static bool lightning_accelerator(fx *f, TSNode value, TSNode name) {
    TSNode kw = up(f, value);
    while (is(kw, "parenthesized_expression")) kw = up(f, kw);
    const char *t = f->text;
    uint32_t at = 0;
    if (is(kw, "keyword_argument")) {
        TSNode k = an_py_field(kw, "name", 4), call = up(f, up(f, kw));
        TSNode fn = is(call, "call") ? an_py_field(call, "function", 8) : call;
        if (E(k) - S(k) == 11 && !memcmp(t + S(k), "accelerator", 11) && !ts_node_is_null(fn) &&
            ((E(fn) - S(fn) >= 7 && !memcmp(t + E(fn) - 7, "Trainer", 7)) ||
             (E(fn) - S(fn) >= 6 && !memcmp(t + E(fn) - 6, "Fabric", 6))))
            at = S(kw);
    }
    if (!at && !ts_node_is_null(name) && f->lightning < 0) { /* once per file: a dense file's findings each ask */
        f->lightning = ut_memmem(t, f->src->len, "Trainer(", 8) || ut_memmem(t, f->src->len, "Fabric(", 7);
        for (const char *p = t; f->lightning && (p = ut_memmem(p, (size_t)(t + f->src->len - p), "accelerator", 11)); p += 11) {
            if (p > t && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.')) continue;
            const char *q = p + 11;
            while (*q == ' ' || *q == '\t') q++;
            if (*q != '=' || q[1] == '=') continue;
            q++;
            while (*q == ' ' || *q == '\t') q++;
            ut_vec_push(&f->accel, (uint32_t)(q - t));
        }
    }
    if (!at && !ts_node_is_null(name) && f->lightning > 0) {
        uint32_t nl = E(name) - S(name);
        for (size_t i = 0; !at && i < f->accel.len; i++) {
            const char *q = t + f->accel.items[i];
            if (f->accel.items[i] <= E(name) || (size_t)(t + f->src->len - q) <= nl || memcmp(q, t + S(name), nl) ||
                isalnum((unsigned char)q[nl]) || q[nl] == '_' || q[nl] == '.')
                continue;
            at = f->accel.items[i];
        }
    }
    if (!at) return false;
    uint32_t line = 1;
    for (uint32_t i = 0; i < at; i++) line += t[i] == '\n';
    ut_free(f->not_fixed);
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_printf(&b, "the value is Lightning's `accelerator=` (line %u), which has no \"xpu\" accelerator: on an XPU host "
                  "the run-time device would make Trainer/Fabric raise where this code runs on the CPU (XPU605)", line);
    f->not_fixed = ut_buf_take(&b);
    return true;
}

/* One branch of a device selection: its block is the one statement `X = "dev"` or `X = F("dev")`, nothing else in the
 * file's text from the block's start to `to` (a region parse may hold part of a longer branch). */
static bool select_branch(fx *f, TSNode block, uint32_t to, TSNode *left, TSNode *value, TSNode *fn) {
    if (!is(block, "block") || ts_node_named_child_count(block) != 1) return false;
    TSNode st = ts_node_named_child(block, 0);
    TSNode asg = ts_node_named_child(st, 0);
    if (!is(st, "expression_statement") || ts_node_named_child_count(st) != 1 || !is(asg, "assignment")) return false;
    for (uint32_t p = E(st); p < to; p++)
        if (!isspace((unsigned char)f->text[p])) return false;
    *left = an_py_field(asg, "left", 4);
    TSNode right = an_py_field(asg, "right", 5);
    *fn = (TSNode){0};
    if (is(right, "call")) {
        TSNode args = an_py_field(right, "arguments", 9);
        if (!is(args, "argument_list") || ts_node_named_child_count(args) != 1) return false;
        *fn = an_py_field(right, "function", 8);
        right = ts_node_named_child(args, 0);
    }
    *value = right;
    return !ts_node_is_null(*left) && is(right, "string");
}

static bool same_text(const fx *f, TSNode a, TSNode b) {
    if (ts_node_is_null(a) || ts_node_is_null(b)) return ts_node_is_null(a) && ts_node_is_null(b);
    return E(a) - S(a) == E(b) - S(b) && !memcmp(f->text + S(a), f->text + S(b), E(a) - S(a));
}

/* A test that only probes the device `dev` ("mps" or "xpu"), as the helper's pick does: `torch.backends.mps.
 * is_available()` (or `is_built()`), `torch.xpu.is_available()`, `hasattr(torch.backends, "mps")`, `hasattr(torch,
 * "xpu")`, joined by `and` */
static bool probes_only(fx *f, TSNode c, const char *dev) {
    while (is(c, "parenthesized_expression") && ts_node_named_child_count(c) == 1) c = ts_node_named_child(c, 0);
    if (is(c, "boolean_operator")) {
        TSNode op = an_py_field(c, "operator", 8);
        return !ts_node_is_null(op) && E(op) - S(op) == 3 && !memcmp(f->text + S(op), "and", 3) &&
               probes_only(f, an_py_field(c, "left", 4), dev) && probes_only(f, an_py_field(c, "right", 5), dev);
    }
    if (!is(c, "call")) return false;
    TSNode fn = an_py_field(c, "function", 8), args = an_py_field(c, "arguments", 9);
    if (!is(args, "argument_list")) return false;
    uint32_t na = ts_node_named_child_count(args);
    if (is(fn, "identifier") && E(fn) - S(fn) == 7 && !memcmp(f->text + S(fn), "hasattr", 7)) {
        if (na != 2 || !string_is(f, ts_node_named_child(args, 1), dev)) return false;
        TSNode o = ts_node_named_child(args, 0);
        ut_buf q;
        ut_buf_init(&q);
        bool ok = an_pyscope_qualname(f->scope, o, f->text, &q) &&
                  !strcmp(q.data, !strcmp(dev, "mps") ? "torch.backends" : "torch");
        ut_buf_free(&q);
        return ok;
    }
    if (na) return false;
    ut_buf q;
    ut_buf_init(&q);
    bool ok = an_pyscope_qualname(f->scope, fn, f->text, &q) &&
              (!strcmp(dev, "mps") ? !strcmp(q.data, "torch.backends.mps.is_available") ||
                                         !strcmp(q.data, "torch.backends.mps.is_built")
                                   : !strcmp(q.data, "torch.xpu.is_available"));
    ut_buf_free(&q);
    return ok;
}

/* `if torch.cuda.is_available(): X = "cuda" else: X = "cpu"` (the query checked the shape): `X = DEV`, or
 * `X = torch.device(DEV)` when the branches build devices. Also a cascade whose `elif` branches probe MPS or XPU
 * only and pick it (`elif torch.backends.mps.is_available(): X = "mps"`): the helper's pick is that order with XPU
 * before MPS (no machine has both). Each branch is that one assignment in the file's text. */
static an_fix *fix_select_statement(fx *f, const an_diag *d, TSNode n, needs *nd) {
    uint32_t k = ts_node_named_child_count(n), ind = indent_of(f, S(n));
    TSNode left, value, fn, l, v, g;
    /* each clause's block runs to the next clause */
    TSNode clauses[16];
    uint32_t nc = 0;
    for (uint32_t i = 0; i < k; i++) {
        TSNode c = ts_node_named_child(n, i);
        if (is(c, "comment")) return NULL;
        if (is(c, "elif_clause") || is(c, "else_clause")) {
            if (nc == 16) return NULL;
            clauses[nc++] = c;
        }
    }
    if (!nc || !is(clauses[nc - 1], "else_clause")) return NULL;
    for (uint32_t p = S(n); p < E(n); p++)
        if (f->text[p] == '#') return NULL;
    if (!select_branch(f, an_py_field(n, "consequence", 11), S(clauses[0]), &left, &value, &fn)) return NULL;
    for (uint32_t i = 0; i < nc; i++) {
        bool last = i + 1 == nc;
        TSNode body = an_py_field(clauses[i], last ? "body" : "consequence", last ? 4 : 11);
        if (!select_branch(f, body, last ? E(n) : S(clauses[i + 1]), &l, &v, &g) || !same_text(f, l, left) ||
            !same_text(f, g, fn))
            return NULL;
        if (last) {
            if (!string_is(f, v, "cpu")) return NULL;
        } else {
            const char *dev = string_is(f, v, "mps") ? "mps" : string_is(f, v, "xpu") ? "xpu" : NULL;
            if (!dev || !probes_only(f, an_py_field(clauses[i], "condition", 9), dev)) return NULL;
        }
    }
    uint32_t p = E(n); /* the next statement is not inside the else branch */
    for (;;) {
        while (p < f->src->len && f->text[p] != '\n') {
            if (!isspace((unsigned char)f->text[p])) return NULL;
            p++;
        }
        if (p >= f->src->len) break;
        p++;
        uint32_t q = p;
        while (q < f->src->len && (f->text[q] == ' ' || f->text[q] == '\t')) q++;
        if (q >= f->src->len) break;
        if (f->text[q] == '\n' || f->text[q] == '\r' || f->text[q] == '#') { p = q; continue; }
        if (q - p > ind) return NULL;
        break;
    }
    if (lightning_accelerator(f, n, left)) return NULL;
    char *ls = slice(f, left);
    ut_buf b;
    ut_buf_init(&b);
    if (!ts_node_is_null(fn)) {
        char *fs = slice(f, fn);
        ut_buf_printf(&b, "%s = %s(%s)", ls, fs, f->dev);
        ut_free(fs);
    } else {
        ut_buf_printf(&b, "%s = %s", ls, f->dev);
    }
    ut_free(ls);
    an_fix *x = fix_new(d, AN_FIX_SAFE, "Use the run-time device");
    edit_own(x, S(n), E(n), ut_buf_take(&b));
    nd->dev = true;
    return x;
}

static an_fix *fix_device_select(fx *f, const an_diag *d, TSNode n, needs *nd) {
    if (is(n, "if_statement")) return fix_select_statement(f, d, n, nd);
    if (!is(n, "conditional_expression") || ts_node_named_child_count(n) != 3) return NULL;
    /* `"cuda" if torch.cuda.is_available() else "mps"`: MPS where there is no CUDA, as the helper's pick has it
     * (which adds XPU, and the CPU where the original picked an MPS device that is not there) */
    TSNode other = ts_node_named_child(n, 2);
    if (is(ts_node_named_child(n, 1), "not_operator")) other = ts_node_named_child(n, 0); /* "cpu" if not ... */
    TSNode asg = up(f, n), target = {0};
    while (is(asg, "parenthesized_expression")) asg = up(f, asg);
    if (is(asg, "assignment") && ts_node_eq(an_py_field(asg, "right", 5), n)) target = an_py_field(asg, "left", 4);
    if (lightning_accelerator(f, n, target)) return NULL;
    /* `torch.device("cuda") if ... else torch.device("cpu")`: the same callee on both arms (the query checked) */
    TSNode c0 = ts_node_named_child(n, 0);
    if (is(c0, "call") && is(other, "call")) {
        TSNode a = an_py_field(other, "arguments", 9);
        if (!is(a, "argument_list") || ts_node_named_child_count(a) != 1 || !string_is(f, ts_node_named_child(a, 0), "cpu"))
            return NULL;
        char *fn = slice(f, an_py_field(c0, "function", 8));
        ut_buf b;
        ut_buf_init(&b);
        ut_buf_printf(&b, "%s(%s)", fn, f->dev);
        ut_free(fn);
        an_fix *x = fix_new(d, AN_FIX_SAFE, "Use the run-time device");
        edit_own(x, S(n), E(n), ut_buf_take(&b));
        nd->dev = true;
        return x;
    }
    if (!string_is(f, other, "cpu") && !string_is(f, other, "mps")) return NULL;
    an_fix *x = fix_new(d, AN_FIX_SAFE, "Use the run-time device type");
    edit(x, S(n), E(n), f->dev);
    nd->dev = true;
    return x;
}

/* an argument that names a device rather than an index: `device`, `self.dev`, `args.device`, a string */
static bool pcre_free_word(const char *arg) {
    if (*arg == '"' || *arg == '\'' || !strncmp(arg, "f\"", 2) || !strncmp(arg, "f'", 2)) return true;
    const char *last = strrchr(arg, '.');
    last = last ? last + 1 : arg;
    return strcasestr(last, "dev") != NULL;
}

static an_fix *fix_cuda_method(fx *f, const an_diag *d, TSNode n, needs *nd) {
    TSNode attr = up(f, n);
    TSNode call = up(f, attr);
    if (!is(attr, "attribute") || !is(call, "call")) return NULL;
    TSNode args = an_py_field(call, "arguments", 9);
    if (!is(args, "argument_list")) return NULL;
    char *index = NULL;
    ut_buf kws;
    ut_buf_init(&kws);
    int npos = 0;
    bool ok = true;
    uint32_t c = ts_node_named_child_count(args);
    for (uint32_t i = 0; i < c && ok; i++) {
        TSNode a = ts_node_named_child(args, i);
        if (is(a, "comment")) continue;
        if (is(a, "keyword_argument")) {
            TSNode k = an_py_field(a, "name", 4);
            if (E(k) - S(k) == 6 && !memcmp(f->text + S(k), "device", 6)) {
                ut_free(index);
                index = slice(f, an_py_field(a, "value", 5));
            } else {
                char *t = slice(f, a);
                ut_buf_printf(&kws, ", %s", t);
                ut_free(t);
            }
        } else if (is(a, "list_splat") || is(a, "dictionary_splat") || ++npos > 1) {
            ok = false;
        } else {
            index = slice(f, a);
        }
    }
    an_fix *x = NULL;
    if (ok) {
        /* safe where the receiver is known to be a torch tensor or module (an_types); any other object with a
         * `.cuda()` method might mean something else by `.to()` */
        TSNode recv = an_py_field(attr, "object", 6);
        if (!ts_node_is_null(recv) && !f->types) f->types = an_types_new(f->text, f->src->len, f->scope);
        bool torch_recv = !ts_node_is_null(recv) && an_types_torch(f->types, S(recv), E(recv), S(recv));
        /* a receiver of unknown type: safe where nothing in the project or the file has a `.cuda()` that
         * `.to(DEV)` would not replace (the rule's doc says why) */
        char why[512], msg[640];
        const char *risk = torch_recv || ts_node_is_null(recv) ? NULL
                           : an_types_risk(f->types, S(recv), E(recv), S(recv), f->src->path, f->opt->helper_module,
                                           why, sizeof why);
        bool assumed = !torch_recv && !ts_node_is_null(recv) && !risk;
        if (!torch_recv && !assumed)
            snprintf(msg, sizeof msg, "Replace `.cuda()` with `.to(DEV)` (unsafe: the receiver's type is unknown, and %s)",
                     risk ? risk : "");
        x = fix_new(d, torch_recv || assumed ? AN_FIX_SAFE : AN_FIX_UNSAFE,
                    torch_recv ? "Replace `.cuda()` with `.to(DEV)` (the receiver is a torch tensor or module)"
                    : assumed  ? "Replace `.cuda()` with `.to(DEV)` (nothing in reach has a `.cuda()` of another meaning)"
                               : msg);
        ut_buf b;
        ut_buf_init(&b);
        if (index && !strcmp(index, "None")) ut_free(index), index = NULL;
        bool int_literal = index && strspn(index, "0123456789") == strlen(index);
        /* `.cuda(dev)` with a torch.device or a "cuda:1" string: an index form would raise; the compat helper
         * takes any form, the accelerator target leaves it to a human */
        bool device_like = index && !int_literal && pcre_free_word(index);
        if (index && device_like && f->opt->target == AN_TARGET_COMPAT) {
            ut_buf_printf(&b, "to(%s.device(%s)%s)", f->opt->helper_module, index, kws.data ? kws.data : "");
            nd->helper = true;
        } else if (index && device_like) {
            ut_buf_free(&b);
            an_fix_free(x);
            x = NULL;
        } else if (index && f->opt->target == AN_TARGET_COMPAT) {
            /* `.cuda(i)`: device i on an accelerator; the CPU has no index but 0 (torch.device("cpu", 1) raises) */
            ut_buf_printf(&b, "to(%s.device_str(%s)%s)", f->opt->helper_module, index, kws.data ? kws.data : "");
            nd->helper = true;
        } else if (index) {
            ut_buf_printf(&b, "to(f\"{%s}:{%s}\" if %s != \"cpu\" else \"cpu\"%s)", f->dev, index, f->dev,
                          kws.data ? kws.data : "");
        } else { /* `to(DEV[, kws])`: every finding of a file dense with them (appends, not a printf) */
            ut_buf_puts(&b, "to(");
            ut_buf_puts(&b, f->dev);
            if (kws.data) ut_buf_puts(&b, kws.data);
            ut_buf_putc(&b, ')');
        }
        if (x) {
            nd->dev = true;
            edit_own(x, S(n), E(args), ut_buf_take(&b));
        }
    }
    ut_free(index);
    ut_buf_free(&kws);
    return x;
}

static an_fix *fix_is_cuda(fx *f, const an_diag *d, TSNode n, needs *nd) {
    TSNode attr = up(f, n);
    if (!is(attr, "attribute")) return NULL;
    TSNode obj = an_py_field(attr, "object", 6);
    TSNode p = up(f, attr);
    /* `==` binds tighter than not/and/or, so these contexts need no parentheses */
    bool bare = is(p, "if_statement") || is(p, "elif_clause") || is(p, "while_statement") ||
                is(p, "boolean_operator") || is(p, "assignment") || is(p, "return_statement") ||
                is(p, "argument_list") || is(p, "keyword_argument") || is(p, "expression_statement") ||
                is(p, "parenthesized_expression") || is(p, "assert_statement");
    char *o = slice(f, obj);
    ut_buf b;
    ut_buf_init(&b);
    /* on an accelerator, "not on the CPU" is what is_cuda meant; comparing with DEV would be true for CPU
     * tensors on a machine without one */
    char q = lit_quote(f, attr);
    ut_buf_printf(&b, bare ? "%s.device.type != %ccpu%c" : "(%s.device.type != %ccpu%c)", o, q, q);
    ut_free(o);
    an_fix *x = fix_new(d, AN_FIX_UNSAFE, "Test for a tensor on an accelerator");
    edit_own(x, S(attr), E(attr), ut_buf_take(&b));
    (void)nd;
    return x;
}

static an_fix *fix_add_device_arg(fx *f, const an_diag *d, TSNode n, needs *nd) {
    TSNode call = up(f, n);
    TSNode args = an_py_field(call, "arguments", 9);
    if (!is(call, "call") || !is(args, "argument_list")) return NULL;
    an_fix *x = fix_new(d, AN_FIX_SAFE, "Pass the run-time device");
    insert_first_arg(f, x, args, f->dev);
    nd->dev = true;
    return x;
}

static an_fix *fix_nccl(fx *f, const an_diag *d, TSNode n, needs *nd) {
    /* backend names are case-insensitive: "NCCL" is NCCL too */
    if (!string_is(f, n, "nccl") && !string_is(f, n, "NCCL") && !string_is(f, n, "Nccl")) return NULL;
    const char *repl;
    char buf[256];
    if (f->opt->target == AN_TARGET_COMPAT) {
        snprintf(buf, sizeof buf, "%s.dist_backend()", f->opt->helper_module);
        repl = buf;
        nd->helper = true;
    } else {
        if (an_version_newer("2.6", f->opt->torch_major, f->opt->torch_minor)) return NULL;
        snprintf(buf, sizeof buf, "torch.distributed.get_default_backend_for_device(%s)", f->dev);
        repl = buf;
        nd->dev = nd->torch = true;
    }
    an_fix *x = fix_new(d, AN_FIX_SAFE, "Use the default backend of the run-time device");
    edit(x, S(n), E(n), repl);
    return x;
}

/* DDP(model, device_ids=V): V on accelerators, None on the CPU (DDP rejects device ids for a CPU model) */
static an_fix *fix_ddp_device_ids(fx *f, const an_diag *d, TSNode n, needs *nd) {
    if (!is(up(f, n), "keyword_argument")) return NULL;
    char *v = slice(f, n);
    ut_buf b;
    ut_buf_init(&b);
    char q = lit_quote(f, n);
    ut_buf_printf(&b, "%s if %s != %ccpu%c else None", v, f->dev, q, q);
    ut_free(v);
    an_fix *x = fix_new(d, AN_FIX_SAFE, "Pass device ids only on an accelerator");
    edit_own(x, S(n), E(n), ut_buf_take(&b));
    nd->dev = true;
    return x;
}

static an_fix *fix_set_device_index(fx *f, const an_diag *d, TSNode n, needs *nd) {
    if (!is(n, "call")) return NULL;
    if (an_version_newer("2.7", f->opt->torch_major, f->opt->torch_minor)) return NULL;
    TSNode fn = an_py_field(n, "function", 8);
    an_fix *x = fix_new(d, AN_FIX_SAFE, "Call set_device_index");
    edit(x, S(fn), E(fn), "torch.accelerator.set_device_index");
    nd->torch = true;
    return x;
}

static an_fix *fix_check_available(fx *f, const an_diag *d, TSNode n, needs *nd) {
    (void)nd;
    if (!is(n, "call")) return NULL;
    if (an_version_newer("2.7", f->opt->torch_major, f->opt->torch_minor)) return NULL;
    TSNode args = an_py_field(n, "arguments", 9);
    if (!is(args, "argument_list")) return NULL;
    an_fix *x = fix_new(d, AN_FIX_SAFE, "Pass check_available=True");
    insert_first_arg(f, x, args, "check_available=True");
    return x;
}

/* ---- entry fixers ------------------------------------------------------------------------------------------- */

#define EXT_HELPER "xpuify_extension"

/* `def xpuify_extension(` at the start of a line */
static bool has_ext_helper(const fx *f) {
    static const char def[] = "def " EXT_HELPER "(";
    const char *t = f->text, *end = t + f->src->len;
    for (const char *p = t; (p = ut_memmem(p, (size_t)(end - p), def, sizeof def - 1)); p++)
        if (p == t || p[-1] == '\n') return true;
    return false;
}

/* XPU606: `CUDAExtension(...)` becomes `xpuify_extension(...)`, a function (rewriters/templates/xpuify_extension.py)
 * inserted once after the imports that returns CUDAExtension(...) itself wherever the CUDA toolkit is found, and
 * SyclExtension or CppExtension elsewhere. Its own CUDAExtension call sits in an if-chain that tests SYCL, which
 * the analyzer treats as device-agnostic code, so fixing the output again changes nothing. */
static an_fix *fix_extension_build(fx *f, const an_diag *d, TSNode n) {
    TSNode call = up(f, n);
    if (!is(call, "call") || !ts_node_eq(an_py_field(call, "function", 8), n)) return NULL;
    if (!is(an_py_field(call, "arguments", 9), "argument_list")) return NULL;
    bool defined = has_ext_helper(f);
    /* a call in the file's opening (an import block such as `try: from ... import CUDAExtension; EXT = ...`) would
     * run before the function is defined */
    if (!defined && S(n) < f->after_imports) return NULL;
    /* the name already means something else in this file */
    if (!defined && text_has_word(f->text, EXT_HELPER)) return NULL;
    const char *helper = an_template_text(EXT_HELPER ".py", NULL);
    if (!defined && !helper) return NULL;
    an_fix *x = fix_new(d, d->entry->fix, "Build CUDAExtension, SyclExtension or CppExtension by what is available");
    edit(x, S(n), E(n), EXT_HELPER);
    if (!defined) {
        /* after the imports, two blank lines on each side */
        uint32_t at = f->after_imports;
        ut_buf b;
        ut_buf_init(&b);
        if (at > f->src->body) ut_buf_puts(&b, f->text[at - 1] == '\n' ? "\n\n" : "\n\n\n");
        ut_buf_puts(&b, helper);
        int blank = 0;
        for (uint32_t p = at; p < f->src->len && blank < 2;) {
            uint32_t le = line_end(f, p);
            bool empty = true;
            for (uint32_t i = p; i < le; i++)
                if (!isspace((unsigned char)f->text[i])) empty = false;
            if (!empty || le == p) break;
            blank++, p = le;
        }
        for (; blank < 2 && at < f->src->len; blank++) ut_buf_putc(&b, '\n');
        edit_own(x, at, at, ut_buf_take(&b));
    }
    return x;
}

/* The dtype a legacy tensor type stands for, read from its entry's replacement ("torch.empty(..., dtype=torch.float32,
 * device=DEV)"): the catalog stays the one place that pairs them. NULL when the entry names none. */
static char *legacy_dtype(const an_entry *e) {
    const char *r = e->replacement ? strstr(e->replacement, "dtype=") : NULL;
    if (!r) return NULL;
    r += 6;
    size_t n = 0;
    while (isalnum((unsigned char)r[n]) || r[n] == '_' || r[n] == '.') n++;
    return n > 6 && !strncmp(r, "torch.", 6) ? ut_strndup(r, n) : NULL;
}

/* Whether an argument is a size as the legacy constructors read it: an integer literal, `len(...)`, `x.size()`,
 * `x.size(i)`, `x.shape` or `x.shape[i]`, `x.numel()`, `x.dim()`. */
static bool legacy_size_arg(const fx *f, TSNode a) {
    if (is(a, "integer")) return true;
    if (is(a, "subscript")) a = an_py_field(a, "value", 5);
    if (is(a, "attribute")) {
        TSNode at = an_py_field(a, "attribute", 9);
        return E(at) - S(at) == 5 && !memcmp(f->text + S(at), "shape", 5);
    }
    if (!is(a, "call")) return false;
    TSNode fn = an_py_field(a, "function", 8);
    size_t l = E(fn) - S(fn);
    if (is(fn, "identifier")) return l == 3 && !memcmp(f->text + S(fn), "len", 3);
    if (!is(fn, "attribute")) return false;
    TSNode at = an_py_field(fn, "attribute", 9);
    l = E(at) - S(at);
    const char *t = f->text + S(at);
    return (l == 4 && !memcmp(t, "size", 4)) || (l == 5 && !memcmp(t, "numel", 5)) || (l == 3 && !memcmp(t, "dim", 3));
}

/* XPU106, called: `torch.cuda.FloatTensor(n, 512)` -> `torch.empty(n, 512, dtype=torch.float32, device=DEV)`,
 * `torch.cuda.FloatTensor([0.0])` -> `torch.tensor([0.0], dtype=torch.float32, device=DEV)`; what the legacy type
 * makes on CUDA (the current device, uninitialised for sizes). One argument that is neither a size nor a literal
 * sequence could be either: the helper decides at run time (compat target), else no fix. Keyword arguments and
 * splats get none; references (`isinstance`, `.type(...)`) are left to the finding's advice. Only the callee and
 * the end of the arguments are edited, so fixes inside the arguments stay independent. */
static an_fix *fix_legacy_tensor(fx *f, const an_diag *d, TSNode n, needs *nd) {
    TSNode call = up(f, n);
    if (!is(call, "call") || !ts_node_eq(an_py_field(call, "function", 8), n)) return NULL;
    TSNode args = an_py_field(call, "arguments", 9);
    if (!is(args, "argument_list")) return NULL;
    TSNode pos[64];
    uint32_t np = 0, c = ts_node_named_child_count(args);
    for (uint32_t i = 0; i < c; i++) {
        TSNode a = ts_node_named_child(args, i);
        if (is(a, "comment")) continue;
        if (is(a, "keyword_argument") || is(a, "list_splat") || is(a, "dictionary_splat") || np == sizeof pos / sizeof *pos)
            return NULL;
        pos[np++] = a;
    }
    char *dtype = legacy_dtype(d->entry);
    if (!dtype) return NULL;
    const char *ctor = "torch.empty";
    bool helper = false;
    if (np == 1 && !legacy_size_arg(f, pos[0])) {
        TSNode a = pos[0];
        if (is(a, "list") || is(a, "tuple") || is(a, "list_comprehension"))
            ctor = "torch.tensor";
        else if (f->opt->target == AN_TARGET_COMPAT)
            helper = true;
        else {
            ut_free(dtype);
            return NULL;
        }
    }
    an_fix *x = fix_new(d, AN_FIX_SAFE, helper ? "Make the tensor on the run-time device (the helper reads sizes or data)"
                                               : "Make the tensor with a factory on the run-time device");
    ut_buf b;
    ut_buf_init(&b);
    if (helper) {
        ut_buf_printf(&b, "%s.new_tensor", f->opt->helper_module);
        edit_own(x, S(n), E(n), ut_buf_take(&b));
        ut_buf_init(&b);
        ut_buf_printf(&b, "%s, ", dtype);
        edit_own(x, S(pos[0]), S(pos[0]), ut_buf_take(&b));
        nd->helper = nd->torch = true;
    } else {
        edit(x, S(n), E(n), ctor);
        if (np) ut_buf_printf(&b, ", dtype=%s, device=%s", dtype, f->dev);
        else ut_buf_printf(&b, "0, dtype=%s, device=%s", dtype, f->dev);
        uint32_t at = np ? E(pos[np - 1]) : S(args) + 1;
        edit_own(x, at, at, ut_buf_take(&b));
        nd->torch = nd->dev = true;
    }
    ut_free(dtype);
    return x;
}

/* `.to(rank)`: the index on the run-time device; on the CPU no index (torch allows none but 0 there). Text only: the
 * statement may lie outside what a region parse holds. */
static int u32_cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Whether the integer-device finding at start names a caller's device or else the current index (`device = device
 * or torch.cuda.current_device()`): the same facts an_python reported it from, asked once per file. */
static bool mixed_index(fx *f, uint32_t start) {
    if (!f->mixed_done) {
        an_flow_facts iv = {0};
        an_flow_int_devices(f->text, (uint32_t)f->src->len, 0, UINT32_MAX, &iv);
        for (size_t i = 0; i < iv.len; i++)
            if (iv.items[i].mixed) ut_vec_push(&f->mixed_sinks, iv.items[i].sink_start);
        an_flow_free(&iv);
        if (f->mixed_sinks.len > 1) qsort(f->mixed_sinks.items, f->mixed_sinks.len, sizeof(uint32_t), u32_cmp);
        f->mixed_done = true;
    }
    return f->mixed_sinks.len &&
           bsearch(&start, f->mixed_sinks.items, f->mixed_sinks.len, sizeof(uint32_t), u32_cmp) != NULL;
}

static an_fix *fix_int_device(fx *f, const an_diag *d, needs *nd) {
    /* `device = device or torch.cuda.current_device()`: a caller's device or an index; the helper's device_str takes
     * both, the inline f-string only an index */
    if (f->opt->target != AN_TARGET_COMPAT && mixed_index(f, d->start)) return NULL;
    char *idx = ut_strndup(f->text + d->start, d->end - d->start);
    ut_buf b;
    ut_buf_init(&b);
    if (f->opt->target == AN_TARGET_COMPAT) {
        ut_buf_printf(&b, "%s.device_str(%s)", f->opt->helper_module, idx);
        nd->helper = true;
    } else {
        ut_buf_printf(&b, "f\"{%s}:{%s}\" if %s != \"cpu\" else \"cpu\"", f->dev, idx, f->dev);
        nd->dev = true;
    }
    ut_free(idx);
    an_fix *x = fix_new(d, AN_FIX_SAFE, "Use the run-time device with this index");
    edit_own(x, d->start, d->end, ut_buf_take(&b));
    return x;
}

/* ts_node_descendant_for_byte_range(root, s, e) (the smallest node holding [s, e), anonymous ones included), by a
 * cursor's descent from the top-level statement the root's descent goes through, each level's first child that
 * ends after s if it holds [s, e); the nodes passed are kept in f->path for up(). */
static TSNode node_for(fx *f, uint32_t s, uint32_t e) {
    f->npath = 0;
    TSNode top = top_for(f, s, e);
    if (ts_node_is_null(top) || e <= s || E(top) < e) {
        TSNode n = ts_node_descendant_for_byte_range(ts_node_is_null(top) ? f->root : top, s, e);
        while (!ts_node_is_null(n) && (S(n) > s || E(n) < e)) n = ts_node_parent(n);
        return n;
    }
    TSNode n = top;
    f->path[f->npath++] = top;
    if (f->nodes) {
        /* from the index: the nodes that hold byte s are the last node starting at or before it and its ancestors;
         * the descent below keeps, at each level, the child that holds s (the first that ends after it) while it
         * also holds e: the deepest of those ancestors that ends after s and at or after e, below top */
        const an_pynodes *v = f->nodes;
        uint32_t k = an_pynodes_last_starting(v, s, &f->nodes_hint), chain[64], nchain = 0;
        while (k != AN_PYNODE_NONE && !ts_node_eq(v->items[k].node, top) &&
               (E(v->items[k].node) <= s || E(v->items[k].node) < e))
            k = v->items[k].parent;
        /* the nodes from k up to top, then top's descent to k as the loop below would make it */
        uint32_t j = k;
        for (; j != AN_PYNODE_NONE && !ts_node_eq(v->items[j].node, top); j = v->items[j].parent) {
            if (nchain == sizeof chain / sizeof *chain) break;
            chain[nchain++] = j;
        }
        if (j != AN_PYNODE_NONE && ts_node_eq(v->items[j].node, top)) {
            for (uint32_t i = nchain; i-- > 0;) {
                n = v->items[chain[i]].node;
                if (f->npath < (int)(sizeof f->path / sizeof *f->path)) f->path[f->npath++] = n;
                else f->npath = 0; /* too deep to keep: up() descends itself */
            }
            return n;
        }
        /* top is not in the index, or too deep a path: the cursor's descent */
        n = top;
        f->npath = 1;
    }
    if (f->has_cur) ts_tree_cursor_reset(&f->cur, top);
    else f->cur = ts_tree_cursor_new(top), f->has_cur = true;
    TSTreeCursor *c = &f->cur;
    while (ts_tree_cursor_goto_first_child_for_byte(c, s) >= 0) {
        TSNode ch = ts_tree_cursor_current_node(c);
        while (E(ch) <= s && ts_tree_cursor_goto_next_sibling(c)) ch = ts_tree_cursor_current_node(c);
        if (E(ch) <= s || S(ch) > s || E(ch) < e) break;
        n = ch;
        if (f->npath < (int)(sizeof f->path / sizeof *f->path)) f->path[f->npath++] = ch;
        else f->npath = 0; /* too deep to keep: up() descends itself */
    }
    return n;
}

static an_fix *generate(fx *f, const an_diag *d, needs *nd) {
    if (d->origin == AN_ORIGIN_IMPORT) return fix_unused_import(f, d);
    if (d->rule->fixer && !strcmp(d->rule->fixer, "int-device")) return fix_int_device(f, d, nd);
    TSNode n = node_for(f, d->start, d->end);
    if (ts_node_is_null(n)) return NULL;
    if (d->origin == AN_ORIGIN_REF && d->entry && d->entry->fixer) {
        if (d->entry->fix == AN_FIX_NONE) return NULL;
        if (!strcmp(d->entry->fixer, "extension-build")) return fix_extension_build(f, d, n);
        if (!strcmp(d->entry->fixer, "legacy-tensor")) return fix_legacy_tensor(f, d, n, nd);
        return NULL;
    }
    if (d->origin == AN_ORIGIN_REF) return fix_qualname(f, d, n, nd);
    const char *k = d->rule->fixer;
    if (!k) return NULL;
    if (!strcmp(k, "device-string")) return fix_device_string(f, d, n, nd);
    if (!strcmp(k, "device-select")) return fix_device_select(f, d, n, nd);
    if (!strcmp(k, "cuda-method")) return fix_cuda_method(f, d, n, nd);
    if (!strcmp(k, "is-cuda")) return fix_is_cuda(f, d, n, nd);
    if (!strcmp(k, "add-device-arg")) return fix_add_device_arg(f, d, n, nd);
    if (!strcmp(k, "nccl-backend")) return fix_nccl(f, d, n, nd);
    if (!strcmp(k, "set-device-index")) return fix_set_device_index(f, d, n, nd);
    if (!strcmp(k, "check-available")) return fix_check_available(f, d, n, nd);
    if (!strcmp(k, "ddp-device-ids")) return fix_ddp_device_ids(f, d, n, nd);
    return NULL;
}

/* The insertion edits for what the fixes need: imports at the header, the device definition after them. */
static void requirement_edits(fx *f, an_fix *x, const needs *nd) {
    bool torch = (nd->torch || (nd->dev && f->opt->target == AN_TARGET_ACCELERATOR)) && !f->has_torch;
    bool dev = nd->dev && f->opt->target == AN_TARGET_ACCELERATOR && !f->has_dev;
    bool helper = (nd->helper || (nd->dev && f->opt->target == AN_TARGET_COMPAT)) && !f->has_helper;
    ut_buf head;
    ut_buf_init(&head);
    if (torch) ut_buf_puts(&head, "import torch\n");
    if (helper) ut_buf_printf(&head, "%s\n", f->opt->helper_import ? f->opt->helper_import : "");
    char devline[512];
    snprintf(devline, sizeof devline, "%s = %s\n", f->dev_name, AN_PYFIX_DEV_INIT);
    /* new imports go at the end of the file's top import block (after the docstring and __future__ imports),
     * the device definition right after them */
    if (dev) ut_buf_puts(&head, devline);
    if (head.len && f->crlf) { /* inserted lines follow the file's line endings */
        ut_buf t;
        ut_buf_init(&t);
        for (size_t i = 0; i < head.len; i++) {
            if (head.data[i] == '\n') ut_buf_putc(&t, '\r');
            ut_buf_putc(&t, head.data[i]);
        }
        ut_buf_free(&head);
        head = t;
    }
    if (head.len) {
        uint32_t at = f->after_imports;
        if (at > 0 && f->text[at - 1] != '\n') { /* a last line without a newline needs one first */
            char *t = ut_buf_take(&head);
            ut_buf_printf(&head, "%s%s", f->crlf ? "\r\n" : "\n", t);
            ut_free(t);
        }
        edit_own(x, at, at, ut_buf_take(&head));
    }
    ut_buf_free(&head);
}

static int edit_cmp(const void *a, const void *b) {
    const an_edit *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

static char *pick_dev_name(const fx *f) {
    if (f->dev_name) return ut_strdup(f->dev_name);
    /* a file that already uses the name for something else gets a private one */
    if (text_has_word(f->text, AN_PYFIX_DEV_NAME)) return ut_strdup("_XPUIFY_DEVICE_TYPE");
    return ut_strdup(AN_PYFIX_DEV_NAME);
}

/* A file whose first line ends in CRLF gets CRLF in the lines the fixes insert (not a mix of endings). */
static void match_line_endings(const an_source *src, an_diag_list *diags) {
    const char *nl = memchr(src->text, '\n', src->len);
    if (!nl || nl == src->text || nl[-1] != '\r') return;
    for (size_t i = 0; i < diags->len; i++) {
        an_fix *x = diags->items[i].fix;
        for (size_t k = 0; x && k < x->edits.len; k++) {
            char *t = x->edits.items[k].text;
            if (!t || !strchr(t, '\n')) continue;
            ut_buf b;
            ut_buf_init(&b);
            for (const char *p = t; *p; p++) {
                if (*p == '\n' && (p == t || p[-1] != '\r')) ut_buf_putc(&b, '\r');
                ut_buf_putc(&b, *p);
            }
            ut_free(t);
            x->edits.items[k].text = ut_buf_take(&b);
        }
    }
}

/* Why a finding has no fix, said once at the end of its message: " (not fixed: why)". */
static void say_not_fixed(an_diag *d, const char *why) {
    if (!d->message || strstr(d->message, "(not fixed: ")) return;
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_printf(&b, "%s (not fixed: %s)", d->message, why);
    ut_free(d->message);
    d->message = ut_buf_take(&b);
}

/* One finding's fix, and what it needs (its fix's `needs`, where the run applies it). */
static void generate_one(fx *f, an_diag *d, needs *nd, bool dev_too_new) {
    f->guard_judged = false;
    if (!d->rule) return; /* left out inside a design scope (below) */
    d->fix = generate(f, d, nd);
    if (f->not_fixed) {
        if (!d->fix) say_not_fixed(d, f->not_fixed);
        ut_free(f->not_fixed);
        f->not_fixed = NULL;
    }
    if (d->fix && f->guard_judged && f->verdict.distributed && d->rule && d->rule->guard_condition && d->message) {
        /* said before the reasons below are appended; the advice names the test the fix writes */
        const char *adv = f->opt->target == AN_TARGET_COMPAT ? strstr(d->message, "use `xpuify_device.is_available`") : NULL;
        ut_buf b;
        ut_buf_init(&b);
        if (adv) {
            ut_buf_printf(&b, "%.*suse `xpuify_device.dist_available`%s", (int)(adv - d->message), d->message,
                          adv + strlen("use `xpuify_device.is_available`"));
            ut_free(d->message);
            d->message = ut_buf_take(&b);
            ut_buf_init(&b);
        }
        ut_buf_printf(&b, "%s. The guarded code runs torch.distributed work on the device (DDP, FSDP or collectives), "
                          "which no backend carries for MPS tensors: %s", d->message,
                      f->opt->target == AN_TARGET_COMPAT ? "the test becomes `xpuify_device.dist_available()` (CUDA, "
                                                           "or XPU with XCCL or oneCCL), false on MPS as the original was"
                                                         : "`torch.accelerator.is_available()` is also true on MPS (unsafe)");
        ut_free(d->message);
        d->message = ut_buf_take(&b);
    }
    if (d->fix && f->guard_judged && f->verdict.kind == AN_GUARD_GENERIC && d->entry && d->entry->note && d->message) {
        /* the entry's warning does not hold here: say why the rewrite is safe instead */
        char *at = strstr(d->message, d->entry->note);
        if (at) {
            ut_buf b;
            ut_buf_init(&b);
            ut_buf_printf(&b, "%.*sSafe here: the code it guards is device-generic (it may run on XPU%s too)%s",
                          (int)(at - d->message), d->message, f->verdict.distributed ? "" : " and MPS",
                          at + strlen(d->entry->note));
            ut_free(d->message);
            d->message = ut_buf_take(&b);
        }
    }
    if (d->rule && f->guard_judged && f->verdict.why && !d->rule->guard_condition) {
        /* a device count a loop runs over: what keeps its rewrite from being safe, said */
        ut_buf b;
        ut_buf_init(&b);
        if (f->verdict.kind == AN_GUARD_CUDA)
            ut_buf_printf(&b, "%s. Here the loop over the devices %s: keep this count (the loop runs no time where CUDA is "
                              "missing) and add an XPU loop beside it", d->message, f->verdict.why);
        else
            ut_buf_printf(&b, "%s. Unsafe here: the loop over the devices %s", d->message, f->verdict.why);
        ut_free(d->message);
        d->message = ut_buf_take(&b);
        ut_free(f->verdict.why);
        f->verdict.why = NULL;
    }
    bool kernel = f->verdict.kind == AN_GUARD_CUDA && f->verdict.kernel && f->verdict.why;
    if (d->rule && d->rule->guard_condition && f->guard_judged && (kernel || f->verdict.named || f->verdict.stated)) {
        /* CUDA by design: the guarded code routes CUDA devices to a kernel the project compiles for the CPU and CUDA
         * only, or the code says it is for CUDA (the guard sits in code named for CUDA; its gate states CUDA is
         * required). The finding becomes the design finding (an_python: XPU812) over the statement that holds the
         * test (a skipped test with its decorators, the if statement; after an early exit, the rest of its block):
         * its message says why, its scope is set */
        uint32_t hs, he;
        if (an_guard_holder(f->guard, d->start, d->end, !kernel, &hs, &he)) {
            ut_buf b;
            ut_buf_init(&b);
            int tl = (int)(d->end - d->start);
            const char *t = f->text + d->start;
            if (kernel)
                ut_buf_printf(&b, "`%.*s` guards code that %s: a test that routes CUDA devices to a CUDA kernel, CUDA by "
                                  "design, left as it is (nothing to port here; an XPU kernel would be added beside it)",
                              tl, t, f->verdict.why);
            else if (f->verdict.named && f->verdict.why && strncmp(f->verdict.why, "sits in ", 8))
                ut_buf_printf(&b, "`%.*s` sits in `%s`, named for CUDA, and guards code that %s: code whose purpose is "
                                  "CUDA by its name, left as it is (an XPU sibling of `%s` would be added beside it)",
                              tl, t, f->verdict.named, f->verdict.why, f->verdict.named);
            else if (f->verdict.named)
                ut_buf_printf(&b, "`%.*s` sits in `%s`, named for CUDA: code whose purpose is CUDA by its name, left as "
                                  "it is (an XPU sibling of `%s` would be added beside it)",
                              tl, t, f->verdict.named, f->verdict.named);
            else
                ut_buf_printf(&b, "`%.*s` gates code that the project states requires CUDA (%s)%s%s: CUDA by design, "
                                  "left as it is (where that code also runs on XPU, an XPU path would be added beside it)",
                              tl, t, f->verdict.stated, f->verdict.why ? "; the guarded code " : "",
                              f->verdict.why ? f->verdict.why : "");
            ut_free(d->message);
            d->message = ut_buf_take(&b);
            d->scope_start = hs, d->scope_end = he;
            ut_free(f->verdict.why);
            f->verdict.why = NULL;
            if (d->fix) an_fix_free(d->fix), d->fix = NULL; /* an unsafe fix of a stated gate: none */
            /* what the scope holds is CUDA by design too: its findings are left out (this one speaks for them), and
             * their fixes no longer count as ported for the guards judged after (the enclosing ones) */
            for (size_t i = 0; i < f->diags->len; i++) {
                an_diag *x = &f->diags->items[i];
                if (x != d && x->rule && !x->scope_end && x->start >= hs && x->start < he)
                    an_diag_drop(x); /* an_python compacts the list */
            }
        }
    }
    if (d->rule && d->rule->guard_condition && f->verdict.why) {
        /* what keeps a guard rewrite from being safe, said (once) */
        const char *why = f->verdict.why;
        bool said = strstr(d->message, "Here the branch reads CUDA-only results") && f->verdict.kind == AN_GUARD_CUDA;
        if (!said && !strstr(d->message, why)) {
            ut_buf b;
            ut_buf_init(&b);
            if (f->verdict.kind == AN_GUARD_CUDA && f->verdict.after_exit)
                ut_buf_printf(&b, "%s. Here the guarded code (after this early exit) %s: keep this CUDA test, or add "
                                  "an XPU path to that code", d->message, why);
            else if (f->verdict.kind == AN_GUARD_CUDA)
                ut_buf_printf(&b, "%s. Here the guarded code %s: keep this test and add an XPU branch beside it", d->message, why);
            else if (f->verdict.after_exit)
                ut_buf_printf(&b, "%s. Unsafe here: the guarded code (after this early exit) %s", d->message, why);
            else
                ut_buf_printf(&b, "%s. Unsafe here: the guarded code %s", d->message, why);
            ut_free(d->message);
            d->message = ut_buf_take(&b);
        }
        ut_free(f->verdict.why);
        f->verdict.why = NULL;
    }
    if (d->fix && dev_too_new && (*nd).dev) {
        an_fix_free(d->fix);
        d->fix = NULL;
    }
    if (d->fix && f->opt->target == AN_TARGET_COMPAT && f->opt->helper_withheld && ((*nd).helper || (*nd).dev)) {
        /* no import of the helper works here (the project model says why): the fix is withheld, and said */
        an_fix_free(d->fix);
        d->fix = NULL;
        say_not_fixed(d, f->opt->helper_withheld);
    }
    if (!d->fix) return;
    /* the version the rewritten code needs: the entry's, and 2.6 for the accelerator device definition */
    /* (an entry's fixer writes code for every torch: its min_torch is the replacement's) */
    const char *v = d->entry && d->origin == AN_ORIGIN_REF && !d->entry->fixer ? d->entry->min_torch : NULL;
    if (d->rule->fixer && !strcmp(d->rule->fixer, "nccl-backend")) v = "2.6";
    if (d->rule->fixer && (!strcmp(d->rule->fixer, "set-device-index") || !strcmp(d->rule->fixer, "check-available"))) v = "2.7";
    if (f->opt->target == AN_TARGET_ACCELERATOR && (*nd).dev && (!v || !an_version_newer(v, 2, 6)))
        v = "2.6";
    d->fix->min_torch = v;
    if (d->fix->applicability == AN_FIX_SAFE || f->opt->unsafe)
        d->fix->needs = ((*nd).torch ? AN_NEED_TORCH : 0) | ((*nd).dev ? AN_NEED_DEV : 0) | ((*nd).helper ? AN_NEED_HELPER : 0);
}

typedef struct {
    uint32_t start;
    size_t i;
} guard_at;

static int later_first(const void *a, const void *b) {
    const guard_at *x = a, *y = b;
    if (x->start != y->start) return x->start > y->start ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

unsigned an_pyfix_generate(const an_fix_options *opt, const an_source *src, TSNode root, const an_pynodes *nodes,
                           bool whole, const an_pyscope *scope, an_diag_list *diags, unsigned extra_needs) {
    an_fix_options o = *opt;
    if (!o.helper_module) o.helper_module = "xpuify_device";
    char helper_import[256];
    if (!o.helper_import) {
        snprintf(helper_import, sizeof helper_import, "import %s", o.helper_module);
        o.helper_import = helper_import;
    }
    fx f = {0};
    f.opt = &o, f.src = src, f.text = src->text, f.root = root, f.scope = scope, f.whole = whole, f.lightning = -1;
    f.nodes = nodes && nodes->len && ts_node_eq(nodes->items[0].node, root) ? nodes : NULL;
    analyze_header(&f);
    const char *nl = memchr(f.text, '\n', src->len);
    f.crlf = nl && nl > f.text && nl[-1] == '\r';
    char *name = pick_dev_name(&f);
    ut_free(f.dev_name);
    f.dev_name = name;
    ut_buf dev;
    ut_buf_init(&dev);
    if (o.target == AN_TARGET_COMPAT) ut_buf_printf(&dev, "%s.DEV", o.helper_module);
    else ut_buf_puts(&dev, f.dev_name);
    f.dev = ut_buf_take(&dev);
    bool dev_too_new = o.target == AN_TARGET_ACCELERATOR && an_version_newer("2.6", o.torch_major, o.torch_minor);
    needs *nds = ut_calloc(diags->len ? diags->len : 1, sizeof(needs));
    /* guards last, the later ones first: whether the code they guard is device-generic counts the fixes of this pass
     * inside it, nested guards included */
    f.diags = diags;
    bool sorted = true;
    for (size_t i = 1; i < diags->len && sorted; i++) sorted = diags->items[i - 1].start <= diags->items[i].start;
    if (sorted && diags->len) {
        f.ends_before = ut_malloc(diags->len * sizeof *f.ends_before), f.nends = diags->len;
        for (size_t i = 0; i < diags->len; i++)
            f.ends_before[i] = i && f.ends_before[i - 1] > diags->items[i].end ? f.ends_before[i - 1] : diags->items[i].end;
    }
    bool *guardish = ut_calloc(diags->len ? diags->len : 1, sizeof(bool));
    for (size_t i = 0; i < diags->len; i++) {
        guardish[i] = guard_like(&f, &diags->items[i]);
        if (!guardish[i]) generate_one(&f, &diags->items[i], &nds[i], dev_too_new);
    }
    guard_at *order = ut_calloc(diags->len ? diags->len : 1, sizeof *order);
    size_t ng = 0;
    for (size_t i = 0; i < diags->len; i++)
        if (guardish[i]) order[ng].start = diags->items[i].start, order[ng++].i = i;
    ut_free(guardish);
    qsort(order, ng, sizeof *order, later_first); /* by start, descending; the list's order among equal starts */
    for (size_t k = 0; k < ng; k++) generate_one(&f, &diags->items[order[k].i], &nds[order[k].i], dev_too_new);
    ut_free(order);
    ut_free(f.ends_before);
    f.ends_before = NULL;
    an_guard_free(f.guard);
    an_guard_verdict_clear(&f.verdict);
    /* what the fixes kept need (known once every guard is judged: a design scope may leave fixes out) */
    needs all = {(extra_needs & AN_NEED_TORCH) != 0, (extra_needs & AN_NEED_DEV) != 0, (extra_needs & AN_NEED_HELPER) != 0};
    for (size_t i = 0; i < diags->len; i++) {
        const an_fix *x = diags->items[i].fix;
        if (!x || !(x->applicability == AN_FIX_SAFE || o.unsafe)) continue;
        all.torch |= (x->needs & AN_NEED_TORCH) != 0;
        all.dev |= (x->needs & AN_NEED_DEV) != 0;
        all.helper |= (x->needs & AN_NEED_HELPER) != 0;
    }
    /* the insertion edit depends on `all` and the header alone: made for the first fix that needs it, copied after */
    bool req_made = false, req_any = false;
    an_edit req = {0};
    for (size_t i = 0; i < diags->len; i++) {
        an_fix *x = diags->items[i].fix;
        if (!x) continue;
        if (nds[i].torch || nds[i].dev || nds[i].helper) {
            if (!req_made) {
                size_t before = x->edits.len;
                requirement_edits(&f, x, &all);
                req_made = true;
                req_any = x->edits.len > before;
                if (req_any) req = x->edits.items[x->edits.len - 1];
            } else if (req_any) {
                edit(x, req.start, req.end, req.text);
            }
        }
        if (x->edits.len > 1) qsort(x->edits.items, x->edits.len, sizeof(an_edit), edit_cmp);
    }
    ut_free(nds);
    an_types_free(f.types);
    if (f.has_cur) ts_tree_cursor_delete(&f.cur);
    ut_free(f.tops);
    ut_free(f.refs);
    ut_free(f.dev);
    ut_vec_free(&f.mixed_sinks);
    ut_vec_free(&f.accel);
    /* what the insertion edits hold, as requirement_edits decides it */
    bool need_torch = (all.torch || (all.dev && o.target == AN_TARGET_ACCELERATOR)) && !f.has_torch;
    bool need_dev = all.dev && o.target == AN_TARGET_ACCELERATOR && !f.has_dev;
    bool need_helper = (all.helper || (all.dev && o.target == AN_TARGET_COMPAT)) && !f.has_helper;
    ut_free(f.dev_name);
    match_line_endings(src, diags);
    return (need_torch ? AN_NEED_TORCH : 0) | (need_dev ? AN_NEED_DEV : 0) | (need_helper ? AN_NEED_HELPER : 0);
}
