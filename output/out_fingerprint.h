/* out_fingerprint: a finding's identity across edits: rule + path (relative to the project root: the git work tree
 * holding the working directory, else the working directory) + its source line with blanks normalized + which
 * occurrence of that (rule, path, line text) it is. Unrelated edits and line shifts keep it; editing the line
 * itself changes it. Baselines, SARIF partialFingerprints and GitLab's fingerprint all use it. */
#ifndef OUT_FINGERPRINT_H
#define OUT_FINGERPRINT_H
#include "analyzer/core/an_engine.h"

/* The project root (absolute, no trailing slash), computed once. */
const char *out_project_root(void);
/* path relative to the project root (heap); paths outside it stay as given, without a leading "./" */
char *out_project_path(const char *path);
/* The line's text with leading/trailing blanks dropped and inner runs of blanks collapsed to one space (heap). */
char *out_normalized_line(const an_source *src, uint32_t line);
/* One fingerprint (16 hex digits) per finding of res, in order (file by file): a flat heap array of heap strings,
 * freed by out_fingerprints_free. */
char **out_fingerprints(const an_results *res);
void out_fingerprints_free(char **fps, const an_results *res);
#endif
