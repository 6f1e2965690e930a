/* an_python: the Python front end: parses a file with tree-sitter, resolves names, runs the qualified-name tables
 * and the query rules, and yields diagnostics (outside syntax-error regions, deduplicated, superseded ones dropped). */
#ifndef AN_PYTHON_H
#define AN_PYTHON_H
#include "an_diag.h"
#include "an_rule.h"
#include "an_source.h"
#include "an_suppress.h"

typedef struct an_python an_python; /* one per thread: owns a TSParser */

an_python *an_python_new(void);
void an_python_free(an_python *py);
/* enabled: indexed by rule->index, NULL = all. fix: NULL or target NONE = no fixes. regions: parse only the
 * statements that can hold a finding (an_pyregion.c); findings are the same, syntax errors are reported only for
 * what was parsed. */
void an_python_analyze(an_python *py, const an_catalog *cat, const an_source *src, const bool *enabled,
                       const an_fix_options *fix, bool regions, an_diag_list *out);
/* Line facts (logical lines, where comments may go) and, when sup is not NULL, the suppression directives. */
bool an_python_line_info(an_python *py, const an_source *src, an_line_info *li, an_suppressions *sup);
/* true when the source parses without ERROR or MISSING nodes */
bool an_python_parses(an_python *py, const an_source *src);
#endif
