/* an_catalog: loads rule YAML (libyaml document API) into an_rule records, indexes qualified names, and builds
 * the per-language prefilter. Query compilation lives in an_query.c. */
#include "util/ut_yaml.h"
#include "util/ut_yaml_table.h"
#include "util/ut_suggest.h"
#include "analyzer/core/an_catalog_int.h"
#include "util/ut_hash.h"
#include "analyzer/core/an_suppress.h"
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <yaml.h>

/* ---- YAML helpers ------------------------------------------------------------------------------------------ */

typedef struct {
    yaml_document_t *doc;
    const char *origin;
    ut_buf *err;
    int nerr;
} ld;

static void lerr(ld *l, yaml_node_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void lerr(ld *l, yaml_node_t *n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ut_yaml_verr(l->err, l->origin, n, fmt, ap);
    va_end(ap);
    l->nerr++;
}

static yaml_node_t *node(ld *l, int id) { return yaml_document_get_node(l->doc, id); }

static const char *scalar(yaml_node_t *n) { return ut_yaml_scalar(n); }

static char *want_str(ld *l, yaml_node_t *n, const char *key) {
    const char *s = scalar(n);
    if (!s) { lerr(l, n, "`%s` must be a string", key); return NULL; }
    return ut_strdup(s);
}

/* a rule's code or name: it appears in reports, selectors and suppression comments, so letters, digits, `-`, `_` */
static char *want_ident(ld *l, yaml_node_t *n, const char *key) {
    const char *s = scalar(n);
    if (!s) { lerr(l, n, "`%s` must be a string", key); return NULL; }
    size_t ok = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");
    if (!*s || s[ok]) {
        lerr(l, n, "`%s` must be letters, digits, `-` and `_` (like XPU101 or cuda-method-call)", key);
        return NULL;
    }
    return ut_strdup(s);
}

static void want_str_list(ld *l, yaml_node_t *n, const char *key, void *vec_) {
    UT_VEC(char *) *vec = vec_;
    if (n->type == YAML_SCALAR_NODE) { ut_vec_push(vec, ut_strdup(scalar(n))); return; }
    if (n->type != YAML_SEQUENCE_NODE) { lerr(l, n, "`%s` must be a list of strings", key); return; }
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *e = node(l, *it);
        const char *s = scalar(e);
        if (!s) { lerr(l, e, "`%s` items must be strings", key); continue; }
        ut_vec_push(vec, ut_strdup(s));
    }
}

static void want_bool(ld *l, yaml_node_t *n, const char *key, bool *out) {
    const char *b = scalar(n);
    if (b && (!strcmp(b, "true") || !strcmp(b, "false"))) *out = !strcmp(b, "true");
    else lerr(l, n, "`%s` must be true or false", key);
}

/* `triggers`: regexes, any of which lets a file through; an item that is itself a list is a group whose
 * patterns must all match (kept as one string, parts separated by \x1f). */
static void want_triggers(ld *l, yaml_node_t *n, void *vec_) {
    UT_VEC(char *) *vec = vec_;
    if (n->type != YAML_SEQUENCE_NODE) { want_str_list(l, n, "triggers", vec_); return; }
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *e = node(l, *it);
        if (e->type == YAML_SCALAR_NODE) { ut_vec_push(vec, ut_strdup(scalar(e))); continue; }
        if (e->type != YAML_SEQUENCE_NODE) { lerr(l, e, "`triggers` items are regexes or lists of regexes"); continue; }
        ut_buf b;
        ut_buf_init(&b);
        for (yaml_node_item_t *j = e->data.sequence.items.start; j < e->data.sequence.items.top; j++) {
            const char *s = scalar(node(l, *j));
            if (!s) { lerr(l, e, "a trigger group holds regexes only"); continue; }
            if (b.len) ut_buf_putc(&b, '\x1f');
            ut_buf_puts(&b, s);
        }
        ut_vec_push(vec, ut_buf_take(&b));
    }
}

static bool parse_fix(ld *l, yaml_node_t *n, an_applicability *out) {
    const char *s = scalar(n);
    if (s && !strcmp(s, "safe")) *out = AN_FIX_SAFE;
    else if (s && !strcmp(s, "unsafe")) *out = AN_FIX_UNSAFE;
    else if (s && (!strcmp(s, "none") || !strcmp(s, "no"))) *out = AN_FIX_NONE;
    else { lerr(l, n, "`fix` must be one of: safe, unsafe, none"); return false; }
    return true;
}

#define EACH_PAIR(l, map, k, v)                                                                                   \
    for (yaml_node_pair_t *p_ = (map)->data.mapping.pairs.start; p_ < (map)->data.mapping.pairs.top; p_++)        \
        for (yaml_node_t *k = node(l, p_->key), *v = node(l, p_->value); k; k = NULL)

static const char *const kind_names[AN_KIND__COUNT] = {"", "function", "type", "enum", "enumerator", "macro",
                                                       "variable", "qualifier", "method", "header"};

const char *an_kind_name(an_api_kind k) { return k < AN_KIND__COUNT ? kind_names[k] : "?"; }

static bool parse_kind(ld *l, yaml_node_t *n, an_api_kind *out) {
    const char *s = scalar(n);
    for (int k = 1; s && k < AN_KIND__COUNT; k++)
        if (!strcmp(s, kind_names[k])) return *out = (an_api_kind)k, true;
    lerr(l, n, "`kind` must be one of: function, type, enum, enumerator, macro, variable, qualifier, method, header");
    return false;
}

/* YAML leaves duplicate mapping keys to the application: the second `message:` of a rule is an error (it would
 * silently replace the first), and its value is not read. */
static bool dup_key(ld *l, yaml_node_t *map, yaml_node_pair_t *pair, bool report) {
    const char *key = scalar(node(l, pair->key));
    if (!key) return false;
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < pair; q++) {
        const char *k = scalar(node(l, q->key));
        if (k && !strcmp(k, key)) {
            if (report) lerr(l, node(l, pair->key), "`%s` is given twice", key);
            return true;
        }
    }
    return false;
}

static void entry_free(an_entry *e) {
    ut_free(e->name), ut_free(e->replacement), ut_free(e->compat), ut_free(e->min_torch);
    ut_free(e->message), ut_free(e->note), ut_free(e->section), ut_free(e->sycl), ut_free(e->level_zero);
    ut_free(e->oneccl), ut_free(e->since), ut_free(e->deprecated), ut_free(e->removed), ut_free(e->returns);
    ut_free(e->decl), ut_free(e->parent), ut_free(e->alias_of), ut_free(e->off_cpu), ut_free(e->fixer), ut_free(e);
}

static char *dup_or_null(const char *s) { return s ? ut_strdup(s) : NULL; }

/* An alias row repeats its primary row under another name (NCCL's pncclX profiling entry points, `_v2` forms). */
static an_entry *entry_alias(const an_entry *e, const char *name) {
    an_entry *a = ut_calloc(1, sizeof *a);
    *a = *e;
    a->name = ut_strdup(name);
    a->replacement = dup_or_null(e->replacement), a->compat = dup_or_null(e->compat);
    a->min_torch = dup_or_null(e->min_torch), a->message = dup_or_null(e->message), a->note = dup_or_null(e->note);
    a->section = dup_or_null(e->section), a->sycl = dup_or_null(e->sycl), a->level_zero = dup_or_null(e->level_zero);
    a->oneccl = dup_or_null(e->oneccl), a->since = dup_or_null(e->since), a->deprecated = dup_or_null(e->deprecated);
    a->removed = dup_or_null(e->removed), a->returns = dup_or_null(e->returns), a->decl = dup_or_null(e->decl);
    a->parent = dup_or_null(e->parent), a->off_cpu = dup_or_null(e->off_cpu), a->fixer = dup_or_null(e->fixer);
    a->alias_of = ut_strdup(e->name);
    a->wildcard = false;
    return a;
}

