/* an_guard: is the code a CUDA availability test guards device-generic (see an_guard.h). */
#include "analyzer/python/an_guard.h"
#include "util/ut_find.h"
#include "analyzer/python/an_pyfield.h"
#include "analyzer/python/an_context.h"
#include "analyzer/python/an_pyregion.h"
#include "analyzer/python/an_resolve.h"
#include "analyzer/python/an_pynest.h"
#include "analyzer/core/an_deps.h"
#include "analyzer/project/an_modfile.h"
#include "analyzer/project/an_project.h"
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include "util/ut_smap.h"
#include <ctype.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include "analyzer/core/an_cache.h"
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);

#define GUARD_MAX_CALL_DEPTH 3 /* functions of the file followed through calls */
#define GUARD_MAX_FLOW_DEPTH 2 /* names assigned from the test, then from those */
#define GUARD_MAX_WALK_DEPTH 400
#define GUARD_MAX_MODULE_HOPS 3 /* imports followed from a callee's name to its definition (re-exports included) */
#define GUARD_MAX_MODULES 24    /* other modules of the project one file's guards read */

struct an_guard {
    const an_source *src;
    const char *text;
    uint32_t len;
    TSParser *parser;
    TSTree *tree;
    TSNode root;
    an_pyscope scope;
    bool borrowed; /* tree and scope are the caller's (an_guard_borrow): not freed here */
    bool partial; /* tree holds some top-level statements only (parse_partial) */
    bool cut;     /* and of some class, some members only */
    TSRange *ranges; /* partial: the tree's included ranges (sorted, disjoint) */
    uint32_t nranges;
    an_span_vec cuts; /* partial: the top-level statements of the classes it holds in part */
    UT_VEC(uint32_t) seeds; /* partial: where the statements it holds were picked (the tests, then what grew it) */
    UT_VEC(struct xmod *) mods;  /* the other modules of the project its guards' callees are in (read once each) */
    UT_VEC(struct xmod *) owned; /* those of them it frees (the others are the thread's memo's) */
    char *helper;               /* an_guard_set_helper */
    /* another module's own safe fixes in the run under way (an_guard_set_fixes_of), asked at the first need for each
     * run: fixed says whether the run fixes it; spans, the [start, end) pairs of its safe fixes, sorted by start */
    uint64_t fixes_gen;
    bool fixed;
    bool asked; /* the run answered (a run under way, and not from the analysis of another module's fixes) */
    bool fixes_nested; /* the answer was taken on a nested thread (a module read there may be read later elsewhere) */
    uint32_t *spans;
    size_t nspans;
    /* the whole tree's definitions and relative imports by name, made at the first lookup (index_defs) */
    bool indexed;
    ut_smap defs; /* name -> node_vec of function and class definitions */
    ut_smap rels; /* local name -> the dotted name (val) a relative import binds it to, num: its level */
};

/* another module of the project, parsed whole */
typedef struct xmod {
    char *path; /* absolute */
    an_source src;
    an_guard *g; /* NULL: not read (unreadable, too deep to parse) */
    uint64_t serial; /* this read's own number (a later read of the path gets another) */
} xmod;
static void xmod_free(xmod *m);

typedef struct {
    const an_guard *g;
    uint32_t s;
} visit;

/* a definition read because of a call: the call and the module it is in (NULL: not known) */
struct frame {
    TSNode def, call;
    an_guard *site;
};

typedef struct {
    an_guard *g;    /* the file whose code is being read: the guard's (home), or a callee's module */
    an_guard *home; /* the guard's file */
    const an_project *proj; /* its project model (looked up at the first callee in another module) */
    bool proj_done;
    an_guard_ported_fn ported;
    void *pctx;
    an_guard_kind kind;
    char *why;
    UT_VEC(visit) visited; /* definitions already followed (by file and start byte) */
    int call_depth;
    bool need_whole; /* a partial tree lacks what the verdict reads: judged again over the whole file */
    bool must_whole; /* of that, something more statements of the file would not give (else grown: grow) */
    UT_VEC(uint32_t) grow; /* offsets of definitions the verdict reads that a partial tree lacks */
    bool in_exit;    /* judging the code after an early exit (after_exit) */
    /* the test decides more than the code it guards in place: an early exit (callers, the rest of the module), a
     * skip decorator, a name or attribute that holds it, a literal answer returned to callers (`return True`) */
    bool escapes;
    bool exit_why;   /* the reason was found there */
    /* for the verdicts of callees in other modules kept per thread (follow_in_module): every module read since the
     * judge began (each time module_at gives one), the least index into visited that a cycle met (SIZE_MAX: none),
     * and whether something outside a callee's own code decided part of its verdict */
    UT_VEC(struct xmod *) touch;
    size_t seen_min;
    bool tainted;
    /* the guarded code runs torch.distributed work on the device: DDP or FSDP, a collective on tensors */
    bool distributed;
    /* the guarded code calls a kernel the project compiles for the CPU and CUDA only (an_guard_verdict.kernel) */
    bool kernel;
    /* definitions reached by calls (entered, met again, or a callee's kept verdict), and the callees of the calls
     * whose definitions were reached: their names say nothing the bodies did not (resolved_callee) */
    size_t follows;
    UT_VEC(TSNode) resolved;
    /* the definitions being read through calls, innermost last: a call of a parameter reads what the call passed */
    UT_VEC(struct frame) frames;
} judge;

typedef UT_VEC(TSNode) node_vec;

static void node_vec_free(void *v) {
    node_vec *nv = v;
    ut_vec_free(nv);
    ut_free(nv);
}

static void index_free(an_guard *g) {
    if (!g->indexed) return;
    ut_smap_free(&g->defs, node_vec_free);
    ut_smap_free(&g->rels, ut_free);
    memset(&g->defs, 0, sizeof g->defs), memset(&g->rels, 0, sizeof g->rels);
    g->indexed = false;
}

/* the verdict reads beyond a partial tree: judged again over the whole file */
static void beyond(judge *j) { j->need_whole = j->must_whole = true; }

static bool is(TSNode n, const char *t) { return !ts_node_is_null(n) && !strcmp(ts_node_type(n), t); }
static uint32_t S(TSNode n) { return ts_node_start_byte(n); }
static uint32_t E(TSNode n) { return ts_node_end_byte(n); }
static const char *T(const judge *j, TSNode n) { return j->g->text + S(n); }
static size_t L(TSNode n) { return E(n) - S(n); }
static bool eq(const judge *j, TSNode n, const char *w) { return L(n) == strlen(w) && !memcmp(T(j, n), w, L(n)); }
static TSNode field(TSNode n, const char *f) { return an_py_field(n, f, (uint32_t)strlen(f)); }
/* what the caller's fixes port in this pass: its own file's code only (another module's fixes are not known here) */
/* ---- another module's fixes in the same run ----------------------------------------------------------------------
 * A guard's callee in another module is read as that module's text is; where the run fixes that module too (check
 * and fix over a set of files: the engine answers, an_engine_fixes_begin), its own safe fixes count as done there as
 * the guard file's do at home (fairseq's `move_to_cuda`, in utils.py, serves the guards of its generate and validate
 * entry points). Elsewhere (one file of a project fixed alone, the language server) CUDA that the module's fixes
 * could port leaves the verdict unproven. */
static an_guard_fixes_fn fixes_of;
static _Atomic uint64_t fixes_gen = 1;

/* this thread analyzes a module whose fixes another file's guard asked for: no module's fixes count here, and the
 * callee verdicts it keeps are kept apart from the run's (their key says so) */
static _Thread_local bool nested;
void an_guard_nested_thread(void) { nested = true; }

void an_guard_set_fixes_of(an_guard_fixes_fn fn) {
    fixes_of = fn;
    atomic_fetch_add(&fixes_gen, 1);
}

/* whether the run fixes module g (asked once per run; the answer is a dependency of the findings: an_deps) */
static bool module_fixed(an_guard *g) {
    uint64_t gen = atomic_load(&fixes_gen);
    if (g->fixes_gen != gen || g->fixes_nested != nested) {
        ut_free(g->spans);
        g->spans = NULL, g->nspans = 0, g->fixed = g->asked = false;
        int r = fixes_of && !nested && g->src && g->src->path ? fixes_of(g->src->path, g->text, g->len, &g->spans, &g->nspans) : -1;
        g->fixed = r > 0, g->asked = r >= 0;
        g->fixes_gen = gen, g->fixes_nested = nested;
    }
    return g->fixed;
}

/* the guard file's project model (the callees' modules are in the same project), looked up at the first need */
static const an_project *project(judge *j) {
    if (!j->proj_done) j->proj = j->home->src->path ? an_project_shared(j->home->src->path) : NULL, j->proj_done = true;
    return j->proj;
}

static bool ported(judge *j, uint32_t s, uint32_t e) {
    if (j->g == j->home) return j->ported(j->pctx, s, e);
    if (!module_fixed(j->g)) return false;
    for (size_t i = 0; i < j->g->nspans && j->g->spans[2 * i] <= s; i++)
        if (e <= j->g->spans[2 * i + 1]) return true;
    return false;
}

/* the fixes of the module whose code is read are known: the guard's own, or another module's in the run */
static bool sees_fixes(const judge *j) { return j->g == j->home || module_fixed(j->g); }
/* CUDA that a fix could port (a torch.cuda reference, a "cuda" string) is CUDA-only in the guard's file; in another
 * module it is only unproven: that module's own fixes may port it, which this pass does not know */
static an_guard_kind portable(const judge *j) { return sees_fixes(j) ? AN_GUARD_CUDA : AN_GUARD_UNPROVEN; }


static bool ident_byte(char c) { return isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80; }

/* the word w (an identifier) somewhere in [s, s + n) */
static const char *word_at_or_after(const char *s, size_t n, const char *w, size_t wl) {
    const char *e = s + n;
    for (const char *p = s; p < e && (p = ut_memmem(p, (size_t)(e - p), w, wl)); p++)
        if ((p == s || !ident_byte(p[-1])) && (p + wl == e || !ident_byte(p[wl]))) return p;
    return NULL;
}

/* Where [from, to) of the file may define a function or class of that name: the name after `def` or `class` and
 * blanks (or line continuations), each offset into out (when not NULL). None proves that no definition node of the
 * whole file's tree there has it. Returns how many. */
static size_t defined_at(const an_guard *g, uint32_t from, uint32_t to, const char *name, size_t n, void *out) {
    UT_VEC(uint32_t) *at = out;
    const char *t = g->text, *e = t + to;
    size_t k = 0;
    for (const char *p = t + from; p < e && (p = word_at_or_after(p, (size_t)(e - p), name, n)); p++) {
        const char *b = p;
        while (b > t && strchr(" \t\f\r\n\\", b[-1]) && b[-1]) b--;
        if (b == p) continue;
        const char *w = b;
        while (w > t && ident_byte(w[-1])) w--;
        if ((b - w == 3 && !memcmp(w, "def", 3)) || (b - w == 5 && !memcmp(w, "class", 5))) {
            k++;
            if (at) ut_vec_push(at, (uint32_t)(w - t));
            else break;
        }
    }
    return k;
}

/* the offset inside the partial tree's included ranges */
static bool held(const an_guard *g, uint32_t at) {
    uint32_t lo = 0, hi = g->nranges;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->ranges[mid].end_byte <= at) lo = mid + 1;
        else hi = mid;
    }
    return lo < g->nranges && g->ranges[lo].start_byte <= at;
}

/* The definitions named [name, name + n) in [from, to) of j->g, a partial tree: true when it holds every one (what
 * the whole tree would find there, it finds); else those it lacks go to j->grow (the verdict is judged again over
 * a tree with them). */
static bool holds_defs(judge *j, uint32_t from, uint32_t to, const char *name, size_t n) {
    UT_VEC(uint32_t) at = {0};
    defined_at(j->g, from, to, name, n, &at);
    bool all = true;
    for (size_t i = 0; i < at.len; i++)
        if (!held(j->g, at.items[i])) {
            all = false;
            ut_vec_push(&j->grow, at.items[i]);
        }
    ut_vec_free(&at);
    if (!all) j->need_whole = true;
    return all;
}

/* whether [s, e) holds a test */
static bool holds_test(uint32_t s, uint32_t e, const uint32_t *tests, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (tests[i] >= s && tests[i] < e) return true;
    return false;
}

/* whether [s, e) holds a test or names `import` */
static bool wanted(const an_guard *g, uint32_t s, uint32_t e, const uint32_t *tests, size_t n) {
    return word_at_or_after(g->text + s, e - s, "import", 6) || holds_test(s, e, tests, n);
}

static void add_range(const an_source *src, TSRange *rs, uint32_t *nr, uint32_t s, uint32_t e) {
    if (*nr && rs[*nr - 1].end_byte == s) {
        rs[*nr - 1].end_byte = e, rs[*nr - 1].end_point = an_py_point_at(src, e);
        return;
    }
    rs[(*nr)++] = (TSRange){an_py_point_at(src, s), an_py_point_at(src, e), s, e};
}

/* The ranges parse_partial takes (sorted, disjoint, adjacent ones joined; *cut: a class in part); false: none, or the
 * scanner was unsure, or they are most of the file. The caller frees *out. */
static bool select_units(an_guard *g, const uint32_t *tests, size_t n, TSRange **out, uint32_t *nout, bool *cut) {
    const an_source *src = g->src;
    an_pyunits pu;
    *out = NULL, *nout = 0, *cut = false;
    if (!n) return false; /* nothing to judge here (another module, read whole) */
    if (!an_pyregion_units(src, &pu)) {
        an_pyunits_free(&pu);
        return false;
    }
    TSRange *rs = ut_malloc((pu.units.len + pu.members.len + pu.imports.len + 1) * sizeof *rs);
    uint32_t nr = 0, kept = 0;
    for (size_t u = 0; u < pu.units.len; u++) {
        const an_pyunit *x = &pu.units.items[u];
        if (!wanted(g, x->span.start, x->span.end, tests, n)) continue;
        if (x->imports_known && !holds_test(x->span.start, x->span.end, tests, n)) {
            /* a function wanted for its imports alone (a `main` that imports wandb): those statements, parsed as
             * top-level ones (the scope's bindings are every scope's; the definition itself is not held) */
            for (size_t k = 0; k < x->nimports; k++) {
                const an_span *im = &pu.imports.items[x->ifirst + k];
                kept += im->end - im->start;
                add_range(src, rs, &nr, im->start, im->end);
            }
            continue;
        }
        const an_span *ms = x->mcount ? pu.members.items + x->mfirst : NULL; /* no members: no array at all */
        size_t picked = 0;
        for (size_t m = 0; m < x->mcount; m++) picked += wanted(g, ms[m].start, ms[m].end, tests, n);
        if (!picked || picked == x->mcount) { /* whole (a test in its header, or in every member) */
            kept += x->span.end - x->span.start;
            add_range(src, rs, &nr, x->span.start, x->span.end);
            continue;
        }
        *cut = true;
        ut_vec_push(&g->cuts, x->span);
        kept += ms[0].start - x->span.start;
        add_range(src, rs, &nr, x->span.start, ms[0].start);
        for (size_t m = 0; m < x->mcount; m++)
            if (wanted(g, ms[m].start, ms[m].end, tests, n)) {
                kept += ms[m].end - ms[m].start;
                add_range(src, rs, &nr, ms[m].start, ms[m].end);
            }
    }
    an_pyunits_free(&pu);
    bool ok = nr && (uint64_t)kept * 10 < (uint64_t)(g->len - src->body) * 9;
    if (!ok) ut_free(rs), rs = NULL, nr = 0, *cut = false;
    *out = rs, *nout = nr;
    return ok;
}

/* The top-level statements that hold a test, and every one that names `import` (the file's bindings: the scope
 * is then the whole file's), parsed alone; of a class, its header and those of its members (as the front end
 * parses a definition: g->cut). What a verdict reads inside them is what the whole file's tree holds there. A
 * verdict that reads beyond them (a definition of the file, the rest of the module, a module-level name, the other
 * members of a cut class) sets need_whole; of those, the definitions it reads (functions of the file, methods of a
 * cut class called on self) can be grown into the tree (grow_partial). false (nothing parsed): the line scanner was unsure, the statements are
 * most of the file, or they do not parse cleanly. */
