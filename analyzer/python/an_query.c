/* an_query: compiles every query rule of a language into one TSQuery, parses its predicates once, and runs it. */
#include "analyzer/python/an_query.h"
#include "analyzer/python/an_pyfield.h"
#include "analyzer/python/an_qshare.h"
#include <ctype.h>
#include <pthread.h>
#include "analyzer/core/an_catalog_int.h"
#include <stdio.h>

#ifndef AN_QUERY_MATCH_LIMIT
#define AN_QUERY_MATCH_LIMIT 256
#endif

const TSLanguage *tree_sitter_python(void);

typedef enum { P_EQ, P_MATCH, P_ANY_OF, P_RESOLVES_TO, P_HAS_KEYWORD, P_HAS_POSITIONAL, P_STRING_MATCH, P_USER_ATTR, P_CODE_MATCH } pred_kind;

typedef struct {
    pred_kind kind;
    bool neg;
    uint32_t cap;  /* capture id of the first argument */
    uint32_t cap2; /* second capture for #eq? @a @b, else UINT32_MAX */
    UT_VEC(char *) args;
    pcre2_code *re;
} pred;

typedef struct {
    const an_rule *rule;
    uint32_t report_cap;
    UT_VEC(pred) preds;
} pattern_info;

struct an_query_set {
    TSQuery *query;
    bool statement_level;
    bool narrowable;         /* an_query_run_within may start below a container (see there) */
    TSSymbol containers[4];  /* block, class_definition, function_definition, decorated_definition */
    /* the rules' patterns, grouped by the query's pattern that matches for them: query pattern k matches for
     * patterns[first[k]] .. patterns[first[k + 1] - 1] (one each unless an_qshare wrote shapes once) */
    UT_VEC(pattern_info) patterns;
    uint32_t *first;
};

const TSLanguage *an_query_language(an_lang lang) { return lang == AN_LANG_PYTHON ? tree_sitter_python() : NULL; }

static void pred_free(pred *p);

static void patterns_clear(struct an_query_set *qs) {
    for (size_t i = 0; i < qs->patterns.len; i++) {
        pattern_info *pi = &qs->patterns.items[i];
        for (size_t j = 0; j < pi->preds.len; j++) pred_free(&pi->preds.items[j]);
        ut_vec_free(&pi->preds);
    }
    qs->patterns.len = 0;
}

void an_query_set_free(struct an_query_set *qs) {
    if (!qs) return;
    patterns_clear(qs);
    ut_vec_free(&qs->patterns);
    ut_free(qs->first);
    if (qs->query) ts_query_delete(qs->query);
    ut_free(qs);
}

static const char *error_name(TSQueryError e) {
    switch (e) {
    case TSQueryErrorSyntax: return "syntax error";
    case TSQueryErrorNodeType: return "unknown node type";
    case TSQueryErrorField: return "unknown field";
    case TSQueryErrorCapture: return "unknown capture";
    case TSQueryErrorStructure: return "impossible pattern structure";
    default: return "error";
    }
}

static void pred_free(pred *p) {
    for (size_t k = 0; k < p->args.len; k++) ut_free(p->args.items[k]);
    ut_vec_free(&p->args);
    if (p->re) pcre2_code_free(p->re);
    p->re = NULL;
}

/* The predicate of steps i..j-1 (j its Done step), added to pi; on an error its arguments are freed (it is not
 * kept). */
