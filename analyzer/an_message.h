/* an_message: expands a rule's message template ({name}, {replacement}, {min_torch}, {text}, {note}). */
#ifndef AN_MESSAGE_H
#define AN_MESSAGE_H
#include "an_rule.h"

typedef struct {
    const char *name, *replacement, *min_torch, *text, *note;
} an_message_vars;

char *an_message_format(const char *tmpl, const an_message_vars *v);
#endif