static bool parse_partial(an_guard *g, const uint32_t *tests, size_t n) {
    TSRange *rs;
    uint32_t nr;
    g->cuts.len = 0;
    bool cut, ok = select_units(g, tests, n, &rs, &nr, &cut);
    if (ok) {
        ts_parser_set_included_ranges(g->parser, rs, nr);
        g->tree = ts_parser_parse_string(g->parser, NULL, g->text, g->len);
        ok = g->tree && !ts_node_has_error(ts_tree_root_node(g->tree));
        if (!ok && g->tree) ts_tree_delete(g->tree), g->tree = NULL;
    }
    if (ok) g->ranges = rs, g->nranges = nr;
    else ut_free(rs), g->cuts.len = 0;
    g->cut = ok && cut;
    return ok;
}

static void parse_whole(an_guard *g) {
    uint32_t body = g->src->body;
    if (body) {
        TSRange r = {{0, body}, {UINT32_MAX, UINT32_MAX}, body, UINT32_MAX};
        ts_parser_set_included_ranges(g->parser, &r, 1);
    } else {
        ts_parser_set_included_ranges(g->parser, NULL, 0);
    }
    g->tree = ts_parser_parse_string(g->parser, NULL, g->text, g->len);
}

an_guard *an_guard_new(const an_source *src, const uint32_t *tests, size_t ntests) {
    an_guard *g = ut_calloc(1, sizeof *g);
    g->src = src, g->text = src->text, g->len = (uint32_t)src->len;
    g->parser = ts_parser_new();
    ts_parser_set_language(g->parser, tree_sitter_python());
    for (size_t i = 0; i < ntests; i++) ut_vec_push(&g->seeds, tests[i]);
    g->partial = parse_partial(g, tests, ntests);
    if (!g->partial) parse_whole(g);
    if (g->tree) {
        g->root = ts_tree_root_node(g->tree);
        an_pyscope_collect(&g->scope, g->root, g->text);
    }
    return g;
}

an_guard *an_guard_borrow(const an_source *src, TSNode root, const an_pyscope *scope) {
    an_guard *g = ut_calloc(1, sizeof *g);
    g->src = src, g->text = src->text, g->len = (uint32_t)src->len;
    g->tree = (TSTree *)root.tree, g->root = root;
    g->scope = *scope;
    g->borrowed = true;
    return g;
}

/* A partial tree grown by the statements that hold the offsets at (definitions a verdict reads): false when they
 * would be most of the file or do not parse cleanly (the tree is then as it was). */
static bool grow_partial(an_guard *g, const uint32_t *at, size_t n) {
    TSTree *old = g->tree;
    TSRange *rs = g->ranges;
    uint32_t nr = g->nranges;
    bool cut = g->cut;
    size_t seeds = g->seeds.len;
    an_span_vec cuts = g->cuts;
    memset(&g->cuts, 0, sizeof g->cuts);
    for (size_t i = 0; i < n; i++) ut_vec_push(&g->seeds, at[i]);
    g->tree = NULL, g->ranges = NULL, g->nranges = 0;
    if (!parse_partial(g, g->seeds.items, g->seeds.len)) {
        ut_vec_free(&g->cuts);
        g->tree = old, g->ranges = rs, g->nranges = nr, g->cut = cut, g->seeds.len = seeds, g->cuts = cuts;
        return false;
    }
    ut_vec_free(&cuts);
    index_free(g);
    an_pyscope_free(&g->scope), ts_tree_delete(old), ut_free(rs);
    g->root = ts_tree_root_node(g->tree);
    an_pyscope_collect(&g->scope, g->root, g->text);
    return true;
}

/* from a partial tree to the whole file's */
static void go_whole(an_guard *g) {
    index_free(g);
    if (g->tree) an_pyscope_free(&g->scope), ts_tree_delete(g->tree);
    memset(&g->scope, 0, sizeof g->scope);
    g->partial = g->cut = false;
    ut_free(g->ranges), g->ranges = NULL, g->nranges = 0;
    g->cuts.len = 0;
    parse_whole(g);
    if (g->tree) {
        g->root = ts_tree_root_node(g->tree);
        an_pyscope_collect(&g->scope, g->root, g->text);
    }
}

bool an_guard_holder(an_guard *g, uint32_t s, uint32_t e, bool rest, uint32_t *start, uint32_t *end) {
    if (!g || !g->tree) return false;
    TSNode n = ts_node_descendant_for_byte_range(g->root, s, e);
    while (!ts_node_is_null(n) && !ts_node_is_null(ts_node_parent(n)) && !is(ts_node_parent(n), "block") &&
           !is(ts_node_parent(n), "module"))
        n = ts_node_parent(n);
    if (ts_node_is_null(n) || is(n, "module") || S(n) > s || E(n) < e) return false;
    *start = S(n), *end = E(n);
    if (!rest) return true;
    if (is(n, "assert_statement")) {
        *end = E(ts_node_parent(n));
        return true;
    }
    if (!is(n, "if_statement")) return true;
    /* the clause whose condition holds the test: its own branch, or (an early exit) the rest of the block */
    TSNode clause = n;
    for (uint32_t i = 0, k = ts_node_named_child_count(n); i < k; i++) {
        TSNode c = ts_node_named_child(n, i), cond = field(c, "condition");
        if (is(c, "elif_clause") && !ts_node_is_null(cond) && S(cond) <= s && e <= E(cond)) clause = c;
    }
    TSNode cond = field(clause, "condition"), body = field(clause, "consequence");
    if (ts_node_is_null(cond) || ts_node_is_null(body) || S(cond) > s || e > E(cond)) return true;
    *start = S(clause), *end = E(body);
    int pol = 1; /* negated (`if not torch.cuda.is_available(): return`): the branch is the missing case */
    for (TSNode x = ts_node_descendant_for_byte_range(g->root, s, e); !ts_node_is_null(x); x = ts_node_parent(x)) {
        if (is(x, "not_operator")) pol = -pol;
        if (ts_node_eq(x, cond)) break;
    }
    if (pol < 0) *start = S(clause), *end = E(clause);
    if (pol < 0 && an_ctx_block_exit(body, g->text) != AN_CTX_EXIT_NONE) *end = E(ts_node_parent(n));
    return true;
}

void an_guard_free(an_guard *g) {
    if (!g) return;
    for (size_t i = 0; i < g->owned.len; i++) xmod_free(g->owned.items[i]);
    ut_vec_free(&g->owned);
    ut_vec_free(&g->mods);
    index_free(g);
    ut_free(g->helper);
    ut_free(g->spans);
    ut_free(g->ranges);
    ut_vec_free(&g->seeds);
    ut_vec_free(&g->cuts);
    if (g->tree && !g->borrowed) an_pyscope_free(&g->scope), ts_tree_delete(g->tree);
    if (g->parser) ts_parser_delete(g->parser);
    ut_free(g);
}

/* The first reason found wins; CUDA outranks UNPROVEN. */
static bool verdict(judge *j, an_guard_kind k, TSNode at, const char *fmt) {
    if (j->kind == AN_GUARD_CUDA || (j->kind == AN_GUARD_UNPROVEN && k != AN_GUARD_CUDA)) return false;
    ut_buf b;
    ut_buf_init(&b);
    size_t n = ts_node_is_null(at) ? 0 : L(at);
    const char *nl = n ? memchr(T(j, at), '\n', n) : NULL;
    if (nl) n = (size_t)(nl - T(j, at));
    if (n > 60) n = 60;
    ut_buf_printf(&b, fmt, (int)n, n ? T(j, at) : "");
    ut_free(j->why);
    j->why = ut_buf_take(&b);
    j->kind = k;
    j->exit_why = j->in_exit;
    j->kernel = false;
    return true;
}

/* verdict() with a reason that routes CUDA devices to a kernel the project compiles for the CPU and CUDA only: when
 * it becomes the verdict's reason, the verdict says so (an_guard_verdict.kernel) */
static void verdict_kernel(judge *j, TSNode at, const char *fmt) {
    if (verdict(j, AN_GUARD_CUDA, at, fmt)) j->kernel = true;
}

static bool word_in(const char *s, size_t n, const char *w) {
    size_t wl = strlen(w);
    for (size_t i = 0; i + wl <= n; i++) {
        if (strncasecmp(s + i, w, wl)) continue;
        if ((i == 0 || !isalpha((unsigned char)s[i - 1])) && (i + wl == n || !isalpha((unsigned char)s[i + wl])))
            return true;
    }
    return false;
}

/* The word "cuda" in s, or "CUDA" starting a CamelCase name (`"CUDAExecutionProvider"`, onnxruntime's CUDA
 * provider: yolov5 picks it when its `cuda` flag, a torch.cuda.is_available() test, is true) */
static bool names_cuda(const char *s, size_t n) {
    if (word_in(s, n, "cuda")) return true;
    for (size_t i = 0; i + 5 < n; i++)
        if (!memcmp(s + i, "CUDA", 4) && isupper((unsigned char)s[i + 4]) && islower((unsigned char)s[i + 5]) &&
            (i == 0 || !isalpha((unsigned char)s[i - 1])))
            return true;
    return false;
}

static bool in_list(const char *s, size_t n, const char *const *list) {
    for (int i = 0; list[i]; i++)
        if (strlen(list[i]) == n && !memcmp(s, list[i], n)) return true;
    return false;
}

/* names of CUDA-only libraries, CUDA extension modules and CUDA libraries' own names */
static const char *const cuda_libs[] = {"flash_attn", "flash_attn_func", "flash_attn_varlen_func", "flash_attn_interface",
                                        "apex", "amp_C", "triton", "tl", "bitsandbytes", "bnb", "xformers", "cupy",
                                        "pynvml", "nvml", "nvtx", "pycuda", "tensorrt", "cutlass", "nvidia", "cudnn",
                                        "cublas", "cufft", "curand", "cusparse", "nccl", "transformer_engine",
                                        "mamba_ssm", "causal_conv1d", "liger_kernel", "deep_gemm", NULL};
/* what only CUDA devices answer (also once the calls are ported): compute capability, the device index */
static const char *const cuda_results[] = {"major", "minor", "multi_processor_count", "get_device_capability",
                                           "current_device", "current_device_index", "get_arch_list", NULL};
static const char *const builtins[] = {
    "print", "len", "range", "int", "float", "str", "bool", "list", "dict", "tuple", "set", "frozenset", "isinstance",
    "issubclass", "getattr", "setattr", "hasattr", "delattr", "min", "max", "sum", "abs", "any", "all", "zip",
    "enumerate", "sorted", "reversed", "map", "filter", "round", "repr", "type", "id", "hash", "iter", "next", "open",
    "super", "format", "vars", "callable", "divmod", "pow", "ord", "chr", "bytes", "bytearray", "slice", "object",
    "Exception", "ValueError", "RuntimeError", "TypeError", "KeyError", "AssertionError", "NotImplementedError",
    "ImportError", "OSError", "IndexError", "AttributeError", "StopIteration", "locals", "globals", NULL};
/* modules whose functions run the same on every device */
static const char *const generic_mods[] = {
    "torch", "os", "sys", "gc", "time", "math", "random", "logging", "warnings", "json", "re", "pathlib", "itertools",
    "functools", "collections", "copy", "shutil", "tempfile", "unittest", "pytest", "contextlib", "typing",
    "dataclasses", "argparse", "inspect", "datetime", "platform", "io", "pickle", "glob", "string", "textwrap",
    "traceback", "threading", "numpy", "PIL", "tqdm", "einops", "psutil", "operator", "statistics", "enum", "abc",
    "types", "weakref", "queue", "csv", "struct", "hashlib", "uuid", "torchvision", "builtins", NULL};
/* torch.distributed work on the device's tensors: DDP, FSDP, the tensor collectives and point-to-point calls (the
 * object collectives go through CPU tensors on gloo) */
static bool distributed_work(const char *q) {
    static const char *const colls[] = {"all_reduce", "all_gather", "all_gather_into_tensor", "broadcast", "reduce",
                                        "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single",
                                        "gather", "scatter", "send", "recv", "isend", "irecv", NULL};
    if (!strcmp(q, "torch.nn.parallel.DistributedDataParallel") ||
        !strcmp(q, "torch.nn.parallel.distributed.DistributedDataParallel") || !strncmp(q, "torch.distributed.fsdp.", 23))
        return true;
    if (strncmp(q, "torch.distributed.", 18)) return false;
    for (int i = 0; colls[i]; i++)
        if (!strcmp(q + 18, colls[i])) return true;
    return false;
}

/* a process group of the device's backend: `init_process_group("nccl", ...)`, `new_group(backend="nccl")` (a gloo
 * group carries CPU tensors, which every host has) */
static bool device_group(const judge *j, const char *q, TSNode call) {
    if (strcmp(q, "torch.distributed.init_process_group") && strcmp(q, "torch.distributed.new_group")) return false;
    TSNode args = field(call, "arguments");
    return !ts_node_is_null(args) && word_in(T(j, args), L(args), "nccl");
}

/* the call (to q, its qualified name) is torch.distributed work on the device: noted for the verdict */
static void note_distributed(judge *j, const char *q, TSNode call) {
    if (distributed_work(q) || device_group(j, q, call)) j->distributed = true;
}

