/* an_suppress: suppression comments, for every front end. xpuify's own directives:
 *   `# xpuify: ignore[CODE|name, ...]`  on the line it hides, or alone on the line above a logical line (statement);
 *   `# xpuify: ignore-file[...]`        the whole file;
 *   `# xpuify: disable[...]` ... `# xpuify: enable[...]`   a block (to the end of the file without an enable).
 * (`//` or `/ *` instead of `#` in C, C++ and CUDA.) Empty brackets or none mean every rule. Text after the closing
 * bracket, up to the next `#`, is the reason. In C, C++ and CUDA comments clang-tidy's spellings work too:
 *   `NOLINT(xpuify-XPU301)`, `NOLINTNEXTLINE(xpuify-*)`, `NOLINTBEGIN(xpuify-cuda-malloc)` ... `NOLINTEND(...)`;
 * entries name checks as `xpuify-<code or name>` (globs allowed); other tools' checks are left alone, and a bare
 * `NOLINT` hides everything. Each directive remembers what it hid, so unused ones can be reported (rule
 * `unused-suppression`) with a safe fix that removes them.
 *
 * A front end feeds every comment that may hold a directive (an_suppress_add_comment with the comment's opening
 * prefix), calls an_suppress_finish once, then asks an_suppress_hides for each finding. */
#ifndef AN_SUPPRESS_H
#define AN_SUPPRESS_H
#include "analyzer/core/an_diag.h"

struct an_catalog;

typedef enum { AN_SUP_LINE, AN_SUP_FILE, AN_SUP_DISABLE, AN_SUP_ENABLE } an_sup_kind;
typedef enum { AN_SUP_XPUIFY, AN_SUP_NOLINT } an_sup_syntax;

typedef struct {
    char *text;          /* the selector as written, without a NOLINT entry's `xpuify-` prefix */
    uint32_t start, end; /* where it is written (the whole entry, prefix included) */
    bool foreign;        /* a NOLINT entry naming another tool's check: never ours, always kept */
    bool glob;           /* NOLINT: matched with fnmatch against xpuify-<code> and xpuify-<name> */
    bool used;
} an_sup_code;

typedef struct {
    an_sup_kind kind;
    an_sup_syntax syntax;
    uint32_t start, end;           /* the directive itself, reason included (what removing it deletes) */
    uint32_t comment_start, comment_end;
    uint32_t list_start, list_end; /* inside the brackets / parentheses (start == end: none written) */
    bool has_list;
    bool own_line;                 /* nothing but blanks before the comment on its line */
    uint32_t line;                 /* the comment's line */
    uint32_t first, last;          /* lines covered (FILE: all; DISABLE: to its ENABLE) */
    int pair;                      /* DISABLE: index of its ENABLE, ENABLE: of its DISABLE, or -1 */
    UT_VEC(an_sup_code) codes;     /* none of ours: every rule */
    bool foreign;                  /* never reported unused: NOLINT naming only other tools' checks, bare NOLINT */
    bool next_line;                /* own-line `ignore` (next logical line) or NOLINTNEXTLINE (next line) */
    char marker;                   /* '#' or '/': how comments start in the file */
    bool used;
} an_directive;

typedef struct {
    UT_VEC(an_directive) items;
} an_suppressions;

/* Line facts a front end knows from its syntax tree; all arrays are indexed by 1-based line, nlines + 2 long. */
typedef struct {
    uint32_t nlines;
    uint32_t *logical_end; /* last line of the logical line (statement, or compound statement header) that starts
                              on this line; 0 when none starts there */
    uint32_t *stmt_start;  /* first line of the innermost logical line holding this line (0: none) */
    bool *comment_ok;      /* a trailing comment may be appended to this line (not inside a string, no `\`) */
} an_line_info;

void an_line_info_init(an_line_info *li, uint32_t nlines);
void an_line_info_free(an_line_info *li);

/* Parses one comment [start, end) whose opening is prefix: "#" (Python), "//" or "/ *" (C family; NOLINT too).
 * Comments without a directive are ignored. */
void an_suppress_add_comment(an_suppressions *s, const an_source *src, uint32_t start, uint32_t end, const char *prefix);
/* Resolves own-line `ignore` to the next logical line (li may be NULL: the next line holding code), NOLINTNEXTLINE
 * to the next line, and pairs blocks. */
void an_suppress_finish(an_suppressions *s, const an_source *src, const an_line_info *li);
/* true when a directive hides d (which must be located); marks the directives and codes that did. */
bool an_suppress_hides(an_suppressions *s, const an_diag *d);
/* Appends a finding of `rule` (the unused-suppression rule) for every directive, or selector in one, that hid
 * nothing, with a safe fix removing it. enabled (by rule index, NULL = all) says which rules ran: a selector is
 * only unused when every rule it names ran. lang: the file's language, for blanket directives. */
void an_suppress_report_unused(an_suppressions *s, const an_source *src, const struct an_catalog *cat,
                               const struct an_rule *rule, const bool *enabled, int lang, an_diag_list *out);
/* true when the file's `ignore-file[...]` names the unused-suppression rule (its findings are hidden) */
bool an_suppress_hides_unused(const an_suppressions *s, const struct an_rule *rule);
void an_suppress_free(an_suppressions *s);
/* true when a selector (code, code prefix, name, ALL) names the rule */
bool an_rule_matches_selector(const struct an_rule *r, const char *sel);
/* Cheap text test: may the file hold a suppression directive at all? */
bool an_suppress_may_have_directives(const char *text, size_t len);
#endif
