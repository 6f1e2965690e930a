/* rw_apply: picks the fixes that can be applied together in one pass (sorted by position; a fix whose edits
 * overlap an accepted one waits for the next pass; identical edits, such as the same import, are shared) and
 * applies them to the text. */
#ifndef RW_APPLY_H
#define RW_APPLY_H
#include "analyzer/core/an_diag.h"

typedef struct {
    char *text;
    size_t len;
    size_t applied; /* fixes applied */
    size_t waiting; /* fixes left for a later pass because they overlapped */
} rw_pass;

/* unsafe: also apply fixes marked unsafe. applied_rules (may be NULL) collects each applied fix's rule. */
void rw_apply_pass(const char *text, size_t len, an_diag_list *diags, bool unsafe, rw_pass *out,
                   void (*on_applied)(void *ctx, const an_diag *d), void *ctx);
#endif