/* flags of torch.backends.cuda/cudnn that are plain settings on every torch build and only tune CUDA kernels */
static const char *const harmless_flags[] = {
    "torch.backends.cudnn.benchmark", "torch.backends.cudnn.deterministic", "torch.backends.cudnn.enabled",
    "torch.backends.cudnn.allow_tf32", "torch.backends.cuda.matmul.allow_tf32",
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction", NULL};

static bool qualname(judge *j, TSNode n, ut_buf *q) {
    ut_buf_clear(q);
    return an_pyscope_qualname(&j->g->scope, n, j->g->text, q);
}

/* `torch.backends.cudnn.benchmark = True` and the like: the left side of such an assignment */
static bool harmless_setting(judge *j, TSNode attr) {
    /* an assignment's target is followed by `=` (or `:` and its annotation): any other attribute is none, told from
     * the text before asking its parent (ts_node_parent walks down from the root, at every attribute of the code) */
    const char *t = j->g->text;
    uint32_t k = E(attr), n = j->g->len;
    while (k < n && (t[k] == ' ' || t[k] == '\t' || t[k] == '\\' || t[k] == '\r' || t[k] == '\n')) k++;
    if (k >= n || (t[k] != '=' && t[k] != ':')) return false;
    TSNode p = ts_node_parent(attr);
    if (!is(p, "assignment") || !ts_node_eq(field(p, "left"), attr)) return false;
    ut_buf q;
    ut_buf_init(&q);
    bool ok = qualname(j, attr, &q) && in_list(q.data, q.len, harmless_flags);
    ut_buf_free(&q);
    return ok;
}

static bool container(TSNode x) {
    return is(x, "module") || is(x, "block") || is(x, "function_definition") || is(x, "class_definition") ||
           is(x, "decorated_definition") || is(x, "if_statement") || is(x, "try_statement") ||
           is(x, "else_clause") || is(x, "elif_clause") || is(x, "except_clause");
}

/* the names a relative import statement binds, into g->rels (the first binding of a name wins) */
static void index_relative(an_guard *g, TSNode x) {
    TSNode mod = field(x, "module_name");
    if (!is(mod, "relative_import")) return;
    TSNode pre = ts_node_named_child(mod, 0), path = ts_node_named_child(mod, 1);
    int level = 0;
    if (is(pre, "import_prefix"))
        for (uint32_t b = S(pre); b < E(pre); b++) level += g->text[b] == '.';
    else
        path = pre;
    if (!level) return;
    for (uint32_t i = 0, k = ts_node_named_child_count(x); i < k; i++) {
        TSNode it = ts_node_named_child(x, i), nm = it, al = it;
        if (ts_node_eq(it, mod)) continue;
        if (is(it, "aliased_import")) nm = field(it, "name"), al = field(it, "alias");
        else if (!is(it, "dotted_name")) continue;
        if (ts_node_is_null(nm) || ts_node_is_null(al)) continue;
        bool added = false;
        ut_smap_slot *sl = ut_smap_put(&g->rels, g->text + S(al), L(al), &added);
        if (!added) continue;
        ut_buf d;
        ut_buf_init(&d);
        if (is(path, "dotted_name")) ut_buf_append(&d, g->text + S(path), L(path)), ut_buf_putc(&d, '.');
        ut_buf_append(&d, g->text + S(nm), L(nm));
        sl->val = ut_buf_take(&d);
        sl->num = level;
    }
}

/* One walk of the whole tree's statement containers: its definitions and relative imports by name. */
static void index_defs(an_guard *g) {
    g->indexed = true;
    if (!g->tree) return;
    TSTreeCursor c = ts_tree_cursor_new(g->root);
    int depth = 0;
    for (;;) {
        TSNode x = ts_tree_cursor_current_node(&c);
        bool def = is(x, "function_definition") || is(x, "class_definition");
        if (def) {
            TSNode nm = field(x, "name");
            if (!ts_node_is_null(nm)) {
                ut_smap_slot *sl = ut_smap_put(&g->defs, g->text + S(nm), L(nm), NULL);
                if (!sl->val) sl->val = ut_calloc(1, sizeof(node_vec));
                ut_vec_push((node_vec *)sl->val, x);
            }
        } else if (is(x, "import_from_statement")) {
            index_relative(g, x);
        }
        bool down = depth < GUARD_MAX_WALK_DEPTH && container(x);
        if (down && ts_tree_cursor_goto_first_child(&c)) { depth++; continue; }
        while (!ts_tree_cursor_goto_next_sibling(&c)) {
            if (!ts_tree_cursor_goto_parent(&c)) goto done;
            depth--;
        }
    }
done:
    ts_tree_cursor_delete(&c);
}

/* the function, class or module whose scope a definition binds its name in */
static TSNode def_scope(TSNode d) {
    for (TSNode p = ts_node_parent(d); !ts_node_is_null(p); p = ts_node_parent(p))
        if (is(p, "function_definition") || is(p, "class_definition") || is(p, "module")) return p;
    return (TSNode){0};
}

/* A definition d is what the bare name means at `at` (a node of the same tree; null: from another module, as an
 * attribute of the module): a module-level one, one of a function that holds `at`, or one of a class body that
 * holds `at` at class level. A def inside another function is none of them (detr's `setup_for_distributed` defines
 * a `print` that only its own body names). */
static bool visible_at(TSNode d, TSNode at) {
    TSNode s = def_scope(d);
    if (ts_node_is_null(s) || is(s, "module")) return true;
    if (ts_node_is_null(at)) return false;
    if (is(s, "function_definition")) return S(s) <= S(at) && E(at) <= E(s);
    return ts_node_eq(def_scope(at), s);
}

/* the definitions (function or class) of that name in the file that the name means at `at` (visible_at) */
static void find_defs(judge *j, const char *name, size_t n, TSNode at, node_vec *out) {
    if (j->g->partial) {
        if (!defined_at(j->g, 0, j->g->len, name, n, NULL)) return;
        if (j->g != j->home) { /* (never: other modules are read whole) */
            beyond(j);
            return;
        }
        if (!holds_defs(j, 0, j->g->len, name, n)) return;
    }
    if (!j->g->indexed) index_defs(j->g);
    const ut_smap_slot *sl = ut_smap_find(&j->g->defs, name, n);
    const node_vec *nv = sl ? sl->val : NULL;
    for (size_t i = 0; nv && i < nv->len; i++) {
        TSNode d = nv->items[i], top = d;
        if (!visible_at(d, at)) continue;
        if (j->g->cut && is(d, "class_definition")) { /* a class held in part: its other members are read too */
            if (is(ts_node_parent(top), "decorated_definition")) top = ts_node_parent(top);
            for (size_t c = 0; c < j->g->cuts.len; c++)
                if (j->g->cuts.items[c].start <= S(top) && S(top) < j->g->cuts.items[c].end) {
                    beyond(j);
                    out->len = 0;
                    return;
                }
        }
        ut_vec_push(out, d);
    }
}

static void check_code(judge *j, TSNode n);

/* Entering what a call reaches (a definition or an assigned value of j->g, starting at byte s): ENTER_SEEN when it
 * was followed already (a cycle), ENTER_DEEP when it lies past the depth (the verdict says so at call), ENTER_IN
 * when entered: the visit is kept and the depth raised, for leave() to lower. */
typedef enum { ENTER_SEEN, ENTER_DEEP, ENTER_IN } enter_result;

static enter_result enter(judge *j, uint32_t s, TSNode call) {
    for (size_t i = 0; i < j->visited.len; i++)
        if (j->visited.items[i].g == j->g && j->visited.items[i].s == s) {
            if (i < j->seen_min) j->seen_min = i;
            j->follows++;
            return ENTER_SEEN;
        }
    if (j->call_depth >= GUARD_MAX_CALL_DEPTH) {
        verdict(j, AN_GUARD_UNPROVEN, call, "calls `%.*s` through more functions than xpuify follows");
        j->tainted = true; /* what lies past the depth is not read: a verdict kept from here could differ from one
                            * walked in place, where an earlier visit decides (fairscale test_dependency.py) */
        return ENTER_DEEP;
    }
    visit v = {j->g, s};
    ut_vec_push(&j->visited, v);
    j->call_depth++;
    j->follows++;
    return ENTER_IN;
}

/* Leaving what enter() entered: where its code changed the verdict (from before), the reason says which call leads
 * there (`calls `name`, whose <what> ...`), once. */
static void leave(judge *j, an_guard_kind before, const char *name, size_t n, const char *what) {
    j->call_depth--;
    if (j->kind != before && j->why && !strstr(j->why, ", whose body ")) {
        ut_buf b;
        ut_buf_init(&b);
        ut_buf_printf(&b, "calls `%.*s`, whose %s %s", (int)n, name, what, j->why);
        ut_free(j->why);
        j->why = ut_buf_take(&b);
    }
}

/* A definition the guarded code calls: its body must pass the same test (cycles and depth end the search). */
/* the module whose tree holds n: the one being read, the guard's, or one read before */
static an_guard *module_of(judge *j, TSNode n) {
    if (n.tree == j->g->tree) return j->g;
    if (n.tree == j->home->tree) return j->home;
    for (size_t i = 0; i < j->touch.len; i++)
        if (j->touch.items[i]->g && n.tree == j->touch.items[i]->g->tree) return j->touch.items[i]->g;
    return NULL;
}

static void follow_def(judge *j, TSNode def, TSNode call) {
    an_guard_kind before = j->kind;
    if (enter(j, S(def), call) != ENTER_IN) return;
    TSNode body = field(def, "body");
    struct frame fr = {def, call, ts_node_is_null(call) ? NULL : module_of(j, call)};
    ut_vec_push(&j->frames, fr);
    if (!ts_node_is_null(body)) check_code(j, body);
    j->frames.len--;
    TSNode nm = field(def, "name");
    leave(j, before, T(j, nm), L(nm), "body");
}

static TSNode enclosing(TSNode n, const char *type) {
    for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); p = ts_node_parent(p))
        if (is(p, type)) return p;
    return (TSNode){0};
}

/* ---- callees in other modules of the project ---------------------------------------------------------------- */

/* Modules read for earlier files, kept while their stamp holds (a module of a project is the callee of many files'
 * guards): the run's (or the language server's) memory of them. One thread at a time reads each tree: a thread
 * has a memory of its own, and when it ends its memory is parked for the next thread that wants one (a run's
 * passes each start threads of their own: with a memory per thread, fairseq's utils.py was parsed three times in
 * a one-thread check). */
#define GUARD_MEMO_MAX 256
#define GUARD_RACY_NS (3LL * 1000000000) /* a file changed this close to its read may change again unseen */
typedef struct {
    xmod *m;
    an_stamp st;
    int64_t read_ns;
    uint8_t content[20];
} memo_ent;
typedef UT_VEC(memo_ent) memo_vec;
static pthread_key_t memo_key;
static pthread_once_t memo_once = PTHREAD_ONCE_INIT;

static void xmod_free(xmod *m) {
    if (!m) return;
    an_guard_free(m->g);
    an_source_free(&m->src);
    ut_free(m->path), ut_free(m);
}

/* the memories of ended threads, for the next ones (reachable: not leaks) */
static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static UT_VEC(void *) parked_memos, parked_vmemos;

static void park(void *list, void *v) {
    UT_VEC(void *) *l = list;
    pthread_mutex_lock(&park_lock);
    ut_vec_push(l, v);
    pthread_mutex_unlock(&park_lock);
}

static void *unpark(void *list) {
    UT_VEC(void *) *l = list;
    void *v = NULL;
    pthread_mutex_lock(&park_lock);
    if (l->len) v = l->items[--l->len];
    pthread_mutex_unlock(&park_lock);
    return v;
}

/* The calling thread's memory under key: its own, else a parked one, else a new one of size bytes. */
static void *thread_memory(pthread_key_t key, void *parked, size_t size) {
    void *v = pthread_getspecific(key);
    if (!v) {
        if (!(v = unpark(parked))) v = ut_calloc(1, size);
        pthread_setspecific(key, v);
    }
    return v;
}

static void memo_park(void *v) { park(&parked_memos, v); }
static void memo_init(void) { pthread_key_create(&memo_key, memo_park); }

