/* ut_safedir: opening (and creating) a directory xpuify writes into without following symbolic links, so that a
 * link committed to a repository (`.xpuify_cache -> ..`) can never redirect a write outside the place named. */
#ifndef UT_SAFEDIR_H
#define UT_SAFEDIR_H
#include <stdbool.h>
#include <sys/types.h>

/* A descriptor of the directory path (O_DIRECTORY), or -1 with errno and *refused (static text, NULL when errno
 * alone says why) and *bad (the length of the prefix of path that is at fault: the link or the non-directory). Each component of a relative path is opened from the current directory with O_NOFOLLOW, so a
 * link anywhere in it is refused (ELOOP); an absolute path's parent is the caller's choice and resolved as usual,
 * its last component is not followed. create: missing components are made with mode. */
int ut_dir_open_nofollow(const char *path, bool create, mode_t mode, const char **refused, size_t *bad);
#endif
