/* an_flow: device strings and distributed backends that reach a device position through names (see an_flow.h).
 * Bindings (name -> literal) come from the tree; uses of a name are matched in the text around them: a device
 * position (`.to(NAME)`, `device=NAME`, ...) ends the search, a plain assignment (`dev = NAME`) continues it with the
 * name assigned. */
#include "analyzer/python/an_flow.h"
#include "util/ut_find.h"
#include "analyzer/python/an_pyfield.h"
#include "analyzer/python/an_query.h"
#include "util/ut_smap.h"
#include <ctype.h>
#include <string.h>
#include <pthread.h>
#include <strings.h>

#define MAX_KEYS 256  /* names searched per file */
#define MAX_HOPS 6    /* names per chain (`a = "cuda"; b = a; c = b; ...`) */

typedef struct {
    an_flow_kind kind;
    uint32_t start, end;
} lit;

typedef UT_VEC(lit) lit_vec;

typedef struct {
    char *key;          /* `dev`, `self.device`, `cfg.MODEL.DEVICE`; suffix: `.device` (any object) */
    bool suffix;
    uint32_t lo, hi;    /* where its uses are looked for */
    lit l;
} binding;

typedef struct {
    const char *text;
    uint32_t len;
    UT_VEC(binding) binds;
    an_flow_facts named; /* literals that are the default of a device-named option or field */
} fl;

static bool is(TSNode n, const char *t) { return !ts_node_is_null(n) && !strcmp(ts_node_type(n), t); }
static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }
static bool chain_char(char c) { return ident_char(c) || c == '.'; }

bool an_flow_is_device_string(const char *s, size_t n) {
    if (n < 4 || memcmp(s, "cuda", 4)) return false;
    if (n == 4) return true;
    if (s[4] != ':') return false;
    const char *r = s + 5;
    size_t rn = n - 5;
    if (rn == 0) return true;                                              /* "cuda:" + str(i) */
    if (strspn(r, "0123456789") >= rn) return true;                         /* "cuda:0" */
    if (r[0] == '{' && r[rn - 1] == '}' && !memchr(r + 1, '{', rn - 2)) return true; /* "cuda:{}", f"cuda:{i}" */
    if (rn == 2 && r[0] == '%' && islower((unsigned char)r[1])) return true;         /* "cuda:%d" */
    return false;
}

bool an_flow_is_nccl(const char *s, size_t n) {
    for (size_t i = 0; i + 4 <= n; i++) {
        if (strncasecmp(s + i, "nccl", 4)) continue;
        bool l = i == 0 || s[i - 1] == ',' || s[i - 1] == ':';
        bool r = i + 4 == n || s[i + 4] == ',';
        if (l && r) return true;
    }
    return false;
}

/* `--device`, `gpu_device`, `dev`: a name that says it holds a device; `dist_backend`: one that holds a backend */
static bool named_for(const char *s, size_t n, an_flow_kind k) {
    if (k == AN_FLOW_BACKEND) return n >= 7 && !strncasecmp(s + n - 7, "backend", 7);
    static const char *const ends[] = {"device", "dev", "device_type", NULL};
    for (int i = 0; ends[i]; i++) {
        size_t e = strlen(ends[i]);
        if (n >= e && !strncasecmp(s + n - e, ends[i], e) && (n == e || s[n - e - 1] == '_')) return true;
    }
    return false;
}

static void add_named(fl *f, lit l, uint32_t ns, uint32_t ne) {
    an_flow_fact x = {l.kind, l.start, l.end, ns, ne, ns, ut_strndup(f->text + ns, ne - ns), true, false};
    ut_vec_push(&f->named, x);
}

/* ---- bindings from the tree ---------------------------------------------------------------------------------- */

static void add_lit(fl *f, const char *key, size_t kn, bool suffix, uint32_t lo, uint32_t hi, lit l) {
    binding b = {ut_strndup(key, kn), suffix, lo, hi, l};
    ut_vec_push(&f->binds, b);
}

