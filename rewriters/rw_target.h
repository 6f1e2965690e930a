/* rw_target: the compat device helper's text (the device priority baked in) and its writing. Where it goes and
 * how each file imports it: analyzer/project/an_project; the torch requirement: analyzer/project/an_requirement. */
#ifndef RW_TARGET_H
#define RW_TARGET_H
#include "util/ut_buf.h"
#include <stdbool.h>

/* The helper's text with the device priority baked in. */
char *rw_helper_text(const char *priority);
/* Writes the helper if absent: 1 written, 0 already there, -1 error (*why). */
int rw_helper_write(const char *path, const char *priority, char **why);
#endif
