/* hv_copy: tree copy and removal (see hv_copy.h). */
#include "harness/hv_copy.h"
#include "util/ut_mem.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    dev_t skip_dev;
    ino_t skip_ino;
    bool skip;
    ut_buf *warnings, *err;
} copy_ctx;

static bool copy_file(const char *src, const char *dst, const struct stat *st, copy_ctx *c) {
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        ut_buf_printf(c->err, "%s: cannot read: %s", src, strerror(errno));
        return false;
    }
    int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (out < 0) {
        ut_buf_printf(c->err, "%s: cannot create: %s", dst, strerror(errno));
        close(in);
        return false;
    }
    char buf[65536];
    ssize_t n;
    bool ok = true;
    while ((n = read(in, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR) continue;
            ut_buf_printf(c->err, "%s: read error: %s", src, strerror(errno));
            ok = false;
            break;
        }
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0) {
                if (errno == EINTR) continue;
                ut_buf_printf(c->err, "%s: write error: %s", dst, strerror(errno));
                ok = false;
                break;
            }
            off += w;
        }
        if (!ok) break;
    }
    close(in);
    if (fchmod(out, st->st_mode & 07777) != 0 && ok) {
        ut_buf_printf(c->err, "%s: cannot set its mode: %s", dst, strerror(errno));
        ok = false;
    }
    struct timespec times[2] = {st->st_atim, st->st_mtim};
    futimens(out, times);
    if (close(out) != 0 && ok) {
        ut_buf_printf(c->err, "%s: write error: %s", dst, strerror(errno));
        ok = false;
    }
    return ok;
}

static bool copy_rec(const char *src, const char *dst, copy_ctx *c) {
    struct stat st;
    if (lstat(src, &st) != 0) {
        ut_buf_printf(c->err, "%s: %s", src, strerror(errno));
        return false;
    }
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlink(src, target, sizeof target - 1);
        if (n < 0) {
            ut_buf_printf(c->err, "%s: cannot read the link: %s", src, strerror(errno));
            return false;
        }
        target[n] = 0;
        if (symlink(target, dst) != 0) {
            ut_buf_printf(c->err, "%s: cannot create the link: %s", dst, strerror(errno));
            return false;
        }
        return true;
    }
    if (S_ISREG(st.st_mode)) return copy_file(src, dst, &st, c);
    if (!S_ISDIR(st.st_mode)) {
        ut_buf_printf(c->warnings, "%s: not a regular file, directory or link; not copied\n", src);
        return true;
    }
    if (c->skip && st.st_dev == c->skip_dev && st.st_ino == c->skip_ino) return true;
    if (mkdir(dst, 0700) != 0) {
        ut_buf_printf(c->err, "%s: cannot create: %s", dst, strerror(errno));
        return false;
    }
    DIR *d = opendir(src);
    if (!d) {
        ut_buf_printf(c->err, "%s: cannot read the directory: %s", src, strerror(errno));
        return false;
    }
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t ls = strlen(src) + strlen(e->d_name) + 2, ld = strlen(dst) + strlen(e->d_name) + 2;
        char *s = ut_malloc(ls), *t = ut_malloc(ld);
        snprintf(s, ls, "%s/%s", src, e->d_name);
        snprintf(t, ld, "%s/%s", dst, e->d_name);
        ok = copy_rec(s, t, c);
        ut_free(s);
        ut_free(t);
    }
    closedir(d);
    chmod(dst, st.st_mode & 07777);
    struct timespec times[2] = {st.st_atim, st.st_mtim};
    utimensat(AT_FDCWD, dst, times, AT_SYMLINK_NOFOLLOW);
    return ok;
}

bool hv_copy_tree(const char *src, const char *dst, const char *skip_dir, ut_buf *warnings, ut_buf *err) {
    copy_ctx c = {0};
    c.warnings = warnings, c.err = err;
    struct stat st;
    if (skip_dir && stat(skip_dir, &st) == 0) c.skip = true, c.skip_dev = st.st_dev, c.skip_ino = st.st_ino;
    return copy_rec(src, dst, &c);
}

static int make_writable(const char *p, const struct stat *st, int flag, struct FTW *f) {
    (void)f;
    if (flag == FTW_D || flag == FTW_DNR) chmod(p, (st->st_mode & 07777) | S_IRWXU);
    return 0;
}

static int remove_one(const char *p, const struct stat *st, int flag, struct FTW *f) {
    (void)st, (void)f;
    if (flag == FTW_DP) rmdir(p);
    else unlink(p);
    return 0;
}

bool hv_remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT;
    if (S_ISDIR(st.st_mode)) chmod(path, (st.st_mode & 07777) | S_IRWXU);
    nftw(path, make_writable, 32, FTW_PHYS);
    nftw(path, remove_one, 32, FTW_PHYS | FTW_DEPTH);
    return lstat(path, &st) != 0;
}

bool hv_mkdirs(const char *path) {
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
        *p = '/';
    }
    return mkdir(buf, 0755) == 0 || errno == EEXIST;
}
