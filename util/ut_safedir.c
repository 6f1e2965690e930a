/* ut_safedir: a directory walk by openat(O_NOFOLLOW | O_DIRECTORY) per component, mkdirat for missing ones. */
#include "util/ut_safedir.h"
#include "util/ut_mem.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int step(int at, const char *name, bool create, mode_t mode, const char **refused) {
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
        if (mkdirat(at, name, mode) != 0 && errno != EEXIST) return -1;
        fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
        struct stat st;
        int e = errno;
        if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
            *refused = "is a symbolic link, which xpuify does not follow for what it writes";
            errno = ELOOP;
        } else {
            *refused = "is not a directory";
            errno = e;
        }
    }
    return fd;
}

int ut_dir_open_nofollow(const char *path, bool create, mode_t mode, const char **refused, size_t *bad) {
    *refused = NULL;
    *bad = strlen(path);
    if (!path || !*path) { errno = ENOENT; return -1; }
    char *p = ut_strdup(path);
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') p[--n] = 0;
    int at = AT_FDCWD;
    char *rest = p;
    if (p[0] == '/') {
        /* absolute: the parent as named (created when asked), the last component not followed */
        char *last = strrchr(p, '/');
        if (last == p) at = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        else {
            *last = 0;
            at = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (at < 0 && errno == ENOENT && create) {
                for (char *s = p + 1; *s; s++) {
                    if (*s != '/') continue;
                    *s = 0;
                    if (mkdir(p, mode) != 0 && errno != EEXIST) break;
                    *s = '/';
                }
                if (mkdir(p, mode) == 0 || errno == EEXIST) at = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            }
        }
        if (at < 0) { int e = errno; ut_free(p); errno = e; return -1; }
        rest = last + 1;
        if (!*rest) { ut_free(p); return at; } /* "/" itself */
    }
    int fd = -1;
    for (char *save = NULL, *c = strtok_r(rest, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (!strcmp(c, ".") && fd >= 0) continue;
        fd = step(at, c, create, mode, refused);
        int e = errno;
        if (fd < 0) *bad = (size_t)(c - p) + strlen(c);
        if (at != AT_FDCWD) close(at);
        if (fd < 0) { ut_free(p); errno = e; return -1; }
        at = fd;
    }
    ut_free(p);
    if (fd < 0) { errno = ENOENT; return -1; }
    return fd;
}