/* The device and backend literals an expression evaluates to (one of). */
static void values(fl *f, TSNode e, lit_vec *out, int depth) {
    if (ts_node_is_null(e) || depth > 8) return;
    const char *t = ts_node_type(e);
    if (!strcmp(t, "string")) {
        uint32_t cs, ce;
        an_py_string_content(e, f->text, &cs, &ce);
        lit l = {0, ts_node_start_byte(e), ts_node_end_byte(e)};
        if (an_flow_is_device_string(f->text + cs, ce - cs)) l.kind = AN_FLOW_DEVICE;
        else if (an_flow_is_nccl(f->text + cs, ce - cs)) l.kind = AN_FLOW_BACKEND;
        if (l.kind) ut_vec_push(out, l);
        return;
    }
    if (!strcmp(t, "parenthesized_expression")) {
        values(f, ts_node_named_child(e, 0), out, depth + 1);
    } else if (!strcmp(t, "conditional_expression")) {
        uint32_t n = ts_node_named_child_count(e);
        if (n == 3) values(f, ts_node_named_child(e, 0), out, depth + 1), values(f, ts_node_named_child(e, 2), out, depth + 1);
    } else if (!strcmp(t, "list") || !strcmp(t, "tuple") || !strcmp(t, "set") || !strcmp(t, "dictionary")) {
        /* the elements by a cursor: ts_node_named_child(e, i) finds each from the first (a list of 60,000) */
        bool dict = t[0] == 'd';
        TSTreeCursor c = ts_tree_cursor_new(e);
        for (bool m = ts_tree_cursor_goto_first_child(&c); m; m = ts_tree_cursor_goto_next_sibling(&c)) {
            TSNode p = ts_tree_cursor_current_node(&c);
            if (!ts_node_is_named(p)) continue;
            if (!dict) values(f, p, out, depth + 1);
            else if (is(p, "pair")) values(f, an_py_field(p, "value", 5), out, depth + 1);
        }
        ts_tree_cursor_delete(&c);
    } else if (!strcmp(t, "binary_operator")) { /* "cuda:%d" % i, "cuda:" + str(i) */
        values(f, an_py_field(e, "left", 4), out, depth + 1);
    } else if (!strcmp(t, "call")) {
        TSNode fn = an_py_field(e, "function", 8);
        TSNode args = an_py_field(e, "arguments", 9);
        if (is(fn, "attribute")) { /* "cuda:{}".format(i) */
            TSNode obj = an_py_field(fn, "object", 6), at = an_py_field(fn, "attribute", 9);
            if (is(obj, "string") && ts_node_end_byte(at) - ts_node_start_byte(at) == 6 &&
                !memcmp(f->text + ts_node_start_byte(at), "format", 6))
                values(f, obj, out, depth + 1);
        }
        /* dataclasses.field(default="cuda") */
        bool field = (is(fn, "identifier") || is(fn, "attribute")) && ts_node_end_byte(fn) - ts_node_start_byte(fn) >= 5 &&
                     !memcmp(f->text + ts_node_end_byte(fn) - 5, "field", 5);
        for (uint32_t i = 0; field && is(args, "argument_list") && i < ts_node_named_child_count(args); i++) {
            TSNode a = ts_node_named_child(args, i);
            TSNode k = an_py_field(a, "name", 4);
            if (is(a, "keyword_argument") && ts_node_end_byte(k) - ts_node_start_byte(k) == 7 &&
                !memcmp(f->text + ts_node_start_byte(k), "default", 7))
                values(f, an_py_field(a, "value", 5), out, depth + 1);
        }
    }
}

/* Where the uses of a name bound at pos are: the enclosing function's text (its indented lines), else the file. */
static uint32_t line_start(const char *t, uint32_t p) {
    while (p > 0 && t[p - 1] != '\n') p--;
    return p;
}

static uint32_t indent_at(const char *t, uint32_t len, uint32_t ls) {
    uint32_t i = ls;
    while (i < len && (t[i] == ' ' || t[i] == '\t')) i++;
    return i - ls;
}

/* The end of the block a line starting at ls opens: the first later line that is not blank nor a comment and
 * indented as much as it or less. */
static uint32_t block_end(const char *t, uint32_t len, uint32_t ls) {
    uint32_t ind = indent_at(t, len, ls);
    const char *nl = memchr(t + ls, '\n', len - ls);
    uint32_t p = nl ? (uint32_t)(nl - t) + 1 : len;
    while (p < len) {
        uint32_t in = indent_at(t, len, p), q = p + in;
        const char *e = memchr(t + p, '\n', len - p);
        uint32_t next = e ? (uint32_t)(e - t) + 1 : len;
        if (q < len && t[q] != '\n' && t[q] != '\r' && t[q] != '#' && in <= ind) return p;
        p = next;
    }
    return len;
}

static void scope_of(TSNode n, const fl *f, bool self_attr, uint32_t *lo, uint32_t *hi) {
    *lo = 0, *hi = f->len;
    const char *want = self_attr ? "class_definition" : "function_definition";
    for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); p = ts_node_parent(p)) {
        if (!strcmp(ts_node_type(p), want)) {
            *lo = line_start(f->text, ts_node_start_byte(p));
            *hi = block_end(f->text, f->len, *lo);
            return;
        }
        if (!self_attr && is(p, "class_definition")) return;
    }
}

static bool in_class_body(TSNode n) {
    TSNode st = ts_node_parent(n);
    if (!is(st, "expression_statement")) return false;
    TSNode b = ts_node_parent(st);
    return is(b, "block") && is(ts_node_parent(b), "class_definition");
}

static void bind_target(fl *f, TSNode left, TSNode right, TSNode at) {
    lit_vec ls = {0};
    values(f, right, &ls, 0);
    if (!ls.len) { ut_vec_free(&ls); return; }
    const char *k = f->text + ts_node_start_byte(left);
    uint32_t kn = ts_node_end_byte(left) - ts_node_start_byte(left);
    bool ok = true;
    for (uint32_t i = 0; i < kn; i++) ok &= chain_char(k[i]);
    if (ok && kn) {
        uint32_t lo = 0, hi = f->len;
        bool self_attr = kn > 5 && !memcmp(k, "self.", 5);
        bool field = is(left, "identifier") && in_class_body(at); /* a dataclass field: `cfg.device` of any instance */
        const char *dot = self_attr ? NULL : memchr(k, '.', kn);
        char buf[160];
        if (field && kn < sizeof buf - 1) { /* `.device` */
            buf[0] = '.';
            memcpy(buf + 1, k, kn);
            k = buf, kn++;
        } else if (dot) { /* `_C.MODEL.DEVICE` is read as `cfg.MODEL.DEVICE`: `.MODEL.DEVICE` of any object */
            kn -= (uint32_t)(dot - k), k = dot;
        } else if (is(left, "identifier") || self_attr) {
            scope_of(at, f, self_attr, &lo, &hi);
        }
        for (size_t i = 0; i < ls.len; i++) {
            add_lit(f, k, kn, field || dot, lo, hi, ls.items[i]);
            if (field && named_for(k + 1, kn - 1, ls.items[i].kind))
                add_named(f, ls.items[i], ts_node_start_byte(left), ts_node_end_byte(left));
        }
    }
    ut_vec_free(&ls);
}

