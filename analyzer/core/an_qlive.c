/* an_qlive: which query rules a file can match, read from the prefilter's literal scan, and query sets of those
 * rules only (an_catalog_queries_for, an_rule.h).
 *
 * Why: tree-sitter 0.20.7's ts_query_new analyzes every pattern against the grammar's parse table (about 70 ms for
 * the shipped Python rules' shapes, most of a small run), and a query cursor starts a state at every node for each
 * pattern that can begin there (27 of the shapes begin at a call), whether or not the file holds a word any of
 * their rules needs. A rule's triggers are regexes every file it can match must contain (the catalog refuses a
 * query rule without them, and the prefilter parses no file without one), so where the literal scan proves that
 * none of a rule's triggers can match, that rule's patterns cannot match either: a set without them finds the same.
 *
 * A rule may say more narrowly what its query needs (`needs`, in place of its triggers here): XPU103 and XPU104
 * report or test a string whose content starts with `cuda`, so a file without `"cuda` or `'cuda` holds none,
 * though its trigger (the word `cuda`) lets it through for other rules. tests/cli/test_qlive.py checks every
 * fixture and example both ways (XPUIFY_NO_QLIVE=1: every rule's set, always).
 *
 * Nor is anything narrowed where some query rule is rooted at a definition, a block or a wildcard: the front end
 * then walks whole definitions rather than the statements that hold a match, for every rule's set, and a smaller
 * set (or none) would make it walk less.
 *
 * Only the shipped rules are narrowed: a user's query rule may match where its triggers do not (nothing checks
 * that), so a catalog with one always gets every rule's set. The narrowed sets are few (AN_LIVE_SETS, the first
 * ones asked for) and small (at most LIVE_MAX rules each, and together at most half of the rules), a file is served
 * by the smallest kept set that holds every rule it can match, and a new one is compiled only while every rule's
 * set is not (a run of a few files, as a pre-commit hook makes, may never need that one) or for a large file, so
 * that compiling them costs less than they save; any other file gets every rule's set. */
#include "analyzer/core/an_catalog_int.h"
#include "util/ut_mem.h"
#include <stdlib.h>
#include <string.h>

#define LIVE_MAX 6               /* rules in a narrowed set at most (each costs a few milliseconds of ts_query_new) */
#define LIVE_LARGE (64u << 10)   /* a file this large gets a set of its own even once every rule's is compiled */

/* one of the rule's triggers can match: every part of it may (a part without a provable cover always may) */
static bool rule_may(const an_trigger_covers *t, const uint8_t *found) {
    for (size_t k = 0; k < t->len; k++) {
        bool all = true;
        for (size_t p = 0; p < t->items[k].len && all; p++) all = an_cover_may_match(&t->items[k].items[p], found);
        if (all) return true;
    }
    return !t->len; /* no trigger known: it may */
}

static bool py_query_rule(const an_rule *r) { return r->lang == AN_LANG_PYTHON && r->query; }

void an_qlive_free(an_catalog *c) {
    if (c->rule_trig) {
        for (size_t i = 0; i < c->nrule_trig; i++) {
            an_trigger_covers *t = &c->rule_trig[i];
            for (size_t k = 0; k < t->len; k++) {
                for (size_t p = 0; p < t->items[k].len; p++) {
                    ut_vec_free(&t->items[k].items[p].ids);
                    ut_vec_free(&t->items[k].items[p].also);
                }
                ut_vec_free(&t->items[k]);
            }
            ut_vec_free(t);
        }
        ut_free(c->rule_trig);
        c->rule_trig = NULL;
        c->nrule_trig = 0;
    }
    for (size_t j = 0; j < c->nlive_sets; j++) an_query_set_free(c->live_sets[j].qs);
    c->nlive_sets = 0;
    c->live_all = 0;
    c->live_rules = c->live_budget = 0;
}

void an_qlive_build(an_catalog *c) {
    an_qlive_free(c);
    size_t nq = 0;
    for (size_t i = 0; i < c->rules.len; i++) {
        const an_rule *r = c->rules.items[i];
        if (!py_query_rule(r)) continue;
        if (!r->shipped) return; /* a user's query rule: every rule's set, always */
        nq++;
    }
    an_lits *lits = c->lits[AN_LANG_PYTHON];
    if (!nq || nq > 64 || !lits || getenv("XPUIFY_NO_QLIVE")) return; /* the equivalence test's switch */
    /* the front end walks and queries only the statements that hold a locality match when the set is rooted below
     * statements (an_python_run), and a narrowed set (or none) would be where every rule's is not: the same
     * statements must be read either way */
    if (!an_query_rules_statement_level(c, AN_LANG_PYTHON)) return;
    c->rule_trig = ut_calloc(c->rules.len, sizeof *c->rule_trig);
    c->nrule_trig = c->rules.len;
    for (size_t i = 0; i < c->rules.len; i++) {
        const an_rule *r = c->rules.items[i];
        if (!py_query_rule(r)) continue;
        /* a rule's `needs` where it has them: narrower than its triggers (XPU103's "cuda" strings, not the word) */
        const char *const *pat = (const char *const *)(r->needs.len ? r->needs.items : r->triggers.items);
        size_t npat = r->needs.len ? r->needs.len : r->triggers.len;
        for (size_t t = 0; t < npat; t++) {
            an_cover_vec parts = {0};
            for (const char *p = pat[t]; p;) { /* a trigger group's parts are separated by \x1f */
                const char *q = strchr(p, '\x1f');
                char *part = ut_strndup(p, q ? (size_t)(q - p) : strlen(p));
                an_cover cv;
                memset(&cv, 0, sizeof cv);
                cv.always = !an_lits_cover_all(lits, part, &cv.ids, &cv.also);
                ut_free(part);
                ut_vec_push(&parts, cv);
                p = q ? q + 1 : NULL;
            }
            ut_vec_push(&c->rule_trig[i], parts);
        }
    }
    c->live_all = nq == 64 ? ~(uint64_t)0 : ((uint64_t)1 << nq) - 1;
    c->live_budget = nq / 2 > LIVE_MAX ? nq / 2 : LIVE_MAX;
}

