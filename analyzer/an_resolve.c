/* an_resolve: collects import bindings and resolves names and attribute chains to qualified names. */
#include "an_resolve.h"
#include <ctype.h>
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

static void bind(an_pyscope *sc, const char *local, size_t ln, const char *qual, TSNode at, bool fallback) {
    an_binding bd = {ut_strndup(local, ln), ut_strdup(qual), ts_node_start_byte(at), ts_node_end_byte(at), fallback,
                     !strcmp(ts_node_type(ts_node_parent(at)), "import_statement") ||
                         (!strcmp(ts_node_type(at), "aliased_import") &&
                          !strcmp(ts_node_type(ts_node_parent(at)), "import_statement"))};
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
                bind(sc, l.data, l.len, l.data, n, fallback);
            } else if (is(n, "aliased_import")) {
                dotted(&q, ts_node_child_by_field_name(n, "name", 4), src);
                text(&l, ts_node_child_by_field_name(n, "alias", 5), src);
                if (q.len && l.len) bind(sc, l.data, l.len, q.data, n, fallback);
            }
        }
    } else if (is(st, "import_from_statement")) {
        TSNode mod = ts_node_child_by_field_name(st, "module_name", 11);
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
                name = ts_node_child_by_field_name(n, "name", 4);
                alias = ts_node_child_by_field_name(n, "alias", 5);
            } else if (!is(n, "dotted_name")) continue;
            ut_buf_printf(&q, "%s.", m.data);
            dotted(&q, name, src);
            if (!ts_node_is_null(alias)) text(&l, alias, src);
            else dotted(&l, name, src);
            bind(sc, l.data, l.len, q.data, name, fallback);
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

bool an_py_mentions_agnostic(const char *s, size_t n) {
    for (size_t i = 0; i + 3 <= n; i++) {
        if ((s[i] | 0x20) != 'x' || (s[i + 1] | 0x20) != 'p' || (s[i + 2] | 0x20) != 'u') continue;
        /* a word of its own or a part of an identifier split by `_` or `.`: xpu, is_xpu_available, RNGType.XPU */
        bool l = i == 0 || !isalnum((unsigned char)s[i - 1]);
        bool r = i + 3 >= n || !isalnum((unsigned char)s[i + 3]);
        if (l && r) return true;
    }
    return memmem(s, n, "torch.accelerator", 17) || memmem(s, n, "get_device_module", 17);
}

static void add_param(an_pyscope *sc, TSNode id, const char *src) {
    if (ts_node_is_null(id) || strcmp(ts_node_type(id), "identifier")) return;
    uint32_t a = ts_node_start_byte(id), b = ts_node_end_byte(id);
    for (size_t i = 0; i < sc->params.len; i++)
        if (strlen(sc->params.items[i]) == b - a && !memcmp(sc->params.items[i], src + a, b - a)) return;
    ut_vec_push(&sc->params, ut_strndup(src + a, b - a));
}

static void collect_params(an_pyscope *sc, TSNode params, const char *src) {
    uint32_t c = ts_node_named_child_count(params);
    for (uint32_t i = 0; i < c; i++) {
        TSNode p = ts_node_named_child(params, i);
        const char *t = ts_node_type(p);
        if (!strcmp(t, "identifier")) add_param(sc, p, src);
        else if (!strcmp(t, "default_parameter") || !strcmp(t, "typed_default_parameter"))
            add_param(sc, ts_node_child_by_field_name(p, "name", 4), src);
        else add_param(sc, ts_node_named_child(p, 0), src);
    }
}

