/* an_resolve: collects import bindings and resolves names and attribute chains to qualified names. */
#include "analyzer/python/an_resolve.h"
#include "util/ut_find.h"
#include "analyzer/python/an_pyfield.h"
#include <ctype.h>
#include <pthread.h>
#include <string.h>

static bool is(TSNode n, const char *t) { return !strcmp(ts_node_type(n), t); }

static void text(ut_buf *b, TSNode n, const char *src) {
    ut_buf_append(b, src + ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
}

/* dotted_name text without whitespace or comments between its parts */
static void dotted(ut_buf *b, TSNode n, const char *src) {
    if (!is(n, "dotted_name")) { text(b, n, src); return; }
    uint32_t c = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < c; i++) {
        TSNode id = ts_node_named_child(n, i);
        if (!is(id, "identifier")) continue;
        if (b->len && b->data[b->len - 1] != '.' && i) ut_buf_putc(b, '.');
        text(b, id, src);
    }
}

/* plain: at is a name of an `import` statement (not of `from ... import`); the caller knows the statement (asking
 * at's parent walked down from the root: tree-sitter 0.20.7) */
static void bind(an_pyscope *sc, const char *local, size_t ln, const char *qual, TSNode at, bool fallback, bool plain) {
    an_binding bd = {ut_strndup(local, ln), ut_strdup(qual), ts_node_start_byte(at), ts_node_end_byte(at), fallback,
                     plain};
    ut_vec_push(&sc->bindings, bd);
}

static void collect_import(an_pyscope *sc, TSNode st, const char *src, bool fallback) {
    ut_buf q, l;
    ut_buf_init(&q), ut_buf_init(&l);
    if (is(st, "import_statement")) {
        uint32_t c = ts_node_named_child_count(st);
        for (uint32_t i = 0; i < c; i++) {
            TSNode n = ts_node_named_child(st, i);
            ut_buf_clear(&q), ut_buf_clear(&l);
            if (is(n, "dotted_name")) {
                /* `import a.b.c` binds `a` to `a` */
                TSNode first = ts_node_named_child(n, 0);
                text(&l, first, src);
                bind(sc, l.data, l.len, l.data, n, fallback, true);
            } else if (is(n, "aliased_import")) {
                dotted(&q, an_py_field(n, "name", 4), src);
                text(&l, an_py_field(n, "alias", 5), src);
                if (q.len && l.len) bind(sc, l.data, l.len, q.data, n, fallback, true);
            }
        }
    } else if (is(st, "import_from_statement")) {
        TSNode mod = an_py_field(st, "module_name", 11);
        if (ts_node_is_null(mod) || !is(mod, "dotted_name")) goto out; /* relative imports are the project's own */
        ut_buf m;
        ut_buf_init(&m);
        dotted(&m, mod, src);
        uint32_t c = ts_node_named_child_count(st);
        for (uint32_t i = 0; i < c; i++) {
            TSNode n = ts_node_named_child(st, i);
            if (ts_node_eq(n, mod)) continue;
            ut_buf_clear(&q), ut_buf_clear(&l);
            if (is(n, "wildcard_import")) {
                ut_vec_push(&sc->stars, ut_strdup(m.data));
                continue;
            }
            TSNode name = n, alias = {0};
            if (is(n, "aliased_import")) {
                name = an_py_field(n, "name", 4);
                alias = an_py_field(n, "alias", 5);
            } else if (!is(n, "dotted_name")) continue;
            ut_buf_printf(&q, "%s.", m.data);
            dotted(&q, name, src);
            if (!ts_node_is_null(alias)) text(&l, alias, src);
            else dotted(&l, name, src);
            bind(sc, l.data, l.len, q.data, name, fallback, false);
        }
        ut_buf_free(&m);
    }
out:
    ut_buf_free(&q), ut_buf_free(&l);
}

/* Imports are statements: the walk for them enters statement containers and skips every expression. */
static bool descends(const char *t) {
    static const char *const containers[] = {
        "module", "block", "function_definition", "class_definition", "decorated_definition", "if_statement",
        "elif_clause", "else_clause", "try_statement", "except_clause", "except_group_clause", "finally_clause",
        "with_statement", "for_statement", "while_statement", "match_statement", "case_clause", "ERROR",
        "lambda", "parameters", "lambda_parameters", "expression_statement", "assignment", NULL};
    for (int i = 0; containers[i]; i++)
        if (!strcmp(t, containers[i])) return true;
    return false;
}