static bool parse_pred(TSQuery *q, const TSQueryPredicateStep *st, uint32_t i, uint32_t j, pattern_info *pi,
                       const an_rule *r, ut_buf *err) {
    pred p = {0};
    p.cap2 = UINT32_MAX;
    uint32_t len;
    if (st[i].type != TSQueryPredicateStepTypeString) goto bad;
    const char *name = ts_query_string_value_for_id(q, st[i].value_id, &len);
    const char *base = name;
    if (!strncmp(name, "not-", 4)) p.neg = true, base = name + 4;
    if (!strcmp(base, "eq?")) p.kind = P_EQ;
    else if (!strcmp(base, "match?")) p.kind = P_MATCH;
    else if (!strcmp(base, "any-of?")) p.kind = P_ANY_OF;
    else if (!strcmp(base, "resolves-to?")) p.kind = P_RESOLVES_TO;
    else if (!strcmp(base, "has-keyword?")) p.kind = P_HAS_KEYWORD;
    else if (!strcmp(base, "has-positional?")) p.kind = P_HAS_POSITIONAL;
    else if (!strcmp(base, "string-match?")) p.kind = P_STRING_MATCH;
    else if (!strcmp(base, "user-attribute?")) p.kind = P_USER_ATTR;
    else if (!strcmp(base, "code-match?")) p.kind = P_CODE_MATCH;
    else {
        ut_buf_printf(err, "%s:%d: rule %s: unknown predicate #%s (known: eq?, match?, any-of?, resolves-to?, "
                           "has-keyword?, has-positional?, string-match?, user-attribute?, code-match? and their not- forms)\n",
                      r->origin, r->origin_line, r->code, name);
        pred_free(&p);
        return false;
    }
    if (i + 1 >= j || st[i + 1].type != TSQueryPredicateStepTypeCapture) goto bad;
    p.cap = st[i + 1].value_id;
    for (uint32_t k = i + 2; k < j; k++) {
        if (st[k].type == TSQueryPredicateStepTypeCapture && p.kind == P_EQ && p.cap2 == UINT32_MAX) {
            p.cap2 = st[k].value_id;
            continue;
        }
        if (st[k].type != TSQueryPredicateStepTypeString) goto bad;
        const char *s = ts_query_string_value_for_id(q, st[k].value_id, &len);
        ut_vec_push(&p.args, ut_strndup(s, len));
    }
    bool needs_arg = p.kind != P_HAS_POSITIONAL && p.kind != P_USER_ATTR && !(p.kind == P_EQ && p.cap2 != UINT32_MAX);
    if (needs_arg && !p.args.len) goto bad;
    if (p.kind == P_MATCH || p.kind == P_STRING_MATCH || p.kind == P_CODE_MATCH) {
        int ec;
        PCRE2_SIZE eo;
        p.re = pcre2_compile((PCRE2_SPTR)p.args.items[0], PCRE2_ZERO_TERMINATED, PCRE2_UTF, &ec, &eo, NULL);
        if (!p.re) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(ec, msg, sizeof msg);
            ut_buf_printf(err, "%s:%d: rule %s: bad regex in #%s: %s\n", r->origin, r->origin_line, r->code, name,
                          (char *)msg);
            pred_free(&p);
            return false;
        }
        pcre2_jit_compile(p.re, PCRE2_JIT_COMPLETE);
    }
    ut_vec_push(&pi->preds, p);
    return true;
bad:
    ut_buf_printf(err, "%s:%d: rule %s: malformed predicate #%s\n", r->origin, r->origin_line, r->code,
                  ts_query_string_value_for_id(q, st[i].value_id, &len));
    pred_free(&p);
    return false;
}

static bool parse_preds(TSQuery *q, uint32_t pattern, pattern_info *pi, const an_rule *r, ut_buf *err) {
    uint32_t nsteps;
    const TSQueryPredicateStep *st = ts_query_predicates_for_pattern(q, pattern, &nsteps);
    for (uint32_t i = 0; i < nsteps;) {
        uint32_t j = i;
        while (j < nsteps && st[j].type != TSQueryPredicateStepTypeDone) j++;
        if (!parse_pred(q, st, i, j, pi, r, err)) return false;
        i = j + 1;
    }
    return true;
}

/* Helpers of the two scans of a query text below: the closing quote of the string that opens at p (NULL when
 * unterminated); the end of the comment that opens at p (its newline, or the text's end); the node name after the
 * parenthesis at p (*t, its length returned); whether that name is one of list. */
static const char *past_string(const char *p) {
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1]) p++;
    return *p ? p : NULL;
}

static const char *past_comment(const char *p) {
    while (*p && *p != '\n') p++;
    return p;
}

static size_t node_name(const char *p, const char **t) {
    const char *q = p + 1;
    while (*q == ' ' || *q == '\t' || *q == '\n') q++;
    size_t n = 0;
    while (isalnum((unsigned char)q[n]) || q[n] == '_') n++;
    *t = q;
    return n;
}

static bool name_listed(const char *const *list, const char *t, size_t n) {
    for (int i = 0; list[i]; i++)
        if (strlen(list[i]) == n && !strncmp(t, list[i], n)) return true;
    return false;
}

/* Whether every top-level pattern of a query text is rooted at a named node that is no definition, block or module
 * (strings and comments skipped; a wildcard, an alternation or anything unclear answers no). */
