/* rw_target: the compat device helper's text and writing. */
#include "rewriters/rw_target.h"
#include "analyzer/core/an_target.h"
#include "util/ut_mem.h"
#include "rewriters/rw_write.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct xp_embedded { const char *path; const char *text; size_t len; };
extern const struct xp_embedded xp_templates[];
extern const size_t xp_templates_count;

static bool exists(const char *p, bool dir) {
    struct stat st;
    return stat(p, &st) == 0 && (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}


char *rw_helper_text(const char *priority) {
    for (size_t i = 0; i < xp_templates_count; i++) {
        if (!strstr(xp_templates[i].path, "xpuify_device.py")) continue;
        ut_buf b;
        ut_buf_init(&b);
        const char *t = xp_templates[i].text, *mark = strstr(t, "@PRIORITY@");
        if (mark) {
            ut_buf_append(&b, t, (size_t)(mark - t));
            ut_buf_puts(&b, priority ? priority : "cuda,xpu,mps,cpu");
            ut_buf_puts(&b, mark + 10);
        } else {
            ut_buf_append(&b, t, xp_templates[i].len);
        }
        return ut_buf_take(&b);
    }
    return NULL;
}

/* path is a regular file holding exactly text */
static bool holds(const char *path, const char *text) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return false;
    size_t n = strlen(text), got = 0;
    char *buf = ut_malloc(n + 1);
    got = fread(buf, 1, n + 1, fp);
    fclose(fp);
    bool same = got == n && !memcmp(buf, text, n);
    ut_free(buf);
    return same;
}

int rw_helper_write(const char *path, const char *priority, char **why) {
    *why = NULL;
    if (exists(path, false)) return 0;
    char *t = rw_helper_text(priority);
    if (!t) { *why = ut_strdup("the helper template is missing from this build"); return -1; }
    /* --helper-path may name a directory that does not exist yet */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            ut_buf b;
            ut_buf_init(&b);
            ut_buf_printf(&b, "cannot create %s: %s", dir, strerror(errno));
            *why = ut_buf_take(&b);
            ut_free(t);
            return -1;
        }
        *p = '/';
    }
    int rc = rw_create_atomic(path, t, strlen(t), why);
    if (rc != 0 && holds(path, t)) { /* another run created it meanwhile, the same: nothing left to do */
        ut_free(*why);
        *why = NULL;
        ut_free(t);
        return 0;
    }
    ut_free(t);
    return rc == 0 ? 1 : -1;
}