/* `w` (lower case) at i, a word of its own or a part of an identifier split by `_` or `.`, in any case */
static bool word_part_at(const char *s, size_t n, size_t i, const char *w, size_t wl) {
    for (size_t k = 0; k < wl; k++)
        if (tolower((unsigned char)s[i + k]) != w[k]) return false;
    bool l = i == 0 || !isalnum((unsigned char)s[i - 1]);
    bool r = i + wl >= n || !isalnum((unsigned char)s[i + wl]);
    return l && r;
}

bool an_py_word_part(const char *s, size_t n, const char *w) {
    size_t wl = strlen(w);
    for (size_t i = 0; i + wl <= n; i++)
        if (word_part_at(s, n, i, w, wl)) return true;
    return false;
}

bool an_py_mentions_agnostic(const char *s, size_t n) {
    for (size_t i = 0; i + 3 <= n; i++) {
        char c = (char)(s[i] | 0x20); /* x or s in either case, or nothing to compare */
        if (c != 'x' && c != 's') continue;
        /* xpu, is_xpu_available, RNGType.XPU; SYCL_HOME, use_sycl (the SYCL build of an extension is its XPU
         * build) */
        if (word_part_at(s, n, i, "xpu", 3)) return true;
        if (i + 4 <= n && word_part_at(s, n, i, "sycl", 4)) return true;
    }
    return ut_memmem(s, n, "torch.accelerator", 17) || ut_memmem(s, n, "get_device_module", 17) ||
           ut_memmem(s, n, "SyclExtension", 13);
}

static bool param_name(TSNode p, const char *src, uint32_t *a, uint32_t *b);

/* the parameters of a function_definition or lambda, as shadows over its whole range */
static void collect_params(an_pyscope *sc, TSNode def, const char *src) {
    TSNode params = an_py_field(def, "parameters", 10);
    if (ts_node_is_null(params)) return;
    uint32_t c = ts_node_named_child_count(params);
    for (uint32_t i = 0; i < c; i++) {
        uint32_t a, b;
        if (!param_name(ts_node_named_child(params, i), src, &a, &b)) continue;
        an_shadow sh = {ut_strndup(src + a, b - a), ts_node_start_byte(def), ts_node_end_byte(def)};
        ut_vec_push(&sc->shadows, sh);
    }
}

static int shadow_cmp(const void *x, const void *y) {
    const an_shadow *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    if (c) return c;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return a->end > b->end ? -1 : a->end < b->end; /* the outer range first */
}

/* sort, then drop ranges inside an earlier range of the same name: what remains is disjoint per name */
static void finish_shadows(an_pyscope *sc) {
    if (sc->shadows.len > 1) qsort(sc->shadows.items, sc->shadows.len, sizeof(an_shadow), shadow_cmp);
    size_t w = 0;
    for (size_t i = 0; i < sc->shadows.len; i++) {
        an_shadow *s = &sc->shadows.items[i];
        if (w) {
            an_shadow *k = &sc->shadows.items[w - 1];
            if (!strcmp(k->name, s->name) && s->start < k->end) {
                if (s->end > k->end) k->end = s->end; /* ranges of a tree nest; this keeps it sound regardless */
                ut_free(s->name);
                continue;
            }
        }
        sc->shadows.items[w++] = *s;
    }
    sc->shadows.len = w;
}

/* What the walk does per node kind, by grammar symbol (names compared once per language, not once per node). */
enum { K_OTHER = 0, K_DESCEND = 1, K_IMPORT = 2, K_PARAMS = 4, K_ASSIGN = 8, K_EXCEPT = 16 };
typedef struct {
    const TSLanguage *lang;
    uint8_t *kind; /* by symbol */
    uint32_t count;
    TSFieldId left, right;
} kinds;

static kinds kinds_cache;
static pthread_mutex_t kinds_lock = PTHREAD_MUTEX_INITIALIZER;

static const kinds *kinds_for(const TSLanguage *lang) {
    pthread_mutex_lock(&kinds_lock);
    if (kinds_cache.lang != lang) {
        uint32_t n = ts_language_symbol_count(lang);
        uint8_t *k = ut_calloc(n ? n : 1, 1);
        for (uint32_t i = 0; i < n; i++) {
            const char *t = ts_language_symbol_name(lang, (TSSymbol)i);
            if (!t) continue;
            if (descends(t)) k[i] |= K_DESCEND;
            if (!strcmp(t, "import_statement") || !strcmp(t, "import_from_statement")) k[i] |= K_IMPORT;
            if (!strcmp(t, "function_definition") || !strcmp(t, "lambda")) k[i] |= K_PARAMS;
            if (!strcmp(t, "assignment")) k[i] |= K_ASSIGN;
            if (!strcmp(t, "except_clause")) k[i] |= K_EXCEPT;
        }
        ut_free(kinds_cache.kind); /* a second language replaces the first (one grammar in practice) */
        kinds_cache.kind = k, kinds_cache.count = n, kinds_cache.lang = lang;
        kinds_cache.left = ts_language_field_id_for_name(lang, "left", 4);
        kinds_cache.right = ts_language_field_id_for_name(lang, "right", 5);
    }
    pthread_mutex_unlock(&kinds_lock);
    return &kinds_cache;
}