/* Parses one table row (and its aliases) into the rule's entries. C rows (`api`) take the C keys. */
static void parse_entry(ld *l, yaml_node_t *n, an_rule *r, bool c_row, an_api_kind default_kind) {
    an_entry *e = ut_calloc(1, sizeof *e);
    e->fix = r->fix;
    e->rule = r;
    e->kind = c_row ? default_kind : AN_KIND_NONE;
    yaml_node_t *aliases = NULL;
    if (n->type == YAML_SCALAR_NODE) {
        e->name = ut_strdup(scalar(n));
    } else if (n->type == YAML_MAPPING_NODE) {
        EACH_PAIR(l, n, k, v) {
            const char *key = scalar(k);
            if (!key || dup_key(l, n, p_, true)) continue;
            if (!strcmp(key, "name")) e->name = want_str(l, v, key);
            else if (!strcmp(key, "replacement") || (c_row && !strcmp(key, "portable"))) e->replacement = want_str(l, v, key);
            else if (!strcmp(key, "message")) e->message = want_str(l, v, key);
            else if (!strcmp(key, "note")) e->note = want_str(l, v, key);
            else if (!strcmp(key, "fix")) parse_fix(l, v, &e->fix);
            else if (!c_row && !strcmp(key, "compat_fix")) e->has_compat_fix = parse_fix(l, v, &e->compat_fix);
            else if (!c_row && !strcmp(key, "compat")) e->compat = want_str(l, v, key);
            else if (!c_row && !strcmp(key, "min_torch")) e->min_torch = want_str(l, v, key);
            else if (c_row && !strcmp(key, "kind")) parse_kind(l, v, &e->kind);
            else if (c_row && !strcmp(key, "section")) e->section = want_str(l, v, key);
            else if (c_row && !strcmp(key, "sycl")) e->sycl = want_str(l, v, key);
            else if (c_row && !strcmp(key, "level_zero")) e->level_zero = want_str(l, v, key);
            else if (c_row && !strcmp(key, "oneccl")) e->oneccl = want_str(l, v, key);
            else if (c_row && !strcmp(key, "since")) e->since = want_str(l, v, key);
            else if (c_row && !strcmp(key, "deprecated")) e->deprecated = want_str(l, v, key);
            else if (c_row && !strcmp(key, "removed")) e->removed = want_str(l, v, key);
            else if (c_row && !strcmp(key, "returns")) e->returns = want_str(l, v, key);
            else if (c_row && !strcmp(key, "decl")) e->decl = want_str(l, v, key);
            else if (c_row && (!strcmp(key, "enum") || !strcmp(key, "class") || !strcmp(key, "parent"))) e->parent = want_str(l, v, key);
            else if (c_row && !strcmp(key, "aliases")) aliases = v;
            else if (!c_row && !strcmp(key, "ignore")) want_bool(l, v, key, &e->ignore);
            else if (!c_row && !strcmp(key, "off_cpu")) e->off_cpu = want_str(l, v, key);
            else if (!c_row && !strcmp(key, "fixer")) {
                e->fixer = want_str(l, v, key);
                if (e->fixer && strcmp(e->fixer, "extension-build") && strcmp(e->fixer, "legacy-tensor"))
                    lerr(l, v, "unknown `fixer` `%s` in a qualnames entry (known: extension-build, legacy-tensor)", e->fixer);
            }
            else if (c_row)
                lerr(l, k, "unknown key `%s` in an api entry (known: name, kind, portable, sycl, level_zero, oneccl, "
                           "section, since, deprecated, removed, returns, decl, enum, class, aliases, message, note, fix)", key);
            else
                lerr(l, k, "unknown key `%s` in a qualnames entry (known: name, replacement, compat, min_torch, message, note, fix, compat_fix, ignore, off_cpu, fixer)", key);
        }
    } else {
        lerr(l, n, "a %s entry must be a name or a mapping", c_row ? "api" : "qualnames");
    }
    if (!e->name) {
        lerr(l, n, "%s entry without `name`", c_row ? "api" : "qualnames");
        entry_free(e);
        return;
    }
    if (c_row && !e->kind) {
        lerr(l, n, "api entry `%s` without `kind` (and the rule sets none)", e->name);
        entry_free(e);
        return;
    }
    /* a C rule's `fix` says its fixers may rewrite its findings; a row without a portable name has no rename */
    if (c_row && !e->replacement) e->fix = AN_FIX_NONE;
    size_t nl = strlen(e->name);
    if (!c_row && nl > 2 && !strcmp(e->name + nl - 2, ".*")) e->wildcard = true, e->name[nl - 2] = 0;
    if (c_row && nl > 1 && e->name[nl - 1] == '*') e->wildcard = true, e->name[nl - 1] = 0;
    if (!c_row && !e->min_torch && r->min_torch) e->min_torch = ut_strdup(r->min_torch);
    if (c_row && !e->returns && r->returns && e->kind == AN_KIND_FUNCTION) e->returns = ut_strdup(r->returns);
    ut_vec_push(&r->entries, e);
    if (aliases) {
        UT_VEC(char *) names = {0};
        want_str_list(l, aliases, "aliases", &names);
        for (size_t i = 0; i < names.len; i++) {
            ut_vec_push(&r->entries, entry_alias(e, names.items[i]));
            ut_free(names.items[i]);
        }
        ut_vec_free(&names);
    }
}

/* examples.fix: a list of {before, after, target?, torch?, unsafe?} */
static void parse_fix_examples(ld *l, yaml_node_t *n, an_rule *r) {
    if (n->type != YAML_SEQUENCE_NODE) { lerr(l, n, "`examples.fix` must be a list of {before, after} mappings"); return; }
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *e = node(l, *it);
        if (e->type != YAML_MAPPING_NODE) { lerr(l, e, "a fix example is a mapping with `before` and `after`"); continue; }
        an_fix_example x = {0};
        x.line = (int)e->start_mark.line + 1;
        bool unsafe = true;
        EACH_PAIR(l, e, k, v) {
            const char *key = scalar(k);
            if (dup_key(l, e, p_, true)) continue;
            if (key && !strcmp(key, "before")) x.before = want_str(l, v, key);
            else if (key && !strcmp(key, "after")) x.after = want_str(l, v, key);
            else if (key && !strcmp(key, "target")) {
                x.target = want_str(l, v, key);
                if (x.target && strcmp(x.target, "accelerator") && strcmp(x.target, "compat"))
                    lerr(l, v, "`target` must be accelerator or compat");
            } else if (key && !strcmp(key, "torch")) x.torch = want_str(l, v, key);
            else if (key && !strcmp(key, "unsafe")) want_bool(l, v, key, &unsafe);
            else lerr(l, k, "unknown key `%s` in a fix example (known: before, after, target, torch, unsafe)", key ? key : "?");
        }
        x.safe_only = !unsafe;
        if (!x.before || !x.after) lerr(l, e, "a fix example needs `before` and `after`");
        ut_vec_push(&r->examples.fix, x);
    }
}