static void on_assignment(fl *f, TSNode a) {
    TSNode left = an_py_field(a, "left", 4), right = an_py_field(a, "right", 5);
    if (ts_node_is_null(left) || ts_node_is_null(right)) return;
    if (is(left, "identifier") || is(left, "attribute")) {
        bind_target(f, left, right, a);
        return;
    }
    /* `dev, n = "cuda", 2` */
    if ((is(left, "pattern_list") || is(left, "tuple_pattern")) && (is(right, "expression_list") || is(right, "tuple")) &&
        ts_node_named_child_count(left) == ts_node_named_child_count(right)) {
        for (uint32_t i = 0; i < ts_node_named_child_count(left); i++) {
            TSNode l = ts_node_named_child(left, i);
            if (is(l, "identifier") || is(l, "attribute")) bind_target(f, l, ts_node_named_child(right, i), a);
        }
    }
}

/* parser.add_argument("--device", default="cuda"): `args.device` of any namespace */
static void on_call(fl *f, TSNode call) {
    TSNode fn = an_py_field(call, "function", 8);
    TSNode args = an_py_field(call, "arguments", 9);
    if (!is(fn, "attribute") || !is(args, "argument_list")) return;
    TSNode at = an_py_field(fn, "attribute", 9);
    if (ts_node_end_byte(at) - ts_node_start_byte(at) != 12 || memcmp(f->text + ts_node_start_byte(at), "add_argument", 12))
        return;
    char dest[128] = "";
    TSNode def = {0}, opt = {0};
    for (uint32_t i = 0; i < ts_node_named_child_count(args); i++) {
        TSNode a = ts_node_named_child(args, i);
        uint32_t cs, ce;
        if (is(a, "string") && !dest[0]) {
            an_py_string_content(a, f->text, &cs, &ce);
            if (ce - cs > 2 && ce - cs < sizeof dest && f->text[cs] == '-' && f->text[cs + 1] == '-') {
                size_t n = 0;
                for (uint32_t j = cs + 2; j < ce; j++) dest[n++] = f->text[j] == '-' ? '_' : f->text[j];
                dest[n] = 0;
                opt = a;
            }
        } else if (is(a, "keyword_argument")) {
            TSNode k = an_py_field(a, "name", 4), v = an_py_field(a, "value", 5);
            uint32_t kn = ts_node_end_byte(k) - ts_node_start_byte(k);
            const char *ks = f->text + ts_node_start_byte(k);
            if (kn == 7 && !memcmp(ks, "default", 7)) def = v;
            if (kn == 4 && !memcmp(ks, "dest", 4) && is(v, "string")) {
                an_py_string_content(v, f->text, &cs, &ce);
                if (ce - cs < sizeof dest) memcpy(dest, f->text + cs, ce - cs), dest[ce - cs] = 0;
            }
        }
    }
    if (!dest[0] || ts_node_is_null(def)) return;
    for (const char *p = dest; *p; p++)
        if (!ident_char(*p)) return;
    lit_vec ls = {0};
    values(f, def, &ls, 0);
    char key[130];
    snprintf(key, sizeof key, ".%s", dest);
    for (size_t i = 0; i < ls.len; i++) {
        add_lit(f, key, strlen(key), true, 0, f->len, ls.items[i]);
        if (!ts_node_is_null(opt) && named_for(dest, strlen(dest), ls.items[i].kind))
            add_named(f, ls.items[i], ts_node_start_byte(opt), ts_node_end_byte(opt));
    }
    ut_vec_free(&ls);
}

const TSLanguage *tree_sitter_python(void);
enum { F_ASSIGN = 1, F_CALL = 2, F_COMMENT = 3, F_STRING = 4 }; /* the names' positions + 1 */
static an_pykinds fkinds;
static pthread_once_t fkinds_once = PTHREAD_ONCE_INIT;
static void fkinds_init(void) {
    static const char *const names[] = {"assignment", "call", "comment", "string", NULL};
    an_pykinds_init(&fkinds, tree_sitter_python(), names);
}

static uint8_t fkind_by_name(TSNode n) {
    const char *t = ts_node_type(n);
    return !strcmp(t, "assignment") ? F_ASSIGN : !strcmp(t, "call") ? F_CALL
         : !strcmp(t, "comment") ? F_COMMENT : !strcmp(t, "string") ? F_STRING : 0;
}

