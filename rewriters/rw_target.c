/* rw_target: requirement detection and helper placement. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "rewriters/rw_target.h"
#include "analyzer/core/an_target.h"
#include "util/ut_mem.h"
#include "rewriters/rw_write.h"
#include <errno.h>
#include <limits.h>
#include <pcre2.h>
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

static void scan_file(const char *path, pcre2_code *re, rw_torch_req *out) {
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[4096];
    int n = 0;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    while (fgets(line, sizeof line, f)) {
        n++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        if (pcre2_match(re, (PCRE2_SPTR)line, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) < 0) continue;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        int a = atoi(line + ov[6]), b = atoi(line + ov[8]); /* groups 3 and 4: major, minor */
        if (!out->known || a > out->major || (a == out->major && b > out->minor)) {
            out->known = true, out->major = a, out->minor = b;
            ut_free(out->source);
            ut_buf s;
            ut_buf_init(&s);
            char cwd[PATH_MAX];
            size_t cl = getcwd(cwd, sizeof cwd) ? strlen(cwd) : 0;
            const char *shown = cl && !strncmp(path, cwd, cl) && path[cl] == '/' ? path + cl + 1 : path;
            ut_buf_printf(&s, "%s:%d", shown, n);
            out->source = ut_buf_take(&s);
        }
    }
    pcre2_match_data_free(md);
    fclose(f);
}

void rw_torch_requirement(const char *dir, rw_torch_req *out) {
    memset(out, 0, sizeof *out);
    int ec;
    PCRE2_SIZE eo;
    /* torch>=2.6, "torch >= 2.6.0", torch[opt]~=2.7, torch==2.8.*; the strictest lower bound wins */
    pcre2_code *re = pcre2_compile((PCRE2_SPTR) "(?<![\\w-])torch\\s*(\\[[^\\]]*\\])?\\s*(>=|==|~=|===|>)\\s*v?(\\d+)\\.(\\d+)",
                                   PCRE2_ZERO_TERMINATED, 0, &ec, &eo, NULL);
    if (!re) return;
    char cur[PATH_MAX];
    if (!realpath(dir, cur)) { pcre2_code_free(re); return; }
    static const char *const names[] = {"requirements.txt", "requirements-dev.txt", "requirements_dev.txt",
                                        "pyproject.toml", "setup.py", "setup.cfg", "environment.yml", NULL};
    for (int depth = 0; depth < 64; depth++) {
        char p[PATH_MAX + 64];
        for (int i = 0; names[i]; i++) {
            snprintf(p, sizeof p, "%s/%s", cur, names[i]);
            if (exists(p, false)) scan_file(p, re, out);
        }
        snprintf(p, sizeof p, "%s/requirements", cur);
        if (exists(p, true)) {
            for (int i = 0; names[i]; i++) {
                char q[PATH_MAX + 128];
                snprintf(q, sizeof q, "%s/%s", p, names[i]);
                if (exists(q, false)) scan_file(q, re, out);
            }
        }
        snprintf(p, sizeof p, "%s/.git", cur);
        if (out->known || exists(p, true) || exists(p, false) || !strcmp(cur, "/")) break;
        char *slash = strrchr(cur, '/');
        if (!slash) break;
        if (slash == cur) cur[1] = 0;
        else *slash = 0;
    }
    pcre2_code_free(re);
}

void rw_torch_req_free(rw_torch_req *r) { ut_free(r->source); }

static bool has_init(const char *dir) {
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/__init__.py", dir);
    return exists(p, false);
}

void rw_helper_place_for(const char *file, const char *module, const char *forced, rw_helper_place *out) {
    ut_buf b;
    ut_buf_init(&b);
    if (forced) {
        out->path = ut_strdup(forced);
        ut_buf_printf(&b, "import %s", module);
        out->import = ut_buf_take(&b);
        return;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", file);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else strcpy(dir, ".");
    if (!has_init(dir)) {
        /* a script: sys.path[0] is its directory, so a sibling module imports */
        if (!strcmp(dir, ".")) ut_buf_printf(&b, "%s.py", module);
        else ut_buf_printf(&b, "%s/%s.py", dir, module);
        out->path = ut_buf_take(&b);
        ut_buf_printf(&b, "import %s", module);
        out->import = ut_buf_take(&b);
        return;
    }
    /* a package module: the helper goes into the top-level package, imported absolutely */
    char top[PATH_MAX];
    snprintf(top, sizeof top, "%s", dir);
    for (;;) {
        char parent[PATH_MAX];
        snprintf(parent, sizeof parent, "%s", top);
        char *s = strrchr(parent, '/');
        if (!s) {
            if (!strcmp(parent, ".")) break;
            strcpy(parent, ".");
        } else if (s == parent) break;
        else *s = 0;
        /* (the same directory: `.` at the root, `..` chains) -- stat, not realpath: this runs for every directory
         * a check walks, and realpath costs a readlink per path component */
        struct stat sp, st;
        if (!has_init(parent) || stat(parent, &sp) || stat(top, &st) || (sp.st_dev == st.st_dev && sp.st_ino == st.st_ino))
            break;
        snprintf(top, sizeof top, "%s", parent);
    }
    char abstop[PATH_MAX];
    const char *pkg = realpath(top, abstop) ? strrchr(abstop, '/') + 1 : top;
    ut_buf_printf(&b, "%s/%s.py", top, module);
    out->path = ut_buf_take(&b);
    ut_buf_printf(&b, "from %s import %s", pkg, module);
    out->import = ut_buf_take(&b);
}

void rw_helper_place_free(rw_helper_place *p) {
    ut_free(p->path);
    ut_free(p->import);
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