static void parse_rule(ld *l, an_catalog *c, yaml_node_t *n) {
    if (n->type != YAML_MAPPING_NODE) { lerr(l, n, "a rule must be a mapping"); return; }
    an_rule *r = ut_calloc(1, sizeof *r);
    r->severity = AN_SEV_WARNING;
    r->fix = AN_FIX_NONE;
    r->origin = ut_strdup(l->origin);
    r->origin_line = (int)n->start_mark.line + 1;
    int before = l->nerr;
    yaml_node_t *entries = NULL;
    an_api_kind default_kind = AN_KIND_NONE;
    /* `fix`, `min_torch`, `kind` and `returns` are rule-level defaults for entries: read them first */
    EACH_PAIR(l, n, k, v) {
        const char *key = scalar(k);
        if (dup_key(l, n, p_, true)) continue;
        if (key && !strcmp(key, "fix")) parse_fix(l, v, &r->fix);
        if (key && !strcmp(key, "min_torch")) r->min_torch = want_str(l, v, key);
        if (key && !strcmp(key, "kind")) parse_kind(l, v, &default_kind);
        if (key && !strcmp(key, "returns")) r->returns = want_str(l, v, key);
    }
    yaml_node_t *api = NULL;
    EACH_PAIR(l, n, k, v) {
        const char *key = scalar(k);
        if (!key) { lerr(l, k, "rule keys must be strings"); continue; }
        if (dup_key(l, n, p_, false)) continue; /* reported above */
        if (!strcmp(key, "code")) r->code = want_ident(l, v, key);
        else if (!strcmp(key, "name")) r->name = want_ident(l, v, key);
        else if (!strcmp(key, "language")) {
            const char *s = scalar(v);
            if (s && !strcmp(s, "python")) r->lang = AN_LANG_PYTHON;
            else if (s && (!strcmp(s, "c") || !strcmp(s, "cpp") || !strcmp(s, "cuda"))) r->lang = AN_LANG_C;
            else if (s && !strcmp(s, "text")) r->lang = AN_LANG_TEXT;
            else lerr(l, v, "`language` must be one of: python, c, text");
        } else if (!strcmp(key, "severity")) {
            const char *s = scalar(v);
            if (s && !strcmp(s, "error")) r->severity = AN_SEV_ERROR;
            else if (s && !strcmp(s, "warning")) r->severity = AN_SEV_WARNING;
            else if (s && !strcmp(s, "info")) r->severity = AN_SEV_INFO;
            else lerr(l, v, "`severity` must be one of: error, warning, info");
        } else if (!strcmp(key, "fix") || !strcmp(key, "min_torch") || !strcmp(key, "kind") || !strcmp(key, "returns")) {
            /* read above */
        } else if (!strcmp(key, "summary")) r->summary = want_str(l, v, key);
        else if (!strcmp(key, "message")) r->message = want_str(l, v, key);
        else if (!strcmp(key, "doc")) r->doc = want_str(l, v, key);
        else if (!strcmp(key, "builtin")) r->builtin = want_str(l, v, key);
        else if (!strcmp(key, "query")) r->query = want_str(l, v, key);
        else if (!strcmp(key, "report")) r->report = want_str(l, v, key);
        else if (!strcmp(key, "triggers")) want_triggers(l, v, &r->triggers);
        else if (!strcmp(key, "locality")) want_str_list(l, v, key, &r->locality);
        else if (!strcmp(key, "needs")) want_str_list(l, v, key, &r->needs);
        else if (!strcmp(key, "supersedes")) want_str_list(l, v, key, &r->supersedes);
        else if (!strcmp(key, "markers")) want_str_list(l, v, key, &r->markers);
        else if (!strcmp(key, "fixer")) r->fixer = want_str(l, v, key);
        else if (!strcmp(key, "qualnames")) entries = v;
        else if (!strcmp(key, "api")) api = v;
        else if (!strcmp(key, "library")) r->library = want_str(l, v, key);
        else if (!strcmp(key, "pattern")) r->pattern = want_str(l, v, key);
        else if (!strcmp(key, "files")) want_str_list(l, v, key, &r->files);
        else if (!strcmp(key, "headers")) want_str_list(l, v, key, &r->headers);
        else if (!strcmp(key, "in_guarded_code")) want_bool(l, v, key, &r->in_guarded_code);
        else if (!strcmp(key, "cuda_guard_ok")) want_bool(l, v, key, &r->cuda_guard_ok);
        else if (!strcmp(key, "guard_condition")) want_bool(l, v, key, &r->guard_condition);
        else if (!strcmp(key, "in_try_ok")) want_bool(l, v, key, &r->in_try_ok);
        else if (!strcmp(key, "reads_ok")) want_bool(l, v, key, &r->reads_ok);
        else if (!strcmp(key, "reports_ok")) want_bool(l, v, key, &r->reports_ok);
        else if (!strcmp(key, "once_per_group")) want_bool(l, v, key, &r->once_per_group);
        else if (!strcmp(key, "install_strings_only")) want_bool(l, v, key, &r->install_strings_only);
        else if (!strcmp(key, "strings")) want_bool(l, v, key, &r->strings);
        else if (!strcmp(key, "portable_label")) r->portable_label = want_str(l, v, key);
        else if (!strcmp(key, "sycl_label")) r->sycl_label = want_str(l, v, key);
        else if (!strcmp(key, "examples")) {
            if (v->type != YAML_MAPPING_NODE) { lerr(l, v, "`examples` must map `flag`/`ok` to lists"); continue; }
            r->examples.line = (int)v->start_mark.line + 1;
            EACH_PAIR(l, v, ek, ev) {
                const char *ekey = scalar(ek);
                if (dup_key(l, v, p_, true)) continue;
                if (ekey && !strcmp(ekey, "flag")) want_str_list(l, ev, "flag", &r->examples.flag);
                else if (ekey && !strcmp(ekey, "ok")) want_str_list(l, ev, "ok", &r->examples.ok);
                else if (ekey && !strcmp(ekey, "fix")) parse_fix_examples(l, ev, r);
                else lerr(l, ek, "unknown key in `examples` (known: flag, ok, fix)");
            }
        } else lerr(l, k, "unknown rule key `%s`", key);
    }
    if (entries && api) lerr(l, api, "a rule has `qualnames` (python) or `api` (c), not both");
    else if (entries && r->lang != AN_LANG_PYTHON) lerr(l, entries, "`qualnames` tables are for python rules; c rules use `api`");
    else if (api && r->lang != AN_LANG_C) lerr(l, api, "`api` tables are for c rules; python rules use `qualnames`");
    else if (entries || api) {
        yaml_node_t *t = entries ? entries : api;
        if (t->type != YAML_SEQUENCE_NODE) lerr(l, t, "`%s` must be a list", entries ? "qualnames" : "api");
        else
            for (yaml_node_item_t *it = t->data.sequence.items.start; it < t->data.sequence.items.top; it++)
                parse_entry(l, node(l, *it), r, api != NULL, default_kind);
    }
    if (r->pattern && r->lang == AN_LANG_PYTHON) lerr(l, n, "`pattern` rules are for c and text files; python rules use `query`");
    if (r->files.len && r->lang != AN_LANG_TEXT) lerr(l, n, "`files` only applies to text rules");
    if (r->query && r->lang != AN_LANG_PYTHON) lerr(l, n, "`query` rules exist only for python");
    if (r->needs.len && !r->query) lerr(l, n, "`needs` only applies to query rules");
    if (!r->code) lerr(l, n, "rule without `code`");
    if (!r->name) lerr(l, n, "rule without `name`");
    if (!r->message) lerr(l, n, "rule `%s` without `message`", r->code ? r->code : "?");
    if (!r->summary) r->summary = ut_strdup(r->message ? r->message : "");
    int kinds = (r->builtin != NULL) + (r->query != NULL) + (r->entries.len > 0) + (r->pattern != NULL);
    if (kinds != 1 && l->nerr == before)
        lerr(l, n, "rule `%s` needs exactly one of `qualnames`, `api`, `query`, `pattern`, `builtin`", r->code ? r->code : "?");
    if (r->query && !r->triggers.len && l->nerr == before)
        lerr(l, n, "query rule `%s` needs `triggers` (regexes a file must contain to be parsed)", r->code);
    for (size_t t = 0; t < r->triggers.len && l->nerr == before; t++)
        if (!r->locality.len && strchr(r->triggers.items[t], '\x1f'))
            lerr(l, n, "rule `%s`: a trigger group (patterns that must all appear) says nothing about where a finding is; add `locality`", r->code);
    if (api && !r->triggers.len && l->nerr == before)
        lerr(l, n, "api rule `%s` needs `triggers` (regexes a file must contain to be parsed)", r->code);
    if (!r->report) r->report = ut_strdup("report");
    if (l->nerr != before) { an_rule_free(r); return; }
    if (an_catalog_find(c, r->code) || an_catalog_find(c, r->name)) {
        lerr(l, n, "rule `%s` (%s) is defined twice", r->code, r->name);
        an_rule_free(r);
        return;
    }
    r->index = (uint32_t)c->rules.len;
    ut_vec_push(&c->rules, r);
}