static bool roots_below_statements(const char *q) {
    static const char *const bad[] = {"function_definition", "class_definition", "decorated_definition", "block",
                                      "module", "_", NULL};
    int depth = 0;
    for (const char *p = q; *p; p++) {
        if (*p == '"') {
            if (!(p = past_string(p))) return false;
            continue;
        }
        if (*p == ';') {
            if (!*(p = past_comment(p))) break;
            continue;
        }
        if (*p == '[' && depth == 0) return false;
        if (*p == '(' || *p == '[') {
            if (depth++ == 0) {
                const char *t;
                size_t n = node_name(p, &t);
                if (!n || name_listed(bad, t, n)) return false;
            }
        } else if (*p == ')' || *p == ']') {
            depth--;
        }
    }
    return true;
}

bool an_query_set_statement_level(const an_query_set *qs) { return qs && qs->statement_level; }

bool an_query_rules_statement_level(const an_catalog *c, an_lang lang) {
    for (size_t i = 0; i < c->rules.len; i++) {
        const an_rule *r = c->rules.items[i];
        if (r->lang == lang && r->query && !roots_below_statements(r->query)) return false;
    }
    return true;
}

/* Whether every top-level pattern of a query text is a plain named node with at most captures after it: no
 * supertype (`expression`, `_compound_statement`, ...), no wildcard, field, anchor, quantifier, group, alternation
 * or anonymous node at the top (anything unclear answers no). Such a pattern's root matches by its own symbol
 * alone, whatever its parent, field or siblings, so a cursor may start at any ancestor of it. */
static bool roots_are_plain(const char *q) {
    static const char *const super[] = {"expression", "primary_expression", "pattern", "parameter", NULL};
    int depth = 0;
    for (const char *p = q; *p; p++) {
        if (*p == '"') {
            if (depth == 0 || !(p = past_string(p))) return false;
            continue;
        }
        if (*p == ';') {
            if (!*(p = past_comment(p))) break;
            continue;
        }
        if (*p == '(' || *p == '[') {
            if (depth++ == 0) {
                if (*p == '[') return false;
                const char *t;
                size_t n = node_name(p, &t);
                if (!n || t[0] == '_' || name_listed(super, t, n)) return false;
            }
        } else if (*p == ')' || *p == ']') {
            if (--depth < 0) return false;
        } else if (depth == 0) {
            if (*p == '@') { /* a capture of the whole pattern */
                while (isalnum((unsigned char)p[1]) || p[1] == '_' || p[1] == '-' || p[1] == '.') p++;
            } else if (!isspace((unsigned char)*p)) {
                return false;
            }
        }
    }
    return depth == 0;
}

/* Compiles one rule's query on its own, so an error names its rule. */
static bool check_rule(const TSLanguage *tl, const an_rule *r, ut_buf *err) {
    uint32_t eo;
    TSQueryError et;
    TSQuery *one = ts_query_new(tl, r->query, (uint32_t)strlen(r->query), &eo, &et);
    if (!one) {
        const char *at = r->query + eo;
        size_t atn = strcspn(at, "\r\n"); /* one line of context: messages are one line each */
        ut_buf_printf(err, "%s:%d: rule %s: query %s at offset %u: %.*s\n", r->origin, r->origin_line, r->code,
                      error_name(et), eo, (int)(atn < 40 ? atn : 40), at);
        return false;
    }
    ts_query_delete(one);
    return true;
}

/* The rule's query names its report capture (`@report` followed by no further name character). */
static bool has_capture(const char *q, const char *name) {
    size_t n = strlen(name);
    for (const char *p = strchr(q, '@'); p; p = strchr(p + 1, '@')) {
        if (strncmp(p + 1, name, n)) continue; /* (p[1 + n] is read only once the n bytes before it matched) */
        char after = p[1 + n];
        if (!(isalnum((unsigned char)after) || after == '_' || after == '-' || after == '.')) return true;
    }
    return false;
}

/* The id of the capture named name in q (UINT32_MAX: none). */
static uint32_t capture_id(const TSQuery *q, const char *name) {
    uint32_t id = UINT32_MAX;
    for (uint32_t cid = 0; cid < ts_query_capture_count(q); cid++) {
        uint32_t n;
        const char *nm = ts_query_capture_name_for_id(q, cid, &n);
        if (n == strlen(name) && !memcmp(nm, name, n)) id = cid;
    }
    return id;
}

/* narrowing (an_query_run_within): statement-level, plain roots, and every pattern rooted (a single root node:
 * tree-sitter starts a match only at a node inside the range then) */
