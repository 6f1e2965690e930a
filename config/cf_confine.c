/* cf_confine: project confinement and bounded reads for configuration files (see cf_confine.h). */
#include "config/cf_confine.h"
#include "config/cf_config.h"
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool under(const char *root, const char *real);

char *cf_project_root(const char *config_abs, const char *cwd) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", config_abs);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) *slash = 0;
    else snprintf(dir, sizeof dir, "/");
    char real[PATH_MAX];
    if (!realpath(dir, real)) snprintf(real, sizeof real, "%s", dir);
    git_libgit2_init();
    git_buf b = {0};
    char *root = NULL;
    if (git_repository_discover(&b, real, 0, NULL) == 0) {
        git_repository *repo = NULL;
        if (git_repository_open(&repo, b.ptr) == 0) {
            const char *wd = git_repository_workdir(repo);
            char wreal[PATH_MAX];
            if (wd && realpath(wd, wreal)) root = ut_strdup(wreal);
            git_repository_free(repo);
        }
        git_buf_dispose(&b);
    }
    git_libgit2_shutdown();
    if (root) return root;
    /* no git: the outermost directory above it that holds a configuration too (a project's sub-directories extend
     * its top), or the working directory when that is higher */
    char top[PATH_MAX], probe[PATH_MAX + 16];
    snprintf(top, sizeof top, "%s", real);
    char up[PATH_MAX];
    snprintf(up, sizeof up, "%s", real);
    for (char *sl; (sl = strrchr(up, '/')) && sl != up;) {
        *sl = 0;
        snprintf(probe, sizeof probe, "%s/%s", up, CF_FILE_NAME);
        if (access(probe, F_OK) == 0) snprintf(top, sizeof top, "%s", up);
    }
    if (cwd && under(cwd, top)) return ut_strdup(cwd);
    return ut_strdup(top);
}

static bool under(const char *root, const char *real) {
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/') n--;
    if (n == 1 && root[0] == '/') return true;
    return !strncmp(real, root, n) && (real[n] == '/' || !real[n]);
}

bool cf_confined(const char *root, const char *abs) {
    char p[PATH_MAX], real[PATH_MAX];
    if (snprintf(p, sizeof p, "%s", abs) >= (int)sizeof p) return false;
    for (;;) {
        if (realpath(p, real)) return under(root, real);
        if (errno != ENOENT && errno != ENOTDIR) return false;
        char *slash = strrchr(p, '/');
        if (!slash) return false;
        if (slash == p) return under(root, "/");
        *slash = 0; /* not there yet: what will hold it */
    }
}

char *cf_read_regular(const char *path, size_t max, size_t *len, char **why) {
    *why = NULL;
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) { *why = ut_strdup(strerror(errno)); return NULL; }
    struct stat st;
    ut_buf b;
    ut_buf_init(&b);
    if (fstat(fd, &st) != 0) {
        ut_buf_printf(&b, "%s", strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        ut_buf_puts(&b, "is a directory, not a configuration file");
    } else if (!S_ISREG(st.st_mode)) {
        ut_buf_puts(&b, "not a regular file (a device, FIFO or socket); refused");
    } else if ((unsigned long long)st.st_size > max) {
        ut_buf_printf(&b, "%lld bytes, over the %zu-byte limit for a configuration file", (long long)st.st_size, max);
    }
    if (b.len) {
        close(fd);
        *why = ut_buf_take(&b);
        return NULL;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    char chunk[8192];
    for (;;) {
        ssize_t k = read(fd, chunk, sizeof chunk);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            *why = ut_strdup(strerror(errno));
            break;
        }
        if (k == 0) break;
        ut_buf_append(&b, chunk, (size_t)k);
        if (b.len > max) { /* grew while read */
            ut_buf_clear(&b);
            ut_buf_printf(&b, "over the %zu-byte limit for a configuration file", max);
            *why = ut_buf_take(&b);
            break;
        }
    }
    close(fd);
    if (*why) {
        ut_buf_free(&b);
        return NULL;
    }
    *len = b.len;
    if (!b.data) ut_buf_puts(&b, "");
    return ut_buf_take(&b);
}