static void fingerprint_add(an_catalog *c, const char *origin, const char *text, size_t len) {
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_append(&b, (const char *)c->fingerprint, sizeof c->fingerprint);
    ut_buf_append(&b, origin, strlen(origin) + 1);
    ut_buf_append(&b, text, len);
    ut_hash20(b.data, b.len, c->fingerprint); /* the hash of the cache it keys */
    ut_buf_free(&b);
}

const uint8_t *an_catalog_fingerprint(const an_catalog *c) { return c->fingerprint; }

/* the rules of a loaded document */
static int load_document(an_catalog *c, const char *origin, yaml_document_t *doc, ut_buf *err) {
    ld l = {doc, origin, err, 0};
    yaml_node_t *root = yaml_document_get_root_node(doc);
    if (!root) return 0; /* empty file */
    if (root->type != YAML_MAPPING_NODE) { lerr(&l, root, "a rule file is a mapping with a `rules` list"); return l.nerr; }
    EACH_PAIR(&l, root, k, v) {
        const char *key = scalar(k);
        if (key && !strcmp(key, "rules")) {
            if (v->type != YAML_SEQUENCE_NODE) { lerr(&l, v, "`rules` must be a list"); continue; }
            for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++)
                parse_rule(&l, c, node(&l, *it));
        } else lerr(&l, k, "unknown top-level key `%s` (known: rules)", key ? key : "?");
    }
    return l.nerr;
}

int an_catalog_load_yaml(an_catalog *c, const char *origin, const char *text, size_t len, ut_buf *err) {
    fingerprint_add(c, origin, text, len);
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) { ut_buf_printf(err, "%s: cannot start the YAML parser\n", origin); return 1; }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        ut_buf_printf(err, "%s:%zu:%zu: YAML error: %s\n", origin, parser.problem_mark.line + 1,
                      parser.problem_mark.column + 1, parser.problem ? parser.problem : "malformed");
        yaml_parser_delete(&parser);
        return 1;
    }
    int nerr = load_document(c, origin, &doc, err);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return nerr;
}

/* ---- catalog ----------------------------------------------------------------------------------------------- */

static void free_covers(an_cover_vec *v) {
    for (size_t i = 0; i < v->len; i++) {
        ut_vec_free(&v->items[i].ids);
        ut_vec_free(&v->items[i].also);
        an_plain_free(&v->items[i].plain);
    }
    v->len = 0;
}

static void free_lits(an_catalog *c, int lang) {
    free_covers(&c->prefilter_cov[lang]);
    ut_vec_free(&c->prefilter_cov[lang]);
    free_covers(&c->locality_cov[lang]);
    ut_vec_free(&c->locality_cov[lang]);
    for (size_t k = 0; k < c->anchored_cov[lang].len; k++) {
        free_covers(&c->anchored_cov[lang].items[k]);
        ut_vec_free(&c->anchored_cov[lang].items[k]);
    }
    ut_vec_free(&c->anchored_cov[lang]);
    ut_vec_free(&c->directives[lang].ids);
    an_lits_free(c->lits[lang]);
    c->lits[lang] = NULL;
}

static void free_res(an_re_vec *v) {
    for (size_t i = 0; i < v->len; i++) pcre2_code_free(v->items[i]);
    v->len = 0;
}

an_catalog *an_catalog_new(void) {
    an_catalog *c = ut_calloc(1, sizeof(an_catalog));
    pthread_mutex_init(&c->queries_mu, NULL);
    pthread_mutex_init(&c->live_mu, NULL);
    atomic_init(&c->queries_ready, true);
    return c;
}

void an_rule_free(an_rule *r) {
    if (!r) return;
    for (size_t i = 0; i < r->entries.len; i++) entry_free(r->entries.items[i]);
    ut_vec_free(&r->entries);
#define FREE_LIST(v) do { for (size_t i = 0; i < (v).len; i++) ut_free((v).items[i]); ut_vec_free(&(v)); } while (0)
    FREE_LIST(r->triggers);
    FREE_LIST(r->locality);
    FREE_LIST(r->needs);
    FREE_LIST(r->supersedes);
    FREE_LIST(r->markers);
    FREE_LIST(r->examples.flag);
    FREE_LIST(r->examples.ok);
    for (size_t i = 0; i < r->examples.fix.len; i++) {
        an_fix_example *x = &r->examples.fix.items[i];
        ut_free(x->before), ut_free(x->after), ut_free(x->target), ut_free(x->torch);
    }
    ut_vec_free(&r->examples.fix);
    FREE_LIST(r->files);
    FREE_LIST(r->headers);
    ut_free(r->code), ut_free(r->name), ut_free(r->summary), ut_free(r->message), ut_free(r->doc);
    ut_free(r->min_torch), ut_free(r->origin), ut_free(r->builtin), ut_free(r->query), ut_free(r->report);
    ut_free(r->fixer), ut_free(r->library), ut_free(r->pattern), ut_free(r->returns);
    ut_free(r->portable_label), ut_free(r->sycl_label);
    ut_free(r);
}

static void free_qnames(an_catalog *c, int lang) {
    for (size_t k = 0; k < c->qnames[lang].len; k++) ut_free(c->qnames[lang].items[k].name);
    ut_vec_free(&c->qnames[lang]);
}

void an_catalog_free(an_catalog *c) {
    if (!c) return;
    an_qlive_free(c);
    if (c->patterns) {
        for (size_t i = 0; i < c->rules.len; i++)
            if (c->patterns[i]) pcre2_code_free(c->patterns[i]);
        ut_free(c->patterns);
    }
    for (size_t i = 0; i < c->rules.len; i++) an_rule_free(c->rules.items[i]);
    ut_vec_free(&c->rules);
    ut_free(c->exact);
    ut_vec_free(&c->wild);
    ut_free(c->c_exact);
    ut_vec_free(&c->c_wild);
    for (int i = 0; i < AN_LANG__COUNT; i++) {
        an_query_set_free(c->queries[i]);
        free_res(&c->prefilter[i]);
        ut_vec_free(&c->prefilter[i]);
        free_res(&c->locality[i]);
        ut_vec_free(&c->locality[i]);
        for (size_t k = 0; k < c->anchored[i].len; k++) {
            free_res(&c->anchored[i].items[k]);
            ut_vec_free(&c->anchored[i].items[k]);
        }
        ut_vec_free(&c->anchored[i]);
        free_qnames(c, i);
        free_lits(c, i);
    }
    pthread_mutex_destroy(&c->queries_mu);
    pthread_mutex_destroy(&c->live_mu);
    ut_free(c);
}