static bool narrowable(const struct an_query_set *qs, const char *rules_text) {
    if (!qs->statement_level || !roots_are_plain(rules_text)) return false;
    for (uint32_t p = 0; p < ts_query_pattern_count(qs->query); p++)
        if (!ts_query_is_pattern_rooted(qs->query, p)) return false;
    return true;
}

/* The rules' patterns with each shape compiled once (an_qshare): true when qs->query, patterns and first are set.
 * False leaves qs without them, for the rules' texts as they are; errors of the rules' predicates are counted and
 * said here (the same words as there), and still answer true: the query itself is sound. */
static bool build_shared(struct an_query_set *qs, const TSLanguage *tl, const an_rule *const *rules, size_t n,
                         ut_buf *err, int *nerr) {
    if (getenv("XPUIFY_NO_QSHARE")) return false; /* the equivalence test's switch */
    const char **texts = ut_calloc(n ? n : 1, sizeof *texts);
    for (size_t i = 0; i < n; i++) texts[i] = rules[i]->query;
    an_qshare sh;
    bool ok = an_qshare_build(texts, n, &sh);
    ut_free(texts);
    if (!ok) return false;
    uint32_t eo;
    TSQueryError et;
    TSQuery *q = ts_query_new(tl, sh.text.data, (uint32_t)sh.text.len, &eo, &et);
    ok = q && ts_query_pattern_count(q) == sh.nshapes;
    qs->first = ut_calloc(sh.nshapes + 1, sizeof *qs->first);
    int errs = 0;
    for (uint32_t k = 0; ok && k < sh.nshapes; k++) {
        qs->first[k] = (uint32_t)qs->patterns.len;
        uint32_t nsteps;
        const TSQueryPredicateStep *st = ts_query_predicates_for_pattern(q, k, &nsteps);
        pattern_info *pi = NULL;
        bool skip = false; /* the rest of an owner whose predicate failed */
        for (uint32_t i = 0, j; ok && i < nsteps; i = j + 1) {
            for (j = i; j < nsteps && st[j].type != TSQueryPredicateStepTypeDone; j++) {}
            uint32_t len, alen;
            const char *name = st[i].type == TSQueryPredicateStepTypeString ? ts_query_string_value_for_id(q, st[i].value_id, &len) : "";
            if (!strcmp(name, AN_QSHARE_MARKER)) {
                /* (#an-owner! "K"): the predicates up to the next marker are owner K's */
                ok = j == i + 2 && st[i + 1].type == TSQueryPredicateStepTypeString;
                if (!ok) break;
                const char *a = ts_query_string_value_for_id(q, st[i + 1].value_id, &alen);
                unsigned long o = strtoul(a, NULL, 10);
                ok = o < sh.nowners && sh.owners[o].shape == k;
                if (!ok) break;
                pattern_info np = {0};
                np.rule = rules[sh.owners[o].rule];
                int rc = an_qshare_capture(&sh.owners[o], np.rule->report, strlen(np.rule->report));
                char cn[16];
                snprintf(cn, sizeof cn, "c%d", rc);
                np.report_cap = rc >= 0 ? capture_id(q, cn) : UINT32_MAX;
                ut_vec_push(&qs->patterns, np);
                pi = &qs->patterns.items[qs->patterns.len - 1];
                skip = false;
                continue;
            }
            ok = pi != NULL;
            if (ok && !skip && !parse_pred(q, st, i, j, pi, pi->rule, err)) errs++, skip = true;
        }
    }
    if (ok) qs->first[sh.nshapes] = (uint32_t)qs->patterns.len;
    an_qshare_free(&sh);
    if (!ok) {
        if (q) ts_query_delete(q);
        patterns_clear(qs);
        ut_free(qs->first);
        qs->first = NULL;
        return false;
    }
    qs->query = q;
    *nerr += errs;
    return true;
}

struct an_query_set *an_query_set_build(const an_catalog *c, an_lang lang, ut_buf *err, int *nerr) {
    return an_query_set_build_some(c, lang, NULL, err, nerr);
}

