/* rw_diff: a unified diff (3 lines of context) between two versions of a file, as `git diff` prints it. */
#ifndef RW_DIFF_H
#define RW_DIFF_H
#include "util/ut_buf.h"

void rw_diff_unified(const char *path, const char *a, size_t alen, const char *b, size_t blen, ut_buf *out);
/* A file that does not exist yet. */
void rw_diff_new_file(const char *path, const char *text, size_t len, ut_buf *out);
#endif
