/* an_python: the Python front end: parses a file with tree-sitter, resolves names, runs the qualified-name tables
 * and the query rules, and yields diagnostics (outside syntax-error regions, deduplicated, superseded ones dropped). */
#ifndef AN_PYTHON_H
#define AN_PYTHON_H
#include "analyzer/core/an_diag.h"
#include "analyzer/python/an_pyregion.h"
#include "analyzer/python/an_resolve.h"
#include "analyzer/core/an_rule.h"
#include "analyzer/core/an_source.h"
#include "analyzer/core/an_suppress.h"
#include <tree_sitter/api.h>

typedef struct an_python an_python; /* one per thread: owns a TSParser */

an_python *an_python_new(void);
void an_python_free(an_python *py);
/* enabled: indexed by rule->index, NULL = all. fix: NULL or target NONE = no fixes. regions: parse only the
 * statements that can hold a finding (an_pyregion.c); findings are the same, syntax errors are reported only for
 * what was parsed. False when nothing was parsed: every locality match lies in a comment or a docstring (regions).
 * found: the prefilter's literal scan of src (an_catalog_prefilter), or NULL. bytes: how many bytes were parsed. */
bool an_python_analyze(an_python *py, const an_catalog *cat, const an_source *src, const bool *enabled,
                       const an_fix_options *fix, bool regions, const uint8_t *found, an_diag_list *out,
                       uint32_t *bytes);
/* Line facts (logical lines, where comments may go) and, when sup is not NULL, the suppression directives. */
bool an_python_line_info(an_python *py, const an_source *src, an_line_info *li, an_suppressions *sup);
/* The tree of src: incrementally from old when given (old edited with ts_tree_edit to match src). NULL when
 * tree-sitter gives up. The caller deletes it. */
TSTree *an_python_parse(an_python *py, const an_source *src, const TSTree *old);
/* One run of the front end as an editor buffer needs it: over a tree the caller parsed, and reporting the
 * findings of a region only (their context, such as imports, suppressions and syntax errors, still comes from
 * the whole file). */
typedef struct {
    const TSTree *tree;   /* from an_python_parse, or NULL: parse src from scratch */
    uint32_t lo, hi;      /* report the findings that start in [lo, hi); the whole file: 0, UINT32_MAX */
    unsigned extra_needs; /* AN_NEED_* of the fixes of the findings outside [lo, hi) */
    unsigned needs;       /* out: the needs the fixes' insertion edits were made for */
    /* The file's import bindings: an earlier run's may be reused while [lo, hi) holds no import statement (only
     * names and qualified names are read from them then). NULL: collected from the tree. */
    const an_pyscope *scope;
    an_pyscope *keep_scope; /* out, when not NULL and scope is NULL: the bindings collected (caller frees) */
    /* Where the locality matches are (an_pyregions.hits), or NULL: the queries then run over the statements that
     * hold one only (the outermost statement inside a top-level definition, or a definition's header). */
    const uint32_t *hits;
    size_t nhits;
    /* The byte ranges tree was parsed from (its included ranges: an_pyregions.spans), or none (nspans 0): the whole
     * file. Whole-file text scans that only decide whether the tree can hold something read these only. */
    const an_span *spans;
    size_t nspans;
    /* The caller analyzes the file again when a finding has a scope (an_python_analyze's regions): a run that
     * finds one then stops before the fixes, which the caller would drop with the findings. */
    bool probe_scoped;
    /* The prefilter's literal scan of src (an_python_analyze's found), or NULL: the query set is then every rule's;
     * with it, that of the rules the file can match (an_catalog_queries_for). */
    const uint8_t *found;
} an_pyrun;
void an_python_run(an_python *py, const an_catalog *cat, const an_source *src, const bool *enabled,
                   const an_fix_options *fix, an_pyrun *run, an_diag_list *out);
/* true when the source parses without ERROR or MISSING nodes */
bool an_python_parses(an_python *py, const an_source *src);
#endif
