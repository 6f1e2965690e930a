/* an_message: expands a rule's message template ({name}, {replacement}, {min_torch}, {text}, {note}; C tables also
 * {kind}, {section}, {library}, {sycl}, {level_zero}, {oneccl}, {mapping}). */
#ifndef AN_MESSAGE_H
#define AN_MESSAGE_H
#include "analyzer/core/an_rule.h"

typedef struct {
    const char *name, *replacement, *min_torch, *text, *note;
} an_message_vars;

/* The variables of C table rows. */
typedef struct {
    const char *kind, *section, *library, *sycl, *level_zero, *oneccl;
    const char *mapping; /* "; portable: `x`; SYCL: `y`; ..." */
    char *owned;         /* heap string behind mapping (an_message_cvars_free) */
} an_message_cvars;

char *an_message_format(const char *tmpl, const an_message_vars *v);
char *an_message_format_c(const char *tmpl, const an_message_vars *v, const an_message_cvars *cv);
/* The variables of a C table row, {mapping} built from its equivalents; a row without any takes those of `via`
 * (its enum's row), when given. */
void an_message_cvars_of(const an_entry *e, const an_entry *via, const char *name, an_message_vars *v,
                         an_message_cvars *cv);
void an_message_cvars_free(an_message_cvars *cv);
#endif
