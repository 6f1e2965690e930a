/* an_catalog_int: the catalog's private layout, shared by an_catalog.c and an_query.c only. */
#ifndef AN_CATALOG_INT_H
#define AN_CATALOG_INT_H
#define PCRE2_CODE_UNIT_WIDTH 8
#include "analyzer/core/an_literal.h"
#include "analyzer/core/an_rule.h"
#include <pcre2.h>
#include <pthread.h>
#include <stdatomic.h>

struct an_query_set;
typedef UT_VEC(pcre2_code *) an_re_vec;
/* a pattern's literal cover (an_literal.h): the pattern can only match where one of ids was found, and one of
 * each set in also; always: no cover, run it on every file */
typedef struct {
    an_u32_vec ids;
    an_u32_vec also; /* an_lits_cover_all's further sets */
    bool always;
    an_plain plain; /* the pattern when it is one literal (an_plain_find finds its matches), else plain.lit NULL */
} an_cover;
typedef UT_VEC(an_cover) an_cover_vec;
/* The pattern of cover cv can match a text whose literal scan is found (NULL: nothing scanned, it may). */
bool an_cover_may_match(const an_cover *cv, const uint8_t *found);
/* a rule's triggers, each as the covers of its parts (one; a group: several, all of which must match) */
typedef UT_VEC(an_cover_vec) an_trigger_covers;
#define AN_LIVE_SETS 8 /* query sets of some rules only, kept at most (an_qlive.c) */
typedef struct {
    char *name;
    bool full; /* a name a rule resolves, not only a prefix of one */
} an_qname;

struct an_catalog {
    UT_VEC(an_rule *) rules;
    an_entry **exact; /* open-addressing table of exact qualified names */
    size_t exact_cap;
    UT_VEC(an_entry *) wild; /* wildcard prefixes, longest first */
    /* Each trigger (and each locality pattern) is compiled on its own: PCRE2 scans for one literal-led pattern at
     * gigabytes per second, but slows to tens of megabytes per second on an alternation of thirty of them. */
    an_re_vec prefilter[AN_LANG__COUNT];
    an_re_vec locality[AN_LANG__COUNT];
    /* trigger groups: each a list of patterns that must all appear in the file */
    UT_VEC(an_re_vec) anchored[AN_LANG__COUNT];
    /* the literal covers of the patterns above (parallel vectors) and the language's literal scanner: a pattern is
     * run on a file only when the one-pass scan found one of its literals */
    an_lits *lits[AN_LANG__COUNT];
    an_cover_vec prefilter_cov[AN_LANG__COUNT];
    an_cover_vec locality_cov[AN_LANG__COUNT];
    UT_VEC(an_cover_vec) anchored_cov[AN_LANG__COUNT];
    an_cover directives[AN_LANG__COUNT]; /* "xpuify:" and "NOLINT" (suppression comments), in the same scan */
    /* every name a rule resolves and each of its dotted prefixes, sorted; `full` marks the names themselves */
    UT_VEC(an_qname) qnames[AN_LANG__COUNT];
    an_entry **c_exact;      /* the same for the C/C++/CUDA tables (identifiers, `a::b` names, headers) */
    size_t c_exact_cap;
    UT_VEC(an_entry *) c_wild;
    pcre2_code **patterns;   /* by rule index: compiled `pattern` rules */
    bool prefilter_all[AN_LANG__COUNT];  /* some rule cannot be prefiltered */
    bool prefilter_none[AN_LANG__COUNT]; /* no rule at all for the language */
    struct an_query_set *queries[AN_LANG__COUNT];
    /* the query sets are built on first use (an_catalog_queries) when every query rule is a shipped one: compiling
     * them (ts_query_new) is most of loading the catalog, and a run whose files all come from the results cache, or
     * pass no prefilter, never parses Python. A catalog with rules of the user's own queries builds them in
     * finalize, where their errors are reported. */
    atomic_bool queries_ready;
    pthread_mutex_t queries_mu;
    /* which query rules a file can match (an_qlive.c): the literal covers of each Python query rule's triggers,
     * by rule index (empty for other rules; NULL when some query rule is the user's), and query sets of the rules
     * a file can match only, each built on first use from a set of rules (a bit per query rule, in rule order) */
    an_trigger_covers *rule_trig;
    size_t nrule_trig;   /* rules when rule_trig was made */
    uint64_t live_all;   /* the bits of every query rule; 0: no narrowed sets (more than 64 query rules, user rules) */
    pthread_mutex_t live_mu;
    struct {
        uint64_t live;
        struct an_query_set *qs;
    } live_sets[AN_LIVE_SETS];
    size_t nlive_sets;
    size_t live_rules, live_budget; /* rules in the sets compiled so far, and the most there may be */
    atomic_size_t live_narrowed, live_none, live_full; /* runs served by a narrowed set, by none, by the full set */
    uint8_t fingerprint[20]; /* hash of every rule file loaded (origin and text), in order: the cache key's part */
};

void an_rule_free(an_rule *r);
struct an_query_set *an_query_set_build(const an_catalog *c, an_lang lang, ut_buf *err, int *nerr);
/* The same for the query rules whose index take[] marks only (take NULL: every one). */
struct an_query_set *an_query_set_build_some(const an_catalog *c, an_lang lang, const bool *take, ut_buf *err,
                                             int *nerr);
/* Whether every query rule of the language is rooted below statements (an_query_set_statement_level of the set of
 * them all), read from their texts without compiling them. */
bool an_query_rules_statement_level(const an_catalog *c, an_lang lang);
/* an_qlive.c: the rules' trigger covers, made in finalize once the literal scanner has every trigger's literals
 * (an_qlive_build), and freed with what the narrowed sets hold (an_qlive_free) */
void an_qlive_build(an_catalog *c);
void an_qlive_free(an_catalog *c);
void an_query_set_free(struct an_query_set *q);
#endif