static void collect_bindings(fl *f, const an_pynodes *nodes, uint32_t lo, uint32_t hi) {
    pthread_once(&fkinds_once, fkinds_init);
    bool py = nodes->len && ts_tree_language(nodes->items[0].node.tree) == fkinds.lang;
    for (uint32_t i = 0; i < nodes->len;) {
        const an_pynode *p = &nodes->items[i];
        TSNode n = p->node;
        bool descend = ts_node_end_byte(n) > lo && ts_node_start_byte(n) < hi;
        if (descend) {
            uint8_t k = py ? an_pykind_of(&fkinds, p->sym) : fkind_by_name(n);
            if (k == F_ASSIGN) on_assignment(f, n);
            else if (k == F_CALL) on_call(f, n);
            else if (k == F_COMMENT || k == F_STRING) descend = false;
        }
        i = descend ? i + 1 : p->next;
    }
}

/* ---- uses in the text ---------------------------------------------------------------------------------------- */

static bool word_is(const char *s, size_t n, const char *w) { return strlen(w) == n && !memcmp(s, w, n); }

static bool device_keyword(const char *s, size_t n, an_flow_kind k) {
    static const char *const dev[] = {"device", "map_location", "device_type", "output_device", "pin_memory_device",
                                      "accelerator", NULL};
    if (k == AN_FLOW_BACKEND) return word_is(s, n, "backend") || word_is(s, n, "dist_backend");
    for (int i = 0; dev[i]; i++)
        if (word_is(s, n, dev[i])) return true;
    return false;
}

/* a call whose first argument is a device (or, for backends, the backend) */
static bool device_callee(const char *s, size_t n, bool method, an_flow_kind k) {
    if (k == AN_FLOW_BACKEND) return word_is(s, n, "init_process_group") || word_is(s, n, "new_group");
    if (method && (word_is(s, n, "to") || word_is(s, n, "to_empty") || word_is(s, n, "pin_memory"))) return true;
    return word_is(s, n, "device") || word_is(s, n, "autocast") || word_is(s, n, "set_default_device");
}

/* pos lies after a `#` on its line (outside quotes) */
static bool in_comment(const char *t, uint32_t ls, uint32_t pos) {
    char q = 0;
    for (uint32_t i = ls; i < pos; i++) {
        char c = t[i];
        if (q) {
            if (c == '\\') i++;
            else if (c == q) q = 0;
        } else if (c == '"' || c == '\'') {
            q = c;
        } else if (c == '#') {
            return true;
        }
    }
    return q != 0; /* inside a string on this line */
}

typedef struct {
    uint32_t sink_start, sink_end, ctx_start;
    bool found;
} reach;

typedef struct {
    char *key;
    bool suffix;
    uint32_t lo, hi;
} hop;

/* One use of a name at [p, q): a device position (true, *r filled), or an assignment of it to another name
 * (*alias set to that name's span). */
static bool classify_use(const fl *f, uint32_t p, uint32_t q, an_flow_kind kind, reach *r, uint32_t *alias_s,
                         uint32_t *alias_e) {
    const char *t = f->text;
    uint32_t len = f->len;
    /* a subscript of a list or dict of devices: `devs[i]` */
    if (q < len && t[q] == '[') {
        int depth = 0;
        while (q < len && t[q] != '\n') {
            if (t[q] == '[') depth++;
            else if (t[q] == ']' && --depth == 0) { q++; break; }
            q++;
        }
        if (depth) return false;
    }
    if (q < len && (ident_char(t[q]) || t[q] == '.' || t[q] == '(' || t[q] == '[')) return false;
    uint32_t a = q;
    while (a < len && (t[a] == ' ' || t[a] == '\t')) a++;
    bool closes = a < len && (t[a] == ')' || t[a] == ',' || (a + 3 < len && !memcmp(t + a, "if ", 3)));
    bool ends = a >= len || t[a] == '\n' || t[a] == '\r' || t[a] == '#' || t[a] == ';';
    uint32_t b = p;
    while (b > 0 && (t[b - 1] == ' ' || t[b - 1] == '\t')) b--;
    if (b == 0) return false;
    char c = t[b - 1];
    if (c == '(' && closes) {
        uint32_t e = b - 1;
        while (e > 0 && (t[e - 1] == ' ' || t[e - 1] == '\t')) e--;
        uint32_t s = e;
        while (s > 0 && ident_char(t[s - 1])) s--;
        bool method = s > 0 && t[s - 1] == '.';
        if (e > s && device_callee(t + s, e - s, method, kind)) {
            r->sink_start = p, r->sink_end = q, r->ctx_start = method ? s - 1 : s, r->found = true;
            return true;
        }
        return false;
    }
    if (c == '=' && b >= 2 && !strchr("=!<>+-*/%&|^:", t[b - 2])) {
        uint32_t e = b - 1;
        while (e > 0 && (t[e - 1] == ' ' || t[e - 1] == '\t')) e--;
        uint32_t s = e;
        while (s > 0 && chain_char(t[s - 1])) s--;
        if (e == s) return false;
        uint32_t ls = line_start(t, s);
        bool statement = indent_at(t, len, ls) == s - ls;
        if (statement) {
            if (ends) *alias_s = s, *alias_e = e;
            return false;
        }
        if (closes && !memchr(t + s, '.', e - s) && device_keyword(t + s, e - s, kind)) {
            r->sink_start = p, r->sink_end = q, r->ctx_start = s, r->found = true;
            return true;
        }
    }
    return false;
}

