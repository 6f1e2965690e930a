/* an_cachekey: finding, checking and creating the per-machine cache key. The key file is opened without following
 * links and checked after opening (fstat): a regular file of this user, mode 0600 or stricter, exactly 32 bytes. A
 * new key is written to a temporary file and linked into place, so two first runs at once agree on one key. */
#include "analyzer/core/an_cachekey.h"
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

char *an_cachekey_path(void) {
    const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    ut_buf b;
    ut_buf_init(&b);
    /* the XDG specification: a relative $XDG_CACHE_HOME is invalid and ignored */
    if (x && x[0] == '/') ut_buf_printf(&b, "%s/xpuify/key", x);
    else if (home && home[0] == '/') ut_buf_printf(&b, "%s/.cache/xpuify/key", home);
    else { ut_buf_free(&b); return NULL; }
    return ut_buf_take(&b);
}

static char *fail(const char *path, const char *what, int err) {
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_printf(&b, "the cache key %s %s", path, what);
    if (err) ut_buf_printf(&b, ": %s", strerror(err));
    return ut_buf_take(&b);
}

/* mkdir -p of the key's directories, private to this user (0700) when created */
static int make_dirs(char *path) {
    for (char *s = path + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        int r = mkdir(path, 0700);
        *s = '/';
        if (r != 0 && errno != EEXIST) return -1;
    }
    return 0;
}

static bool read_key(const char *path, uint8_t key[AN_CACHEKEY_LEN], char **why) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT) *why = fail(path, errno == ELOOP ? "is a symbolic link" : "cannot be opened",
                                         errno == ELOOP ? 0 : errno);
        return false;
    }
    struct stat st;
    const char *bad = NULL;
    if (fstat(fd, &st) != 0) bad = "cannot be examined";
    else if (!S_ISREG(st.st_mode)) bad = "is not a regular file";
    else if (st.st_uid != geteuid()) bad = "belongs to another user";
    else if (st.st_mode & 077) bad = "is readable or writable by others (chmod 600 it, or delete it for a new one)";
    else if (st.st_size != AN_CACHEKEY_LEN) bad = "is of the wrong length (delete it for a new one)";
    if (!bad) {
        size_t got = 0;
        while (got < AN_CACHEKEY_LEN) {
            ssize_t r = read(fd, key + got, AN_CACHEKEY_LEN - got);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += (size_t)r;
        }
        if (got != AN_CACHEKEY_LEN) bad = "cannot be read";
    }
    close(fd);
    if (bad) *why = fail(path, bad, 0);
    return !bad;
}

static bool random_bytes(uint8_t *p, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(p + got, n - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return false;
        got += (size_t)r;
    }
    return true;
}

bool an_cachekey_load(uint8_t key[AN_CACHEKEY_LEN], char **why) {
    *why = NULL;
    char *path = an_cachekey_path();
    if (!path) {
        *why = ut_strdup("there is no place for the cache key (neither $XDG_CACHE_HOME nor $HOME is set)");
        return false;
    }
    bool ok = read_key(path, key, why);
    if (ok || *why) goto out;
    /* none yet: write a new one beside it and link it into place (a concurrent first run may win: read its key) */
    if (make_dirs(path) != 0) { *why = fail(path, "cannot be created", errno); goto out; }
    uint8_t fresh[AN_CACHEKEY_LEN];
    if (!random_bytes(fresh, sizeof fresh)) { *why = fail(path, "cannot be made (no random bytes)", errno); goto out; }
    ut_buf tmp;
    ut_buf_init(&tmp);
    ut_buf_printf(&tmp, "%s.%ld.tmp", path, (long)getpid());
    unlink(tmp.data);
    int fd = open(tmp.data, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int err = fd < 0 ? errno : 0;
    if (fd >= 0) {
        if (write(fd, fresh, sizeof fresh) != (ssize_t)sizeof fresh) err = errno ? errno : EIO;
        if (fsync(fd) != 0 && !err) err = errno;
        if (close(fd) != 0 && !err) err = errno;
        if (!err && link(tmp.data, path) != 0 && errno != EEXIST) err = errno;
        unlink(tmp.data);
    }
    ut_buf_free(&tmp);
    memset(fresh, 0, sizeof fresh);
    if (err) { *why = fail(path, "cannot be created", err); goto out; }
    ok = read_key(path, key, why);
    if (!ok && !*why) *why = fail(path, "vanished after it was created", 0);
out:
    ut_free(path);
    return ok;
}