static memo_vec *memo(void) {
    pthread_once(&memo_once, memo_init);
    return thread_memory(memo_key, &parked_memos, sizeof(memo_vec));
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static xmod *xmod_parse(xmod *m) {
    char *deep = an_py_nesting_why(&m->src); /* tree-sitter does not survive such a file (an_pynest.h) */
    if (deep) ut_free(deep);
    else m->g = an_guard_new(&m->src, NULL, 0);
    return m;
}

static uint64_t xmod_serials;

static xmod *xmod_new(const char *path) {
    xmod *m = ut_calloc(1, sizeof *m);
    m->path = ut_strdup(path);
    m->serial = __atomic_add_fetch(&xmod_serials, 1, __ATOMIC_RELAXED);
    return m;
}

static xmod *touched(judge *j, xmod *m) {
    ut_vec_push(&j->touch, m);
    /* whether the run fixes it decides what its code counts as: a dependency of the findings, as its text is */
    if (fixes_of && m->g) {
        bool fixed = module_fixed(m->g);
        if (m->g->asked) an_deps_note_fixed(m->path, fixed);
    }
    return m;
}

/* The guard file's read of path, if it has one. */
static xmod *guard_file_read(const an_guard *h, const char *path) {
    for (size_t i = 0; i < h->mods.len; i++)
        if (!strcmp(h->mods.items[i]->path, path)) return h->mods.items[i];
    return NULL;
}

/* The thread's read of path while its stamp holds, else NULL. */
static memo_ent *memo_current(memo_vec *mv, const char *path) {
    struct stat st;
    an_stamp now = {0};
    if (stat(path, &st) == 0) an_stamp_of(&st, &now);
    for (size_t i = 0; i < mv->len; i++) {
        memo_ent *e = &mv->items[i];
        if (strcmp(e->m->path, path)) continue;
        if (an_stamp_eq(&e->st, &now) && now.mtime_ns < e->read_ns - GUARD_RACY_NS &&
            now.ctime_ns < e->read_ns - GUARD_RACY_NS)
            return e;
        return NULL;
    }
    return NULL;
}

/* The read module_xmod would give for path without reading anything (the guard file's, or the thread's while its
 * stamp holds), else NULL; *fresh counts those it would add to the guard file's modules. */
static xmod *known_read(judge *j, const char *path, size_t *fresh) {
    an_guard *h = j->home;
    xmod *had = guard_file_read(h, path);
    if (had) return had;
    if (h->mods.len + ++*fresh > GUARD_MAX_MODULES) return NULL;
    size_t len = 0;
    char *buf = an_project_overlay_text(path, &len);
    if (buf) {
        ut_free(buf);
        return NULL;
    }
    memo_ent *e = memo_current(memo(), path);
    return e ? e->m : NULL;
}

/* The module at path (absolute), read and parsed whole: an open editor buffer's text stands for its file; a file
 * read for an earlier guard file is reused while its stamp holds. Each module is noted as a dependency of the guard
 * file's findings (an_deps). The read is noted in j->touch; NULL: over the module limit (a read
 * whose file is unreadable has no tree: g NULL). */
static xmod *module_xmod(judge *j, const char *path) {
    an_guard *h = j->home;
    xmod *had = guard_file_read(h, path);
    if (had) return touched(j, had);
    if (h->mods.len >= GUARD_MAX_MODULES) {
        j->tainted = true; /* the modules read before decide */
        return NULL;
    }
    size_t len = 0;
    char *buf = an_project_overlay_text(path, &len);
    if (buf) { /* an editor's buffer: this guard file's own copy */
        xmod *m = xmod_new(path);
        an_source_init_mem(&m->src, path, buf, len);
        ut_free(buf);
        an_deps_note(path, m->src.text, m->src.len, true);
        ut_vec_push(&h->mods, xmod_parse(m));
        ut_vec_push(&h->owned, m);
        j->tainted = true; /* a copy of its own: no verdict read from it is kept */
        return touched(j, m);
    }
    memo_vec *mv = memo();
    memo_ent *e = memo_current(mv, path);
    if (e) {
        an_deps_note_hash(path, e->content);
        ut_vec_push(&h->mods, e->m);
        return touched(j, e->m);
    }
    /* none, or changed: read again (the old copy stays until the thread ends: earlier guards may hold it) */
    xmod *m = xmod_new(path);
    char *why = NULL;
    an_stamp seen = {0};
    int64_t t = now_ns();
    bool ok = an_source_load_stamped(&m->src, path, (size_t)8 << 20, &why, &seen) == AN_LOAD_OK;
    ut_free(why);
    if (ok) an_deps_note(path, m->src.text, m->src.len, false);
    if (ok) xmod_parse(m);
    ut_vec_push(&h->mods, m);
    if (ok && seen.valid && mv->len < GUARD_MEMO_MAX) {
        memo_ent e = {m, seen, t, {0}};
        an_cache_content(m->src.text, m->src.len, e.content);
        for (size_t i = 0; i < mv->len; i++)
            if (!strcmp(mv->items[i].m->path, path)) { /* the stale copy: moved to the guard file's to free */
                ut_vec_push(&h->owned, mv->items[i].m);
                mv->items[i] = mv->items[--mv->len];
                break;
            }
        ut_vec_push(mv, e);
    } else {
        ut_vec_push(&h->owned, m);
    }
    return touched(j, m);
}

static an_guard *module_at(judge *j, const char *path) {
    xmod *m = module_xmod(j, path);
    return m ? m->g : NULL;
}

/* How the module of j->g binds `name` by an import: level (leading dots) and the dotted name it stands for
 * (`from a.b import f` -> 0, "a.b.f"; `from .m import f as g` -> 1, "m.f"; `import a.b as m` -> 0, "a.b"). */
static bool import_binding(judge *j, const char *name, size_t n, int *level, ut_buf *dotted) {
    ut_buf_clear(dotted);
    bool bound = false;
    const char *q = an_pyscope_lookup(&j->g->scope, name, n, &bound);
    if (bound) {
        if (!q) return false; /* imports that disagree */
        *level = 0;
        ut_buf_puts(dotted, q);
        return true;
    }
    /* relative imports (the scope leaves them out: they are the project's own) */
    if (!j->g->indexed) index_defs(j->g); /* a partial tree holds every import statement */
    const ut_smap_slot *sl = ut_smap_find(&j->g->rels, name, n);
    if (!sl) return false;
    *level = (int)sl->num;
    ut_buf_puts(dotted, sl->val);
    return true;
}

static bool follow_import(judge *j, int level, const char *dotted, TSNode call, int hops);
static bool own_compiled_op(judge *j, const char *ns_op);
static bool cuda_extension_module(judge *j, TSNode x);

/* Whether the function around `at` binds [name, name + n) itself (a parameter, an assignment, a for target): then
 * a module-level thing of that name is not what it means there. */
static bool local_in_function(judge *j, TSNode at, const char *name, size_t n) {
    TSNode fn = enclosing(at, "function_definition");
    if (ts_node_is_null(fn)) return false;
    if (an_pyscope_shadowed(&j->g->scope, at, j->g->text)) return true;
    TSTreeCursor c = ts_tree_cursor_new(field(fn, "body"));
    int depth = 0;
    bool found = false;
    for (;;) {
        TSNode x = ts_tree_cursor_current_node(&c);
        if (is(x, "identifier") && L(x) == n && !memcmp(T(j, x), name, n)) {
            TSNode p = ts_node_parent(x);
            found = (is(p, "assignment") || is(p, "augmented_assignment") || is(p, "for_statement") ||
                     is(p, "pattern_list") || is(p, "tuple_pattern") || is(p, "as_pattern_target") ||
                     is(p, "global_statement") || is(p, "nonlocal_statement")) &&
                    !ts_node_eq(field(p, "right"), x);
        }
        if (found) break;
        if (depth < GUARD_MAX_WALK_DEPTH && ts_tree_cursor_goto_first_child(&c)) { depth++; continue; }
        bool more = false;
        while (!(more = ts_tree_cursor_goto_next_sibling(&c))) {
            if (depth == 0 || !ts_tree_cursor_goto_parent(&c)) break;
            depth--;
        }
        if (!more) break;
    }
    ts_tree_cursor_delete(&c);
    return found;
}

/* whether the module's top level assigns the name (`name = ...`) */
static bool module_assigned(const an_guard *g, const char *name, size_t n) {
    for (uint32_t i = 0, k = g->tree ? ts_node_named_child_count(g->root) : 0; i < k; i++) {
        TSNode st = ts_node_named_child(g->root, i), a = ts_node_named_child(st, 0);
        if (!is(st, "expression_statement") || !is(a, "assignment")) continue;
        TSNode left = field(a, "left");
        if (is(left, "identifier") && L(left) == n && !memcmp(g->text + S(left), name, n)) return true;
    }
    return false;
}

/* A module-level `name = <value>` of j->g (`to_2tuple = _ntuple(2)`, `deform_conv = _DeformConv.apply`): calling
 * the name runs what the value is made of, so the value is read as a callee's body is. false: no such assignment. */
static bool follow_assigned(judge *j, const char *name, size_t n, TSNode call) {
    if (j->g->partial) { /* module-level statements the partial tree may lack */
        for (const char *p = j->g->text, *e = p + j->g->len; p < e && (p = word_at_or_after(p, (size_t)(e - p), name, n)); p++) {
            if (p != j->g->text && p[-1] != '\n') continue;
            const char *q = p + n;
            while (q < e && (*q == ' ' || *q == '\t')) q++;
            if (q + 1 < e && *q == '=' && q[1] != '=') {
                beyond(j);
                return true;
            }
        }
        return false;
    }
    bool any = false;
    for (uint32_t i = 0, k = ts_node_named_child_count(j->g->root); i < k && j->kind != AN_GUARD_CUDA; i++) {
        TSNode st = ts_node_named_child(j->g->root, i), a = ts_node_named_child(st, 0);
        if (!is(st, "expression_statement") || !is(a, "assignment")) continue;
        TSNode left = field(a, "left"), right = field(a, "right");
        if (!is(left, "identifier") || L(left) != n || memcmp(T(j, left), name, n) || ts_node_is_null(right)) continue;
        any = true;
        an_guard_kind before = j->kind;
        enter_result in = enter(j, S(a), call);
        if (in == ENTER_SEEN) continue;
        if (in == ENTER_DEEP) break;
        check_code(j, right);
        /* a value that is itself a callable (`_DeformConv.apply`, `other_name`): what it names is what runs */
        TSNode root = right;
        while (is(root, "attribute")) root = field(root, "object");
        if (is(root, "identifier") && !ported(j, S(right), E(right))) {
            bool bound = false;
            an_pyscope_lookup(&j->g->scope, T(j, root), L(root), &bound);
            node_vec defs = {0};
            ut_buf q;
            ut_buf_init(&q);
            int lv = 0;
            if (!bound) find_defs(j, T(j, root), L(root), root, &defs);
            for (size_t d = 0; d < defs.len; d++) follow_def(j, defs.items[d], call);
            if (defs.len || j->need_whole) {
            } else if (!bound && in_list(T(j, root), L(root), builtins)) {
            } else if (bound && qualname(j, right, &q) && in_list(q.data, strcspn(q.data, "."), generic_mods)) {
            } else {
                if (bound) ut_buf_clear(&q), qualname(j, right, &q);
                else if (import_binding(j, T(j, root), L(root), &lv, &q))
                    ut_buf_append(&q, j->g->text + E(root), E(right) - E(root));
                else ut_buf_clear(&q);
                ut_buf d;
                ut_buf_init(&d);
                ut_buf_puts(&d, q.data ? q.data : "");
                if (!q.len || !follow_import(j, lv, d.data, call, 0))
                    verdict(j, AN_GUARD_UNPROVEN, right, "calls `%.*s`, which xpuify cannot see into");
                ut_buf_free(&d);
            }
            ut_buf_free(&q);
            ut_vec_free(&defs);
        }
        leave(j, before, name, n, "value");
    }
    return any;
}

/* ---- verdicts of callees in other modules, kept ---------------------------------------------------------------
 * The guards of a project call the same functions of its other modules again and again (fairseq: 2,782 callees
 * followed into other modules, 469 of them distinct; those walks were half of a check's instructions). What a
 * callee's walk says (kind, reason, whether the name was found) depends only on the callee (the read of its module
 * and its name), the call depth and module hops it is reached at, the project model and the helper's name, and the
 * modules the walk reads - unless the walk met a cycle back into code visited before it, the guard file's module
 * limit, or an editor's buffer (then it is not kept). Kept verdicts are keyed on the rest and given again while
 * every module the walk read is still the same read (each read has a number; a changed file is read again under
 * another). A kept walk starts from no verdict and is merged as verdict() merges (a higher kind replaces, the first
 * reason of a kind stays). That gives what the walk in place gives: in place it starts from the judge's kind, which
 * is below CUDA (else nothing more is walked), so it walks the same code, and its reasons of the judge's kind or
 * below are dropped either way; where a later caller of the same callee would, in place, stop at definitions the
 * judge visited already, those were walked in full before, so the kind they hold is the judge's already and the
 * kept verdict changes nothing. Memories park with their thread's end, like the modules' (memo above). */
#define GUARD_VMEMO_MAX 8192

typedef struct {
    an_guard_kind kind;
    char *why;
    bool any;
    bool distributed; /* the walk met torch.distributed work (judge.distributed) */
    bool kernel;      /* and a compiled CUDA kernel of the project (judge.kernel) */
    UT_VEC(char *) paths; /* every module it read, and the numbers of those reads */
    UT_VEC(uint64_t) serials;
} vmemo_ent;

typedef struct {
    ut_smap map; /* key -> vmemo_ent */
    uint64_t generation; /* an_project_generation when the entries were made */
} vmemo_t;

static pthread_key_t vmemo_key;
static pthread_once_t vmemo_once = PTHREAD_ONCE_INIT;

static void vmemo_ent_free(void *v) {
    vmemo_ent *e = v;
    ut_free(e->why);
    for (size_t i = 0; i < e->paths.len; i++) ut_free(e->paths.items[i]);
    ut_vec_free(&e->paths);
    ut_vec_free(&e->serials);
    ut_free(e);
}

static bool vmemo_off; /* XPUIFY_NO_GUARD_MEMO: the test's switch, read once */
static void vmemo_park(void *v) { park(&parked_vmemos, v); }
static void vmemo_init(void) {
    pthread_key_create(&vmemo_key, vmemo_park);
    vmemo_off = getenv("XPUIFY_NO_GUARD_MEMO") != NULL;
}

/* The thread's kept verdicts, emptied when the project models changed (NULL: switched off). */
static vmemo_t *vmemo(void) {
    pthread_once(&vmemo_once, vmemo_init);
    if (vmemo_off) return NULL;
    vmemo_t *vm = thread_memory(vmemo_key, &parked_vmemos, sizeof(vmemo_t));
    uint64_t gen = an_project_generation();
    if (vm->generation != gen || vm->map.len >= GUARD_VMEMO_MAX) {
        ut_smap_free(&vm->map, vmemo_ent_free);
        memset(&vm->map, 0, sizeof vm->map);
        vm->generation = gen;
    }
    return vm;
}

/* A kept (or just made) verdict merged into the judge's, as verdict() would have merged it reason by reason. */
static void merge_verdict(judge *j, an_guard_kind k, const char *why, bool kernel) {
    if (k <= j->kind) return;
    ut_free(j->why);
    j->why = why ? ut_strdup(why) : NULL;
    j->kind = k;
    j->exit_why = j->in_exit;
    j->kernel = kernel;
}

static bool follow_in_module_walk(judge *j, an_guard *m, const char *name, size_t n, TSNode call, int hops);

static bool follow_in_module(judge *j, an_guard *m, const char *name, size_t n, TSNode call, int hops) {
    if (j->call_depth >= GUARD_MAX_CALL_DEPTH) { /* said at the caller's call, in the caller's text */
        verdict(j, AN_GUARD_UNPROVEN, call, "calls `%.*s` through more functions than xpuify follows");
        return true;
    }
    /* the module's read: the last one module_at gave for m */
    xmod *x = NULL;
    for (size_t i = j->touch.len; i-- > 0 && !x;)
        if (j->touch.items[i]->g == m) x = j->touch.items[i];
    vmemo_t *vm = x ? vmemo() : NULL;
    if (!vm) return follow_in_module_walk(j, m, name, n, call, hops);
    ut_buf key;
    ut_buf_init(&key);
    ut_buf_printf(&key, "%llu:%d:%d:%p:%s:%llu%s:%.*s", (unsigned long long)x->serial, j->call_depth, hops, (const void *)j->proj,
                  j->home->helper ? j->home->helper : "", (unsigned long long)atomic_load(&fixes_gen), nested ? "n" : "",
                  (int)n, name);
    const ut_smap_slot *sl = ut_smap_find(&vm->map, key.data, key.len);
    if (sl) {
        /* given again while every module it read is the same read (module_xmod notes them as the walk would) */
        const vmemo_ent *e = sl->val;
        bool same = true;
        size_t fresh = 0;
        for (size_t i = 0; i < e->paths.len && same; i++) {
            const xmod *r = known_read(j, e->paths.items[i], &fresh);
            same = r && r->serial == e->serials.items[i];
        }
        if (same) {
            for (size_t i = 0; i < e->paths.len; i++) module_xmod(j, e->paths.items[i]); /* as the walk reads them */
            merge_verdict(j, e->kind, e->why, e->kernel);
            j->distributed |= e->distributed;
            if (e->any) j->follows++;
            ut_buf_free(&key);
            return e->any;
        }
    }
    /* walked from no verdict, with the cycle and taint marks of this walk alone */
    an_guard_kind kind0 = j->kind;
    char *why0 = j->why;
    bool exit0 = j->exit_why, taint0 = j->tainted, whole0 = j->need_whole, dist0 = j->distributed, kern0 = j->kernel;
    size_t seen0 = j->seen_min, visited0 = j->visited.len, touch0 = j->touch.len, grow0 = j->grow.len;
    j->kind = AN_GUARD_GENERIC, j->why = NULL, j->tainted = false, j->seen_min = SIZE_MAX, j->distributed = false;
    j->kernel = false;
    bool any = follow_in_module_walk(j, m, name, n, call, hops);
    bool dist = j->distributed, kern = j->kernel;
    an_guard_kind k = j->kind;
    char *why = j->why;
    bool keep = !j->tainted && j->seen_min >= visited0 && j->need_whole == whole0 && j->grow.len == grow0;
    if (keep) {
        vmemo_ent *e = ut_calloc(1, sizeof *e);
        e->kind = k, e->why = why ? ut_strdup(why) : NULL, e->any = any, e->distributed = dist, e->kernel = kern;
        for (size_t i = touch0; i < j->touch.len; i++) {
            ut_vec_push(&e->paths, ut_strdup(j->touch.items[i]->path));
            ut_vec_push(&e->serials, j->touch.items[i]->serial);
        }
        ut_smap_slot *ns = ut_smap_put(&vm->map, key.data, key.len, NULL);
        if (ns->val) vmemo_ent_free(ns->val);
        ns->val = e;
    }
    j->kind = kind0, j->why = why0, j->exit_why = exit0;
    j->distributed = dist0 || dist;
    j->kernel = kern0;
    j->tainted = taint0 || j->tainted;
    if (j->seen_min > seen0) j->seen_min = seen0;
    merge_verdict(j, k, why, kern);
    ut_free(why);
    ut_buf_free(&key);
    return any;
}

/* The definition named [name, name + n) in module m (or what m's imports bind to that name): followed as the
 * definitions of the guard's own file are. false: m does not define or import it. */
static bool follow_in_module_walk(judge *j, an_guard *m, const char *name, size_t n, TSNode call, int hops) {
    an_guard *back = j->g;
    j->g = m;
    node_vec defs = {0};
    find_defs(j, name, n, (TSNode){0}, &defs);
    bool any = defs.len > 0;
    for (size_t i = 0; i < defs.len && j->kind != AN_GUARD_CUDA; i++) follow_def(j, defs.items[i], call);
    ut_vec_free(&defs);
    if (!any) any = follow_assigned(j, name, n, call);
    if (!any) { /* a re-export: `from .sub import f` in a package's __init__.py */
        ut_buf d;
        ut_buf_init(&d);
        int lv = 0;
        if (import_binding(j, name, n, &lv, &d)) any = follow_import(j, lv, d.data, call, hops + 1);
        ut_buf_free(&d);
    }
    j->g = back;
    return any;
}

/* A callee that j->g's imports name `dotted` (level leading dots): its module found through the project model, its
 * definition followed. false: no module of the project defines it (third-party, standard library, or too far). */
void an_guard_set_helper(an_guard *g, const char *module) {
    ut_free(g->helper);
    g->helper = module && *module ? ut_strdup(module) : NULL;
}

/* `dotted` names something of the compat helper's module (`from .. import xpuify_device`) */
static bool in_helper(const judge *j, const char *dotted) {
    const char *h = j->home->helper;
    size_t hl = h ? strlen(h) : 0;
    for (const char *p = dotted; h && *p; p += strcspn(p, "."), p += *p == '.')
        if (!strncmp(p, h, hl) && (p[hl] == '.' || !p[hl])) return true;
    return false;
}

static bool follow_import(judge *j, int level, const char *dotted, TSNode call, int hops) {
    const char *from = j->g->src->path;
    /* the helper: device-generic by construction; in another module it stands for CUDA code that module's fixes
     * ported (said at its name, check_code), so that a run after those fixes judges as the run before them did */
    if (in_helper(j, dotted)) return true;
    if (hops >= GUARD_MAX_MODULE_HOPS || !from || !*dotted) return false;
    const an_project *p = project(j); /* the guard file's: the callees' modules are in the same project */
    if (!level && !p) return false;
    char mod[512], file[4096];
    size_t dl = strlen(dotted);
    if (dl >= sizeof mod) return false;
    /* the longest prefix that is a module of the project: the rest names a definition in it */
    for (size_t cut = dl; cut > 0; cut--) {
        if (dotted[cut - 1] != '.' && cut != dl) continue;
        size_t ml = cut == dl ? 0 : cut - 1; /* module [0, ml), name after it */
        if (cut == dl) { /* the whole name a module: only `from . import f` (level > 0, no module part) */
            if (!level || memchr(dotted, '.', dl)) continue;
        }
        if (!ml && !level) continue;
        memcpy(mod, dotted, ml), mod[ml] = 0;
        const char *name = cut == dl ? dotted : dotted + cut;
        size_t nl = strcspn(name, ".");
        if (!an_modfile_find(p, from, level, mod, file, sizeof file)) continue;
        an_guard *m = module_at(j, file);
        if (!m || !m->tree) return false;
        return follow_in_module(j, m, name, nl, call, hops);
    }
    return false;
}

/* The callee of a call in guarded code. */
/* `f(x)` where f is a parameter of the definition read through a call (fairseq's apply_to_sample(f, sample), reached
 * from move_to_cuda's `apply_to_sample(_move_to_cuda, sample)`): the argument the call passed for it, when it is a
 * function of the calling module (read as a call of it, in that module) or a lambda (its body read). False when the
 * call passed something else, or nothing is known of it. */
static bool call_of_parameter(judge *j, TSNode fn) {
    if (!j->frames.len) return false;
    /* the definition whose parameter it is: the innermost around the call that has one of that name (a closure's
     * free variable, fairseq's `_apply` calling apply_to_sample's f), read through a call (a frame) */
    TSNode def = {0};
    for (TSNode d = enclosing(fn, "function_definition"); !ts_node_is_null(d) && ts_node_is_null(def);
         d = enclosing(d, "function_definition")) {
        TSNode ps = field(d, "parameters");
        for (uint32_t i = 0, n = ts_node_named_child_count(ps); i < n; i++) {
            TSNode p = ts_node_named_child(ps, i);
            TSNode nm = is(p, "identifier") ? p : field(p, "name");
            if (is(nm, "identifier") && L(nm) == L(fn) && !memcmp(T(j, nm), T(j, fn), L(fn))) def = d;
        }
    }
    struct frame *fr = NULL;
    for (size_t i = j->frames.len; i-- > 0 && !fr && !ts_node_is_null(def);)
        if (ts_node_eq(j->frames.items[i].def, def)) fr = &j->frames.items[i];
    if (!fr || !fr->site || ts_node_is_null(fr->call) || !is(fr->call, "call")) return false;
    /* what the call passed decides: a callee's verdict read so is not kept for other calls (follow_in_module) */
    j->tainted = true;
    /* the parameter's position (self and cls of a method count: a method is called through its object) */
    TSNode ps = field(def, "parameters");
    int pos = -1, k = 0;
    bool method = is(ts_node_parent(ts_node_parent(def)), "class_definition") ||
                  (is(ts_node_parent(def), "decorated_definition") && is(ts_node_parent(ts_node_parent(ts_node_parent(def))), "class_definition"));
    for (uint32_t i = 0, n = ts_node_named_child_count(ps); i < n && pos < 0; i++) {
        TSNode p = ts_node_named_child(ps, i);
        TSNode nm = is(p, "identifier") ? p : field(p, "name");
        if (is(p, "list_splat_pattern") || is(p, "dictionary_splat_pattern") || is(p, "keyword_separator")) return false;
        if (is(nm, "identifier") && L(nm) == L(fn) && !memcmp(T(j, nm), T(j, fn), L(fn))) pos = k;
        k++;
    }
    if (pos < 0) return false;
    if (method) pos--; /* the object stands for self */
    an_guard *back = j->g;
    j->g = fr->site;
    TSNode args = field(fr->call, "arguments"), arg = {0};
    int at = 0;
    for (uint32_t i = 0, n = ts_node_is_null(args) ? 0 : ts_node_named_child_count(args); i < n; i++) {
        TSNode a = ts_node_named_child(args, i);
        if (is(a, "comment")) continue;
        if (is(a, "keyword_argument")) {
            TSNode nm = field(a, "name");
            if (L(nm) == L(fn) && !memcmp(j->g->text + S(nm), back->text + S(fn), L(fn))) arg = field(a, "value");
            continue;
        }
        if (is(a, "list_splat") || is(a, "dictionary_splat")) break;
        if (at++ == pos) arg = a;
    }
    bool ok = false;
    if (is(arg, "lambda")) {
        TSNode body = field(arg, "body");
        if (!ts_node_is_null(body)) check_code(j, body);
        ok = true;
    } else if (is(arg, "identifier")) {
        bool bound = false;
        an_pyscope_lookup(&j->g->scope, T(j, arg), L(arg), &bound);
        node_vec defs = {0};
        if (!bound) find_defs(j, T(j, arg), L(arg), arg, &defs);
        ok = defs.len > 0;
        for (size_t i = 0; i < defs.len && ok; i++) ok = is(defs.items[i], "function_definition");
        if (ok)
            for (size_t i = 0; i < defs.len; i++) follow_def(j, defs.items[i], arg);
        ut_vec_free(&defs);
    }
    j->g = back;
    return ok;
}

static void check_call(judge *j, TSNode call) {
    TSNode fn = field(call, "function");
    ut_buf q;
    ut_buf_init(&q);
    if (is(fn, "identifier")) {
        bool bound = false;
        an_pyscope_lookup(&j->g->scope, T(j, fn), L(fn), &bound);
        node_vec defs = {0};
        if (!bound) find_defs(j, T(j, fn), L(fn), fn, &defs);
        TSNode cls = eq(j, fn, "cls") ? enclosing(call, "class_definition") : (TSNode){0};
        if (defs.len) {
            for (size_t i = 0; i < defs.len; i++) follow_def(j, defs.items[i], call);
        } else if (!bound && in_list(T(j, fn), L(fn), builtins)) {
        } else if (!ts_node_is_null(cls)) { /* `cls(...)` in a class method: the class itself */
            if (j->g->cut) beyond(j); /* the class's other members */
            else follow_def(j, cls, call);
        } else if (bound && qualname(j, fn, &q)) {
            size_t r = strcspn(q.data, ".");
            if ((q.data[0] == '.' || !in_list(q.data, r, generic_mods)) && !follow_import(j, 0, q.data, call, 0))
                verdict(j, AN_GUARD_UNPROVEN, fn, "calls `%.*s`, which xpuify cannot see into");
            else /* `DDP(model, ...)`, imported */
                note_distributed(j, q.data, call);
        } else {
            /* `from .mod import f`: a module of the project */
            int lv = 0;
            bool seen = false;
            if (!bound && !j->need_whole) {
                bool imp = import_binding(j, T(j, fn), L(fn), &lv, &q);
                /* a name the function binds itself (a parameter, a local) is none of the module's */
                if ((imp || j->g->partial || module_assigned(j->g, T(j, fn), L(fn))) &&
                    !local_in_function(j, fn, T(j, fn), L(fn)))
                    seen = (imp && follow_import(j, lv, q.data, call, 0)) || follow_assigned(j, T(j, fn), L(fn), call);
            }
            if (!seen) seen = call_of_parameter(j, fn);
            if (!seen) verdict(j, AN_GUARD_UNPROVEN, fn, "calls `%.*s`, whose definition xpuify does not see");
        }
        ut_vec_free(&defs);
    } else if (is(fn, "attribute")) {
        TSNode root = fn;
        int levels = 0;
        while (is(root, "attribute")) root = field(root, "object"), levels++;
        TSNode in_cls = levels == 1 && j->g->cut && j->g == j->home ? enclosing(call, "class_definition") : (TSNode){0};
        TSNode meth = field(fn, "attribute");
        if (is(root, "identifier") && (eq(j, root, "self") || eq(j, root, "cls")) && levels == 1 && j->g->cut &&
            (j->g != j->home || ts_node_is_null(meth) ||
             (!ts_node_is_null(in_cls) && !holds_defs(j, S(in_cls), E(in_cls), T(j, meth), L(meth))))) {
            /* the class's other members: those of that name grown into the tree, or else the whole file */
            if (j->g != j->home || ts_node_is_null(meth)) beyond(j);
        } else if (is(root, "identifier") && (eq(j, root, "self") || eq(j, root, "cls")) && levels == 1) {
            /* a method of the enclosing class: followed when the class defines it */
            TSNode cls = enclosing(call, "class_definition"), meth = field(fn, "attribute");
            TSNode body = ts_node_is_null(cls) ? cls : field(cls, "body");
            uint32_t k = ts_node_is_null(body) ? 0 : ts_node_named_child_count(body);
            for (uint32_t i = 0; i < k; i++) {
                TSNode d = ts_node_named_child(body, i);
                if (is(d, "decorated_definition")) d = field(d, "definition");
                TSNode nm = field(d, "name");
                if (is(d, "function_definition") && L(nm) == L(meth) && !memcmp(T(j, nm), T(j, meth), L(nm)))
                    follow_def(j, d, call);
            }
        } else if (is(root, "identifier")) {
            bool bound = false;
            an_pyscope_lookup(&j->g->scope, T(j, root), L(root), &bound);
            if (bound && qualname(j, fn, &q)) {
                size_t r = strcspn(q.data, ".");
                if (q.data[0] == '.' || !in_list(q.data, r, generic_mods)) {
                    ut_buf d;
                    ut_buf_init(&d);
                    ut_buf_puts(&d, q.data);
                    if (!follow_import(j, 0, d.data, call, 0))
                        verdict(j, AN_GUARD_UNPROVEN, fn, "calls `%.*s`, which xpuify cannot see into");
                    ut_buf_free(&d);
                }
                else if (!strncmp(q.data, "torch.utils.cpp_extension", 25))
                    verdict(j, AN_GUARD_CUDA, fn, "builds a C++/CUDA extension (`%.*s`)");
                else if (!strcmp(q.data, "torch.load") && !ut_memmem(T(j, call), L(call), "map_location", 12))
                    verdict(j, AN_GUARD_UNPROVEN, fn, "loads with `%.*s` onto the devices the tensors were saved on (CUDA in a CUDA checkpoint)");
                else if (!strncmp(q.data, "torch.ops.", 10) && strncmp(q.data, "torch.ops.aten.", 15)) {
                    /* an operator of the project's own namespace (`torch.ops.detectron2.nms_rotated`) where its
                     * setup.py builds a CUDAExtension: compiled for the CPU and CUDA only, so the guard routes CUDA
                     * devices to a CUDA kernel (on an XPU host the operator has no kernel); another library's
                     * operator may have XPU kernels (torchvision's): unproven */
                    if (own_compiled_op(j, q.data + 10))
                        verdict_kernel(j, fn, "calls the custom operator `%.*s`, compiled by this project for the CPU and CUDA only (its setup.py builds a CUDAExtension)");
                    else
                        verdict(j, AN_GUARD_UNPROVEN, fn, "calls the custom operator `%.*s`");
                } else
                    note_distributed(j, q.data, call);
            }
            if (!bound) {
                /* `Cls.apply(...)`, `helper.run(...)`: a class or function of this module, or a name a relative
                 * import binds (a module of the project, or something of one) */
                node_vec defs = {0};
                int lv = 0;
                find_defs(j, T(j, root), L(root), root, &defs);
                for (size_t i = 0; i < defs.len; i++) follow_def(j, defs.items[i], call);
                if (!defs.len && !j->need_whole && import_binding(j, T(j, root), L(root), &lv, &q)) {
                    for (uint32_t b = E(root); b < E(fn); b++)
                        if (!isspace((unsigned char)j->g->text[b]) && j->g->text[b] != '\\') ut_buf_putc(&q, j->g->text[b]);
                    ut_buf d;
                    ut_buf_init(&d);
                    ut_buf_puts(&d, q.data);
                    if (!follow_import(j, lv, d.data, call, 0))
                        verdict(j, AN_GUARD_UNPROVEN, fn, "calls `%.*s`, which xpuify cannot see into");
                    ut_buf_free(&d);
                }
                ut_vec_free(&defs);
            }
            /* otherwise a method of an object: the object's device is the code's own business */
        }
    }
    ut_buf_free(&q);
}

static bool docstring(TSNode str) {
    TSNode st = ts_node_parent(str);
    if (!is(st, "expression_statement") || ts_node_named_child_count(st) != 1) return false;
    TSNode blk = ts_node_parent(st);
    return (is(blk, "block") || is(blk, "module")) && ts_node_eq(ts_node_named_child(blk, 0), st);
}

/* A string the code only writes out: an argument of `print(...)`, `logger.info(...)`, `warnings.warn(...)` (also
 * through `.format(...)`, `%`, `+` or parentheses): fairseq's `logger.info("setting CUDA device={} on rank
 * {}".format(...))` beside the `torch.cuda.set_device` that the same run ports. Its words decide nothing. */
static bool reported_string(judge *j, TSNode str) {
    static const char *const outs[] = {"print", "info", "debug", "warning", "warn", "error", "critical", "log",
                                       "exception", NULL};
    TSNode x = str;
    for (int up = 0; up < 8; up++) {
        TSNode p = ts_node_parent(x);
        if (ts_node_is_null(p)) return false;
        if (is(p, "call")) {
            TSNode f = field(p, "function");
            if (ts_node_eq(f, x)) { /* "...".format(...): up through the callee */
                x = p;
                continue;
            }
            if (is(f, "attribute")) f = field(f, "attribute");
            if (!is(f, "identifier")) return false;
            for (int i = 0; outs[i]; i++)
                if (L(f) == strlen(outs[i]) && !memcmp(T(j, f), outs[i], L(f))) return true;
            return false;
        }
        if (!(is(p, "argument_list") || is(p, "attribute") || is(p, "binary_operator") ||
              is(p, "parenthesized_expression") || is(p, "concatenated_string")))
            return false;
        x = p;
    }
    return false;
}

/* The reads of `name` in scope after byte `after`: plain names (attr false) or attributes `obj.name` (attr true),
 * neither assigned to, a keyword's name, a parameter nor (for plain names) an attribute's member. */
static void name_reads(judge *j, TSNode scope, TSNode name, uint32_t after, bool attr, node_vec *out) {
    TSTreeCursor c = ts_tree_cursor_new(scope);
    int depth = 0;
    for (;;) {
        TSNode x = ts_tree_cursor_current_node(&c);
        if (is(x, "identifier") && S(x) >= after && L(x) == L(name) && !memcmp(T(j, x), T(j, name), L(x))) {
            TSNode p = ts_node_parent(x);
            bool member = is(p, "attribute") && ts_node_eq(field(p, "attribute"), x);
            bool kw = is(p, "keyword_argument") && ts_node_eq(field(p, "name"), x);
            bool param = is(p, "parameters") || ((is(p, "default_parameter") || is(p, "typed_default_parameter")) &&
                                                  ts_node_eq(field(p, "name"), x));
            TSNode use = member ? p : x;
            TSNode up = ts_node_parent(use);
            bool target = is(up, "assignment") && ts_node_eq(field(up, "left"), use);
            if (!kw && member == attr && !target && !param) ut_vec_push(out, use);
        }
        if (depth < GUARD_MAX_WALK_DEPTH && ts_tree_cursor_goto_first_child(&c)) { depth++; continue; }
        for (;;) {
            if (depth == 0) goto walked;
            if (ts_tree_cursor_goto_next_sibling(&c)) break;
            ts_tree_cursor_goto_parent(&c);
            depth--;
        }
    }
walked:
    ts_tree_cursor_delete(&c);
}

/* Is the identifier x (a read of a local holding the current device's index) a position whose index this pass makes
 * the run-time device: inside a safe fix (the integer-device fix's `<helper>.device_str(device)`), or already the
 * argument of the helper's device_str()/device() (a module fixed before)? */
static bool index_made_device(judge *j, TSNode x) {
    if (ported(j, S(x), E(x))) return true;
    TSNode args = ts_node_parent(x);
    if (is(args, "keyword_argument")) args = ts_node_parent(args);
    TSNode call = ts_node_parent(args);
    if (!is(args, "argument_list") || !is(call, "call")) return false;
    TSNode fn = field(call, "function"), obj = field(fn, "object"), at = field(fn, "attribute");
    const char *helper = j->home->helper;
    if (!is(fn, "attribute") || !is(obj, "identifier") || !helper || L(obj) != strlen(helper) ||
        memcmp(T(j, obj), helper, L(obj)))
        return false;
    return (L(at) == 10 && !memcmp(T(j, at), "device_str", 10)) || (L(at) == 6 && !memcmp(T(j, at), "device", 6));
}

/* `device = device or torch.cuda.current_device()` (fairseq's move_to_cuda), `idx = int(...current_device())`: the
 * index read at the call x goes only into a local whose every later read is made the run-time device (a ported
 * integer-device position, index_made_device), so on XPU and MPS it names their device: no CUDA-only result. */
static bool current_index_made_device(judge *j, TSNode x) {
    TSNode call = x;
    while (!ts_node_is_null(call) && !is(call, "call")) call = ts_node_parent(call);
    if (ts_node_is_null(call)) return false;
    TSNode v = call, p = ts_node_parent(v);
    for (;; v = p, p = ts_node_parent(p)) {
        if (is(p, "parenthesized_expression")) continue;
        if (is(p, "boolean_operator") && ts_node_eq(field(p, "right"), v)) continue; /* `device or <index>` */
        if (is(p, "argument_list") && ts_node_named_child_count(p) == 1 && is(ts_node_parent(p), "call")) {
            TSNode f = field(ts_node_parent(p), "function"); /* `int(<index>)` */
            if (is(f, "identifier") && L(f) == 3 && !memcmp(T(j, f), "int", 3)) { p = ts_node_parent(p); continue; }
        }
        break;
    }
    if (!is(p, "assignment") || !ts_node_eq(field(p, "right"), v)) return false;
    TSNode name = field(p, "left");
    if (!is(name, "identifier")) return false;
    TSNode scope = enclosing(p, "function_definition");
    if (ts_node_is_null(scope)) return false; /* a module-level name: other modules may read it */
    /* every read outside the assignment, none before it, each made the run-time device */
    node_vec reads = {0};
    name_reads(j, scope, name, 0, false, &reads);
    bool all = true;
    size_t n = 0;
    for (size_t i = 0; i < reads.len && all; i++) {
        TSNode y = reads.items[i];
        if (S(p) <= S(y) && E(y) <= E(p)) continue; /* `device or ...` */
        n++;
        all = S(y) >= E(p) && index_made_device(j, y);
    }
    ut_vec_free(&reads);
    return all && n > 0;
}

/* The name of a called function whose definition the judge reached (`utils.move_to_cuda(sample)`: its body, read
 * through the import, decides). */
static bool resolved_callee(judge *j, TSNode x) {
    for (size_t i = j->resolved.len; i-- > 0;) {
        TSNode fn = j->resolved.items[i];
        if (ts_node_eq(fn, x) || (is(fn, "attribute") && ts_node_eq(field(fn, "attribute"), x))) return true;
    }
    return false;
}

/* A name with a cuda word whose definition in this module the judge reads instead (fairseq's move_to_cuda passes
 * its nested `_move_to_cuda` to apply_to_sample): the callee of a call, which check_call follows, or a function
 * named as a value (a callback), followed here as if called; its body decides, not its name. */
static bool followed_by_body(judge *j, TSNode x) {
    TSNode p = ts_node_parent(x);
    if (is(p, "attribute") || is(p, "keyword_argument") || is(p, "parameters") || is(p, "default_parameter"))
        return false;
    bool bound = false;
    an_pyscope_lookup(&j->g->scope, T(j, x), L(x), &bound);
    if (bound) return false;
    node_vec defs = {0};
    find_defs(j, T(j, x), L(x), x, &defs);
    bool fns = defs.len > 0;
    for (size_t i = 0; i < defs.len && fns; i++) fns = is(defs.items[i], "function_definition");
    bool callee = is(p, "call") && ts_node_eq(field(p, "function"), x);
    if (fns && !callee)
        for (size_t i = 0; i < defs.len; i++) follow_def(j, defs.items[i], x);
    ut_vec_free(&defs);
    return fns;
}

/* A CUDA device string (`"cuda"`, `"cuda:0"`, ported or not) in the test support module of a project that builds a
 * CUDA extension (pytorch_cluster's torch_cluster/testing.py: `devices += [torch.device("cuda:0")]` if CUDA, the
 * device list every op test runs on): its compiled ops have CPU and CUDA kernels only, so the list keeps its CUDA test
 * (on an XPU or MPS host each op would fail its device check). */
static bool compiled_ops_tests(judge *j);

static bool device_for_compiled_ops(judge *j, TSNode content) {
    const char *t = T(j, content);
    size_t n = L(content);
    if (n < 4 || memcmp(t, "cuda", 4) || (n > 4 && t[4] != ':')) return false;
    return compiled_ops_tests(j);
}

/* The same device as a fix made it (the fixer's next pass reads `torch.device(xpuify_device.device_str(0))`): the
 * helper's DEV, device() or device_str(). */
static bool helper_device_for_compiled_ops(judge *j, TSNode attr) {
    TSNode obj = field(attr, "object"), at = field(attr, "attribute");
    const char *helper = j->home->helper;
    if (!is(obj, "identifier") || !helper || L(obj) != strlen(helper) || memcmp(T(j, obj), helper, L(obj))) return false;
    if (!eq(j, at, "DEV") && !eq(j, at, "device") && !eq(j, at, "device_str")) return false;
    return compiled_ops_tests(j);
}

/* the name x is bound by an import of a module that a setup.py of the project builds with CUDA sources
 * (`import dynamicconv_cuda`, `from fairseq import ngram_repeat_block_cuda`), or of something in it */
static bool cuda_extension_module(judge *j, TSNode x) {
    const an_project *p = project(j);
    if (!p) return false;
    ut_buf q;
    ut_buf_init(&q);
    bool hit = false;
    if (qualname(j, x, &q) && q.len && q.data[0] != '.')
        for (size_t n = q.len; n > 0 && !hit; n--) /* the module, or a prefix of the name that is one */
            if (n == q.len || q.data[n] == '.') hit = an_project_cuda_extension_module(p, q.data, n);
    ut_buf_free(&q);
    return hit;
}

/* `ns.op` (after `torch.ops.`) is an operator of the project's own namespace (a package or module of its own) in a
 * project whose setup.py builds a CUDA extension */
static bool own_compiled_op(judge *j, const char *ns_op) {
    size_t n = strcspn(ns_op, ".");
    return ns_op[n] == '.' && an_project_builds_cuda_extension(project(j)) && an_project_own_module(project(j), ns_op, n);
}

/* the guard's file is the test support a package ships (testing.py), in a project that builds a CUDA extension */
static bool compiled_ops_tests(judge *j) {
    /* tests, and the test support a package ships (torch_cluster/testing.py, which its tests import) */
    const char *path = j->home->src->path, *b = path ? strrchr(path, '/') : NULL;
    b = b ? b + 1 : path;
    bool support = b && (!strcmp(b, "testing.py") || !strcmp(b, "testing_utils.py") || !strcmp(b, "test_utils.py"));
    /* (not every test of such a project: detectron2's box transforms are plain torch, tested on every device) */
    if (!support) return false;
    return an_project_builds_cuda_extension(project(j));
}

/* `hasattr(torch.cuda, "memory_summary")`, `hasattr(torch, "cuda")`: the builtin asks what an object has and runs
 * nothing of it (a torch build has `torch.cuda` and its functions on every device), so its arguments say nothing of
 * the device the guarded code needs */
static bool probe_call(judge *j, TSNode call) {
    TSNode fn = field(call, "function");
    if (!is(fn, "identifier") || L(fn) != 7 || memcmp(T(j, fn), "hasattr", 7)) return false;
    bool bound = false;
    an_pyscope_lookup(&j->g->scope, T(j, fn), L(fn), &bound);
    return !bound && !defined_at(j->g, 0, j->g->len, "hasattr", 7, NULL);
}

/* the attribute x is the function of a call (`x(...)`) */
static bool attr_called(TSNode x) {
    TSNode p = ts_node_parent(x);
    return is(p, "call") && ts_node_eq(field(p, "function"), x);
}

/* Every node of n's subtree. */
static void check_code(judge *j, TSNode n) {
    TSTreeCursor c = ts_tree_cursor_new(n);
    int depth = 0;
    for (;;) {
        TSNode x = ts_tree_cursor_current_node(&c);
        const char *t = ts_node_type(x);
        bool down = depth < GUARD_MAX_WALK_DEPTH;
        if (!strcmp(t, "comment")) {
            down = false;
        } else if (!strcmp(t, "string")) {
            if (docstring(x)) down = false;
            for (uint32_t i = 0, k = down ? ts_node_named_child_count(x) : 0; i < k; i++) {
                TSNode p = ts_node_named_child(x, i);
                if (!is(p, "string_content")) continue;
                if (names_cuda(T(j, p), L(p)) && !ported(j, S(x), E(x)) && !reported_string(j, x))
                    verdict(j, portable(j), x, sees_fixes(j) ? "names CUDA (%.*s)" : "names CUDA (%.*s) in a module whose own fixes this pass does not see");
                else if (device_for_compiled_ops(j, p))
                    verdict(j, AN_GUARD_CUDA, x, "names the CUDA device (%.*s) in a test of a project whose compiled ops have CPU and CUDA kernels only (its setup.py builds a CUDAExtension)");
                else if (word_in(T(j, p), L(p), "nccl") && !ported(j, S(x), E(x)) && !reported_string(j, x))
                    verdict(j, portable(j), x, sees_fixes(j) ? "names NCCL (%.*s)" : "names NCCL (%.*s) in a module whose own fixes this pass does not see");
            }
        } else if (!strcmp(t, "identifier")) {
            size_t tok;
            /* the parents only for a listed name: ts_node_parent walks down from the root (tree-sitter 0.20.7), and
             * this runs at every identifier of the guarded code */
            bool result = in_list(T(j, x), L(x), cuda_results);
            if (result && !strncmp(T(j, x), "current_device", 14)) {
                TSNode p = ts_node_parent(x);
                result = (is(p, "attribute") && attr_called(p)) || is(p, "call");
            }
            if (result && !strncmp(T(j, x), "current_device", 14) && current_index_made_device(j, x))
                ;
            else if (result)
                verdict(j, AN_GUARD_CUDA, x, "reads a CUDA-only result (`%.*s`)");
            else if (ported(j, S(x), E(x)))
                ;
            else if (!sees_fixes(j) && j->home->helper && L(x) == strlen(j->home->helper) &&
                     !memcmp(T(j, x), j->home->helper, L(x)))
                verdict(j, AN_GUARD_UNPROVEN, x, "uses `%.*s` where its module's fixes ported CUDA code, in a module whose own fixes this pass does not see");
            else if (an_ctx_named_for_cuda(T(j, x), L(x), &tok) && cuda_extension_module(j, x))
                verdict_kernel(j, x, "uses `%.*s`, an extension the project compiles with CUDA kernels (a setup.py of it builds the module from .cu sources)");
            else if (an_ctx_named_for_cuda(T(j, x), L(x), &tok) && !resolved_callee(j, x) && !followed_by_body(j, x)) {
                /* `torch.cuda.set_rng_state` that this pass leaves as it is (no safe fix): said by its name */
                TSNode top = x;
                while (is(ts_node_parent(top), "attribute")) top = ts_node_parent(top);
                if (!ts_node_eq(top, x) && L(top) > 11 && !memcmp(T(j, top), "torch.cuda.", 11))
                    verdict(j, portable(j), top, sees_fixes(j) ? "uses `%.*s`, which this pass leaves CUDA-only" : "uses `%.*s`, which its module's own fixes may port, in a module whose own fixes this pass does not see");
                else
                    verdict(j, portable(j), x, sees_fixes(j) ? "uses `%.*s`, named for CUDA" : "uses `%.*s`, named for CUDA, in a module whose own fixes this pass does not see");
            }
            else if (in_list(T(j, x), L(x), cuda_libs))
                verdict(j, AN_GUARD_CUDA, x, "uses `%.*s`, which is CUDA-only");
        } else if (!strcmp(t, "attribute")) {
            /* a ported call still answers what only CUDA answers (`xpuify_device.current_device()`) */
            TSNode a = field(x, "attribute");
            if (helper_device_for_compiled_ops(j, x)) {
                verdict(j, AN_GUARD_CUDA, x, "makes the device (`%.*s`) in a test of a project whose compiled ops have CPU and CUDA kernels only (its setup.py builds a CUDAExtension)");
            } else if (!ts_node_is_null(a) && in_list(T(j, a), L(a), cuda_results) && (strncmp(T(j, a), "current_device", 14) || attr_called(x))) {
                if (strncmp(T(j, a), "current_device", 14) || !current_index_made_device(j, x))
                    verdict(j, AN_GUARD_CUDA, a, "reads a CUDA-only result (`%.*s`)");
                else
                    down = false;
            }
            else if (ported(j, S(x), E(x)) || harmless_setting(j, x))
                down = false;
        } else if (!strcmp(t, "call")) {
            if (probe_call(j, x)) {
                down = false;
            } else if (!ported(j, S(x), E(x))) {
                size_t f0 = j->follows;
                check_call(j, x);
                if (j->follows > f0) ut_vec_push(&j->resolved, field(x, "function"));
            }
        }
        if (j->kind == AN_GUARD_CUDA) break;
        if (down && ts_tree_cursor_goto_first_child(&c)) { depth++; continue; }
        for (;;) {
            if (depth == 0) goto done;
            if (ts_tree_cursor_goto_next_sibling(&c)) break;
            ts_tree_cursor_goto_parent(&c);
            depth--;
        }
    }
done:
    ts_tree_cursor_delete(&c);
}

static void guarded_by(judge *j, TSNode cur, int pol, int flow);

static bool test_file(const an_guard *g);

/* A test module (test_*.py, *_test.py) that no file of the project imports by any of its names: a test runner
 * collects it, so its module-level names are its own (unsloth's `cuda_available = torch.cuda.is_available()` read by
 * its tests' skipif decorators). Absolute imports only are known (the project model): a test module imported
 * relatively by another is not seen, which the test-module convention makes rare. */
static bool unimported_test_module(judge *j) {
    if (j->g != j->home || !test_file(j->g)) return false;
    const an_project *p = project(j);
    return p && !an_project_module_imported(p, j->g->src->path);
}

/* `x = <test>`: each later use of x must guard device-generic code too. */
static void follow_name(judge *j, TSNode asg, int pol, int flow) {
    j->escapes = true;
    TSNode left = field(asg, "left");
    bool attr = is(left, "attribute");
    TSNode name = attr ? field(left, "attribute") : left;
    if (!is(name, "identifier") || (attr && !is(field(left, "object"), "identifier"))) {
        verdict(j, AN_GUARD_UNPROVEN, left, "stores the test in `%.*s`, which xpuify does not follow");
        return;
    }
    if (flow >= GUARD_MAX_FLOW_DEPTH) {
        verdict(j, AN_GUARD_UNPROVEN, left, "passes the test through `%.*s` and more names than xpuify follows");
        return;
    }
    TSNode scope = enclosing(asg, "function_definition");
    if (attr) {
        scope = enclosing(asg, "class_definition");
        if (T(j, name)[0] != '_' || ts_node_is_null(scope)) {
            verdict(j, AN_GUARD_UNPROVEN, left, "stores the test in `%.*s`, which other modules may read");
            return;
        }
        if (j->g->cut) { /* its uses are anywhere in the class */
            beyond(j);
            return;
        }
    } else if (ts_node_is_null(scope)) {
        scope = j->g->root;
        if (T(j, name)[0] != '_' && !unimported_test_module(j)) {
            verdict(j, AN_GUARD_UNPROVEN, left, "stores the test in the module-level `%.*s`, which other modules may import");
            return;
        }
        if (j->g->partial) { /* its uses are anywhere in the module */
            beyond(j);
            return;
        }
    }
    /* the uses after the assignment (attribute uses: `self._x`, `obj._x`) */
    node_vec uses = {0};
    name_reads(j, scope, name, E(asg), attr, &uses);
    for (size_t i = 0; i < uses.len && j->kind != AN_GUARD_CUDA; i++) guarded_by(j, uses.items[i], pol, flow + 1);
    ut_vec_free(&uses);
}

/* The block statements after st, up to the end of its block. */
static void rest_of_block(judge *j, TSNode st) {
    TSNode blk = ts_node_parent(st);
    if ((j->g->partial && is(blk, "module")) || (j->g->cut && is(ts_node_parent(blk), "class_definition"))) {
        /* the rest of the module, of a class that is cut */
        beyond(j);
        return;
    }
    for (TSNode s = ts_node_next_named_sibling(st); !ts_node_is_null(s); s = ts_node_next_named_sibling(s))
        check_code(j, s);
}

/* ---- early exits: `if not torch.cuda.is_available(): return`, `assert torch.cuda.is_available()` ---------- */

static bool is_loop(TSNode n) { return is(n, "for_statement") || is(n, "while_statement"); }

/* a function or generator whose result says something: a `return` with a value other than None, or a `yield`
 * (nested definitions and lambdas aside) */
static bool returns_value(judge *j, TSNode n, int depth) {
    if (depth > GUARD_MAX_WALK_DEPTH) return true;
    if (is(n, "yield")) return true;
    if (is(n, "return_statement")) {
        TSNode v = ts_node_named_child(n, 0);
        return !ts_node_is_null(v) && !is(v, "none") && !is(v, "comment");
    }
    uint32_t k = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < k; i++) {
        TSNode c = ts_node_named_child(n, i);
        if (is(c, "function_definition") || is(c, "class_definition") || is(c, "lambda")) continue;
        if (returns_value(j, c, depth + 1)) return true;
    }
    return false;
}

