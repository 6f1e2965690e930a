/* an_rule: the rule catalog in memory (loaded from the rule YAML files): rules, their qualified-name tables, compiled
 * tree-sitter queries with their predicates, and the prefilter built from every rule's triggers. */
#ifndef AN_RULE_H
#define AN_RULE_H
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include "analyzer/core/an_diag.h"
#include <stdbool.h>

typedef enum { AN_LANG_PYTHON = 0, AN_LANG_C, AN_LANG_TEXT, AN_LANG__COUNT } an_lang;

struct an_rule;

/* What a C/C++/CUDA API table row names (HIPIFY's "kind"); NONE for Python rows. */
typedef enum {
    AN_KIND_NONE = 0,
    AN_KIND_FUNCTION,   /* a function (or function-like macro) called by name */
    AN_KIND_TYPE,       /* a typedef, struct, class or handle type */
    AN_KIND_ENUM,       /* an enum type */
    AN_KIND_ENUMERATOR, /* an enum constant or an object-like macro constant */
    AN_KIND_MACRO,      /* a macro whose use is the finding (checks, launch helpers) */
    AN_KIND_VARIABLE,   /* a built-in variable (threadIdx) */
    AN_KIND_QUALIFIER,  /* a declaration specifier (__device__, __shared__) */
    AN_KIND_METHOD,     /* a member function, matched after `.` or `->` */
    AN_KIND_HEADER,     /* an #include-d header */
    AN_KIND__COUNT
} an_api_kind;

/* One row of an API table: a qualified name (or a `prefix.*` wildcard) and what replaces it. */
typedef struct an_entry {
    char *name;
    bool wildcard;        /* name ends in ".*" (C tables: "*"): every attribute (identifier) below the prefix */
    char *replacement;    /* device-agnostic form on the `accelerator` target (NULL: none exists) */
    char *compat;         /* form on the `compat` target (helper-module based), NULL: same as replacement */
    char *min_torch;      /* torch version that provides `replacement` */
    char *message;        /* overrides the rule's message template */
    char *note;           /* extra guidance appended to the message */
    an_applicability fix; /* for this entry */
    an_applicability compat_fix; /* on the `compat` target, where `has_compat_fix` (the helper may take what the
                                  * accelerator replacement cannot) */
    bool has_compat_fix;
    bool ignore;          /* matched but never reported: carves an exception out of a wildcard */
    char *off_cpu;        /* accelerator target: the replacement raises without an accelerator, so a statement
                           * is skipped on the CPU and a value becomes this (NULL: no guard; "": statements only) */
    char *fixer;          /* a fix routine (an_pyfix.c) instead of the replacement template, e.g.
                           * "extension-build"; NULL: the template */
    const struct an_rule *rule;
    /* C/C++/CUDA tables (language: c); `replacement` is the portable-layer name there */
    an_api_kind kind;
    char *section;        /* the library's section (memory, stream, ...) */
    char *sycl, *level_zero, *oneccl; /* equivalents on each Intel stack (NULL: none known) */
    char *since, *deprecated, *removed; /* CUDA (library) versions */
    char *returns;        /* functions: the return type for the fast-mode declarations */
    char *decl;           /* verbatim fast-mode declaration, or "-" for none */
    char *parent;         /* enumerators: their enum type; methods: their class */
    char *alias_of;       /* an alias row: the name of the row it repeats */
} an_entry;

/* A fix example: `before` fixed with this rule alone gives `after`. */
typedef struct {
    char *before, *after;
    char *target;      /* "accelerator" (default) or "compat" */
    char *torch;       /* oldest torch the project supports (accelerator), NULL: the newest */
    bool safe_only;    /* apply only safe fixes (`unsafe: false`); default: unsafe ones too */
    int line;          /* where it is written */
} an_fix_example;