struct an_query_set *an_query_set_build_some(const an_catalog *c, an_lang lang, const bool *take, ut_buf *err,
                                             int *nerr) {
    const TSLanguage *tl = an_query_language(lang);
    ut_buf src;
    ut_buf_init(&src);
    UT_VEC(const an_rule *) owners = {0};
    UT_VEC(uint32_t) starts = {0};
    for (size_t i = 0; i < c->rules.len; i++) {
        const an_rule *r = c->rules.items[i];
        if (r->lang != lang || !r->query || (take && !take[i])) continue;
        if (!tl) {
            ut_buf_printf(err, "%s:%d: rule %s: `query` rules exist only for python\n", r->origin, r->origin_line, r->code);
            (*nerr)++;
            continue;
        }
        if (!has_capture(r->query, r->report)) {
            if (check_rule(tl, r, err))
                ut_buf_printf(err, "%s:%d: rule %s: the query has no @%s capture to report\n", r->origin,
                              r->origin_line, r->code, r->report);
            (*nerr)++;
            continue;
        }
        ut_vec_push(&owners, r);
        ut_vec_push(&starts, (uint32_t)src.len);
        ut_buf_puts(&src, r->query);
        ut_buf_putc(&src, '\n');
    }
    if (!owners.len) {
        ut_buf_free(&src);
        ut_vec_free(&owners);
        ut_vec_free(&starts);
        return NULL;
    }
    struct an_query_set *qs = ut_calloc(1, sizeof *qs);
    qs->statement_level = roots_below_statements(src.data);
    static const char *const cont[] = {"block", "class_definition", "function_definition", "decorated_definition"};
    for (int i = 0; i < 4; i++) qs->containers[i] = ts_language_symbol_for_name(tl, cont[i], (uint32_t)strlen(cont[i]), true);
    if (build_shared(qs, tl, owners.items, owners.len, err, nerr)) {
        qs->narrowable = narrowable(qs, src.data);
        ut_buf_free(&src);
        ut_vec_free(&owners);
        ut_vec_free(&starts);
        return qs;
    }
    uint32_t eo;
    TSQueryError et;
    /* one compilation of all the rules (compiling each as well would double the start-up time); only when it fails,
     * or when some rule's text gave no pattern of its own (an unbalanced parenthesis joins it to a neighbour), is
     * each rule compiled on its own to say which one is wrong */
    qs->query = ts_query_new(tl, src.data, (uint32_t)src.len, &eo, &et);
    uint32_t np = qs->query ? ts_query_pattern_count(qs->query) : 0;
    /* each pattern's rule: the last one whose text starts at or before the pattern (patterns come in text order) */
    uint32_t *owner = ut_calloc(np ? np : 1, sizeof(uint32_t));
    bool *has = ut_calloc(owners.len, sizeof(bool));
    for (uint32_t p = 0, k = 0; p < np; p++) {
        uint32_t sb = ts_query_start_byte_for_pattern(qs->query, p);
        while (k + 1 < starts.len && starts.items[k + 1] <= sb) k++;
        owner[p] = k;
        has[k] = true;
    }
    bool all = qs->query != NULL;
    for (size_t k = 0; k < owners.len; k++) all &= has[k];
    ut_free(has);
    if (!all) {
        int bad = 0;
        for (size_t k = 0; k < owners.len; k++) bad += !check_rule(tl, owners.items[k], err);
        if (!bad)
            ut_buf_printf(err, "rules: the combined %s query fails: %s at offset %u\n", an_lang_name(lang),
                          qs->query ? "a rule's query gives no pattern" : error_name(et), eo);
        *nerr += bad ? bad : 1;
        ut_free(owner);
        goto fail;
    }
    qs->narrowable = narrowable(qs, src.data);
    qs->first = ut_calloc(np + 1, sizeof *qs->first);
    for (uint32_t p = 0; p <= np; p++) qs->first[p] = p;
    for (uint32_t p = 0; p < np; p++) {
        pattern_info pi = {0};
        pi.rule = owners.items[owner[p]];
        pi.report_cap = capture_id(qs->query, pi.rule->report);
        if (!parse_preds(qs->query, p, &pi, pi.rule, err)) (*nerr)++;
        ut_vec_push(&qs->patterns, pi);
    }
    ut_free(owner);
    ut_buf_free(&src);
    ut_vec_free(&owners);
    ut_vec_free(&starts);
    return qs;
fail:
    ut_buf_free(&src);
    ut_vec_free(&owners);
    ut_vec_free(&starts);
    an_query_set_free(qs);
    return NULL;
}

void an_py_string_content(TSNode str, const char *src, uint32_t *start, uint32_t *end) {
    (void)src;
    *start = ts_node_start_byte(str);
    *end = ts_node_end_byte(str);
    uint32_t n = ts_node_child_count(str);
    for (uint32_t i = 0; i < n; i++) {
        TSNode ch = ts_node_child(str, i);
        const char *t = ts_node_type(ch);
        if (!strcmp(t, "string_start")) *start = ts_node_end_byte(ch);
        else if (!strcmp(t, "string_end")) *end = ts_node_start_byte(ch);
    }
    if (*end < *start) *end = *start;
}