const struct an_query_set *an_catalog_queries_for(const an_catalog *cc, an_lang lang, const uint8_t *found,
                                                  size_t size) {
    an_catalog *c = (an_catalog *)cc; /* the narrowed sets are built on first use, guarded by live_mu */
    if (lang != AN_LANG_PYTHON || !found) return an_catalog_queries(cc, lang);
    if (!c->live_all || c->nrule_trig != c->rules.len) {
        atomic_fetch_add_explicit(&c->live_full, 1, memory_order_relaxed);
        return an_catalog_queries(cc, lang);
    }
    uint64_t live = 0;
    int n = 0;
    for (size_t i = 0, k = 0; i < c->rules.len; i++) {
        if (!py_query_rule(c->rules.items[i])) continue;
        if (rule_may(&c->rule_trig[i], found)) live |= (uint64_t)1 << k, n++;
        k++;
    }
    if (!live) { /* no query rule can match: nothing to compile or run */
        atomic_fetch_add_explicit(&c->live_none, 1, memory_order_relaxed);
        return NULL;
    }
    if (live == c->live_all || n > LIVE_MAX) {
        atomic_fetch_add_explicit(&c->live_full, 1, memory_order_relaxed);
        return an_catalog_queries(cc, lang);
    }
    const struct an_query_set *qs = NULL;
    bool have = false;
    pthread_mutex_lock(&c->live_mu);
    /* a kept set that holds every rule the file can match serves it (its other rules cannot match there): the
     * one with the fewest rules */
    int best = 65;
    for (size_t j = 0; j < c->nlive_sets; j++) {
        uint64_t l = c->live_sets[j].live;
        int k = __builtin_popcountll(l);
        if ((l & live) == live && c->live_sets[j].qs && k < best) qs = c->live_sets[j].qs, have = true, best = k;
    }
    /* a new set is compiled while every rule's is not (a run of few files may never need it), or for a large file
     * (the matching a set saves grows with the file, its compilation does not) */
    bool worth = !atomic_load_explicit(&c->queries_ready, memory_order_acquire) || size >= LIVE_LARGE;
    /* and the sets compiled hold at most half as many rules as there are, together: a run of a few files with
     * different words never compiles more than about half of what the full set costs */
    worth = worth && c->live_rules + (size_t)n <= c->live_budget;
    if (!have && worth && c->nlive_sets < AN_LIVE_SETS) {
        bool *take = ut_calloc(c->rules.len, sizeof(bool));
        for (size_t i = 0, k = 0; i < c->rules.len; i++) {
            if (!py_query_rule(c->rules.items[i])) continue;
            take[i] = (live >> k) & 1;
            k++;
        }
        ut_buf err;
        ut_buf_init(&err);
        int nerr = 0;
        struct an_query_set *built = an_query_set_build_some(c, lang, take, &err, &nerr);
        if (nerr) { /* cannot be for the shipped rules (tests/unit/test_rules.c): every rule's set then */
            an_query_set_free(built);
            built = NULL;
        }
        ut_buf_free(&err);
        ut_free(take);
        c->live_rules += (size_t)n;
        c->live_sets[c->nlive_sets].live = live;
        c->live_sets[c->nlive_sets].qs = built;
        c->nlive_sets++;
        qs = built, have = built != NULL;
    }
    pthread_mutex_unlock(&c->live_mu);
    atomic_fetch_add_explicit(have && qs ? &c->live_narrowed : &c->live_full, 1, memory_order_relaxed);
    return have && qs ? qs : an_catalog_queries(cc, lang);
}

void an_catalog_queries_stats(const an_catalog *cc, size_t *narrowed, size_t *none, size_t *full, size_t *sets) {
    an_catalog *c = (an_catalog *)cc;
    *narrowed = atomic_load(&c->live_narrowed), *none = atomic_load(&c->live_none), *full = atomic_load(&c->live_full);
    pthread_mutex_lock(&c->live_mu);
    *sets = 0;
    for (size_t j = 0; j < c->nlive_sets; j++) *sets += c->live_sets[j].qs != NULL;
    pthread_mutex_unlock(&c->live_mu);
}
