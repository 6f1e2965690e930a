/* out_fingerprint: computing fingerprints (see out_fingerprint.h). */
#include "output/out_fingerprint.h"
#include <git2.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static char root[PATH_MAX];
static pthread_once_t root_once = PTHREAD_ONCE_INIT;

static void find_root(void) {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, ".");
    if (!realpath(cwd, root)) snprintf(root, sizeof root, "%s", cwd);
    git_libgit2_init();
    git_buf b = {0};
    if (git_repository_discover(&b, root, 0, NULL) == 0) {
        git_repository *repo = NULL;
        if (git_repository_open(&repo, b.ptr) == 0) {
            const char *wd = git_repository_workdir(repo);
            char real[PATH_MAX];
            if (wd && realpath(wd, real)) snprintf(root, sizeof root, "%s", real);
            git_repository_free(repo);
        }
        git_buf_dispose(&b);
    }
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/') root[--n] = 0;
}

const char *out_project_root(void) {
    pthread_once(&root_once, find_root);
    return root;
}

char *out_project_path(const char *path) {
    const char *r = out_project_root();
    char abs[PATH_MAX * 2];
    if (path[0] == '/') snprintf(abs, sizeof abs, "%s", path);
    else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, ".");
        char real[PATH_MAX];
        if (realpath(cwd, real)) snprintf(cwd, sizeof cwd, "%s", real);
        snprintf(abs, sizeof abs, "%s/%s", cwd, path);
    }
    /* drop "./" components */
    ut_buf b;
    ut_buf_init(&b);
    for (const char *p = abs; *p;) {
        if (p[0] == '/' && p[1] == '.' && (p[2] == '/' || !p[2])) { p += 2; continue; }
        if (p[0] == '/' && p[1] == '/') { p++; continue; }
        ut_buf_putc(&b, *p++);
    }
    char *a = ut_buf_take(&b);
    size_t n = strlen(r);
    char *out;
    if (!strncmp(a, r, n) && a[n] == '/') out = ut_strdup(a + n + 1);
    else if (!strcmp(r, "/")) out = ut_strdup(a + 1);
    else out = ut_strdup(!strncmp(path, "./", 2) ? path + 2 : path);
    ut_free(a);
    return out;
}

char *out_normalized_line(const an_source *src, uint32_t line) {
    ut_buf b;
    ut_buf_init(&b);
    if (src->text && line >= 1 && line <= src->nlines) {
        uint32_t s, e;
        an_source_line_span(src, line, &s, &e);
        bool space = false;
        for (uint32_t i = s; i < e; i++) {
            char c = src->text[i];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') { space = b.len > 0; continue; }
            if (space) ut_buf_putc(&b, ' ');
            space = false;
            ut_buf_putc(&b, c);
        }
    }
    if (!b.data) ut_buf_puts(&b, "");
    return ut_buf_take(&b);
}

static uint64_t fnv_mix(uint64_t h, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull; /* field separator */
}

char **out_fingerprints(const an_results *res) {
    size_t total = 0;
    for (size_t i = 0; i < res->len; i++) total += res->items[i].diags.len;
    char **fps = ut_calloc(total ? total : 1, sizeof(char *));
    size_t k = 0;
    for (size_t i = 0; i < res->len; i++) {
        const an_file_result *f = &res->items[i];
        if (!f->diags.len) continue;
        char *path = out_project_path(f->file->path);
        uint64_t *base = ut_calloc(f->diags.len, sizeof(uint64_t));
        for (size_t j = 0; j < f->diags.len; j++) {
            const an_diag *d = &f->diags.items[j];
            char *line = out_normalized_line(&f->src, d->line);
            uint64_t h = 1469598103934665603ull;
            h = fnv_mix(h, d->rule->code, strlen(d->rule->code));
            h = fnv_mix(h, path, strlen(path));
            h = fnv_mix(h, line, strlen(line));
            ut_free(line);
            base[j] = h;
            unsigned occurrence = 0;
            for (size_t m = 0; m < j; m++) occurrence += base[m] == h;
            char num[16];
            int nl = snprintf(num, sizeof num, "%u", occurrence);
            h = fnv_mix(h, num, (size_t)nl);
            char *s = ut_malloc(17);
            snprintf(s, 17, "%016llx", (unsigned long long)h);
            fps[k++] = s;
        }
        ut_free(base);
        ut_free(path);
    }
    return fps;
}

void out_fingerprints_free(char **fps, const an_results *res) {
    if (!fps) return;
    size_t total = 0;
    for (size_t i = 0; i < res->len; i++) total += res->items[i].diags.len;
    for (size_t i = 0; i < total; i++) ut_free(fps[i]);
    ut_free(fps);
}