/* 1: a match, 0: none, -1: the match failed (match or depth limit): undecided */
static int re_match(pcre2_code *re, const char *s, size_t n) {
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    int rc = pcre2_match(re, (PCRE2_SPTR)s, n, 0, 0, md, NULL);
    pcre2_match_data_free(md);
    return rc >= 0 ? 1 : rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

static bool text_eq(const char *src, TSNode n, const char *s) {
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    return strlen(s) == b - a && !memcmp(src + a, s, b - a);
}


/* #user-attribute? @name: the attribute `obj.name` (the capture is its name) is the program's own: it is assigned
 * here (`self.is_cuda = ...`, also in a tuple target or augmented), or the file assigns `obj.name` elsewhere. */
static bool user_attribute(TSNode name, const char *src) {
    TSNode attr = ts_node_parent(name);
    if (ts_node_is_null(attr) || strcmp(ts_node_type(attr), "attribute")) return false;
    TSNode child = attr;
    for (TSNode p = ts_node_parent(attr); !ts_node_is_null(p); child = p, p = ts_node_parent(p)) {
        const char *t = ts_node_type(p);
        if (!strcmp(t, "pattern_list") || !strcmp(t, "tuple_pattern") || !strcmp(t, "list_pattern") ||
            !strcmp(t, "parenthesized_expression"))
            continue;
        if (!strcmp(t, "assignment") || !strcmp(t, "augmented_assignment")) {
            TSNode left = an_py_field(p, "left", 4);
            if (!ts_node_is_null(left) && ts_node_start_byte(left) == ts_node_start_byte(child) &&
                ts_node_end_byte(left) == ts_node_end_byte(child))
                return true;
        }
        break;
    }
    TSNode obj = an_py_field(attr, "object", 6);
    if (ts_node_is_null(obj)) return false;
    uint32_t oa = ts_node_start_byte(obj), ob = ts_node_end_byte(obj), na = ts_node_start_byte(name),
             nb = ts_node_end_byte(name);
    if (ob - oa > 200) return false;
    char pat[256 + 64];
    int pl = snprintf(pat, sizeof pat, "%.*s.%.*s", (int)(ob - oa), src + oa, (int)(nb - na), src + na);
    if (pl <= 0 || (size_t)pl >= sizeof pat) return false;
    for (const char *q = strstr(src, pat); q; q = strstr(q + 1, pat)) {
        if (q > src && (isalnum((unsigned char)q[-1]) || q[-1] == '_' || q[-1] == '.')) continue;
        const char *e = q + pl;
        while (*e == ' ' || *e == '\t') e++;
        if (e[0] == '=' && e[1] != '=') return true;
        if (e[0] && strchr("+-*/|&", e[0]) && e[1] == '=') return true;
    }
    return false;
}

/* A statement that is nothing but string literals (a docstring). */
static bool string_statement(TSNode n) {
    if (strcmp(ts_node_type(n), "expression_statement")) return false;
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc; i++) {
        const char *t = ts_node_type(ts_node_named_child(n, i));
        if (strcmp(t, "string") && strcmp(t, "concatenated_string")) return false;
    }
    return nc > 0;
}

/* n's text with its comments and docstrings blanked (newlines kept), into out */
static void code_text(TSNode n, const char *src, ut_buf *out) {
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    ut_buf_clear(out);
    ut_buf_append(out, src + a, b - a);
    TSTreeCursor cur = ts_tree_cursor_new(n);
    for (;;) {
        TSNode c = ts_tree_cursor_current_node(&cur);
        bool blank = !strcmp(ts_node_type(c), "comment") || string_statement(c);
        if (blank) {
            for (uint32_t i = ts_node_start_byte(c); i < ts_node_end_byte(c) && i < b; i++)
                if (out->data[i - a] != '\n') out->data[i - a] = ' ';
        } else if (ts_tree_cursor_goto_first_child(&cur)) {
            continue;
        }
        bool up = false;
        while (!ts_tree_cursor_goto_next_sibling(&cur))
            if (!ts_tree_cursor_goto_parent(&cur)) { up = true; break; }
        if (up) break;
    }
    ts_tree_cursor_delete(&cur);
}

/* The last node a #resolves-to? predicate resolved, and the answer: the patterns rooted at a call that test its
 * callee's name (a dozen of the catalog's) ask for the same node one after another. A node is told by its subtree
 * and its extent (a leaf's subtree can be stored inline, the same value at two places). */