static uint8_t kind_of_sym(const kinds *k, TSSymbol s) {
    if (s == (TSSymbol)-1) return K_DESCEND; /* ERROR */
    return s < k->count ? k->kind[s] : K_OTHER;
}

static uint8_t kind_of(const kinds *k, TSNode n) {
    TSSymbol s = ts_node_symbol(n);
    if (s == (TSSymbol)-1) return K_DESCEND; /* ERROR */
    return s < k->count ? k->kind[s] : K_OTHER;
}

/* The facts of node n (k: its kinds) into sc; whether the walk descends into it. except: n is inside an except
 * clause. */
static bool collect_visit(an_pyscope *sc, const kinds *kd, TSNode n, uint8_t k, const char *src, bool except) {
    bool descend = k & K_DESCEND;
    if (k & K_IMPORT) {
        collect_import(sc, n, src, except);
        descend = false;
    } else if (k & K_PARAMS) {
        collect_params(sc, n, src);
    } else if (k & K_ASSIGN) {
        TSNode l = ts_node_child_by_field_id(n, kd->left), r = ts_node_child_by_field_id(n, kd->right);
        if (!ts_node_is_null(l) && !ts_node_is_null(r) && !strcmp(ts_node_type(l), "identifier") &&
            an_py_mentions_agnostic(src + ts_node_start_byte(r), ts_node_end_byte(r) - ts_node_start_byte(r)))
            ut_vec_push(&sc->agnostic_names, ut_strndup(src + ts_node_start_byte(l), ts_node_end_byte(l) - ts_node_start_byte(l)));
    }
    return descend;
}

/* Adds the facts of the subtree at root (imports, parameters, probe assignments) to sc, by a cursor walk (a tree
 * walked once: the guard's, a cached unit) */
static void collect_cursor(an_pyscope *sc, TSNode root, const char *src) {
    const kinds *kd = kinds_for(ts_tree_language(root.tree));
    TSTreeCursor cur = ts_tree_cursor_new(root);
    int except_depth = 0;
    UT_VEC(bool) in_except = {0}; /* per depth: the node at this depth is an except_clause */
    ut_vec_push(&in_except, false);
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&cur);
        uint8_t k = kind_of(kd, n);
        bool descend = collect_visit(sc, kd, n, k, src, except_depth > 0);
        if (descend && ts_tree_cursor_goto_first_child(&cur)) {
            bool ex = k & K_EXCEPT;
            except_depth += ex;
            ut_vec_push(&in_except, ex);
            continue;
        }
        while (!ts_tree_cursor_goto_next_sibling(&cur)) {
            if (!ts_tree_cursor_goto_parent(&cur)) goto done;
            except_depth -= in_except.items[--in_except.len];
        }
    }
done:
    ut_vec_free(&in_except);
    ts_tree_cursor_delete(&cur);
}

/* The same from the tree's node index: the same nodes in the same order */
static void collect_walk(an_pyscope *sc, const an_pynodes *nodes, const char *src) {
    if (!nodes->len) return;
    const kinds *kd = kinds_for(ts_tree_language(nodes->items[0].node.tree));
    /* the except clauses open around the node: their ends (a clause's subtree ends at its `next`) */
    UT_VEC(uint32_t) excepts = {0};
    for (uint32_t i = 0; i < nodes->len;) {
        while (excepts.len && excepts.items[excepts.len - 1] <= i) excepts.len--;
        const an_pynode *p = &nodes->items[i];
        uint8_t k = kind_of_sym(kd, p->sym);
        bool descend = collect_visit(sc, kd, p->node, k, src, excepts.len > 0);
        if (descend && p->next > i + 1) {
            if (k & K_EXCEPT) ut_vec_push(&excepts, p->next);
            i++;
            continue;
        }
        i = p->next;
    }
    ut_vec_free(&excepts);
}

void an_pyscope_collect(an_pyscope *sc, TSNode root, const char *src) {
    memset(sc, 0, sizeof *sc);
    collect_cursor(sc, root, src);
    finish_shadows(sc);
}

