/* cli_diffbase: `--diff-base REV`: the lines added or changed since REV in the git work tree holding the working
 * directory (committed, staged, unstaged and untracked changes alike; renames followed), read with libgit2. */
#ifndef CLI_DIFFBASE_H
#define CLI_DIFFBASE_H
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    char *path; /* relative to the work tree */
    UT_VEC(uint32_t) lines; /* sorted */
} cli_changed_file;

typedef struct {
    char *workdir; /* absolute, with a trailing slash */
    UT_VEC(cli_changed_file) files; /* sorted by path */
} cli_changes;

/* false: not a repository, or REV is not there (a shallow clone is named as the likely cause); message in err. */
bool cli_changes_load(const char *rev, cli_changes *c, ut_buf *err);
/* true when line (1-based) of path (as the walk names it) was added or changed. */
bool cli_changes_has(const cli_changes *c, const char *path, uint32_t line);
void cli_changes_free(cli_changes *c);
#endif