typedef struct {
    const void *id;
    uint32_t start, end;
    bool ok;
    ut_buf name;
} resolved;

static bool eval(const pred *p, const TSQueryMatch *m, const char *src, an_resolve_fn resolve, void *rctx, ut_buf *tmp,
                 resolved *last) {
    /* a capture absent from the match (optional part) makes positive predicates false */
    TSNode n = {0}, n2 = {0};
    bool have = false, have2 = false;
    for (uint16_t i = 0; i < m->capture_count; i++) {
        if (m->captures[i].index == p->cap && !have) n = m->captures[i].node, have = true;
        if (m->captures[i].index == p->cap2 && !have2) n2 = m->captures[i].node, have2 = true;
    }
    if (!have) return p->neg;
    bool r = false;
    int rm;
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    switch (p->kind) {
    case P_EQ:
        if (p->cap2 != UINT32_MAX) {
            if (!have2) return p->neg;
            uint32_t a2 = ts_node_start_byte(n2), b2 = ts_node_end_byte(n2);
            r = b - a == b2 - a2 && !memcmp(src + a, src + a2, b - a);
        } else r = text_eq(src, n, p->args.items[0]);
        break;
    /* a regex that cannot be decided (PCRE2 limit) lets the predicate hold either way: a finding is kept, never
     * silently lost */
    case P_MATCH:
        if ((rm = re_match(p->re, src + a, b - a)) < 0) return true;
        r = rm;
        break;
    case P_CODE_MATCH:
        code_text(n, src, tmp);
        if ((rm = re_match(p->re, tmp->data, tmp->len)) < 0) return true;
        r = rm;
        break;
    case P_STRING_MATCH: {
        if (strcmp(ts_node_type(n), "string")) { r = false; break; }
        uint32_t s, e;
        an_py_string_content(n, src, &s, &e);
        if ((rm = re_match(p->re, src + s, e - s)) < 0) return true;
        r = rm;
        break;
    }
    case P_ANY_OF:
        for (size_t i = 0; i < p->args.len && !r; i++) r = text_eq(src, n, p->args.items[i]);
        break;
    case P_RESOLVES_TO:
        if (!last->id || last->id != n.id || last->start != a || last->end != b) {
            ut_buf_clear(&last->name);
            last->ok = resolve && resolve(rctx, n, &last->name);
            last->id = n.id, last->start = a, last->end = b;
        }
        if (last->ok) {
            const ut_buf *q = &last->name;
            for (size_t i = 0; i < p->args.len && !r; i++) {
                const char *want = p->args.items[i];
                size_t wl = strlen(want);
                if (wl > 2 && !strcmp(want + wl - 2, ".*"))
                    r = q->len > wl - 2 && !strncmp(q->data, want, wl - 1);
                else r = !strcmp(q->data ? q->data : "", want);
            }
        }
        break;
    case P_USER_ATTR: r = user_attribute(n, src); break;
    case P_HAS_KEYWORD:
    case P_HAS_POSITIONAL: {
        uint32_t nc = ts_node_named_child_count(n);
        for (uint32_t i = 0; i < nc && !r; i++) {
            TSNode ch = ts_node_named_child(n, i);
            const char *t = ts_node_type(ch);
            if (p->kind == P_HAS_KEYWORD) {
                if (!strcmp(t, "dictionary_splat")) r = true; /* **kwargs may hold it */
                else if (!strcmp(t, "keyword_argument")) {
                    TSNode nm = an_py_field(ch, "name", 4);
                    for (size_t k = 0; k < p->args.len && !r; k++) r = text_eq(src, nm, p->args.items[k]);
                }
            } else {
                r = strcmp(t, "keyword_argument") && strcmp(t, "comment") && strcmp(t, "dictionary_splat");
            }
        }
        break;
    }
    }
    return p->neg ? !r : r;
}

/* One query cursor per thread, reused by every run (ts_query_cursor_exec resets its state): a dense file runs the
 * query once per statement with a hit, tens of thousands of times, and a cursor made and freed for each cost more
 * than the matching. Freed when its thread ends (the key's destructor); the main thread's lasts until exit. */
static pthread_key_t cursor_key;
static pthread_once_t cursor_once = PTHREAD_ONCE_INIT;
static _Thread_local TSQueryCursor *cursor_cached;
static _Thread_local bool cursor_busy;