/* The first device position the name reaches within its scope (following plain assignments to other names). */
static reach find_reach(const fl *f, const binding *bd, char **via) {
    reach r = {0};
    UT_VEC(hop) todo = {0};
    hop h0 = {ut_strdup(bd->key), bd->suffix, bd->lo, bd->hi};
    ut_vec_push(&todo, h0);
    const char *t = f->text;
    for (size_t i = 0; i < todo.len && !r.found; i++) {
        hop h = todo.items[i];
        size_t kn = strlen(h.key);
        for (const char *at = t + h.lo; !r.found && at < t + h.hi;) {
            const char *m = ut_memmem(at, (size_t)(t + h.hi - at), h.key, kn);
            if (!m) break;
            at = m + 1;
            uint32_t p = (uint32_t)(m - t), q = p + (uint32_t)kn;
            if (h.suffix) {
                if (p == 0 || !(ident_char(t[p - 1]) || t[p - 1] == ')' || t[p - 1] == ']')) continue;
            } else if (p > 0 && (chain_char(t[p - 1]))) {
                continue;
            }
            if (q < f->len && ident_char(t[q])) continue;
            if (p >= bd->l.start && p < bd->l.end) continue;
            uint32_t ls = line_start(t, p);
            if (in_comment(t, ls, p)) continue;
            uint32_t ps = p; /* the whole chain for a suffix: `args.device` */
            if (h.suffix) while (ps > 0 && (chain_char(t[ps - 1]))) ps--;
            uint32_t as = 0, ae = 0;
            if (classify_use(f, ps, q, bd->l.kind, &r, &as, &ae)) {
                ut_free(*via);
                *via = ut_strndup(t + ps, q - ps);
                break;
            }
            if (ae > as && todo.len < MAX_HOPS) {
                bool dup = false;
                for (size_t j = 0; j < todo.len; j++)
                    dup |= strlen(todo.items[j].key) == ae - as && !memcmp(todo.items[j].key, t + as, ae - as);
                if (!dup) {
                    hop nh = {ut_strndup(t + as, ae - as), false, 0, f->len};
                    /* a local of a function: its uses stay in that function */
                    if (!memchr(t + as, '.', ae - as) && indent_at(t, f->len, ls) > 0) {
                        for (uint32_t s = ls; s > 0;) { /* the enclosing `def` */
                            s = line_start(t, s - 1);
                            uint32_t in = indent_at(t, f->len, s);
                            if (in < indent_at(t, f->len, ls) &&
                                (!strncmp(t + s + in, "def ", 4) || !strncmp(t + s + in, "async def ", 10))) {
                                nh.lo = s, nh.hi = block_end(t, f->len, s);
                                break;
                            }
                        }
                    }
                    ut_vec_push(&todo, nh);
                }
            }
        }
    }
    for (size_t i = 0; i < todo.len; i++) ut_free(todo.items[i].key);
    ut_vec_free(&todo);
    return r;
}

/* Every fact starts at a string literal that values() accepts: one whose text begins with `cuda` right after its
 * quote (an_flow_is_device_string), or one that holds `nccl` in any case (an_flow_is_nccl). A file with neither
 * has none, and its tree is not walked. */
static bool may_hold_literals(const char *t, uint32_t len) {
    for (const char *p = t, *end = t + len; (p = ut_memmem(p, (size_t)(end - p), "cuda", 4)); p += 4)
        if (p > t && (p[-1] == '"' || p[-1] == '\'')) return true;
    for (uint32_t i = 0; i + 4 <= len; i++)
        if ((t[i] | 0x20) == 'n' && !strncasecmp(t + i, "nccl", 4)) return true;
    return false;
}

void an_flow_collect(TSNode root, const char *text, uint32_t len, uint32_t lo, uint32_t hi, an_flow_facts *out) {
    if (!may_hold_literals(text, len)) return;
    an_pynodes nodes;
    an_pynodes_build(&nodes, root);
    const an_pynodes *was = an_py_field_index(&nodes);
    an_flow_collect_nodes(&nodes, text, len, lo, hi, out);
    an_py_field_index(was);
    an_pynodes_free(&nodes);
}

void an_flow_collect_nodes(const an_pynodes *nodes, const char *text, uint32_t len, uint32_t lo, uint32_t hi,
                           an_flow_facts *out) {
    if (!may_hold_literals(text, len)) return;
    fl f = {text, len, {0}, {0}};
    collect_bindings(&f, nodes, lo, hi);
    size_t n = f.binds.len < MAX_KEYS ? f.binds.len : MAX_KEYS;
    for (size_t i = 0; i < n; i++) {
        const binding *b = &f.binds.items[i];
        bool seen = false;
        for (size_t j = 0; j < out->len && !seen; j++) seen = out->items[j].lit_start == b->l.start;
        if (seen) continue;
        char *via = NULL;
        reach r = find_reach(&f, b, &via);
        if (!r.found) { ut_free(via); continue; }
        an_flow_fact fact = {b->l.kind, b->l.start, b->l.end, r.sink_start, r.sink_end, r.ctx_start, via, false, false};
        ut_vec_push(out, fact);
    }
    /* a literal that reaches no position but is the default of `--device` or a `device` field */
    for (size_t i = 0; i < f.named.len; i++) {
        bool seen = false;
        for (size_t j = 0; j < out->len && !seen; j++) seen = out->items[j].lit_start == f.named.items[i].lit_start;
        if (seen) ut_free(f.named.items[i].via);
        else ut_vec_push(out, f.named.items[i]);
    }
    ut_vec_free(&f.named);
    for (size_t i = 0; i < f.binds.len; i++) ut_free(f.binds.items[i].key);
    ut_vec_free(&f.binds);
}

