/* an_catalog: loads rule YAML (libyaml document API) into an_rule records, indexes qualified names, and builds
 * the per-language prefilter. Query compilation lives in an_query.c. */
#include "an_catalog_int.h"
#include "../util/ut_hash.h"
#include <pcre2.h>
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
    ut_buf_printf(l->err, "%s:%zu:%zu: ", l->origin, n ? n->start_mark.line + 1 : 1, n ? n->start_mark.column + 1 : 1);
    va_list ap;
    va_start(ap, fmt);
    ut_buf_vprintf(l->err, fmt, ap);
    va_end(ap);
    ut_buf_putc(l->err, '\n');
    l->nerr++;
}

static yaml_node_t *node(ld *l, int id) { return yaml_document_get_node(l->doc, id); }

static const char *scalar(yaml_node_t *n) {
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

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
    ut_free(e->message), ut_free(e->note), ut_free(e);
}

static an_entry *parse_entry(ld *l, yaml_node_t *n, an_rule *r) {
    an_entry *e = ut_calloc(1, sizeof *e);
    e->fix = r->fix;
    e->rule = r;
    if (n->type == YAML_SCALAR_NODE) {
        e->name = ut_strdup(scalar(n));
    } else if (n->type == YAML_MAPPING_NODE) {
        EACH_PAIR(l, n, k, v) {
            const char *key = scalar(k);
            if (!key || dup_key(l, n, p_, true)) continue;
            if (!strcmp(key, "name")) e->name = want_str(l, v, key);
            else if (!strcmp(key, "replacement")) e->replacement = want_str(l, v, key);
            else if (!strcmp(key, "compat")) e->compat = want_str(l, v, key);
            else if (!strcmp(key, "min_torch")) e->min_torch = want_str(l, v, key);
            else if (!strcmp(key, "message")) e->message = want_str(l, v, key);
            else if (!strcmp(key, "note")) e->note = want_str(l, v, key);
            else if (!strcmp(key, "fix")) parse_fix(l, v, &e->fix);
            else lerr(l, k, "unknown key `%s` in a qualnames entry (known: name, replacement, compat, min_torch, message, note, fix)", key);
        }
    } else {
        lerr(l, n, "a qualnames entry must be a name or a mapping");
    }
    if (!e->name) {
        lerr(l, n, "qualnames entry without `name`");
        entry_free(e);
        return NULL;
    }
    size_t nl = strlen(e->name);
    if (nl > 2 && !strcmp(e->name + nl - 2, ".*")) e->wildcard = true, e->name[nl - 2] = 0;
    if (!e->min_torch && r->min_torch) e->min_torch = ut_strdup(r->min_torch);
    return e;
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
    /* `fix` and `min_torch` are rule-level defaults for entries: read them first */
    EACH_PAIR(l, n, k, v) {
        const char *key = scalar(k);
        if (dup_key(l, n, p_, true)) continue;
        if (key && !strcmp(key, "fix")) parse_fix(l, v, &r->fix);
        if (key && !strcmp(key, "min_torch")) r->min_torch = want_str(l, v, key);
    }
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
        } else if (!strcmp(key, "fix") || !strcmp(key, "min_torch")) {
            /* read above */
        } else if (!strcmp(key, "summary")) r->summary = want_str(l, v, key);
        else if (!strcmp(key, "message")) r->message = want_str(l, v, key);
        else if (!strcmp(key, "doc")) r->doc = want_str(l, v, key);
        else if (!strcmp(key, "builtin")) r->builtin = want_str(l, v, key);
        else if (!strcmp(key, "query")) r->query = want_str(l, v, key);
        else if (!strcmp(key, "report")) r->report = want_str(l, v, key);
        else if (!strcmp(key, "triggers")) want_str_list(l, v, key, &r->triggers);
        else if (!strcmp(key, "supersedes")) want_str_list(l, v, key, &r->supersedes);
        else if (!strcmp(key, "fixer")) r->fixer = want_str(l, v, key);
        else if (!strcmp(key, "qualnames")) entries = v;
        else if (!strcmp(key, "in_guarded_code")) want_bool(l, v, key, &r->in_guarded_code);
        else if (!strcmp(key, "cuda_guard_ok")) want_bool(l, v, key, &r->cuda_guard_ok);
        else if (!strcmp(key, "guard_condition")) want_bool(l, v, key, &r->guard_condition);
        else if (!strcmp(key, "examples")) {
            if (v->type != YAML_MAPPING_NODE) { lerr(l, v, "`examples` must map `flag`/`ok` to lists"); continue; }
            EACH_PAIR(l, v, ek, ev) {
                const char *ekey = scalar(ek);
                if (dup_key(l, v, p_, true)) continue;
                if (ekey && !strcmp(ekey, "flag")) want_str_list(l, ev, "flag", &r->examples.flag);
                else if (ekey && !strcmp(ekey, "ok")) want_str_list(l, ev, "ok", &r->examples.ok);
                else lerr(l, ek, "unknown key in `examples` (known: flag, ok)");
            }
        } else lerr(l, k, "unknown rule key `%s`", key);
    }
    if (entries) {
        if (entries->type != YAML_SEQUENCE_NODE) lerr(l, entries, "`qualnames` must be a list");
        else
            for (yaml_node_item_t *it = entries->data.sequence.items.start; it < entries->data.sequence.items.top; it++) {
                an_entry *e = parse_entry(l, node(l, *it), r);
                if (e) ut_vec_push(&r->entries, e);
            }
    }
    if (!r->code) lerr(l, n, "rule without `code`");
    if (!r->name) lerr(l, n, "rule without `name`");
    if (!r->message) lerr(l, n, "rule `%s` without `message`", r->code ? r->code : "?");
    if (!r->summary) r->summary = ut_strdup(r->message ? r->message : "");
    int kinds = (r->builtin != NULL) + (r->query != NULL) + (r->entries.len > 0);
    if (kinds != 1 && l->nerr == before)
        lerr(l, n, "rule `%s` needs exactly one of `qualnames`, `query`, `builtin`", r->code ? r->code : "?");
    if (r->query && !r->triggers.len && l->nerr == before)
        lerr(l, n, "query rule `%s` needs `triggers` (regexes a file must contain to be parsed)", r->code);
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
    ut_sha1(b.data, b.len, c->fingerprint);
    ut_buf_free(&b);
}

