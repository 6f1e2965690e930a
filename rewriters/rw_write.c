/* rw_write: atomic writes. XPUIFY_FAULT_WRITE=enospc (tests only) makes the write fail half-way, as a full disk
 * would, to prove the original survives; XPUIFY_FAULT_WRITE=slow makes each write take long enough to be
 * interrupted. Termination signals (Ctrl-C, kill) wait while a temporary file exists,
 * so an interrupted `fix` leaves each file either original or fully fixed, and no temporary file behind. */
#include "rewriters/rw_write.h"
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char *msg(const char *what, int err) {
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_printf(&b, "%s: %s", what, strerror(err));
    return ut_buf_take(&b);
}

typedef struct {
    const char *text; /* what the file held when it was read; NULL: no check */
    size_t len;
} expected;

static int write_tmp_and_rename_now(const char *path, const char *data, size_t len, mode_t mode, bool exclusive,
                                    const expected *ex, char **why);

/* Blocks the signals that end a process by default while the temporary file exists; one that arrives meanwhile
 * is delivered (with its default action) once the file has been renamed or removed. */
static int write_tmp_and_rename(const char *path, const char *data, size_t len, mode_t mode, bool exclusive,
                                const expected *ex, char **why) {
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGQUIT);
    sigaddset(&block, SIGPIPE);
    bool masked = pthread_sigmask(SIG_BLOCK, &block, &old) == 0;
    int r = write_tmp_and_rename_now(path, data, len, mode, exclusive, ex, why);
    if (masked) pthread_sigmask(SIG_SETMASK, &old, NULL);
    return r;
}

/* What path holds now against what it held when read: RW_WRITE_CHANGED when it differs (size or bytes), 0 when
 * the same, and RW_WRITE_CHANGED with *already set when it holds data (another run wrote the same fix). */
static int compare_now(const char *path, const expected *ex, const char *data, size_t len, bool *already) {
    *already = false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return RW_WRITE_CHANGED;
    struct stat st;
    int r = RW_WRITE_CHANGED;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ((size_t)st.st_size == ex->len || (size_t)st.st_size == len)) {
        size_t n = (size_t)st.st_size;
        char *now = ut_malloc(n + 1);
        size_t got = 0;
        while (got < n) {
            ssize_t k = read(fd, now + got, n - got);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) break;
            got += (size_t)k;
        }
        if (got == n && n == ex->len && !memcmp(now, ex->text, n)) r = 0;
        else if (got == n && n == len && !memcmp(now, data, n)) *already = true;
        ut_free(now);
    }
    close(fd);
    return r;
}

static int write_tmp_and_rename_now(const char *path, const char *data, size_t len, mode_t mode, bool exclusive,
                                    const expected *ex, char **why) {
    char *dcopy = ut_strdup(path), *bcopy = ut_strdup(path);
    ut_buf tmp;
    ut_buf_init(&tmp);
    ut_buf_printf(&tmp, "%s/.%s.xpuify-XXXXXX", dirname(dcopy), basename(bcopy));
    ut_free(dcopy), ut_free(bcopy);
    int fd = mkstemp(tmp.data);
    if (fd < 0) {
        *why = msg("cannot create a temporary file beside it", errno);
        ut_buf_free(&tmp);
        return -1;
    }
    const char *fault = getenv("XPUIFY_FAULT_WRITE");
    size_t limit = fault && !strcmp(fault, "enospc") ? len / 2 : len;
    /* slow: 1 KiB at a time, 2 ms apart, so that a test's signal lands while the temporary file exists */
    bool slow = fault && !strcmp(fault, "slow");
    size_t off = 0;
    int err = 0;
    while (off < len) {
        if (off >= limit) { err = ENOSPC; break; }
        size_t want = (limit < len ? limit : len) - off;
        if (slow && want > 1024) want = 1024;
        ssize_t w = write(fd, data + off, want);
        if (w < 0) {
            if (errno == EINTR) continue;
            err = errno;
            break;
        }
        off += (size_t)w;
        if (slow) nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
    if (!err && fchmod(fd, mode & 07777) != 0) err = errno;
    if (!err && fsync(fd) != 0) err = errno;
    if (close(fd) != 0 && !err) err = errno;
    if (!err && ex) {
        /* right before the rename: a file changed since it was read keeps its new content (the fix was computed
         * from the old one); the window left is the rename's own */
        bool already;
        if (compare_now(path, ex, data, len, &already) != 0) {
            unlink(tmp.data);
            ut_buf_free(&tmp);
            *why = ut_strdup(already ? "already holds this fix (written by another run)"
                                     : "changed since it was read; not written (run fix again)");
            return already ? RW_WRITE_ALREADY : RW_WRITE_CHANGED;
        }
    }
    if (!err) {
        if (exclusive) {
            /* link() fails if the target exists: no clobbering of a file created meanwhile */
            if (link(tmp.data, path) != 0) err = errno;
            unlink(tmp.data);
        } else if (rename(tmp.data, path) != 0) {
            err = errno;
        }
    }
    if (err) {
        unlink(tmp.data);
        *why = msg("write failed, original left untouched", err);
        ut_buf_free(&tmp);
        return -1;
    }
    ut_buf_free(&tmp);
    return 0;
}

int rw_write_atomic(const char *path, const char *data, size_t len, char **why) {
    return rw_replace_atomic(path, data, len, NULL, 0, why);
}

int rw_replace_atomic(const char *path, const char *data, size_t len, const char *was, size_t was_len, char **why) {
    *why = NULL;
    expected ex = {was, was_len};
    struct stat st;
    if (stat(path, &st) != 0) { *why = msg("cannot stat", errno); return -1; }
    if (!(st.st_mode & S_IWUSR)) {
        *why = ut_strdup("file is read-only; left untouched");
        return -1;
    }
    return write_tmp_and_rename(path, data, len, st.st_mode, false, was ? &ex : NULL, why);
}

int rw_create_atomic(const char *path, const char *data, size_t len, char **why) {
    *why = NULL;
    mode_t um = umask(0);
    umask(um);
    return write_tmp_and_rename(path, data, len, 0666 & ~um, true, NULL, why);
}
