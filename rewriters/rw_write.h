/* rw_write: atomic file replacement: a temporary file in the same directory, fsync, the original mode kept,
 * rename over the original. A failure at any step leaves the original untouched. */
#ifndef RW_WRITE_H
#define RW_WRITE_H
#include <stddef.h>

/* Returns 0, or -1 with *why set to a heap message. Read-only files (no owner write bit) are refused. */
int rw_write_atomic(const char *path, const char *data, size_t len, char **why);
/* Creates a new file (fails if it exists), atomically. */
int rw_create_atomic(const char *path, const char *data, size_t len, char **why);
#endif
