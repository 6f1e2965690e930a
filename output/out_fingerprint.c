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

/* the working directory, resolved once per run (it does not change while a report is written) */
static char real_cwd[PATH_MAX];
static pthread_once_t real_cwd_once = PTHREAD_ONCE_INIT;
static void read_real_cwd(void) {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, ".");
    if (!realpath(cwd, real_cwd)) snprintf(real_cwd, sizeof real_cwd, "%s", cwd);
}

char *out_project_path(const char *path) {
    const char *r = out_project_root();
    char abs[PATH_MAX * 2];
    if (path[0] == '/') snprintf(abs, sizeof abs, "%s", path);
    else {
        pthread_once(&real_cwd_once, read_real_cwd);
        snprintf(abs, sizeof abs, "%s/%s", real_cwd, path);
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

/* how often each base hash was seen so far in one file: open addressing, sized once for the file's findings */
typedef struct {
    uint64_t *keys;
    unsigned *vals; /* the findings seen with that key; 0: an empty slot */
    size_t cap;
} fp_counts;

/* the number of earlier findings with base hash h, and counts this one */
static unsigned fp_counts_bump(fp_counts *t, uint64_t h, size_t n) {
    if (!t->cap) {
        for (t->cap = 16; t->cap < 2 * n; t->cap *= 2) {}
        t->keys = ut_calloc(t->cap, sizeof *t->keys);
        t->vals = ut_calloc(t->cap, sizeof *t->vals);
    }
    size_t i = (size_t)(h ^ (h >> 29)) & (t->cap - 1);
    while (t->vals[i] && t->keys[i] != h) i = (i + 1) & (t->cap - 1);
    if (!t->vals[i]) t->keys[i] = h;
    return t->vals[i]++;
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
        /* findings come in line order: one normalized line (and its hash, per rule) serves all those on it, and the
         * occurrences are counted in a table, so a line with 40,000 findings costs its length once, not once each */
        fp_counts counts = {0};
        char *line = NULL;
        uint32_t line_no = 0;
        const an_rule *line_rule = NULL;
        uint64_t line_base = 0;
        for (size_t j = 0; j < f->diags.len; j++) {
            const an_diag *d = &f->diags.items[j];
            if (!line || d->line != line_no) {
                ut_free(line);
                line = NULL;
            }
            if (!line || d->rule != line_rule) {
                uint64_t b = 1469598103934665603ull;
                if (!line) line = out_normalized_line(&f->src, d->line), line_no = d->line;
                b = fnv_mix(b, d->rule->code, strlen(d->rule->code));
                b = fnv_mix(b, path, strlen(path));
                line_base = fnv_mix(b, line, strlen(line)), line_rule = d->rule;
            }
            uint64_t h = line_base;
            unsigned occurrence = fp_counts_bump(&counts, h, f->diags.len);
            char num[16];
            int nl = snprintf(num, sizeof num, "%u", occurrence);
            h = fnv_mix(h, num, (size_t)nl);
            char *s = ut_malloc(17);
            snprintf(s, 17, "%016llx", (unsigned long long)h);
            fps[k++] = s;
        }
        ut_free(line);
        ut_free(counts.keys);
        ut_free(counts.vals);
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