size_t an_catalog_count(const an_catalog *c) { return c->rules.len; }
const an_rule *an_catalog_rule(const an_catalog *c, size_t i) { return i < c->rules.len ? c->rules.items[i] : NULL; }

const an_rule *an_catalog_find(const an_catalog *c, const char *s) {
    for (size_t i = 0; i < c->rules.len; i++) {
        const an_rule *r = c->rules.items[i];
        if ((r->code && !strcasecmp(r->code, s)) || (r->name && !strcmp(r->name, s))) return r;
    }
    return NULL;
}

const char *an_catalog_suggest(const an_catalog *c, const char *s) {
    const char **words = ut_calloc(2 * c->rules.len + 1, sizeof *words);
    size_t n = 0;
    for (size_t i = 0; i < c->rules.len; i++) {
        if (c->rules.items[i]->code) words[n++] = c->rules.items[i]->code;
        if (c->rules.items[i]->name) words[n++] = c->rules.items[i]->name;
    }
    const char *best = ut_suggest(s, words, n);
    ut_free(words);
    return best;
}

const an_rule *an_catalog_builtin(const an_catalog *c, const char *builtin) {
    for (size_t i = 0; i < c->rules.len; i++)
        if (c->rules.items[i]->builtin && !strcmp(c->rules.items[i]->builtin, builtin)) return c->rules.items[i];
    return NULL;
}

const char *an_lang_name(an_lang l) {
    switch (l) {
    case AN_LANG_PYTHON: return "python";
    case AN_LANG_C: return "c";
    case AN_LANG_TEXT: return "text";
    default: return "?";
    }
}

static uint64_t fnv(const char *s) { return ut_fnv1a(UT_FNV_SEED, s, strlen(s)); }

const an_entry *an_catalog_lookup(const an_catalog *c, const char *q, bool exact_only) {
    if (c->exact_cap) {
        for (size_t i = fnv(q) & (c->exact_cap - 1);; i = (i + 1) & (c->exact_cap - 1)) {
            const an_entry *e = c->exact[i];
            if (!e) break;
            if (!strcmp(e->name, q)) return e;
        }
    }
    if (exact_only) return NULL;
    size_t ql = strlen(q);
    for (size_t i = 0; i < c->wild.len; i++) { /* sorted longest prefix first */
        const an_entry *e = c->wild.items[i];
        size_t n = strlen(e->name);
        if (ql > n && q[n] == '.' && !strncmp(q, e->name, n)) return e;
    }
    return NULL;
}

