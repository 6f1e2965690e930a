/* hv_copy: copying a project tree (directories, regular files with their modes and times, symbolic links as
 * links) and removing a tree. The copy never writes into the source. */
#ifndef HV_COPY_H
#define HV_COPY_H
#include "util/ut_buf.h"
#include <stdbool.h>

/* Copies the tree at src to dst (which must not exist). Special files (sockets, fifos, devices) are skipped
 * and named in *warnings; skip_dir (may be NULL) is a directory not to descend into (the temporary directory,
 * when it lies inside the project). false: a hard error, described in *err. */
bool hv_copy_tree(const char *src, const char *dst, const char *skip_dir, ut_buf *warnings, ut_buf *err);
/* Removes a tree (without following links), making read-only directories writable first. */
bool hv_remove_tree(const char *path);
/* Creates the directories of path, like mkdir -p. */
bool hv_mkdirs(const char *path);
#endif
