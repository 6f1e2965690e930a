/* an_incr: the analysis of one editor buffer kept across edits. Edits are recorded as they arrive (the syntax
 * tree is edited, the findings shifted); the next analysis re-parses incrementally and re-analyzes only the
 * top-level statements (or class members) the edits touched, unless an edit reaches what findings elsewhere
 * depend on (imports, suppression comments, the device definition, syntax errors outside the region, the file's
 * prologue), in which case it analyzes the whole buffer. Either way the findings equal a full analysis of the
 * same tree, and a fresh analysis of the text whenever the text parses. With syntax errors, tree-sitter's error
 * recovery after an incremental re-parse may differ from a fresh parse's; such a result is provisional, and
 * an_incr_settle (for when the user pauses) replaces it with the fresh analysis `xpuify check` gives. */
#ifndef AN_INCR_H
#define AN_INCR_H
#include "analyzer/core/an_diag.h"
#include "analyzer/core/an_rule.h"
#include <tree_sitter/api.h>

typedef struct an_incr an_incr;

/* FULL: the whole buffer; REGION: the statements edits touched; UNCHANGED: only edits that cannot change a
 * finding (whitespace on blank lines and line ends), so no re-parse; SKIPPED: no rule can match the text. */
typedef enum { AN_INCR_NONE = 0, AN_INCR_FULL, AN_INCR_REGION, AN_INCR_UNCHANGED, AN_INCR_SKIPPED } an_incr_mode;

typedef struct {
    an_incr_mode mode;  /* how the last analysis ran */
    uint32_t lo, hi;    /* AN_INCR_REGION: the byte range re-analyzed */
    const char *why;    /* AN_INCR_FULL: why not a region (static text) */
} an_incr_stats;

an_incr *an_incr_new(void);
void an_incr_free(an_incr *inc);
/* Forgets everything: the next analysis is a full one. */
void an_incr_reset(an_incr *inc);
/* The text changed: bytes [start, old_end) of old_text (old_len bytes) were replaced by ins (ins_len bytes). */
void an_incr_edit(an_incr *inc, const char *old_text, uint32_t old_len, uint32_t start, uint32_t old_end,
                  const char *ins, uint32_t ins_len);
/* Analyzes src (the text after every recorded edit). enabled: by rule index (NULL: all); fix: which fixes to
 * compute. The findings stay owned by inc: see an_incr_diags. */
void an_incr_analyze(an_incr *inc, const an_catalog *cat, an_lang lang, const an_source *src, const bool *enabled,
                     const an_fix_options *fix);
/* Whether the last result is provisional (see above), and the fresh analysis that settles it. */
bool an_incr_provisional(const an_incr *inc);
void an_incr_settle(an_incr *inc, const an_catalog *cat, an_lang lang, const an_source *src, const bool *enabled,
                    const an_fix_options *fix);
/* The tree the last analysis used (for tests), NULL when there is none or it carries unparsed edits. */
const TSTree *an_incr_tree(const an_incr *inc);
/* The findings of the last analysis, sorted, with line/column filled in for the text it saw. */
const an_diag_list *an_incr_diags(const an_incr *inc);
const an_incr_stats *an_incr_last(const an_incr *inc);
/* What the byte at an offset of the last analyzed text belongs to (for editors placing comments). */
typedef enum { AN_AT_CODE = 0, AN_AT_STRING, AN_AT_COMMENT } an_text_kind;
an_text_kind an_incr_kind_at(const an_incr *inc, uint32_t byte);
#endif