static int wild_cmp(const void *a, const void *b) {
    size_t x = strlen((*(an_entry *const *)a)->name), y = strlen((*(an_entry *const *)b)->name);
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The literal a qualified name needs in the file: every component after the root is spelled somewhere (in the
 * chain itself or in the import that binds it), so any one of them, as a whole word, is a sound trigger. The
 * CUDA-ish one is the most selective; otherwise the last (the most specific name). */
static bool cudaish(const char *s, size_t n) {
    static const char *const w[] = {"cuda", "nccl", "cudnn", "nvml", "CUDA", "NCCL", "nvidia", NULL};
    for (int i = 0; w[i]; i++)
        if (memmem(s, n, w[i], strlen(w[i]))) return true;
    return false;
}

static void entry_trigger(const an_entry *e, ut_buf *out) {
    const char *best = NULL;
    size_t bestn = 0;
    const char *p = strchr(e->name, '.');
    if (!p) { best = e->name, bestn = strlen(e->name); }
    while (p) {
        const char *s = p + 1, *q = strchr(s, '.');
        size_t n = q ? (size_t)(q - s) : strlen(s);
        if (!best || !cudaish(best, bestn)) best = s, bestn = n; /* the first CUDA-ish one, else the last */
        p = q;
    }
    ut_buf_puts(out, "\\b");
    for (size_t i = 0; i < bestn; i++) {
        char ch = best[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'))
            ut_buf_putc(out, '\\');
        ut_buf_putc(out, ch);
    }
    ut_buf_puts(out, "\\b");
}

typedef UT_VEC(char *) strvec;

static void add_alt(strvec *alts, const char *alt, size_t n) {
    for (size_t i = 0; i < alts->len; i++)
        if (strlen(alts->items[i]) == n && !memcmp(alts->items[i], alt, n)) return;
    ut_vec_push(alts, ut_strndup(alt, n));
}


static void compile_each(strvec *alts, an_re_vec *out, an_lits *lits, an_cover_vec *covs, const char *what,
                         an_lang lang, ut_buf *err, int *nerr) {
    free_res(out);
    free_covers(covs);
    /* C and text patterns may anchor at line starts */
    uint32_t fl = PCRE2_UTF | PCRE2_NO_UTF_CHECK | PCRE2_DUPNAMES | (lang == AN_LANG_PYTHON ? 0 : PCRE2_MULTILINE);
    for (size_t i = 0; i < alts->len; i++) {
        int ec;
        PCRE2_SIZE eo;
        pcre2_code *re = pcre2_compile((PCRE2_SPTR)alts->items[i], PCRE2_ZERO_TERMINATED, fl, &ec, &eo, NULL);
        if (!re) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(ec, msg, sizeof msg);
            /* one line per error: a pattern that holds a line break (a YAML block scalar) is shown escaped */
            ut_buf shown;
            ut_buf_init(&shown);
            for (const char *q = alts->items[i]; *q; q++) {
                if (*q == '\n') ut_buf_puts(&shown, "\\n");
                else if (*q == '\r') ut_buf_puts(&shown, "\\r");
                else ut_buf_putc(&shown, *q);
            }
            ut_buf_printf(err, "rules: the %s pattern `%s` of the %s rules does not compile: %s\n", what,
                          shown.data ? shown.data : "", an_lang_name(lang), (char *)msg);
            ut_buf_free(&shown);
            (*nerr)++;
        } else {
            pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
            ut_vec_push(out, re);
            an_cover cv = {{0}, {0}, false, {0}};
            cv.always = !an_lits_cover_all(lits, alts->items[i], &cv.ids, &cv.also);
            an_plain_parse(alts->items[i], &cv.plain);
            if (getenv("XPUIFY_DEBUG_PREFILTER"))
                fprintf(stderr, "%s[%s]: %s: %s (%zu literals)\n", what, an_lang_name(lang), alts->items[i],
                        cv.always ? "no literal cover, always run" : "covered", cv.ids.len);
            ut_vec_push(covs, cv);
        }
        ut_free(alts->items[i]);
    }
    ut_vec_free(alts);
}

/* name and each of its dotted prefixes; a trailing `.*` (a namespace entry) names the namespace */
static void add_qname(an_catalog *c, an_lang lang, const char *name, size_t n) {
    if (n >= 2 && name[n - 1] == '*' && name[n - 2] == '.') n -= 2;
    if (!n) return;
    for (size_t k = 1; k <= n; k++) {
        if (k < n && name[k] != '.') continue;
        an_qname q = {ut_strndup(name, k), k == n};
        ut_vec_push(&c->qnames[lang], q);
    }
}

static int cmp_qname(const void *a, const void *b) {
    const an_qname *x = a, *y = b;
    int r = strcmp(x->name, y->name);
    return r ? r : (int)y->full - (int)x->full; /* a full one first among equals */
}

static void sort_qnames(an_catalog *c, an_lang lang) {
    an_qname *q = c->qnames[lang].items;
    size_t n = c->qnames[lang].len, w = 0;
    if (n > 1) qsort(q, n, sizeof *q, cmp_qname);
    for (size_t i = 0; i < n; i++) {
        if (w && !strcmp(q[w - 1].name, q[i].name)) { ut_free(q[i].name); continue; }
        q[w++] = q[i];
    }
    c->qnames[lang].len = w;
}

/* the entry named q[0, n), or NULL */
static const an_qname *find_qname(const an_catalog *c, an_lang lang, const char *q, size_t n) {
    size_t lo = 0, hi = c->qnames[lang].len;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *s = c->qnames[lang].items[mid].name;
        int r = strncmp(s, q, n);
        if (!r) r = s[n] ? 1 : 0;
        if (!r) return &c->qnames[lang].items[mid];
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

bool an_catalog_resolves_under(const an_catalog *c, an_lang lang, const char *q, size_t n) {
    if (find_qname(c, lang, q, n)) return true; /* q is a rule's name or a prefix of one */
    for (size_t k = 1; k < n; k++) {            /* a rule's name is a prefix of q */
        if (q[k] != '.') continue;
        const an_qname *e = find_qname(c, lang, q, k);
        if (!e) return false; /* no longer prefix can be one either */
        if (e->full) return true;
    }
    return false;
}

/* Locality: each rule's `locality`, else its triggers, else its table's literals (builtin rules: only where they name
 * some). Qualified names: every name a rule resolves (table entries, #resolves-to? arguments) and its prefixes. */
static int build_locality(an_catalog *c, an_lang lang, ut_buf *err) {
    int nerr = 0;
    if (lang != AN_LANG_PYTHON) return 0; /* region selection is for Python files */
    strvec alts = {0};
    free_qnames(c, lang);
    for (size_t i = 0; i < c->rules.len; i++) {
        an_rule *r = c->rules.items[i];
        if (r->lang != lang || (r->builtin && !r->triggers.len && !r->locality.len)) continue;
        if (r->locality.len)
            for (size_t t = 0; t < r->locality.len; t++) add_alt(&alts, r->locality.items[t], strlen(r->locality.items[t]));
        else
            for (size_t t = 0; t < r->triggers.len; t++) add_alt(&alts, r->triggers.items[t], strlen(r->triggers.items[t]));
        for (size_t j = 0; j < r->entries.len; j++) {
            if (!r->triggers.len && !r->locality.len) {
                ut_buf lit;
                ut_buf_init(&lit);
                entry_trigger(r->entries.items[j], &lit);
                if (lit.len) add_alt(&alts, lit.data, lit.len);
                ut_buf_free(&lit);
            }
            add_qname(c, lang, r->entries.items[j]->name, strlen(r->entries.items[j]->name));
        }
        for (const char *q = r->query ? strstr(r->query, "resolves-to?") : NULL; q; q = strstr(q + 1, "resolves-to?")) {
            const char *end = strchr(q, ')');
            for (const char *s = strchr(q, '"'); s && (!end || s < end); s = strchr(s + 1, '"')) {
                const char *e = strchr(s + 1, '"');
                if (!e) break;
                add_qname(c, lang, s + 1, (size_t)(e - s - 1));
                s = e;
            }
        }
    }
    /* device-agnostic guards (`if ...xpu...:` beside a CUDA branch) decide what is reported: parse them too */
    static const char guards[] = "\\bxpu\\b|torch\\.accelerator";
    if (lang == AN_LANG_PYTHON && alts.len) add_alt(&alts, guards, sizeof guards - 1);
    sort_qnames(c, lang);
    compile_each(&alts, &c->locality[lang], c->lits[lang], &c->locality_cov[lang], "locality", lang, err, &nerr);
    return nerr;
}

size_t an_catalog_locality(const an_catalog *c, an_lang lang, const struct pcre2_real_code_8 *const **res) {
    *res = (const struct pcre2_real_code_8 *const *)c->locality[lang].items;
    return c->locality[lang].len;
}

static uint64_t fnv_n(const char *s, size_t n) { return ut_fnv1a(UT_FNV_SEED, s, n); }

const an_entry *an_catalog_lookup_c(const an_catalog *c, const char *q, size_t ql) {
    if (c->c_exact_cap) {
        for (size_t i = fnv_n(q, ql) & (c->c_exact_cap - 1);; i = (i + 1) & (c->c_exact_cap - 1)) {
            const an_entry *e = c->c_exact[i];
            if (!e) break;
            if (!strncmp(e->name, q, ql) && !e->name[ql]) return e;
        }
    }
    for (size_t i = 0; i < c->c_wild.len; i++) { /* sorted longest prefix first */
        const an_entry *e = c->c_wild.items[i];
        size_t n = strlen(e->name);
        if (ql > n && !strncmp(q, e->name, n)) return e;
    }
    return NULL;
}

char *an_rule_match_error(const an_rule *r, int rc, size_t at) {
    PCRE2_UCHAR msg[256];
    if (pcre2_get_error_message(rc, msg, sizeof msg) < 0) snprintf((char *)msg, sizeof msg, "PCRE2 error %d", rc);
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_printf(&b, "rule %s: its pattern failed at byte %zu (%s); findings of this rule in this file may be missing",
                  r->code, at, (const char *)msg);
    return ut_buf_take(&b);
}

const void *an_catalog_pattern(const an_catalog *c, const an_rule *r) {
    return c->patterns && r->index < c->rules.len ? c->patterns[r->index] : NULL;
}

/* One open-addressing index per table family: python qualified names, C names. */
static int index_entries(an_catalog *c, bool c_tables, ut_buf *err) {
    int nerr = 0;
    size_t n = 0;
    for (size_t i = 0; i < c->rules.len; i++)
        if ((c->rules.items[i]->lang == AN_LANG_C) == c_tables) n += c->rules.items[i]->entries.len;
    an_entry ***tab = c_tables ? &c->c_exact : &c->exact;
    size_t *cap = c_tables ? &c->c_exact_cap : &c->exact_cap;
    *cap = 16;
    while (*cap < n * 2 + 1) *cap *= 2;
    ut_free(*tab);
    *tab = ut_calloc(*cap, sizeof(an_entry *));
    if (c_tables) c->c_wild.len = 0;
    else c->wild.len = 0;
    for (size_t i = 0; i < c->rules.len; i++) {
        an_rule *r = c->rules.items[i];
        if ((r->lang == AN_LANG_C) != c_tables) continue;
        for (size_t j = 0; j < r->entries.len; j++) {
            an_entry *e = r->entries.items[j];
            if (e->wildcard) {
                if (c_tables) ut_vec_push(&c->c_wild, e);
                else ut_vec_push(&c->wild, e);
                continue;
            }
            const an_entry *prev = c_tables ? an_catalog_lookup_c(c, e->name, strlen(e->name)) : an_catalog_lookup(c, e->name, true);
            if (prev && (!c_tables || !prev->wildcard)) {
                ut_buf_printf(err, "%s:%d: `%s` is in the tables of both %s and %s\n", r->origin, r->origin_line,
                              e->name, prev->rule->code, r->code);
                nerr++;
                continue;
            }
            size_t k = fnv(e->name) & (*cap - 1);
            while ((*tab)[k]) k = (k + 1) & (*cap - 1);
            (*tab)[k] = e;
        }
    }
    if (c->wild.len > 1 && !c_tables) qsort(c->wild.items, c->wild.len, sizeof(an_entry *), wild_cmp);
    if (c->c_wild.len > 1 && c_tables) qsort(c->c_wild.items, c->c_wild.len, sizeof(an_entry *), wild_cmp);
    return nerr;
}

static pcre2_code *compile_re(const char *re, uint32_t flags, int *ec, PCRE2_SIZE *eo) {
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, flags, ec, eo, NULL);
    if (code) pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    return code;
}

/* The query sets, compiled on their own thread while finalize compiles the regexes (ts_query_new of the Python
 * set is the largest part of loading the catalog). They read the rules only. */
typedef struct {
    const an_catalog *c;
    struct an_query_set *q[AN_LANG__COUNT];
    ut_buf err;
    int nerr;
} query_job;

static void *build_queries(void *arg) {
    query_job *j = arg;
    for (int lang = 0; lang < AN_LANG__COUNT; lang++) j->q[lang] = an_query_set_build(j->c, (an_lang)lang, &j->err, &j->nerr);
    return NULL;
}

int an_catalog_finalize(an_catalog *c, ut_buf *err) {
    int nerr = index_entries(c, false, err) + index_entries(c, true, err);
    query_job qj = {c, {0}, {0}, 0};
    ut_buf_init(&qj.err);
    /* the user's own query rules are compiled now, so that their errors are the catalog's; shipped ones on first use */
    bool eager = false;
    for (size_t i = 0; i < c->rules.len && !eager; i++) eager = c->rules.items[i]->query && !c->rules.items[i]->shipped;
    pthread_t qt;
    bool threaded = eager && pthread_create(&qt, NULL, build_queries, &qj) == 0;
    /* `pattern` rules, compiled once; the named group `report` (or the whole match) is the finding */
    if (c->patterns) {
        for (size_t i = 0; i < c->rules.len; i++)
            if (c->patterns[i]) pcre2_code_free(c->patterns[i]);
        ut_free(c->patterns);
    }
    c->patterns = ut_calloc(c->rules.len ? c->rules.len : 1, sizeof(pcre2_code *));
    for (size_t i = 0; i < c->rules.len; i++) {
        an_rule *r = c->rules.items[i];
        if (!r->pattern) continue;
        int ec;
        PCRE2_SIZE eo;
        c->patterns[i] = compile_re(r->pattern, PCRE2_UTF | PCRE2_MULTILINE, &ec, &eo);
        if (!c->patterns[i]) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(ec, msg, sizeof msg);
            ut_buf_printf(err, "%s:%d: rule %s: `pattern` does not compile: %s (at offset %zu)\n", r->origin,
                          r->origin_line, r->code, (char *)msg, (size_t)eo);
            nerr++;
        }
    }
    /* prefilters: one alternation per language */
    for (int lang = 0; lang < AN_LANG__COUNT; lang++) {
        strvec alts = {0};
        bool any_rule = false, always = false;
        for (size_t k = 0; k < c->anchored[lang].len; k++) {
            free_res(&c->anchored[lang].items[k]);
            ut_vec_free(&c->anchored[lang].items[k]);
        }
        c->anchored[lang].len = 0;
        free_lits(c, lang);
        c->lits[lang] = an_lits_new();
        c->directives[lang].always = !an_lits_cover(c->lits[lang], "xpuify:|NOLINT", &c->directives[lang].ids);
        for (size_t i = 0; i < c->rules.len; i++) {
            an_rule *r = c->rules.items[i];
            if ((int)r->lang != lang || (r->builtin && !r->triggers.len)) continue;
            any_rule = true;
            for (size_t t = 0; t < r->triggers.len; t++) {
                const char *tr = r->triggers.items[t];
                if (strchr(tr, '\x1f')) { /* a group: every part must match */
                    an_re_vec grp = {0};
                    an_cover_vec gcov = {0};
                    strvec parts = {0};
                    for (const char *p = tr; p;) {
                        const char *q = strchr(p, '\x1f');
                        ut_vec_push(&parts, ut_strndup(p, q ? (size_t)(q - p) : strlen(p)));
                        p = q ? q + 1 : NULL;
                    }
                    compile_each(&parts, &grp, c->lits[lang], &gcov, "triggers", (an_lang)lang, err, &nerr);
                    ut_vec_push(&c->anchored[lang], grp);
                    ut_vec_push(&c->anchored_cov[lang], gcov);
                    continue;
                }
                /* each pattern compiles on its own, so an error names its rule (and `)` cannot break the others) */
                int ec;
                PCRE2_SIZE eo;
                uint32_t fl = PCRE2_UTF | PCRE2_DUPNAMES | (lang == AN_LANG_PYTHON ? 0 : PCRE2_MULTILINE);
                pcre2_code *one = pcre2_compile((PCRE2_SPTR)tr, PCRE2_ZERO_TERMINATED, fl, &ec, &eo, NULL);
                if (!one) {
                    PCRE2_UCHAR msg[256];
                    pcre2_get_error_message(ec, msg, sizeof msg);
                    ut_buf_printf(err, "%s:%d: rule %s: trigger `%.*s` does not compile: %s (at offset %zu)\n", r->origin,
                                  r->origin_line, r->code, (int)strcspn(tr, "\r\n"), tr, (char *)msg, (size_t)eo);
                    nerr++;
                    continue;
                }
                pcre2_code_free(one);
                add_alt(&alts, tr, strlen(tr));
            }
            if (!r->triggers.len && r->pattern) add_alt(&alts, r->pattern, strlen(r->pattern));
            else if (!r->triggers.len) {
                for (size_t j = 0; j < r->entries.len; j++) {
                    ut_buf lit;
                    ut_buf_init(&lit);
                    entry_trigger(r->entries.items[j], &lit);
                    if (lit.len) add_alt(&alts, lit.data, lit.len);
                    else always = true;
                    ut_buf_free(&lit);
                }
            }
        }
        c->prefilter_all[lang] = always;
        c->prefilter_none[lang] = !any_rule;
        if (getenv("XPUIFY_DEBUG_PREFILTER"))
            for (size_t i = 0; i < alts.len; i++) fprintf(stderr, "prefilter[%s]: %s\n", an_lang_name(lang), alts.items[i]);
        if (always) {
            for (size_t i = 0; i < alts.len; i++) ut_free(alts.items[i]);
            ut_vec_free(&alts);
        } else {
            compile_each(&alts, &c->prefilter[lang], c->lits[lang], &c->prefilter_cov[lang], "triggers", (an_lang)lang,
                         err, &nerr);
        }
    }
    for (int lang = 0; lang < AN_LANG__COUNT; lang++) nerr += build_locality(c, (an_lang)lang, err);
    an_qlive_build(c); /* after every trigger's literals are in the scanner */
    if (threaded) pthread_join(qt, NULL);
    else if (eager) build_queries(&qj);
    for (int lang = 0; lang < AN_LANG__COUNT; lang++) {
        an_query_set_free(c->queries[lang]);
        c->queries[lang] = qj.q[lang];
    }
    atomic_store(&c->queries_ready, eager);
    if (qj.err.len) ut_buf_append(err, qj.err.data, qj.err.len);
    ut_buf_free(&qj.err);
    return nerr + qj.nerr;
}