void an_flow_free(an_flow_facts *f) {
    for (size_t i = 0; i < f->len; i++) ut_free(f->items[i].via);
    ut_vec_free(f);
}

/* ---- integer device indexes ---------------------------------------------------------------------------------- */

static bool int_name(const char *s, size_t n) {
    static const char *const names[] = {"rank", "local_rank", "gpu", "gpu_id", "gpu_idx", "gpu_index", "local_gpu",
                                        "device_id", "device_idx", "device_index", "local_device_id", NULL};
    const char *d = s + n;
    while (d > s && d[-1] != '.') d--;
    for (int i = 0; names[i]; i++)
        if (word_is(d, (size_t)(s + n - d), names[i])) return true;
    return false;
}

/* Whether r[0..rn) (an assignment's right side, to the end of its line) is the current device's index:
 * `torch.cuda.current_device()`, what the fixes make of it (`<helper>.current_device()`,
 * `torch.accelerator.current_device_index()`), optionally in `int(...)`; *mixed: it is the default of `NAME or ...`
 * (`device = device or torch.cuda.current_device()`: a caller's device, or the index). */
static bool current_index_rhs(const char *r, size_t rn, bool *mixed) {
    while (rn && (r[rn - 1] == ' ' || r[rn - 1] == '\t' || r[rn - 1] == '\r')) rn--;
    const char *hash = memchr(r, '#', rn);
    if (hash) {
        rn = (size_t)(hash - r);
        while (rn && (r[rn - 1] == ' ' || r[rn - 1] == '\t')) rn--;
    }
    *mixed = false;
    size_t i = 0;
    while (i < rn && chain_char(r[i])) i++;
    if (i && i + 4 <= rn && !memcmp(r + i, " or ", 4)) r += i + 4, rn -= i + 4, *mixed = true;
    if (rn > 5 && !memcmp(r, "int(", 4) && r[rn - 1] == ')') r += 4, rn -= 5;
    /* the accelerator target's form: `(torch.accelerator.current_device_index() if DEVICE_TYPE != "cpu" else 0)` */
    if (rn > 2 && r[0] == '(' && r[rn - 1] == ')') {
        const char *c = ut_memmem(r, rn, " if ", 4);
        if (c && rn >= 9 && !memcmp(r + rn - 8, " else 0)", 8)) rn = (size_t)(c - r) - 1, r++;
    }
    static const char *const tails[] = {".current_device()", "torch.accelerator.current_device_index()", NULL};
    for (int k = 0; tails[k]; k++) {
        size_t tn = strlen(tails[k]);
        if (rn < tn || memcmp(r + rn - tn, tails[k], tn)) continue;
        if (k == 1) return rn == tn;
        /* torch.cuda's, torch.xpu's or the helper's (by its default name): another object's current_device() may
         * return a device */
        size_t pn = rn - tn;
        return word_is(r, pn, "torch.cuda") || word_is(r, pn, "torch.xpu") || word_is(r, pn, "xpuify_device");
    }
    return false;
}

/* What the text assigns to the chain name: 1 an integer, 2 the current device's index or a caller's device
 * (`device or torch.cuda.current_device()`), -1 something else that is not one, 0 nothing known. *current (may be
 * NULL): some assignment is the current index, even where another makes the answer -1. */
static int assigned_int(const char *t, uint32_t len, const char *k, size_t kn, bool *current) {
    int verdict = 0;
    bool saw_none = false, other = false;
    if (current) *current = false;
    for (const char *m = t; (m = ut_memmem(m, (size_t)(t + len - m), k, kn)); m++) {
        uint32_t p = (uint32_t)(m - t), q = p + (uint32_t)kn;
        if ((p > 0 && chain_char(t[p - 1])) || (q < len && ident_char(t[q]))) continue;
        uint32_t a = q;
        while (a < len && (t[a] == ' ' || t[a] == '\t')) a++;
        if (a + 1 < len && t[a] == ':' && !strncmp(t + a + 1, " int", 4) && !ident_char(t[a + 5])) {
            if (!verdict) verdict = 1; /* `rank: int` */
            continue;
        }
        if (a >= len || t[a] != '=' || (a + 1 < len && t[a + 1] == '=')) continue;
        a++;
        while (a < len && (t[a] == ' ' || t[a] == '\t')) a++;
        const char *e = memchr(t + a, '\n', len - a);
        size_t rn = e ? (size_t)(e - (t + a)) : len - a;
        const char *r = t + a;
        bool mixed;
        if (current_index_rhs(r, rn, &mixed)) {
            if (mixed) verdict = 2;
            else if (verdict != 2) verdict = 1;
            if (current) *current = true;
            continue;
        }
        /* `rank % torch.cuda.device_count()`: an index by the device count (before the string test: its name holds
         * "cuda" and ".device") */
        if (ut_memmem(r, rn, "device_count()", 14) && !memchr(r, '"', rn) && !memchr(r, '\'', rn) &&
            !ut_memmem(r, rn, "torch.device(", 13) && !ut_memmem(r, rn, " if ", 4)) {
            verdict = verdict ? verdict : 1;
            continue;
        }
        /* a string or a device anywhere among the values: not an index (read on, for *current) */
        if (r[0] == '"' || r[0] == '\'' || (r[0] == 'f' && (r[1] == '"' || r[1] == '\'')) || !strncmp(r, "torch.device(", 13) ||
            ut_memmem(r, rn, "cuda", 4) || ut_memmem(r, rn, ".device", 7) || ut_memmem(r, rn, "device_name(", 12) ||
            ut_memmem(r, rn, "device(", 7)) {
            other = true;
            if (!current) break;
            continue;
        }
        if (!strncmp(r, "None", 4) && !ident_char(r[4])) { /* a parameter's default, say: not an index unless `or` */
            saw_none = true;
            continue;
        }
        if (!strncmp(r, "int(", 4) || isdigit((unsigned char)r[0]) || ut_memmem(r, rn, "get_rank()", 10) ||
            ut_memmem(r, rn, "LOCAL_RANK", 10) || ut_memmem(r, rn, "get_local_rank()", 16) || ut_memmem(r, rn, "device_count()", 14))
            verdict = 1;
    }
    if (other) return -1;
    return verdict == 2 || !saw_none ? verdict : -1;
}