typedef struct {
    UT_VEC(char *) flag; /* snippets that must produce this rule */
    UT_VEC(char *) ok;   /* snippets that must not */
    UT_VEC(an_fix_example) fix;
    int line;            /* where `examples` is written */
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
    char *library;        /* C tables: the library the rule's table describes ("CUDA Runtime") */
    char *pattern;        /* PCRE2 pattern over comment-masked text (c and text rules), or NULL */
    bool strings;         /* c pattern rules: string literals are read too (only comments are masked) */
    char *portable_label, *sycl_label; /* how {mapping} names the `portable` and `sycl` columns (default: "portable
                                        * layer", "SYCL"; PyTorch tables: "device-generic", "XPU") */
    UT_VEC(char *) files; /* text rules: globs of the file names the rule reads (none: every text file) */
    char *returns;        /* C function tables: the default return type of their functions */
    UT_VEC(char *) headers; /* C tables: the headers (relative to the toolkit's include/) that declare the API */
    char *query;          /* tree-sitter query source, or NULL */
    char *report;         /* capture to report (default "report") */
    UT_VEC(an_entry *) entries;
    UT_VEC(char *) triggers;   /* PCRE2 patterns; a file without any of them cannot match */
    UT_VEC(char *) locality;   /* where a finding can be: patterns whose matches lie inside it (default: triggers) */
    UT_VEC(char *) needs;      /* a query rule: patterns one of which a file must contain for its query to match
                                * there (default: triggers); files without any skip its patterns (an_qlive.c) */
    UT_VEC(char *) supersedes; /* codes whose findings inside this one's range are dropped */
    UT_VEC(char *) markers;    /* cuda-by-design: comments by which a project marks a line CUDA-specific on purpose */
    an_examples examples;
    char *fixer; /* fix routine for query rules (an_pyfix.c); table rules use their entries' templates */
    bool in_guarded_code; /* still reported inside branches that already handle XPU / torch.accelerator */
    bool cuda_guard_ok;   /* not reported inside `if DEV == "cuda":`-style branches (CUDA-only by design) */
    bool guard_condition; /* not reported as the condition of such a branch when it guards cuda_guard_ok code */
    bool in_try_ok;       /* not reported inside a `try:` body (an optional import, a probe that may fail) */
    bool reads_ok;        /* a setting (a flag): reported where it is set, not where it is only read (an assert, a
                           * comparison, an f-string); assignments to other rules' names are no use of them */
    bool reports_ok;      /* a query: reported where a decision depends on its value, not where the value is only
                           * described (a dictionary or record field, a print or logger argument, a message) */
    bool once_per_group;  /* text rules: one finding per file, or per TOML key or table holding the matches (an extra) */
    bool install_strings_only; /* text rules: in shell scripts, a match in a quoted string counts only on a line that
                                * installs packages (test data, printf and assertion arguments are not requirements) */
    bool shipped;   /* loaded from the rule files compiled into the binary (an_catalog_load_builtin) */
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
/* The same, leaving out the built-in files whose base names are in skip (a rule author's edited copies). */
int an_catalog_load_builtin_except(an_catalog *c, const char *const *skip, size_t nskip, ut_buf *err);
/* Builds the name index, compiles the prefilter and the queries of rules not shipped with xpuify (the shipped
 * rules' queries are compiled on first use: an_catalog_queries). Returns the number of errors. */
int an_catalog_finalize(an_catalog *c, ut_buf *err);
/* Compiles the query sets now if they are not yet: the number of errors (tests check the shipped rules with it). */
int an_catalog_build_queries(an_catalog *c, ut_buf *err);

size_t an_catalog_count(const an_catalog *c);
/* 20 bytes that change whenever any loaded rule file (built-in or --rules) changes */
const uint8_t *an_catalog_fingerprint(const an_catalog *c);
const an_rule *an_catalog_rule(const an_catalog *c, size_t i);
/* By code ("XPU201") or name ("cuda-device-management"). */
const an_rule *an_catalog_find(const an_catalog *c, const char *code_or_name);
/* The code or name closest to a mistyped one (`XPU2O1`, `cuda-sync`), for "did you mean"; NULL when none is. */
const char *an_catalog_suggest(const an_catalog *c, const char *code_or_name);
/* The rule implemented by the built-in matcher `builtin` (e.g. "unused-suppression"), or NULL. */
const an_rule *an_catalog_builtin(const an_catalog *c, const char *builtin);
/* The table entry a qualified name hits: exact names first, then the longest wildcard. */
const an_entry *an_catalog_lookup(const an_catalog *c, const char *qualname, bool exact_only);
/* The C/C++/CUDA table entry for an identifier, a qualified name (`at::cuda::x`) or a header name: exact names
 * first, then the longest `prefix*` wildcard. */
const an_entry *an_catalog_lookup_c(const an_catalog *c, const char *name, size_t len);
/* The compiled PCRE2 pattern of a `pattern` rule (a pcre2_code *, JIT-compiled), or NULL. */
const void *an_catalog_pattern(const an_catalog *c, const an_rule *r);
/* The message (heap) for a pattern rule whose match stopped with PCRE2 error rc (match or depth limit, ...) at
 * byte at: a rule error to report, never "no more matches" (its findings past that point would be lost). */
char *an_rule_match_error(const an_rule *r, int rc, size_t at);
const char *an_kind_name(an_api_kind k);

/* Compiled per-language query and predicate data, used by the front ends (an_query.c). */
struct an_query_set;
const struct an_query_set *an_catalog_queries(const an_catalog *c, an_lang lang);
/* The query set a file of size bytes needs, from its literal scan (an_catalog_prefilter's found; NULL: every rule's
 * set): the patterns of only the query rules whose triggers (or `needs`) the file can match, where such a set is
 * built or worth building (a rule's query matches only in files its triggers let through, so the findings are those
 * of every rule's set, with less to compile and to match; an_qlive.c); NULL where no query rule can match; else
 * an_catalog_queries. */
const struct an_query_set *an_catalog_queries_for(const an_catalog *c, an_lang lang, const uint8_t *found,
                                                  size_t size);
/* How an_catalog_queries_for served its calls so far (check -v): with a narrowed set, with no query at all (no
 * query rule could match), with every rule's set; and how many narrowed sets were compiled. */
void an_catalog_queries_stats(const an_catalog *c, size_t *narrowed, size_t *none, size_t *full, size_t *sets);
/* Region selection (an_pyregion.c): matches of `locality` lie inside the statements that can hold a finding. */
struct pcre2_real_code_8;
size_t an_catalog_locality(const an_catalog *c, an_lang lang, const struct pcre2_real_code_8 *const **res);
/* The first match of the k-th locality pattern in the subject text[0, len) from offset off on, as pcre2_match finds
 * it (its return code: >= 0 a match, [*s, *e); PCRE2_ERROR_NOMATCH none; below that an error such as a match
 * limit). A pattern of literals only is matched without PCRE2 (an_plain; a caseless one only where caseless_safe:
 * an_plain_caseless_safe of the whole text). md: match data of one pair at least. */
struct pcre2_real_match_data_8;
int an_catalog_locality_match(const an_catalog *c, an_lang lang, size_t k, const char *text, size_t len, size_t off,
                              bool caseless_safe, struct pcre2_real_match_data_8 *md, size_t *s, size_t *e);
/* live[k]: the k-th locality pattern can match text (one of its literals occurs in it); others need not run.
 * found: the prefilter's literal scan of the same text (an_catalog_prefilter), or NULL to scan here. */
void an_catalog_locality_live(const an_catalog *c, an_lang lang, const char *text, size_t len, const uint8_t *found,
                              bool *live);
/* Whether an import binding qualified name q[0, n) matters to a rule: some name a rule resolves (a table entry, a
 * #resolves-to? argument) equals q, starts with it (`torch` for `torch.cuda.synchronize`), or q starts with it
 * (`torch.xpu.foo` for `torch.xpu.*`). A name with no dot is also asked for as the first part of a rule's name
 * (`torch`). */
bool an_catalog_resolves_under(const an_catalog *c, an_lang lang, const char *q, size_t n);
/* True when the file may hold a finding of some rule of the language: one pass for the literals of every trigger
 * (an_literal.h), then PCRE2 JIT only for the triggers whose literals occur. */
bool an_catalog_prefilter(const an_catalog *c, an_lang lang, const char *text, size_t len, uint8_t *found);
/* found, when not NULL, receives the literal scan (an_catalog_literal_count entries) for region selection */
/* an_suppress_may_have_directives, read from the prefilter's literal scan when found is not NULL */
bool an_catalog_may_have_directives(const an_catalog *c, an_lang lang, const char *text, size_t len,
                                    const uint8_t *found);
size_t an_catalog_literal_count(const an_catalog *c, an_lang lang);

const char *an_lang_name(an_lang l);
#endif