const uint8_t *an_catalog_fingerprint(const an_catalog *c) { return c->fingerprint; }

int an_catalog_load_yaml(an_catalog *c, const char *origin, const char *text, size_t len, ut_buf *err) {
    fingerprint_add(c, origin, text, len);
    yaml_parser_t parser;
    yaml_document_t doc;
    ld l = {&doc, origin, err, 0};
    if (!yaml_parser_initialize(&parser)) { ut_buf_printf(err, "%s: cannot start the YAML parser\n", origin); return 1; }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        ut_buf_printf(err, "%s:%zu:%zu: YAML error: %s\n", origin, parser.problem_mark.line + 1,
                      parser.problem_mark.column + 1, parser.problem ? parser.problem : "malformed");
        yaml_parser_delete(&parser);
        return 1;
    }
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) goto done; /* empty file */
    if (root->type != YAML_MAPPING_NODE) { lerr(&l, root, "a rule file is a mapping with a `rules` list"); goto done; }
    EACH_PAIR(&l, root, k, v) {
        const char *key = scalar(k);
        if (key && !strcmp(key, "rules")) {
            if (v->type != YAML_SEQUENCE_NODE) { lerr(&l, v, "`rules` must be a list"); continue; }
            for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++)
                parse_rule(&l, c, node(&l, *it));
        } else lerr(&l, k, "unknown top-level key `%s` (known: rules)", key ? key : "?");
    }
done:
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return l.nerr;
}

/* ---- catalog ----------------------------------------------------------------------------------------------- */

an_catalog *an_catalog_new(void) { return ut_calloc(1, sizeof(an_catalog)); }