/* found: the language's literals seen in the text (NULL: scan none, run every pattern) */
bool an_cover_may_match(const an_cover *cv, const uint8_t *found) {
    return !found || cv->always ||
           (an_lits_any(found, cv->ids.items, cv->ids.len) && an_lits_all(found, cv->also.items, cv->also.len));
}

size_t an_catalog_literal_count(const an_catalog *c, an_lang lang) { return an_lits_count(c->lits[lang]); }

/* the language's literal scan of text into out, or into buf (stack, n bytes) or the heap when out is NULL */
static uint8_t *scan_literals(const an_catalog *c, an_lang lang, const char *text, size_t len, uint8_t *out,
                              uint8_t *buf, size_t n) {
    size_t nl = an_lits_count(c->lits[lang]);
    uint8_t *found = out ? out : nl <= n ? buf : ut_malloc(nl);
    an_lits_scan(c->lits[lang], text, len, found);
    return found;
}

/* a prefilter match that fails with an error (match or depth limit) cannot rule the file out: it goes on to its
 * front end, as if it had matched */
static int may_match_rc(int rc) { return rc < PCRE2_ERROR_NOMATCH ? 0 : rc; }

bool an_catalog_prefilter(const an_catalog *c, an_lang lang, const char *text, size_t len, uint8_t *out) {
    uint8_t stack[512];
    if (out) scan_literals(c, lang, text, len, out, NULL, 0);
    if (c->prefilter_none[lang]) return false;
    if (c->prefilter_all[lang] || (!c->prefilter[lang].len && !c->anchored[lang].len)) return true;
    uint8_t *found = out ? out : scan_literals(c, lang, text, len, NULL, stack, sizeof stack);
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    int rc = -1;
    for (size_t k = 0; rc < 0 && k < c->prefilter[lang].len; k++)
        if (an_cover_may_match(&c->prefilter_cov[lang].items[k], found))
            rc = may_match_rc(pcre2_match(c->prefilter[lang].items[k], (PCRE2_SPTR)text, len, 0, PCRE2_NO_UTF_CHECK, md, NULL));
    for (size_t k = 0; rc < 0 && k < c->anchored[lang].len; k++) {
        const an_re_vec *g = &c->anchored[lang].items[k];
        const an_cover_vec *gc = &c->anchored_cov[lang].items[k];
        rc = 0;
        for (size_t p = 0; rc >= 0 && p < g->len; p++) /* every part's literals first: they cost nothing */
            if (!an_cover_may_match(&gc->items[p], found)) rc = -1;
        for (size_t p = 0; rc >= 0 && p < g->len; p++)
            rc = may_match_rc(pcre2_match(g->items[p], (PCRE2_SPTR)text, len, 0, PCRE2_NO_UTF_CHECK, md, NULL));
    }
    pcre2_match_data_free(md);
    if (found != stack && found != out) ut_free(found);
    return rc >= 0;
}