/* a constant that only says the test's answer: True, False, a number, a plain string */
static bool literal(TSNode n) {
    while (is(n, "parenthesized_expression")) n = ts_node_named_child(n, 0);
    if (is(n, "string"))
        for (uint32_t i = 0, k = ts_node_named_child_count(n); i < k; i++)
            if (is(ts_node_named_child(n, i), "interpolation")) return false;
    return is(n, "true") || is(n, "false") || is(n, "integer") || is(n, "float") || is(n, "string");
}

/* a `return <constant>` in the code (nested definitions aside): the code answers its callers what the test said */
static bool returns_literal(TSNode n, int depth) {
    if (ts_node_is_null(n) || depth > GUARD_MAX_WALK_DEPTH) return false;
    if (is(n, "return_statement")) return literal(ts_node_named_child(n, 0));
    for (uint32_t i = 0, k = ts_node_named_child_count(n); i < k; i++) {
        TSNode c = ts_node_named_child(n, i);
        if (is(c, "function_definition") || is(c, "class_definition") || is(c, "lambda")) continue;
        if (returns_literal(c, depth + 1)) return true;
    }
    return false;
}

/* the file imports pytest or unittest: its `test*` functions are what a test runner calls */
static bool test_module(const an_guard *g) {
    const char *t = g->text;
    size_t n = g->len;
    return word_at_or_after(t, n, "pytest", 6) || word_at_or_after(t, n, "unittest", 8);
}