void an_rule_free(an_rule *r) {
    if (!r) return;
    for (size_t i = 0; i < r->entries.len; i++) entry_free(r->entries.items[i]);
    ut_vec_free(&r->entries);
#define FREE_LIST(v) do { for (size_t i = 0; i < (v).len; i++) ut_free((v).items[i]); ut_vec_free(&(v)); } while (0)
    FREE_LIST(r->triggers);
    FREE_LIST(r->supersedes);
    FREE_LIST(r->examples.flag);
    FREE_LIST(r->examples.ok);
    ut_free(r->code), ut_free(r->name), ut_free(r->summary), ut_free(r->message), ut_free(r->doc);
    ut_free(r->min_torch), ut_free(r->origin), ut_free(r->builtin), ut_free(r->query), ut_free(r->report);
    ut_free(r->fixer);
    ut_free(r);
}

void an_catalog_free(an_catalog *c) {
    if (!c) return;
    for (size_t i = 0; i < c->rules.len; i++) an_rule_free(c->rules.items[i]);
    ut_vec_free(&c->rules);
    ut_free(c->exact);
    ut_vec_free(&c->wild);
    for (int i = 0; i < AN_LANG__COUNT; i++) {
        an_query_set_free(c->queries[i]);
        if (c->prefilter[i]) pcre2_code_free(c->prefilter[i]);
    }
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

const char *an_lang_name(an_lang l) {
    switch (l) {
    case AN_LANG_PYTHON: return "python";
    case AN_LANG_C: return "c";
    case AN_LANG_TEXT: return "text";
    default: return "?";
    }
}

static uint64_t fnv(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

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
 * chain itself or in the import that binds it), so any one of them is a sound trigger. Prefer a CUDA-ish one. */
static void entry_trigger(const an_entry *e, ut_buf *out) {
    const char *best = NULL;
    size_t bestn = 0;
    const char *p = strchr(e->name, '.');
    if (!p) { best = e->name, bestn = strlen(e->name); }
    while (p) {
        const char *s = p + 1, *q = strchr(s, '.');
        size_t n = q ? (size_t)(q - s) : strlen(s);
        bool cudaish = memmem(s, n, "cuda", 4) || memmem(s, n, "nccl", 4) || memmem(s, n, "cudnn", 5) ||
                       memmem(s, n, "nvml", 4);
        bool best_cudaish = best && (memmem(best, bestn, "cuda", 4) || memmem(best, bestn, "nccl", 4) ||
                                     memmem(best, bestn, "cudnn", 5) || memmem(best, bestn, "nvml", 4));
        if (!best || (cudaish && !best_cudaish) || (cudaish == best_cudaish && n > bestn)) best = s, bestn = n;
        p = q;
    }
    for (size_t i = 0; i < bestn; i++) {
        char ch = best[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'))
            ut_buf_putc(out, '\\');
        ut_buf_putc(out, ch);
    }
}

typedef UT_VEC(char *) strvec;

static void add_alt(strvec *alts, const char *alt, size_t n) {
    for (size_t i = 0; i < alts->len; i++)
        if (strlen(alts->items[i]) == n && !memcmp(alts->items[i], alt, n)) return;
    ut_vec_push(alts, ut_strndup(alt, n));
}

int an_catalog_finalize(an_catalog *c, ut_buf *err) {
    int nerr = 0;
    /* name index */
    size_t n = 0;
    for (size_t i = 0; i < c->rules.len; i++) n += c->rules.items[i]->entries.len;
    c->exact_cap = 16;
    while (c->exact_cap < n * 2 + 1) c->exact_cap *= 2;
    ut_free(c->exact);
    c->exact = ut_calloc(c->exact_cap, sizeof(an_entry *));
    c->wild.len = 0;
    for (size_t i = 0; i < c->rules.len; i++) {
        an_rule *r = c->rules.items[i];
        for (size_t j = 0; j < r->entries.len; j++) {
            an_entry *e = r->entries.items[j];
            if (e->wildcard) { ut_vec_push(&c->wild, e); continue; }
            const an_entry *prev = an_catalog_lookup(c, e->name, true);
            if (prev) {
                ut_buf_printf(err, "%s:%d: `%s` is in the tables of both %s and %s\n", r->origin, r->origin_line,
                              e->name, prev->rule->code, r->code);
                nerr++;
                continue;
            }
            size_t k = fnv(e->name) & (c->exact_cap - 1);
            while (c->exact[k]) k = (k + 1) & (c->exact_cap - 1);
            c->exact[k] = e;
        }
    }
    if (c->wild.len > 1) qsort(c->wild.items, c->wild.len, sizeof(an_entry *), wild_cmp);
    /* prefilters: one alternation per language */
    for (int lang = 0; lang < AN_LANG__COUNT; lang++) {
        strvec alts = {0};
        bool any_rule = false, always = false;
        for (size_t i = 0; i < c->rules.len; i++) {
            an_rule *r = c->rules.items[i];
            if ((int)r->lang != lang || r->builtin) continue;
            any_rule = true;
            for (size_t t = 0; t < r->triggers.len; t++) {
                /* each pattern compiles on its own, so an error names its rule (and `)` cannot break the others) */
                const char *tp = r->triggers.items[t];
                int ec;
                PCRE2_SIZE eo;
                pcre2_code *one = pcre2_compile((PCRE2_SPTR)tp, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &ec, &eo, NULL);
                if (!one) {
                    PCRE2_UCHAR msg[256];
                    pcre2_get_error_message(ec, msg, sizeof msg);
                    ut_buf_printf(err, "%s:%d: rule %s: trigger `%.*s` does not compile: %s (at offset %zu)\n", r->origin,
                                  r->origin_line, r->code, (int)strcspn(tp, "\r\n"), tp, (char *)msg, (size_t)eo);
                    nerr++;
                    continue;
                }
                pcre2_code_free(one);
                add_alt(&alts, tp, strlen(tp));
            }
            if (!r->triggers.len) {
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
        if (c->prefilter[lang]) pcre2_code_free(c->prefilter[lang]), c->prefilter[lang] = NULL;
        c->prefilter_all[lang] = always;
        c->prefilter_none[lang] = !any_rule;
        ut_buf b;
        ut_buf_init(&b);
        for (size_t i = 0; i < alts.len; i++) {
            ut_buf_printf(&b, "%s(?:%s)", i ? "|" : "", alts.items[i]);
            ut_free(alts.items[i]);
        }
        ut_vec_free(&alts);
        if (b.len && !always) {
            int ec;
            PCRE2_SIZE eo;
            c->prefilter[lang] = pcre2_compile((PCRE2_SPTR)b.data, b.len, PCRE2_UTF | PCRE2_NO_UTF_CHECK, &ec, &eo, NULL);
            if (!c->prefilter[lang]) {
                PCRE2_UCHAR msg[256];
                pcre2_get_error_message(ec, msg, sizeof msg);
                ut_buf_printf(err, "rules: the %s rules' `triggers` patterns do not compile together: %s (at offset %zu of "
                                   "their alternation)\n", an_lang_name(lang), (char *)msg, (size_t)eo);
                nerr++;
            } else {
                pcre2_jit_compile(c->prefilter[lang], PCRE2_JIT_COMPLETE);
            }
        }
        ut_buf_free(&b);
    }
    for (int lang = 0; lang < AN_LANG__COUNT; lang++) {
        an_query_set_free(c->queries[lang]);
        c->queries[lang] = an_query_set_build(c, (an_lang)lang, err, &nerr);
    }
    return nerr;
}

bool an_catalog_prefilter(const an_catalog *c, an_lang lang, const char *text, size_t len) {
    if (c->prefilter_none[lang]) return false;
    if (c->prefilter_all[lang] || !c->prefilter[lang]) return true;
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    int rc = pcre2_match(c->prefilter[lang], (PCRE2_SPTR)text, len, 0, PCRE2_NO_UTF_CHECK, md, NULL);
    pcre2_match_data_free(md);
    return rc >= 0;
}

const struct an_query_set *an_catalog_queries(const an_catalog *c, an_lang lang) { return c->queries[lang]; }

/* The rule files compiled in by tools/embed.c (build/gen/rules_data.c). */
struct xp_embedded { const char *path; const char *text; size_t len; };
extern const struct xp_embedded xp_builtin_rules[];
extern const size_t xp_builtin_rules_count;

int an_catalog_load_builtin(an_catalog *c, ut_buf *err) {
    int n = 0;
    for (size_t i = 0; i < xp_builtin_rules_count; i++)
        n += an_catalog_load_yaml(c, xp_builtin_rules[i].path, xp_builtin_rules[i].text, xp_builtin_rules[i].len, err);
    return n;
}