void an_pyscope_collect_nodes(an_pyscope *sc, const an_pynodes *nodes, const char *src) {
    memset(sc, 0, sizeof *sc);
    collect_walk(sc, nodes, src);
    finish_shadows(sc);
}

/* ---- the per-statement cache (an editor buffer: most top-level statements are the same text as last time) ---- */

typedef struct {
    uint64_t h;
    char *text;       /* the statement's text (compared in full on a hash hit) */
    uint32_t len;
    an_pyscope facts; /* offsets relative to the statement's start */
} unit_facts;

struct an_pyscope_cache {
    UT_VEC(unit_facts) units; /* sorted by (h, len) */
};

an_pyscope_cache *an_pyscope_cache_new(void) { return ut_calloc(1, sizeof(an_pyscope_cache)); }

static void unit_free(unit_facts *u) {
    ut_free(u->text);
    an_pyscope_free(&u->facts);
}

void an_pyscope_cache_free(an_pyscope_cache *c) {
    if (!c) return;
    for (size_t i = 0; i < c->units.len; i++) unit_free(&c->units.items[i]);
    ut_vec_free(&c->units);
    ut_free(c);
}

static uint64_t text_hash(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h ^ (h >> 31);
}

static int unit_cmp(const void *a, const void *b) {
    const unit_facts *x = a, *y = b;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* Appends f's facts to sc with their offsets moved by delta (a cached unit into a scope, or back) */
static void append_facts(an_pyscope *sc, const an_pyscope *f, int64_t delta) {
    for (size_t i = 0; i < f->bindings.len; i++) {
        an_binding b = f->bindings.items[i];
        b.local = ut_strdup(b.local), b.qual = ut_strdup(b.qual);
        b.start = (uint32_t)(b.start + delta), b.end = (uint32_t)(b.end + delta);
        ut_vec_push(&sc->bindings, b);
    }
    for (size_t i = 0; i < f->stars.len; i++) ut_vec_push(&sc->stars, ut_strdup(f->stars.items[i]));
    for (size_t i = 0; i < f->agnostic_names.len; i++) ut_vec_push(&sc->agnostic_names, ut_strdup(f->agnostic_names.items[i]));
    for (size_t i = 0; i < f->shadows.len; i++) {
        an_shadow sh = f->shadows.items[i];
        sh.name = ut_strdup(sh.name);
        sh.start = (uint32_t)(sh.start + delta), sh.end = (uint32_t)(sh.end + delta);
        ut_vec_push(&sc->shadows, sh);
    }
}

void an_pyscope_collect_cached(an_pyscope *sc, TSNode root, const char *src, an_pyscope_cache *cache) {
    if (!cache || strcmp(ts_node_type(root), "module")) {
        an_pyscope_collect(sc, root, src);
        return;
    }
    memset(sc, 0, sizeof *sc);
    UT_VEC(unit_facts) next = {0};
    uint32_t n = ts_node_child_count(root);
    for (uint32_t i = 0; i < n; i++) {
        TSNode u = ts_node_child(root, i);
        uint32_t a = ts_node_start_byte(u), b = ts_node_end_byte(u);
        unit_facts key;
        memset(&key, 0, sizeof key);
        key.h = text_hash(src + a, b - a), key.len = b - a;
        unit_facts *hit = cache->units.len ? bsearch(&key, cache->units.items, cache->units.len, sizeof(unit_facts), unit_cmp)
                                           : NULL;
        /* equal hashes and lengths: step to the first, then compare the texts */
        while (hit && hit > cache->units.items && !unit_cmp(hit - 1, &key)) hit--;
        for (; hit && hit < cache->units.items + cache->units.len && !unit_cmp(hit, &key); hit++)
            if (hit->text && !memcmp(hit->text, src + a, b - a)) break;
        unit_facts got;
        if (hit && hit < cache->units.items + cache->units.len && !unit_cmp(hit, &key) && hit->text) {
            got = *hit;
            hit->text = NULL; /* moved to next */
            memset(&hit->facts, 0, sizeof hit->facts);
        } else {
            an_pyscope abs = {0};
            collect_cursor(&abs, u, src);
            got = key;
            got.text = ut_strndup(src + a, b - a);
            append_facts(&got.facts, &abs, -(int64_t)a);
            an_pyscope_free(&abs);
        }
        append_facts(sc, &got.facts, a);
        ut_vec_push(&next, got);
    }
    for (size_t i = 0; i < cache->units.len; i++) unit_free(&cache->units.items[i]);
    ut_vec_free(&cache->units);
    if (next.len > 1) qsort(next.items, next.len, sizeof(unit_facts), unit_cmp);
    cache->units.items = next.items, cache->units.len = next.len, cache->units.cap = next.cap;
    finish_shadows(sc);
}

void an_pyscope_free(an_pyscope *sc) {
    for (size_t i = 0; i < sc->bindings.len; i++) ut_free(sc->bindings.items[i].local), ut_free(sc->bindings.items[i].qual);
    ut_vec_free(&sc->bindings);
    for (size_t i = 0; i < sc->stars.len; i++) ut_free(sc->stars.items[i]);
    ut_vec_free(&sc->stars);
    for (size_t i = 0; i < sc->agnostic_names.len; i++) ut_free(sc->agnostic_names.items[i]);
    ut_vec_free(&sc->agnostic_names);
    for (size_t i = 0; i < sc->shadows.len; i++) ut_free(sc->shadows.items[i].name);
    ut_vec_free(&sc->shadows);
}

const char *an_pyscope_lookup(const an_pyscope *sc, const char *name, size_t n, bool *bound) {
    const char *found = NULL, *primary = NULL;
    bool disagree = false, primaries_disagree = false;
    *bound = false;
    for (size_t i = 0; i < sc->bindings.len; i++) {
        const an_binding *b = &sc->bindings.items[i];
        if (strlen(b->local) != n || memcmp(b->local, name, n)) continue;
        if (*bound && strcmp(found, b->qual)) disagree = true;
        *bound = true;
        found = b->qual;
        if (!b->in_fallback) {
            if (primary && strcmp(primary, b->qual)) primaries_disagree = true;
            primary = b->qual;
        }
    }
    if (!disagree) return found;
    /* try: from torch.amp import X / except ImportError: from torch.cuda.amp import X: the primary import is
     * what runs on a current torch */
    return primary && !primaries_disagree ? primary : NULL;
}

static bool param_name(TSNode p, const char *src, uint32_t *a, uint32_t *b) {
    (void)src;
    TSNode id = p;
    if (is(p, "default_parameter") || is(p, "typed_default_parameter")) id = an_py_field(p, "name", 4);
    else if (is(p, "typed_parameter") || is(p, "list_splat_pattern") || is(p, "dictionary_splat_pattern"))
        id = ts_node_named_child(p, 0);
    if (ts_node_is_null(id) || !is(id, "identifier")) return false;
    *a = ts_node_start_byte(id), *b = ts_node_end_byte(id);
    return true;
}

/* compares name[0..n) with a NUL-terminated string, as strcmp orders them */
static int name_cmp(const char *name, size_t n, const char *s) {
    size_t sl = strlen(s);
    int c = memcmp(name, s, n < sl ? n : sl);
    if (c) return c;
    return n < sl ? -1 : n > sl;
}

bool an_pyscope_shadowed(const an_pyscope *sc, TSNode id, const char *src) {
    const char *name = src + ts_node_start_byte(id);
    size_t n = ts_node_end_byte(id) - ts_node_start_byte(id);
    uint32_t pos = ts_node_start_byte(id);
    /* the last shadow at or before (name, pos) */
    size_t lo = 0, hi = sc->shadows.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const an_shadow *s = &sc->shadows.items[mid];
        int c = name_cmp(name, n, s->name);
        if (c > 0 || (c == 0 && s->start <= pos)) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return false;
    const an_shadow *s = &sc->shadows.items[lo - 1];
    return !name_cmp(name, n, s->name) && s->start <= pos && pos < s->end;
}

bool an_pyscope_qualname(const an_pyscope *sc, TSNode node, const char *src, ut_buf *out) {
    /* collect attribute names from the outside in */
    TSNode parts[64];
    int np = 0;
    TSNode n = node;
    while (is(n, "attribute")) {
        if (np == 64) return false;
        TSNode attr = an_py_field(n, "attribute", 9);
        if (ts_node_is_null(attr)) return false;
        parts[np++] = attr;
        n = an_py_field(n, "object", 6);
        if (ts_node_is_null(n)) return false;
    }
    if (!is(n, "identifier")) return false;
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    bool bound;
    const char *q = an_pyscope_lookup(sc, src + a, b - a, &bound);
    size_t base = out->len;
    if (q && an_pyscope_shadowed(sc, n, src)) return false; /* a parameter of that name hides the import */
    if (q) ut_buf_puts(out, q);
    else if (bound) return false;
    else ut_buf_append(out, src + a, b - a);
    for (int i = np - 1; i >= 0; i--) {
        ut_buf_putc(out, '.');
        text(out, parts[i], src);
    }
    (void)base;
    return true;
}