/* a file a test runner collects as a module of tests (test_*.py, *_test.py) */
static bool test_file(const an_guard *g) {
    const char *p = g->src->path;
    if (!p || !test_module(g)) return false;
    const char *b = strrchr(p, '/');
    b = b ? b + 1 : p;
    size_t bl = strlen(b);
    return !strncmp(b, "test", 4) || (bl > 8 && !strcmp(b + bl - 8, "_test.py"));
}

/* a test module, or code under a tests/ or test/ directory (a test's support code) */
static bool test_code(const an_guard *g) {
    const char *p = g->src->path;
    return test_file(g) || (p && (!strncmp(p, "tests/", 6) || !strncmp(p, "test/", 5) || strstr(p, "/tests/") || strstr(p, "/test/")));
}

/* a `test*` function of a test module, at module level or in a class: a test runner calls it, no code of the
 * project */
static bool test_function(judge *j, TSNode def) {
    TSNode nm = field(def, "name"), up = ts_node_parent(def);
    if (is(up, "decorated_definition")) up = ts_node_parent(up);
    bool top = is(up, "module") || (is(up, "block") && is(ts_node_parent(up), "class_definition"));
    return top && !ts_node_is_null(nm) && L(nm) >= 4 && !memcmp(T(j, nm), "test", 4) && test_module(j->g);
}

