/* rw_suppress: `--add-ignore[=REASON]`: writes an `xpuify: ignore[CODES]` comment for every finding, keeping the
 * file's formatting: appended to the finding's line (merged into an `ignore` already there), or, where a comment
 * cannot end that line (inside a multi-line string, after a `\` continuation), on its own line above the
 * statement. The result is re-analyzed: every finding it was meant to hide must be gone and the file must still
 * parse, or the file is left alone. */
#ifndef RW_SUPPRESS_H
#define RW_SUPPRESS_H
#include "analyzer/core/an_engine.h"

typedef struct {
    char *text;    /* new text, NULL when nothing changed or on error */
    size_t len;
    size_t added;  /* findings newly suppressed */
    char *error;   /* why the file was left alone (heap), or NULL */
} rw_ignore_result;

/* diags: the findings to hide (findings of built-in rules such as syntax errors are skipped). enabled: the rules
 * that ran (for the re-analysis). reason: text written after the directive, or NULL. */
void rw_add_ignores(const an_catalog *cat, an_lang lang, const an_source *src, const an_diag_list *diags,
                    const bool *enabled, const char *reason, rw_ignore_result *out);
void rw_ignore_result_free(rw_ignore_result *r);
#endif
