/* an_target: the vocabulary of fix targets that the analyzer and the rewriters share: torch version numbers, and
 * the embedded templates (rewriters/templates/) a fix may quote, such as the extension-build function. The
 * rewriters decide where templates are written; the analyzer only reads their text. */
#ifndef AN_TARGET_H
#define AN_TARGET_H
#include <stdbool.h>
#include <stddef.h>

/* Parses "2.6" / "2.6.1" / "2" into major and minor. */
bool an_parse_version(const char *s, int *major, int *minor);
/* An embedded template by file name ("xpuify_gpu.h"), or NULL; *len (when given) gets its length. */
const char *an_template_text(const char *name, size_t *len);
#endif
