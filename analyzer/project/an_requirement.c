/* an_requirement: the project's declared torch requirement (see an_requirement.h). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "analyzer/project/an_requirement.h"
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include <limits.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool exists(const char *p, bool dir) {
    struct stat st;
    return stat(p, &st) == 0 && (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

static void scan_file(const char *path, pcre2_code *re, an_torch_req *out) {
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

void an_torch_requirement(const char *dir, an_torch_req *out) {
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

void an_torch_req_free(an_torch_req *r) { ut_free(r->source); }
