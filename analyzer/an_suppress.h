/* an_suppress: suppression comments: `# xpuify: ignore[CODE|name, ...]` (on the line, or alone on the line
 * above), `# xpuify: ignore-file[...]`, and `# xpuify: disable[...]` ... `# xpuify: enable[...]` blocks.
 * Empty brackets or none mean every rule. Each directive remembers whether it hid anything. */
#ifndef AN_SUPPRESS_H
#define AN_SUPPRESS_H
#include "an_diag.h"

typedef enum { AN_SUP_LINE, AN_SUP_FILE, AN_SUP_DISABLE, AN_SUP_ENABLE } an_sup_kind;

typedef struct {
    an_sup_kind kind;
    uint32_t start, end;   /* the comment */
    uint32_t line;         /* the line it applies to (LINE) or starts at (DISABLE/ENABLE) */
    uint32_t until;        /* DISABLE: last line covered */
    UT_VEC(char *) codes;  /* empty: all rules */
    UT_VEC(bool) code_used;
    bool used;
} an_directive;

typedef struct {
    UT_VEC(an_directive) items;
} an_suppressions;

/* Parses one comment; ignores comments that are not xpuify directives. */
void an_suppress_add_comment(an_suppressions *s, const an_source *src, uint32_t start, uint32_t end, const char *prefix);
/* Resolves own-line comments to the next code line and blocks to their end. */
void an_suppress_finish(an_suppressions *s, const an_source *src);
bool an_suppress_hides(an_suppressions *s, const an_diag *d);
void an_suppress_free(an_suppressions *s);
/* true when a selector (code, code prefix, name) names the rule */
bool an_rule_matches_selector(const struct an_rule *r, const char *sel);
#endif