/* `if __name__ == "__main__":` */
static bool main_guard(judge *j, TSNode ifs) {
    TSNode c = field(ifs, "condition");
    return !ts_node_is_null(c) && word_at_or_after(T(j, c), L(c), "__name__", 8) && ut_memmem(T(j, c), L(c), "__main__", 8);
}

/* The code an early exit protects: what runs after st (the if whose body leaves, or the assert) only because the
 * test let it. Up to what the exit leaves (the innermost loop for continue and break, else the function or the
 * module): the statements after st and after each block that holds it; before them too inside a loop whose later
 * iterations the exit ends (break; return and raise), with the loop's else branch; a try's else branch. Beyond
 * it, the callers: a return says something to them when the function returns a value (the test's answer, in
 * effect, as `return torch.cuda.is_available()` would); a raise, a skip or an exit stops them, unless a test
 * runner is the caller (a test function or module) or nothing imports the code (`if __name__ == "__main__":`). */
static void after_exit(judge *j, TSNode st, TSNode leave, an_ctx_exit how) {
    j->escapes = true;
    bool in_loop = how == AN_CTX_EXIT_CONTINUE || how == AN_CTX_EXIT_BREAK;
    /* what the exit leaves, and the outermost loop on the way whose later iterations it ends */
    TSNode target = {0}, rerun = {0};
    bool script = false;
    for (TSNode p = ts_node_parent(st); !ts_node_is_null(p); p = ts_node_parent(p)) {
        if (is(p, "function_definition")) {
            if (!in_loop) target = p;
            break;
        }
        if (in_loop && is(p, "class_definition")) break;
        if (is(p, "if_statement") && main_guard(j, p)) script = true;
        if (is_loop(p)) {
            if (in_loop) {
                target = p;
                if (how == AN_CTX_EXIT_BREAK) rerun = p;
                break;
            }
            rerun = p;
        }
        if (is(p, "module")) target = p;
    }
    if (ts_node_is_null(target) || (in_loop && !is_loop(target))) {
        verdict(j, AN_GUARD_UNPROVEN, leave, "leaves by `%.*s` where xpuify does not see what it leaves");
        return;
    }
    bool was = j->in_exit;
    j->in_exit = true;
    for (TSNode cur = st; !ts_node_eq(cur, target) && j->kind != AN_GUARD_CUDA;) {
        TSNode up = ts_node_parent(cur);
        if (ts_node_is_null(up)) break;
        if (is(up, "block") || is(up, "module")) {
            if ((j->g->partial && is(up, "module")) || (j->g->cut && is(ts_node_parent(up), "class_definition"))) {
                beyond(j); /* the rest of the module, of a class that is cut */
                break;
            }
            bool again = !ts_node_is_null(rerun) && S(rerun) <= S(cur) && E(cur) <= E(rerun) && !ts_node_eq(cur, rerun);
            uint32_t k = ts_node_named_child_count(up);
            for (uint32_t i = 0; i < k && j->kind != AN_GUARD_CUDA; i++) {
                TSNode s = ts_node_named_child(up, i);
                if (S(s) > S(cur) || (again && E(s) <= S(cur))) check_code(j, s);
            }
        } else if ((is_loop(up) || is(up, "try_statement")) && ts_node_eq(field(up, "body"), cur)) {
            /* a loop that runs on (its else branch runs when it ends without break), a try body that goes on */
            bool ends = is(up, "try_statement") || !ts_node_eq(up, target) || how == AN_CTX_EXIT_BREAK;
            uint32_t k = ts_node_named_child_count(up);
            for (uint32_t i = 0; i < k && ends; i++)
                if (is(ts_node_named_child(up, i), "else_clause")) check_code(j, ts_node_named_child(up, i));
        }
        cur = up;
    }
    if (j->kind == AN_GUARD_CUDA || j->need_whole) {
        j->in_exit = was;
        return;
    }
    if (how == AN_CTX_EXIT_RETURN && is(target, "function_definition")) {
        TSNode body = field(target, "body");
        TSNode v = is(leave, "return_statement") ? ts_node_named_child(leave, 0) : (TSNode){0};
        bool says = (!ts_node_is_null(v) && !is(v, "none") && !is(v, "comment")) ||
                    (!ts_node_is_null(body) && returns_value(j, body, 0));
        if (says) verdict(j, AN_GUARD_UNPROVEN, leave, "returns a result that depends on the test (`%.*s`) to callers xpuify does not follow");
    } else if (how == AN_CTX_EXIT_RAISE || how == AN_CTX_EXIT_RETURN) {
        bool runner = is(target, "function_definition") ? test_function(j, target) : script || test_file(j->g);
        if (!runner && is(target, "function_definition"))
            verdict(j, AN_GUARD_UNPROVEN, leave, "stops its callers where CUDA is missing (`%.*s`), and xpuify does not follow them");
        else if (!runner)
            verdict(j, AN_GUARD_UNPROVEN, leave, "stops the module's importers where CUDA is missing (`%.*s`), and xpuify does not follow them");
    }
    j->in_exit = was;
}

/* `pytestmark = pytest.mark.skipif(...)` or `pytestmark = [..., pytest.mark.skipif(...)]` in a module or class
 * body: the statement, or a NULL node */
static TSNode pytestmark(judge *j, TSNode call) {
    TSNode p = ts_node_parent(call);
    if (is(p, "list") || is(p, "tuple")) p = ts_node_parent(p);
    if (!is(p, "assignment") || !eq(j, field(p, "left"), "pytestmark")) return (TSNode){0};
    TSNode st = ts_node_parent(p), blk = ts_node_parent(st);
    if (!is(st, "expression_statement") || !(is(blk, "module") || (is(blk, "block") && is(ts_node_parent(blk), "class_definition"))))
        return (TSNode){0};
    return st;
}

/* `if not torch.cuda.is_available(): pytest.skip(...)`: the exit statement of the if's body, and how it leaves */
static an_ctx_exit body_exit(judge *j, TSNode ifs, TSNode *leave) {
    TSNode body = field(ifs, "consequence");
    an_ctx_exit how = an_ctx_block_exit(body, j->g->text);
    *leave = (TSNode){0};
    for (uint32_t i = ts_node_is_null(body) ? 0 : ts_node_named_child_count(body); i-- > 0;)
        if (!is(ts_node_named_child(body, i), "comment")) {
            *leave = ts_node_named_child(body, i);
            break;
        }
    return how;
}

/* `skip_if_no_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason=...)` at a test module's top level,
 * then `@skip_if_no_cuda` on its tests (fairscale's tests): each decorated test runs where the test says (run: +1
 * where it runs because of the test), as under the decorator written out. The name must be the module's own (private,
 * or a test module no file imports); a use other than as a decorator is not followed. */
static void marker_name(judge *j, TSNode asg, int run) {
    j->escapes = true;
    TSNode name = field(asg, "left"), st = ts_node_parent(asg);
    if (!is(name, "identifier") || !is(st, "expression_statement") || !is(ts_node_parent(st), "module") ||
        (T(j, name)[0] != '_' && !unimported_test_module(j))) {
        verdict(j, AN_GUARD_UNPROVEN, name, "stores a skip marker on the test in `%.*s`, which other modules may import");
        return;
    }
    if (j->g->partial) { /* its uses are anywhere in the module */
        beyond(j);
        return;
    }
    TSTreeCursor c = ts_tree_cursor_new(j->g->root);
    int depth = 0;
    for (;;) {
        TSNode x = ts_tree_cursor_current_node(&c);
        if (is(x, "identifier") && S(x) >= E(asg) && L(x) == L(name) && !memcmp(T(j, x), T(j, name), L(x))) {
            TSNode deco = ts_node_parent(x);
            if (is(deco, "decorator")) {
                TSNode def = field(ts_node_parent(deco), "definition");
                if (run > 0 && !ts_node_is_null(def)) check_code(j, field(def, "body"));
            } else {
                verdict(j, AN_GUARD_UNPROVEN, x, "uses the skip marker `%.*s` where xpuify does not follow it");
            }
        }
        if (j->kind == AN_GUARD_CUDA) break;
        if (depth < GUARD_MAX_WALK_DEPTH && ts_tree_cursor_goto_first_child(&c)) { depth++; continue; }
        bool more = false;
        for (;;) {
            if (depth == 0) break;
            if ((more = ts_tree_cursor_goto_next_sibling(&c))) break;
            ts_tree_cursor_goto_parent(&c);
            depth--;
        }
        if (!more) break;
    }
    ts_tree_cursor_delete(&c);
}

/* cur: the test (or a name holding it); pol: +1 where its truth is the guarded code's condition, -1 negated. */
static void guarded_by(judge *j, TSNode cur, int pol, int flow) {
    for (;;) {
        TSNode p = ts_node_parent(cur);
        if (ts_node_is_null(p)) break;
        if (is(p, "parenthesized_expression")) {
            cur = p;
            continue;
        }
        if (is(p, "not_operator")) {
            pol = -pol, cur = p;
            continue;
        }
        if (is(p, "boolean_operator")) {
            /* what is evaluated after the test because of its value */
            TSNode right = field(p, "right");
            if (!ts_node_eq(right, cur)) check_code(j, right);
            cur = p;
            continue;
        }
        if ((is(p, "if_statement") || is(p, "elif_clause")) && ts_node_eq(field(p, "condition"), cur)) {
            if (pol > 0) {
                j->escapes |= returns_literal(field(p, "consequence"), 0);
                check_code(j, field(p, "consequence"));
                return;
            }
            TSNode ifs = is(p, "elif_clause") ? ts_node_parent(p) : p;
            bool any = false;
            for (TSNode a = ts_node_next_named_sibling(is(p, "elif_clause") ? p : field(p, "consequence"));
                 !ts_node_is_null(a); a = ts_node_next_named_sibling(a))
                if (is(a, "elif_clause") || is(a, "else_clause")) check_code(j, a), any = true;
            /* an early exit (`if not torch.cuda.is_available(): return`): what runs after it */
            TSNode leave;
            an_ctx_exit how = body_exit(j, p, &leave);
            if (how != AN_CTX_EXIT_NONE) after_exit(j, ifs, leave, how);
            else if (!any) rest_of_block(j, ifs);
            return;
        }
        if (is(p, "conditional_expression") && ts_node_eq(ts_node_named_child(p, 1), cur)) {
            TSNode arm = ts_node_named_child(p, pol > 0 ? 0 : 2);
            j->escapes |= literal(arm);
            /* a device list a loop runs over (`for device in ["cpu"] + (["cuda"] if torch.cuda.is_available() else
             * [])`, detectron2's op tests): the loop body runs on the devices the test adds, read first (what it
             * calls decides what the list is for) */
            TSNode it = p;
            while (is(ts_node_parent(it), "parenthesized_expression") ||
                   (is(ts_node_parent(it), "binary_operator") && is(field(ts_node_parent(it), "operator"), "+")))
                it = ts_node_parent(it);
            TSNode loop = ts_node_parent(it);
            TSNode a = arm;
            while (is(a, "parenthesized_expression") || is(a, "binary_operator"))
                a = is(a, "binary_operator") ? field(a, "right") : ts_node_named_child(a, 0);
            if (is(loop, "for_statement") && ts_node_eq(field(loop, "right"), it) && is(a, "list"))
                check_code(j, field(loop, "body"));
            check_code(j, arm);
            return;
        }
        /* `for i in range(torch.cuda.device_count()):` and its comprehension: the body runs once per CUDA device, no
         * time where CUDA is missing */
        if (is(p, "argument_list") && is(ts_node_parent(p), "call") && eq(j, field(ts_node_parent(p), "function"), "range")) {
            TSNode rng = ts_node_parent(p), loop = ts_node_parent(rng);
            if ((is(loop, "for_statement") || is(loop, "for_in_clause")) && ts_node_eq(field(loop, "right"), rng)) {
                if (is(loop, "for_statement")) {
                    check_code(j, field(loop, "body"));
                } else { /* the comprehension's element and its other clauses */
                    TSNode comp = ts_node_parent(loop);
                    for (uint32_t i = 0, k = ts_node_named_child_count(comp); i < k; i++)
                        if (!ts_node_eq(ts_node_named_child(comp, i), loop)) check_code(j, ts_node_named_child(comp, i));
                }
                return;
            }
        }
        if (is(p, "argument_list") && ts_node_eq(ts_node_named_child(p, 0), cur)) {
            TSNode call = ts_node_parent(p), fn = field(call, "function");
            TSNode last = is(fn, "attribute") ? field(fn, "attribute") : fn;
            bool skip_if = eq(j, last, "skipIf") || eq(j, last, "skipif"), skip_unless = eq(j, last, "skipUnless");
            TSNode deco = ts_node_parent(call);
            if ((skip_if || skip_unless) && is(deco, "decorator")) {
                j->escapes = true;
                if (skip_if) pol = -pol;
                TSNode def = field(ts_node_parent(deco), "definition");
                if (pol > 0 && !ts_node_is_null(def)) check_code(j, field(def, "body"));
                /* pol < 0: it is skipped where it ran: nothing runs that did not */
                return;
            }
            if ((skip_if || skip_unless) && is(deco, "assignment") && ts_node_eq(field(deco, "right"), call) &&
                !eq(j, field(deco, "left"), "pytestmark")) {
                marker_name(j, deco, skip_if ? -pol : pol);
                return;
            }
            TSNode mark = pytestmark(j, call);
            j->escapes |= skip_if && !ts_node_is_null(mark);
            if (skip_if && !ts_node_is_null(mark)) {
                /* `pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), ...)`: every test of the module
                 * (or class) is skipped by it; the rest of that block is what runs because of the test */
                TSNode blk = ts_node_parent(mark);
                if (-pol > 0 && j->g->partial && is(blk, "module")) beyond(j);
                else if (-pol > 0 && j->g->cut && is(ts_node_parent(blk), "class_definition")) beyond(j);
                else if (-pol > 0)
                    for (uint32_t i = 0, k = ts_node_named_child_count(blk); i < k && j->kind != AN_GUARD_CUDA; i++)
                        if (!ts_node_eq(ts_node_named_child(blk, i), mark)) check_code(j, ts_node_named_child(blk, i));
                return;
            }
            verdict(j, AN_GUARD_UNPROVEN, call, "passes the test to `%.*s`, which xpuify does not follow");
            return;
        }
        /* `DataLoader(..., pin_memory=torch.cuda.is_available())`: page-locked host memory for whichever accelerator
         * the loader copies to (torch pins for the current accelerator, or warns and goes on where it cannot) */
        if (is(p, "keyword_argument") && ts_node_eq(field(p, "value"), cur) && eq(j, field(p, "name"), "pin_memory"))
            return;
        if (is(p, "assignment") && ts_node_eq(field(p, "right"), cur)) {
            follow_name(j, p, pol, flow);
            return;
        }
        /* `assert torch.cuda.is_available(), "..."`: an early exit where the test is false */
        if (is(p, "assert_statement") && ts_node_eq(ts_node_named_child(p, 0), cur) && pol > 0 &&
            (is(ts_node_parent(p), "block") || is(ts_node_parent(p), "module"))) {
            after_exit(j, p, p, AN_CTX_EXIT_RAISE);
            return;
        }
        break;
    }
    TSNode p = ts_node_parent(cur);
    if (is(p, "return_statement"))
        verdict(j, AN_GUARD_UNPROVEN, p, "returns the test to callers xpuify does not follow");
    else
        verdict(j, AN_GUARD_UNPROVEN, ts_node_is_null(p) ? cur : p, "uses the test in `%.*s`, which xpuify does not follow");
}

