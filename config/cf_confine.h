/* cf_confine: what a configuration file may point at: paths it names (`extend`, `helper-path`, `rule-dirs`) stay
 * inside its project once symlinks are resolved, and the files read as configuration are regular files of bounded
 * size. A committed `.xpuify.yml` is input from whoever wrote the pull request: it must not make xpuify read or
 * write elsewhere (docs/security.md). */
#ifndef CF_CONFINE_H
#define CF_CONFINE_H
#include <stdbool.h>
#include <stddef.h>

/* the most a configuration file (or an `extend` target) may hold */
#define CF_MAX_CONFIG_BYTES (1u << 20)

/* The project a configuration file belongs to (malloc'd, symlinks resolved): the git work tree holding it; else
 * the outermost directory above it holding a configuration too (or its own directory), or cwd (the run's working
 * directory, symlinks resolved) when that lies above. */
char *cf_project_root(const char *config_abs, const char *cwd);
/* abs (absolute, `.` and `..` removed textually) lies inside root (as cf_project_root gives it): its deepest
 * existing ancestor, symlinks resolved, is root or below it. */
bool cf_confined(const char *root, const char *abs);
/* The whole of path when it is a regular file of at most max bytes (malloc'd, NUL-terminated, *len set); NULL with
 * *why (malloc'd) otherwise: not a regular file (a FIFO is never opened for reading), too large, unreadable. */
char *cf_read_regular(const char *path, size_t max, size_t *len, char **why);
#endif
