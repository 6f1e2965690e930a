/* an_rule: the rule catalog in memory (loaded from the rule YAML files): rules, their qualified-name tables, compiled
 * tree-sitter queries with their predicates, and the prefilter built from every rule's triggers. */
#ifndef AN_RULE_H
#define AN_RULE_H
#include "../util/ut_buf.h"
#include "../util/ut_mem.h"
#include "an_diag.h"
#include <stdbool.h>

typedef enum { AN_LANG_PYTHON = 0, AN_LANG_C, AN_LANG_TEXT, AN_LANG__COUNT } an_lang;

struct an_rule;

/* One row of an API table: a qualified name (or a `prefix.*` wildcard) and what replaces it. */
typedef struct an_entry {
    char *name;
    bool wildcard;        /* name ends in ".*": every attribute below the prefix */
    char *replacement;    /* device-agnostic form on the `accelerator` target (NULL: none exists) */
    char *compat;         /* form on the `compat` target (helper-module based), NULL: same as replacement */
    char *min_torch;      /* torch version that provides `replacement` */
    char *message;        /* overrides the rule's message template */
    char *note;           /* extra guidance appended to the message */
    an_applicability fix; /* for this entry */
    const struct an_rule *rule;
} an_entry;

typedef struct {
    UT_VEC(char *) flag; /* snippets that must produce this rule */
    UT_VEC(char *) ok;   /* snippets that must not */
} an_examples;

typedef struct an_rule {
    char *code, *name;
    an_lang lang;
    an_severity severity;
    an_applicability fix; /* the default for entries and the rule's own fix */
    char *summary;        /* one line */
    char *message;        /* template: {name} {replacement} {min_torch} {text} {note} */
    char *doc;            /* markdown */
    char *min_torch;
    char *origin;         /* file the rule came from */
    int origin_line;
    char *builtin;        /* name of a matcher implemented in C (e.g. "syntax-error"), or NULL */
    char *query;          /* tree-sitter query source, or NULL */
    char *report;         /* capture to report (default "report") */
    UT_VEC(an_entry *) entries;
    UT_VEC(char *) triggers;   /* PCRE2 patterns; a file without any of them cannot match */
    UT_VEC(char *) supersedes; /* codes whose findings inside this one's range are dropped */
    an_examples examples;
    char *fixer; /* fix routine for query rules (an_pyfix.c); table rules use their entries' templates */
    bool in_guarded_code; /* still reported inside branches that already handle XPU / torch.accelerator */
    bool cuda_guard_ok;   /* not reported inside `if DEV == "cuda":`-style branches (CUDA-only by design) */
    bool guard_condition; /* not reported as the condition of such a branch when it guards cuda_guard_ok code */
    uint32_t index; /* position in the catalog */
} an_rule;

typedef struct an_catalog an_catalog;

an_catalog *an_catalog_new(void);
void an_catalog_free(an_catalog *c);
/* Parses one YAML rule file. Errors are appended to err as "origin:line:col: message" lines;
 * returns the number of errors. */
int an_catalog_load_yaml(an_catalog *c, const char *origin, const char *text, size_t len, ut_buf *err);
/* Loads the rule files compiled into the binary. */
int an_catalog_load_builtin(an_catalog *c, ut_buf *err);
/* Builds the name index, compiles queries and the prefilter. Returns the number of errors. */
int an_catalog_finalize(an_catalog *c, ut_buf *err);

size_t an_catalog_count(const an_catalog *c);
/* 20 bytes that change whenever any loaded rule file (built-in or --rules) changes */
const uint8_t *an_catalog_fingerprint(const an_catalog *c);
const an_rule *an_catalog_rule(const an_catalog *c, size_t i);
/* By code ("XPU201") or name ("cuda-device-management"). */
const an_rule *an_catalog_find(const an_catalog *c, const char *code_or_name);
/* The table entry a qualified name hits: exact names first, then the longest wildcard. */
const an_entry *an_catalog_lookup(const an_catalog *c, const char *qualname, bool exact_only);

/* Compiled per-language query and predicate data, used by the front ends (an_query.c). */
struct an_query_set;
const struct an_query_set *an_catalog_queries(const an_catalog *c, an_lang lang);
/* True when the file may hold a finding of some rule of the language (PCRE2 JIT over the whole text). */
bool an_catalog_prefilter(const an_catalog *c, an_lang lang, const char *text, size_t len);

const char *an_lang_name(an_lang l);
#endif