bool an_catalog_may_have_directives(const an_catalog *c, an_lang lang, const char *text, size_t len,
                                    const uint8_t *found) {
    if (!found || !c->lits[lang]) return an_suppress_may_have_directives(text, len);
    return an_cover_may_match(&c->directives[lang], found);
}

void an_catalog_locality_live(const an_catalog *c, an_lang lang, const char *text, size_t len, const uint8_t *given,
                              bool *live) {
    uint8_t stack[512];
    const uint8_t *found = given ? given : scan_literals(c, lang, text, len, NULL, stack, sizeof stack);
    for (size_t k = 0; k < c->locality[lang].len; k++) live[k] = an_cover_may_match(&c->locality_cov[lang].items[k], found);
    if (found != stack && found != given) ut_free((uint8_t *)found);
}

int an_catalog_locality_match(const an_catalog *c, an_lang lang, size_t k, const char *text, size_t len, size_t off,
                              bool caseless_safe, struct pcre2_real_match_data_8 *md, size_t *s, size_t *e) {
    const an_plain *p = &c->locality_cov[lang].items[k].plain;
    if (p->alts && (!p->nocase || caseless_safe)) {
        long at = an_plain_find(p, text, len, off, e);
        if (at < 0) return PCRE2_ERROR_NOMATCH;
        *s = (size_t)at;
        return 1;
    }
    int rc = pcre2_match(c->locality[lang].items[k], (PCRE2_SPTR)text, len, off, PCRE2_NO_UTF_CHECK, md, NULL);
    if (rc >= 0) {
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        *s = ov[0], *e = ov[1];
    }
    return rc;
}


/* Builds the query sets if they are not built yet (one thread builds, the others wait); their errors into err. */
static int ensure_queries(an_catalog *c, ut_buf *err) {
    int nerr = 0;
    if (atomic_load_explicit(&c->queries_ready, memory_order_acquire)) return 0;
    pthread_mutex_lock(&c->queries_mu);
    if (!atomic_load_explicit(&c->queries_ready, memory_order_relaxed)) {
        query_job qj = {c, {0}, {0}, 0};
        ut_buf_init(&qj.err);
        build_queries(&qj);
        for (int l = 0; l < AN_LANG__COUNT; l++) c->queries[l] = qj.q[l];
        if (qj.err.len) ut_buf_append(err, qj.err.data, qj.err.len);
        nerr = qj.nerr;
        ut_buf_free(&qj.err);
        atomic_store_explicit(&c->queries_ready, true, memory_order_release);
    }
    pthread_mutex_unlock(&c->queries_mu);
    return nerr;
}

int an_catalog_build_queries(an_catalog *c, ut_buf *err) { return ensure_queries(c, err); }

/* The shipped rules' query sets are built on first use. Their errors cannot come from the user (the shipped rules'
 * queries are checked by tests/unit/test_rules.c); should one happen all the same, it is said on stderr and the query
 * rules of that language find nothing. */
const struct an_query_set *an_catalog_queries(const an_catalog *cc, an_lang lang) {
    an_catalog *c = (an_catalog *)cc; /* the lazily built part, guarded by queries_mu */
    if (!atomic_load_explicit(&c->queries_ready, memory_order_acquire)) {
        ut_buf err;
        ut_buf_init(&err);
        if (ensure_queries(c, &err) && err.len)
            fprintf(stderr, "xpuify: internal error: the built-in rules' queries: %.*s", (int)err.len, err.data);
        ut_buf_free(&err);
    }
    return c->queries[lang];
}

/* The rule files compiled in by tools/embed.c (build/gen/rules_data.c). */
struct xp_embedded { const char *path; const char *text; size_t len; };
extern const struct xp_embedded xp_builtin_rules[];
extern const size_t xp_builtin_rules_count;
/* the same files' documents, parsed at build time (build/gen/rules_docs.c) */
extern const ut_yaml_table xp_builtin_docs;

int an_catalog_load_builtin(an_catalog *c, ut_buf *err) { return an_catalog_load_builtin_except(c, NULL, 0, err); }

int an_catalog_load_builtin_except(an_catalog *c, const char *const *skip, size_t nskip, ut_buf *err) {
    int n = 0;
    for (size_t i = 0; i < xp_builtin_rules_count; i++) {
        const char *base = strrchr(xp_builtin_rules[i].path, '/');
        base = base ? base + 1 : xp_builtin_rules[i].path;
        bool skipped = false;
        for (size_t k = 0; k < nskip && !skipped; k++) skipped = !strcmp(skip[k], base);
        if (skipped) continue;
        size_t before = c->rules.len;
        /* the document parsed at build time (tools/embed_yaml.c), as yaml_parser_load gives it */
        yaml_document_t doc;
        if (i < xp_builtin_docs.ndocs && !strcmp(xp_builtin_docs.docs[i].path, xp_builtin_rules[i].path) &&
            ut_yaml_table_doc(&xp_builtin_docs, i, &doc)) {
            fingerprint_add(c, xp_builtin_rules[i].path, xp_builtin_rules[i].text, xp_builtin_rules[i].len);
            n += load_document(c, xp_builtin_rules[i].path, &doc, err);
            ut_yaml_table_doc_free(&doc);
        } else {
            n += an_catalog_load_yaml(c, xp_builtin_rules[i].path, xp_builtin_rules[i].text, xp_builtin_rules[i].len, err);
        }
        for (size_t k = before; k < c->rules.len; k++) c->rules.items[k]->shipped = true;
    }
    return n;
}