/* The state of a line read up to a position, carried from one match to the next: the matches of one opener come in
 * increasing order, so a line with 40,000 of them (a fixed file's `.to(DEV)` on one long line) is read once, not
 * from its start for each. Equivalent to line_start + in_comment + a search of the line for "torch.cuda." before
 * the match. */
typedef struct {
    uint32_t pos, ls; /* read up to pos (exclusive); the line it is on starts at ls */
    char q;           /* the quote of an open string, or 0 */
    bool comment;     /* a '#' outside strings was read on this line */
    uint32_t tc;      /* the first "torch.cuda." starting at or after ls on this line, or UINT32_MAX; TC_UNKNOWN:
                       * not looked for yet (only a line with a match whose name qualifies needs it) */
} line_scan;
#define TC_UNKNOWN (UINT32_MAX - 1)

static uint32_t next_torch_cuda(const char *t, uint32_t len, uint32_t from) {
    const char *nl = memchr(t + from, '\n', len - from);
    uint32_t le = nl ? (uint32_t)(nl - t) : len;
    const char *m = ut_memmem(t + from, le - from, "torch.cuda.", 11);
    return m ? (uint32_t)(m - t) : UINT32_MAX;
}

static void line_scan_to(const char *t, uint32_t len, line_scan *s, uint32_t c) {
    uint32_t i = s->pos;
    for (; i < c; i++) {
        char ch = t[i];
        if (ch == '\n') {
            s->ls = i + 1, s->q = 0, s->comment = false, s->tc = TC_UNKNOWN;
        } else if (s->comment) {
        } else if (s->q) {
            if (ch == '\\' && t[i + 1] != '\n') i++; /* an escaped newline still ends the line (as a fresh scan would) */
            else if (ch == s->q) s->q = 0;
        } else if (ch == '"' || ch == '\'') {
            s->q = ch;
        } else if (ch == '#') {
            s->comment = true;
        }
    }
    if (i > s->pos) s->pos = i;
}

/* The function bodies around position c, innermost first, as [start, end) of the text: each a `def` line less
 * indented than every statement between it and c (found by indentation, as the rest of this textual pass). */
static int enclosing_defs(const char *t, uint32_t len, uint32_t c, uint32_t *s, uint32_t *e, int max) {
    uint32_t p = line_start(t, c), ind = indent_at(t, len, p);
    int n = 0;
    while (p > 0 && ind > 0 && n < max) {
        uint32_t prev = line_start(t, p - 1), i = indent_at(t, len, prev), q = prev + i;
        if (q < len && t[q] != '\n' && t[q] != '\r' && t[q] != '#' && i < ind) {
            if ((len - q > 4 && !memcmp(t + q, "def ", 4)) || (len - q > 10 && !memcmp(t + q, "async def ", 10)))
                s[n] = prev, e[n] = block_end(t, len, prev), n++;
            ind = i;
        }
        p = prev;
    }
    return n;
}

/* The enclosing functions of the last position asked about (positions come in increasing order), reused while no
 * `def` line lies between it and the next, so the sinks of a long function or block do not each scan back to its
 * start: the text between consecutive positions is read once. */
typedef struct {
    uint32_t pos;
    int n;
    uint32_t s[16], e[16];
    int v[16];       /* what each function assigns the name (assigned_int), once asked */
    bool have[16];
    const char *k;   /* the name the answers are for */
    size_t kn;
} def_memo;

/* What a plain name holds where it is used at pos, for a name the file assigns the current index somewhere and
 * something else elsewhere (`file`: the whole text's answer, -1): the innermost enclosing function that assigns it
 * (its parameters' defaults included) decides, else the file. fairseq's utils.py assigns `device` a string in one
 * function and `device or torch.cuda.current_device()` in move_to_cuda. */
