/* rw_write: atomic file replacement: a temporary file in the same directory, fsync, the original mode kept,
 * rename over the original. A failure at any step leaves the original untouched. */
#ifndef RW_WRITE_H
#define RW_WRITE_H
#include <stddef.h>

/* Returns 0, or -1 with *why set to a heap message. Read-only files (no owner write bit) are refused. */
int rw_write_atomic(const char *path, const char *data, size_t len, char **why);
/* rw_write_atomic for a file read as was[0, was_len): compared again right before the rename, a file that changed
 * since (size or bytes) is left with its new content: RW_WRITE_CHANGED, or RW_WRITE_ALREADY when it now holds data
 * (another run wrote the same). *why is set in both cases. */
#define RW_WRITE_CHANGED (-2)
#define RW_WRITE_ALREADY (-3)
int rw_replace_atomic(const char *path, const char *data, size_t len, const char *was, size_t was_len, char **why);
/* Creates a new file (fails if it exists), atomically. */
int rw_create_atomic(const char *path, const char *data, size_t len, char **why);
#endif