/* ---- what the code says of itself: CUDA by design ------------------------------------------------------------- */

/* a word of s that starts with stem (case-insensitive), not negated by the word before it ("not required", "no
 * need", "doesn't need") */
static bool stem_word(const char *s, size_t n, const char *stem) {
    size_t sl = strlen(stem);
    for (size_t i = 0; i + sl <= n; i++) {
        if (strncasecmp(s + i, stem, sl) || (i && isalpha((unsigned char)s[i - 1]))) continue;
        size_t k = i, w;
        while (k && s[k - 1] == ' ') k--;
        for (w = k; w && (isalpha((unsigned char)s[w - 1]) || s[w - 1] == '\''); w--) {}
        bool negated = k > w && ((k - w == 3 && !strncasecmp(s + w, "not", 3)) || (k - w == 2 && !strncasecmp(s + w, "no", 2)) ||
                                 (k - w > 3 && !strncasecmp(s + k - 3, "n't", 3)));
        if (!negated) return true;
    }
    return false;
}

/* A message that states CUDA is required: it names CUDA and says so ("needs CUDA", "CUDA is required for AMP
 * training", "requires a CUDA GPU", "CUDA-only", "must run on CUDA"); "CUDA not available" only says what is missing. */
static bool states_required(const char *s, size_t n) {
    static const char *const stems[] = {"requir", "need", "must", "only", NULL};
    /* a precision feature XPU has too ("bf16 requires CUDA", "fp16 needs CUDA", "CUDA is required for AMP
     * training"): the statement is about the devices of its day, and the test is one to port */
    static const char *const features[] = {"fp16", "bf16", "float16", "bfloat16", "half", "amp", "autocast", "mixed",
                                           "tf32", NULL};
    if (!names_cuda(s, n)) return false;
    for (int i = 0; features[i]; i++)
        if (word_in(s, n, features[i])) return false;
    for (int i = 0; stems[i]; i++)
        if (stem_word(s, n, stems[i])) return true;
    return false;
}

/* A statement outside tests must give a CUDA-only library as its reason ("Megatron requires CUDA.", "CUDA required
 * for APEX optimizers", "TensorRT only supports CUDA devices"): a bare "for now i think we need CUDA for DDP" before
 * device-generic set-up is a limitation the port is there to lift (the test stays XPU105's, the code after it is
 * ported). A test's skip reason is its author's word on what the test is for. */
static bool names_cuda_library(const char *s, size_t n) {
    static const char *const libs[] = {"apex", "megatron", "tensorrt", "trt", "bitsandbytes", "bnb", "xformers", "vllm",
                                       "flash_attn", "flash-attn", "flashattention", "cutlass", "cudnn", "nccl",
                                       "cupy", "pycuda", "transformer_engine", "nvml", "nvtx", NULL};
    for (int i = 0; libs[i]; i++)
        if (word_in(s, n, libs[i])) return true;
    return false;
}

/* n sits in a test function (a `test*` function or method of a test module), or in a decorator of one */
static bool in_test_function(judge *j, TSNode n) {
    for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); p = ts_node_parent(p)) {
        if (is(p, "decorator") && is(ts_node_parent(p), "decorated_definition")) {
            TSNode def = field(ts_node_parent(p), "definition");
            return is(def, "function_definition") && test_function(j, def);
        }
        if (is(p, "function_definition")) return test_function(j, p);
    }
    return false;
}

/* the first string literal under n that states CUDA is required, or a NULL node */
static TSNode stating_string(judge *j, TSNode n) {
    TSTreeCursor c = ts_tree_cursor_new(n);
    TSNode hit = {0};
    int depth = 0;
    for (;;) {
        TSNode x = ts_tree_cursor_current_node(&c);
        bool str = is(x, "string");
        if (str && states_required(T(j, x), L(x))) {
            hit = x;
            break;
        }
        if (!str && depth < GUARD_MAX_WALK_DEPTH && ts_tree_cursor_goto_first_child(&c)) {
            depth++;
            continue;
        }
        bool more = false;
        while (depth > 0 && !(more = ts_tree_cursor_goto_next_sibling(&c))) {
            ts_tree_cursor_goto_parent(&c);
            depth--;
        }
        if (!more) break;
    }
    ts_tree_cursor_delete(&c);
    return hit;
}

/* what a block's own statements raise, skip or exit with: `raise RuntimeError("...")`, `pytest.skip("...")`,
 * `self.skipTest("...")`, `sys.exit("...")` (statements of the block itself, not of blocks inside it) */
static TSNode exit_string(judge *j, TSNode block) {
    for (uint32_t i = 0, k = ts_node_is_null(block) ? 0 : ts_node_named_child_count(block); i < k; i++) {
        TSNode st = ts_node_named_child(block, i), hit = {0};
        if (is(st, "raise_statement")) {
            hit = stating_string(j, st);
        } else if (is(st, "expression_statement") && is(ts_node_named_child(st, 0), "call")) {
            TSNode fn = field(ts_node_named_child(st, 0), "function");
            TSNode last = is(fn, "attribute") ? field(fn, "attribute") : fn;
            if (eq(j, last, "skip") || eq(j, last, "skipTest") || eq(j, last, "exit") || eq(j, last, "fail"))
                hit = stating_string(j, st);
        }
        if (!ts_node_is_null(hit)) return hit;
    }
    return (TSNode){0};
}

/* The test's own gate, what it says where CUDA is missing: a skip decorator's or marker's arguments (its reason), the
 * assert's message, what an if's branch for the missing case raises or skips with (the body of `if not
 * torch.cuda.is_available():`, the else branch of a positive test). The string there that states CUDA is required
 * (states_required), or a NULL node. */
static TSNode gate_statement(judge *j, TSNode cur) {
    int pol = 1;
    for (int up = 0; up < 32; up++) {
        TSNode p = ts_node_parent(cur);
        if (ts_node_is_null(p)) break;
        if (is(p, "parenthesized_expression") || is(p, "boolean_operator") || is(p, "not_operator")) {
            if (is(p, "not_operator")) pol = -pol;
            cur = p;
            continue;
        }
        if (is(p, "argument_list")) {
            TSNode fn = field(ts_node_parent(p), "function");
            TSNode last = is(fn, "attribute") ? field(fn, "attribute") : fn;
            if (eq(j, last, "skipIf") || eq(j, last, "skipif") || eq(j, last, "skipUnless")) return stating_string(j, p);
            break;
        }
        if (is(p, "assert_statement")) return stating_string(j, p);
        if ((is(p, "if_statement") || is(p, "elif_clause")) && ts_node_eq(field(p, "condition"), cur)) {
            if (pol < 0) return exit_string(j, field(p, "consequence"));
            TSNode ifs = is(p, "elif_clause") ? ts_node_parent(p) : p;
            for (uint32_t i = 0, k = ts_node_named_child_count(ifs); i < k; i++)
                if (is(ts_node_named_child(ifs, i), "else_clause"))
                    return exit_string(j, field(ts_node_named_child(ifs, i), "body"));
            break;
        }
        break;
    }
    return (TSNode){0};
}

/* a gate at the top level of a module that is no test code (a script's `if not torch.cuda.is_available():
 * sys.exit("requires CUDA")`): what it gates is the rest of the program, which is ported as usual (the test stays
 * XPU105's) */
static bool script_gate(judge *j, TSNode n) {
    TSNode st = n;
    while (!ts_node_is_null(ts_node_parent(st)) && !is(ts_node_parent(st), "block") && !is(ts_node_parent(st), "module"))
        st = ts_node_parent(st);
    return is(ts_node_parent(st), "module") && (is(st, "if_statement") || is(st, "assert_statement")) && !test_code(j->g);
}

/* a name for CUDA that is not a helper moving data there (`to_cuda`, `move_to_cuda`: device-generic once ported) */
static bool design_name(judge *j, TSNode nm) {
    const char *s = T(j, nm);
    size_t n = L(nm);
    return !(n >= 3 && !memcmp(s, "to_", 3)) && !ut_memmem(s, n, "to_cuda", 7);
}

/* true: the verdict is out; else (a partial tree lacks what it reads) the offsets of the definitions it lacks go to
 * grow, or *must: only the whole file's tree answers */
static bool judge_once(an_guard *g, uint32_t s, uint32_t e, an_guard_ported_fn ported, void *pctx, an_guard_verdict *out,
                       void *grow, bool *must) {
    judge j = {0};
    *must = false;
    j.g = j.home = g, j.ported = ported, j.pctx = pctx, j.kind = AN_GUARD_GENERIC, j.seen_min = SIZE_MAX;
    out->kind = AN_GUARD_UNPROVEN, out->why = NULL, out->after_exit = false, out->distributed = false, out->kernel = false;
    out->named = out->stated = NULL;
    if (!g->tree) return true;
    TSNode n = ts_node_descendant_for_byte_range(g->root, s, e);
    while (!ts_node_is_null(n) && (S(n) > s || E(n) < e)) n = ts_node_parent(n);
    for (TSNode p = n; !ts_node_is_null(p); p = ts_node_parent(p))
        if (is(p, "ERROR")) {
            out->why = ut_strdup("sits in code xpuify could not parse");
            return true;
        }
    if (ts_node_is_null(n)) return !(*must = g->partial);
    TSNode call = ts_node_parent(n);
    if (is(call, "call") && ts_node_eq(field(call, "function"), n)) n = call;
    /* inside `_require_two_cuda_devices()` or `class CudaTests`: the scope says it is about CUDA. That keeps the
     * test a CUDA test where the test says more than what it guards in place (an early exit that stops callers, a
     * skip, a name holding it, `return True`), in a class, and in tests and their support code (a test of CUDA
     * behaviour); a helper that only does device-generic work under it (`def _cuda_sync(): if
     * torch.cuda.is_available(): torch.cuda.synchronize()`) is ported like any other code */
    TSNode named = {0}, named_def = {0};
    for (TSNode p = ts_node_parent(n); !ts_node_is_null(p) && ts_node_is_null(named); p = ts_node_parent(p)) {
        size_t tok;
        TSNode nm = is(p, "function_definition") || is(p, "class_definition") ? field(p, "name") : (TSNode){0};
        if (!ts_node_is_null(nm) && an_ctx_named_for_cuda(T(&j, nm), L(nm), &tok)) named = nm, named_def = p;
    }
    guarded_by(&j, n, 1, 0);
    if (!ts_node_is_null(named) && j.kind != AN_GUARD_CUDA && !j.need_whole &&
        (j.kind != AN_GUARD_GENERIC || j.escapes || is(named_def, "class_definition") || test_function(&j, named_def) ||
         test_code(g))) {
        j.kind = AN_GUARD_GENERIC; /* the scope's verdict replaces the body's */
        ut_free(j.why);
        j.why = NULL;
        j.exit_why = false;
        verdict(&j, AN_GUARD_CUDA, named, "sits in `%.*s`, named for CUDA");
    }
    out->kind = j.kind;
    out->why = j.why;
    out->after_exit = j.exit_why;
    out->distributed = j.distributed;
    out->kernel = j.kernel && j.kind == AN_GUARD_CUDA;
    if (!out->kernel && !j.need_whole && j.kind == AN_GUARD_CUDA && !ts_node_is_null(named) && design_name(&j, named)) {
        out->named = ut_strndup(T(&j, named), L(named));
    } else if (!out->kernel && !j.need_whole && j.kind != AN_GUARD_GENERIC && !script_gate(&j, n)) {
        TSNode st = gate_statement(&j, n);
        if (!ts_node_is_null(st) && !test_code(g) && !in_test_function(&j, n) && !names_cuda_library(T(&j, st), L(st)))
            st = (TSNode){0};
        if (!ts_node_is_null(st)) {
            size_t len = L(st);
            const char *nl = memchr(T(&j, st), '\n', len);
            if (nl) len = (size_t)(nl - T(&j, st));
            out->stated = ut_strndup(T(&j, st), len > 100 ? 100 : len);
        }
    }
    ut_vec_free(&j.visited);
    ut_vec_free(&j.resolved);
    ut_vec_free(&j.frames);
    ut_vec_free(&j.touch);
    *must = j.must_whole;
    UT_VEC(uint32_t) *gv = grow;
    for (size_t i = 0; i < j.grow.len; i++) ut_vec_push(gv, j.grow.items[i]);
    ut_vec_free(&j.grow);
    return !j.need_whole;
}

/* A verdict that reads definitions of the file a partial tree lacks is judged again over the tree grown by their
 * statements (a few times), then over the whole file's. */
#define GUARD_MAX_GROWTH 3

void an_guard_verdict_clear(an_guard_verdict *v) {
    ut_free(v->why);
    ut_free(v->named);
    ut_free(v->stated);
    *v = (an_guard_verdict){AN_GUARD_GENERIC, NULL, false, false, false, NULL, NULL};
}

void an_guard_judge(an_guard *g, uint32_t s, uint32_t e, an_guard_ported_fn ported, void *pctx, an_guard_verdict *out) {
    UT_VEC(uint32_t) grow = {0};
    bool must = false;
    for (int round = 0;; round++) {
        grow.len = 0;
        if (judge_once(g, s, e, ported, pctx, out, &grow, &must) || !g->partial) break;
        an_guard_verdict_clear(out);
        if (must || !grow.len || round >= GUARD_MAX_GROWTH || !grow_partial(g, grow.items, grow.len)) {
            go_whole(g);
            judge_once(g, s, e, ported, pctx, out, &grow, &must);
            break;
        }
    }
    ut_vec_free(&grow);
}