static int scoped_int(const char *t, uint32_t len, const char *k, size_t kn, uint32_t pos, int file, def_memo *dm) {
    /* with no `def` line between the last position and this one, the functions around this one are those around
     * the last that have not ended yet (one that encloses this position started before the last one) */
    if (dm->pos && pos >= dm->pos && !ut_memmem(t + dm->pos, pos - dm->pos, "def ", 4)) {
        int j = 0;
        for (int i = 0; i < dm->n; i++)
            if (pos < dm->e[i]) dm->s[j] = dm->s[i], dm->e[j] = dm->e[i], dm->v[j] = dm->v[i], dm->have[j] = dm->have[i], j++;
        dm->n = j;
    } else {
        dm->n = enclosing_defs(t, len, pos, dm->s, dm->e, 16);
        memset(dm->have, 0, sizeof dm->have);
    }
    dm->pos = pos;
    if (dm->k != k || dm->kn != kn) memset(dm->have, 0, sizeof dm->have), dm->k = k, dm->kn = kn;
    for (int i = 0; i < dm->n; i++) {
        if (!dm->have[i]) dm->v[i] = assigned_int(t + dm->s[i], dm->e[i] - dm->s[i], k, kn, NULL), dm->have[i] = true;
        if (dm->v[i]) return dm->v[i];
    }
    return file;
}

void an_flow_int_devices(const char *t, uint32_t len, uint32_t lo, uint32_t hi, an_flow_facts *out) {
    if (hi > len) hi = len;
    static const char *const opens[] = {".to(", "device=", "device =", "torch.device(", NULL};
    /* what the file assigns to each name, asked once per name (each answer reads the whole file) */
    ut_smap assigned = {0};
    /* where each opener occurs inside [lo, hi), ascending: found from the '(' and '=' the openers end with, in two
     * passes over the text instead of one search per opener (the same occurrences, overlapping ones included) */
    UT_VEC(uint32_t) at[4] = {{0}};
    if (lo < hi) {
        for (const char *e = t + lo; (e = memchr(e, '(', (size_t)(t + hi - e))); e++) {
            uint32_t x = (uint32_t)(e - t);
            if (x >= lo + 3 && !memcmp(e - 3, ".to", 3)) ut_vec_push(&at[0], x - 3);
            if (x >= lo + 12 && !memcmp(e - 12, "torch.device", 12)) ut_vec_push(&at[3], x - 12);
        }
        for (const char *e = t + lo; (e = memchr(e, '=', (size_t)(t + hi - e))); e++) {
            uint32_t x = (uint32_t)(e - t);
            if (x >= lo + 6 && !memcmp(e - 6, "device", 6)) ut_vec_push(&at[1], x - 6);
            if (x >= lo + 7 && !memcmp(e - 7, "device ", 7)) ut_vec_push(&at[2], x - 7);
        }
    }
    for (int o = 0; opens[o]; o++) {
        size_t on = strlen(opens[o]);
        line_scan ln = {0};
        bool started = false;
        def_memo memo = {0};
        for (size_t k = 0; k < at[o].len; k++) {
            uint32_t c = at[o].items[k], p = c + (uint32_t)on;
            if (o == 1 || o == 2) { /* a keyword: `device=`, not `self.device =` nor `map_device=` nor a statement */
                if (c > 0 && (chain_char(t[c - 1]))) continue;
                uint32_t b = c;
                while (b > 0 && (t[b - 1] == ' ' || t[b - 1] == '\t')) b--;
                if (b == 0 || (t[b - 1] != '(' && t[b - 1] != ',')) continue;
            }
            if (o == 3 && c > 0 && chain_char(t[c - 1])) continue;
            while (p < len && (t[p] == ' ' || t[p] == '\t')) p++;
            uint32_t q = p;
            while (q < len && chain_char(t[q])) q++;
            if (q == p || isdigit((unsigned char)t[p]) || t[p] == '.') continue;
            uint32_t a = q;
            while (a < len && (t[a] == ' ' || t[a] == '\t')) a++;
            if (a >= len || (t[a] != ')' && t[a] != ',')) continue;
            /* the name first (one answer per name): most are no index, and their lines need not be read */
            bool added;
            ut_smap_slot *v = ut_smap_put(&assigned, t + p, q - p, &added);
            if (added) {
                bool current;
                v->num = assigned_int(t, len, t + p, q - p, &current);
                /* a plain name the file assigns the current index and something else: judged per function */
                v->val = v->num < 0 && current && !memchr(t + p, '.', q - p) ? v : NULL;
            }
            int verdict = v->val ? scoped_int(t, len, v->key, q - p, p, (int)v->num, &memo) : (int)v->num;
            if (verdict < 0 || (verdict == 0 && !int_name(t + p, q - p))) continue;
            if (!started) {
                uint32_t ls = line_start(t, c);
                ln = (line_scan){ls, ls, 0, false, TC_UNKNOWN};
                started = true;
            }
            line_scan_to(t, len, &ln, c);
            if (ln.comment || ln.q) continue;
            /* an argument of a torch.cuda function, which takes CUDA indexes by design (its own findings say so) */
            if (ln.tc == TC_UNKNOWN) ln.tc = next_torch_cuda(t, len, ln.ls);
            if (ln.tc != UINT32_MAX && ln.tc + 11 <= c) continue;
            bool seen = false;
            for (size_t j = 0; j < out->len && !seen; j++) seen = out->items[j].sink_start == p;
            if (seen) continue;
            an_flow_fact x = {AN_FLOW_DEVICE, 0, 0, p, q, c, ut_strndup(t + p, q - p), false, verdict == 2};
            ut_vec_push(out, x);
        }
    }
    for (int o = 0; o < 4; o++) ut_vec_free(&at[o]);
    ut_smap_free(&assigned, NULL);
}