void an_pyscope_collect(an_pyscope *sc, TSNode root, const char *src) {
    memset(sc, 0, sizeof *sc);
    TSTreeCursor cur = ts_tree_cursor_new(root);
    int except_depth = 0;
    UT_VEC(bool) in_except = {0}; /* per depth: the node at this depth is an except_clause */
    ut_vec_push(&in_except, false);
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&cur);
        const char *t = ts_node_type(n);
        bool descend = descends(t);
        if (!strcmp(t, "import_statement") || !strcmp(t, "import_from_statement")) {
            collect_import(sc, n, src, except_depth > 0);
            descend = false;
        } else if (!strcmp(t, "parameters") || !strcmp(t, "lambda_parameters")) {
            collect_params(sc, n, src);
        } else if (!strcmp(t, "assignment")) {
            TSNode l = ts_node_child_by_field_name(n, "left", 4), r = ts_node_child_by_field_name(n, "right", 5);
            if (!ts_node_is_null(l) && !ts_node_is_null(r) && !strcmp(ts_node_type(l), "identifier") &&
                an_py_mentions_agnostic(src + ts_node_start_byte(r), ts_node_end_byte(r) - ts_node_start_byte(r)))
                ut_vec_push(&sc->agnostic_names, ut_strndup(src + ts_node_start_byte(l), ts_node_end_byte(l) - ts_node_start_byte(l)));
        }
        if (descend && ts_tree_cursor_goto_first_child(&cur)) {
            bool ex = !strcmp(t, "except_clause");
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

void an_pyscope_free(an_pyscope *sc) {
    for (size_t i = 0; i < sc->bindings.len; i++) ut_free(sc->bindings.items[i].local), ut_free(sc->bindings.items[i].qual);
    ut_vec_free(&sc->bindings);
    for (size_t i = 0; i < sc->stars.len; i++) ut_free(sc->stars.items[i]);
    ut_vec_free(&sc->stars);
    for (size_t i = 0; i < sc->params.len; i++) ut_free(sc->params.items[i]);
    ut_vec_free(&sc->params);
    for (size_t i = 0; i < sc->agnostic_names.len; i++) ut_free(sc->agnostic_names.items[i]);
    ut_vec_free(&sc->agnostic_names);
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

static bool param_named(TSNode p, const char *src, const char *name, size_t n) {
    TSNode id = p;
    if (is(p, "default_parameter") || is(p, "typed_default_parameter")) id = ts_node_child_by_field_name(p, "name", 4);
    else if (is(p, "typed_parameter") || is(p, "list_splat_pattern") || is(p, "dictionary_splat_pattern"))
        id = ts_node_named_child(p, 0);
    if (ts_node_is_null(id) || !is(id, "identifier")) return false;
    return ts_node_end_byte(id) - ts_node_start_byte(id) == n && !memcmp(src + ts_node_start_byte(id), name, n);
}

bool an_pyscope_shadowed(const an_pyscope *sc, TSNode id, const char *src) {
    const char *name = src + ts_node_start_byte(id);
    size_t n = ts_node_end_byte(id) - ts_node_start_byte(id);
    /* climbing parents is costly in tree-sitter: only names that are a parameter somewhere can be shadowed */
    bool candidate = false;
    for (size_t i = 0; i < sc->params.len && !candidate; i++)
        candidate = strlen(sc->params.items[i]) == n && !memcmp(sc->params.items[i], name, n);
    if (!candidate) return false;
    for (TSNode p = ts_node_parent(id); !ts_node_is_null(p); p = ts_node_parent(p)) {
        TSNode params = {0};
        if (is(p, "function_definition")) params = ts_node_child_by_field_name(p, "parameters", 10);
        else if (is(p, "lambda")) params = ts_node_child_by_field_name(p, "parameters", 10);
        else continue;
        if (ts_node_is_null(params)) continue;
        uint32_t c = ts_node_named_child_count(params);
        for (uint32_t i = 0; i < c; i++)
            if (param_named(ts_node_named_child(params, i), src, name, n)) return true;
    }
    return false;
}

bool an_pyscope_qualname(const an_pyscope *sc, TSNode node, const char *src, ut_buf *out) {
    /* collect attribute names from the outside in */
    TSNode parts[64];
    int np = 0;
    TSNode n = node;
    while (is(n, "attribute")) {
        if (np == 64) return false;
        TSNode attr = ts_node_child_by_field_name(n, "attribute", 9);
        if (ts_node_is_null(attr)) return false;
        parts[np++] = attr;
        n = ts_node_child_by_field_name(n, "object", 6);
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
