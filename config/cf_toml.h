/* cf_toml: the `[tool.xpuify]` table of a pyproject.toml, read as the same keys as .xpuify.yml. No TOML library is
 * among the dependencies (Debian packages only C++ ones), and the table needs only TOML's value subset that
 * configuration uses, so the table is rewritten, line for line, into the YAML that the .xpuify.yml loader reads:
 * errors and `xpuify config` origins keep pyproject.toml's line numbers. */
#ifndef CF_TOML_H
#define CF_TOML_H
#include "util/ut_buf.h"
#include <stdbool.h>
#include <stddef.h>

/* Whether text has a `[tool.xpuify]` table (or a `[tool.xpuify.X]` sub-table). */
bool cf_toml_has_xpuify(const char *text, size_t len);
/* Writes the YAML for the `[tool.xpuify]` table into out (one line per line of text; lines outside the table are
 * empty). Supported: `key = value` with strings ("..." and '...'), numbers, booleans, arrays (also over several
 * lines) and inline tables; sub-tables one level down (`[tool.xpuify.per-file-ignores]`). Otherwise false, with
 * the 1-based line in *line and the reason in *why (static). */
bool cf_toml_xpuify_yaml(const char *text, size_t len, ut_buf *out, int *line, const char **why);
#endif