static void cursor_free(void *qc) { ts_query_cursor_delete(qc); }
static void cursor_key_make(void) { pthread_key_create(&cursor_key, cursor_free); }

static TSQueryCursor *thread_cursor(void) {
    if (!cursor_cached) {
        pthread_once(&cursor_once, cursor_key_make);
        cursor_cached = ts_query_cursor_new();
        pthread_setspecific(cursor_key, cursor_cached);
    }
    return cursor_cached;
}

void an_query_run(const an_query_set *qs, TSNode root, const char *src, an_resolve_fn resolve, void *rctx,
                  an_match_fn on_match, void *mctx) {
    an_query_run_range(qs, root, 0, UINT32_MAX, src, resolve, rctx, on_match, mctx);
}

void an_query_run_range(const an_query_set *qs, TSNode root, uint32_t lo, uint32_t hi, const char *src,
                        an_resolve_fn resolve, void *rctx, an_match_fn on_match, void *mctx) {
    if (!qs || !qs->query) return;
    bool own = cursor_busy; /* a query run from a match callback gets a cursor of its own */
    TSQueryCursor *qc = own ? ts_query_cursor_new() : thread_cursor();
    cursor_busy = true;
    ts_query_cursor_set_byte_range(qc, lo, hi); /* every run sets it: the reused cursor keeps the last range */
    /* bounds the matches in progress at once: without a bound, tree-sitter's bookkeeping is quadratic on deeply
     * nested code (f(f(f(...))) 3000 deep took 27 s); real code stays far below it */
    ts_query_cursor_set_match_limit(qc, AN_QUERY_MATCH_LIMIT);
    ts_query_cursor_exec(qc, qs->query, root);
    TSQueryMatch m;
    ut_buf tmp;
    ut_buf_init(&tmp);
    resolved last = {0};
    ut_buf_init(&last.name);
    while (ts_query_cursor_next_match(qc, &m)) {
        /* each rule pattern of the matched shape, in the rules' order */
        for (uint32_t k = qs->first[m.pattern_index]; k < qs->first[m.pattern_index + 1]; k++) {
            const pattern_info *pi = &qs->patterns.items[k];
            bool ok = true;
            for (size_t i = 0; i < pi->preds.len && ok; i++) ok = eval(&pi->preds.items[i], &m, src, resolve, rctx, &tmp, &last);
            if (!ok) continue;
            for (uint16_t i = 0; i < m.capture_count; i++)
                if (m.captures[i].index == pi->report_cap) {
                    on_match(mctx, pi->rule, m.captures[i].node);
                    break;
                }
        }
    }
    ut_buf_free(&tmp);
    ut_buf_free(&last.name);
    if (own) ts_query_cursor_delete(qc);
    else cursor_busy = false;
}

static bool is_container(const an_query_set *qs, TSSymbol s) {
    for (int i = 0; i < 4; i++)
        if (qs->containers[i] == s) return true;
    return false;
}

/* Matches reported by a cursor at a container node (a block or a definition) narrowed to [lo, hi) are those of
 * cursors at each of its children that meet the range, in the same order: no pattern is rooted at a container, a
 * rooted pattern starts only at a node that meets the range, and a plain root (roots_are_plain) matches by its
 * symbol alone, so the child's parent, field and siblings, which a cursor started at it does not know, decide
 * nothing. Children are found by byte (tree-sitter's hidden repetition nodes make that logarithmic), so a span in
 * a class of 20,000 methods costs that method, not the class. */
void an_query_run_within(const an_query_set *qs, TSNode node, uint32_t lo, uint32_t hi, const char *src,
                         an_resolve_fn resolve, void *rctx, an_match_fn on_match, void *mctx) {
    if (!qs || !qs->query) return;
    if (!qs->narrowable || !is_container(qs, ts_node_symbol(node))) {
        an_query_run_range(qs, node, lo, hi, src, resolve, rctx, on_match, mctx);
        return;
    }
    TSTreeCursor cur = ts_tree_cursor_new(node);
    if (ts_tree_cursor_goto_first_child_for_byte(&cur, lo) >= 0) {
        do {
            TSNode ch = ts_tree_cursor_current_node(&cur);
            if (ts_node_start_byte(ch) >= hi) break;
            if (ts_node_end_byte(ch) > lo) an_query_run_within(qs, ch, lo, hi, src, resolve, rctx, on_match, mctx);
        } while (ts_tree_cursor_goto_next_sibling(&cur));
    }
    ts_tree_cursor_delete(&cur);
}
