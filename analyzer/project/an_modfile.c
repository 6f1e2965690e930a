/* an_modfile: module name -> file of the project (see an_modfile.h). */
#include "analyzer/project/an_modfile.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool regular(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool identifier_path(const char *d) {
    for (const char *s = d; *s; s++)
        if (*s == '/' || *s == '\\' || (*s == '.' && (s == d || s[1] == '.' || !s[1]))) return false;
    return true;
}

/* base/a/b.py, else base/a/b/__init__.py (dotted "a.b"; "" : base/__init__.py) */
static bool under_base(const char *base, const char *dotted, char *out, size_t n) {
    char rel[PATH_MAX];
    size_t k = 0;
    for (const char *s = dotted; *s && k + 1 < sizeof rel; s++) rel[k++] = *s == '.' ? '/' : *s;
    rel[k] = 0;
    char c[PATH_MAX + 32];
    if (k) {
        snprintf(c, sizeof c, "%s/%s.py", base, rel);
        if (regular(c) && snprintf(out, n, "%s", c) < (int)n) return true;
        snprintf(c, sizeof c, "%s/%s/__init__.py", base, rel);
    } else {
        snprintf(c, sizeof c, "%s/__init__.py", base);
    }
    return regular(c) && snprintf(out, n, "%s", c) < (int)n;
}

/* inside the project root (real paths) */
static bool inside(const char *root, const char *path) {
    char r[PATH_MAX], f[PATH_MAX];
    if (!root || !realpath(root, r) || !realpath(path, f)) return false;
    size_t rn = strlen(r);
    return !strncmp(f, r, rn) && (f[rn] == '/' || !strcmp(r, "/"));
}

bool an_modfile_find(const an_project *p, const char *file, int level, const char *dotted, char *out, size_t n) {
    if (n) out[0] = 0;
    if (!file || !dotted || !identifier_path(dotted[0] ? dotted : "x") || strlen(dotted) > 400) return false;
    char abs[PATH_MAX];
    if (!realpath(file, abs)) return false;
    const char *root = p ? an_project_root(p) : NULL;
    char found[PATH_MAX];
    if (level > 0) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", abs);
        for (int i = 0; i < level; i++) { /* the file's directory, then level - 1 packages up */
            char *s = strrchr(dir, '/');
            if (!s || s == dir) return false;
            *s = 0;
        }
        if (!under_base(dir, dotted, found, sizeof found)) return false;
        if (root && !inside(root, found)) return false;
        return snprintf(out, n, "%s", found) < (int)n;
    }
    if (!p || !dotted[0]) return false;
    an_way ways[8];
    size_t k = an_project_ways(p, file, ways, 8);
    for (size_t i = 0; i <= k; i++) {
        const char *base = i < k ? ways[i].root : root;
        if (i < k && ways[i].kind == AN_WAY_EXEC) continue;
        if (under_base(base, dotted, found, sizeof found) && inside(root, found))
            return snprintf(out, n, "%s", found) < (int)n;
    }
    return false;
}
