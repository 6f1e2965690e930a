/* cli_common: catalog loading and option helpers shared by the verbs. */
#include "cli/cli.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

bool cli_opt(int argc, char **argv, int *i, const char *name, const char **value) {
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n)) return false;
    if (a[n] == '=') { *value = a + n + 1; return true; }
    if (a[n] && n == 2 && name[0] == '-' && name[1] != '-') { *value = a + n; return true; } /* -j4, -fjson */
    if (a[n]) return false;
    if (*i + 1 >= argc) {
        fprintf(stderr, "xpuify: error: %s needs a value\n", name);
        *value = NULL;
        return true;
    }
    *value = argv[++*i];
    return true;
}

bool cli_parse_size(const char *s, size_t *out) {
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s) return false;
    if (*end == 'K' || *end == 'k') v <<= 10, end++;
    else if (*end == 'M' || *end == 'm') v <<= 20, end++;
    else if (*end == 'G' || *end == 'g') v <<= 30, end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end) return false;
    *out = (size_t)v;
    return true;
}

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int load_dir(an_catalog *c, const char *dir, ut_buf *err) {
    DIR *d = opendir(dir);
    if (!d) { ut_buf_printf(err, "%s: cannot read rule directory: %s\n", dir, strerror(errno)); return 1; }
    UT_VEC(char *) names = {0};
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if ((n > 4 && !strcmp(e->d_name + n - 4, ".yml")) || (n > 5 && !strcmp(e->d_name + n - 5, ".yaml")))
            ut_vec_push(&names, ut_strdup(e->d_name));
    }
    closedir(d);
    if (names.len > 1) qsort(names.items, names.len, sizeof(char *), name_cmp); /* a stable rule order */
    int nerr = 0;
    for (size_t i = 0; i < names.len; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names.items[i]);
        FILE *f = fopen(path, "rb");
        if (!f) { ut_buf_printf(err, "%s: %s\n", path, strerror(errno)); nerr++; continue; }
        ut_buf b;
        ut_buf_init(&b);
        char chunk[8192];
        size_t k;
        while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) ut_buf_append(&b, chunk, k);
        fclose(f);
        nerr += an_catalog_load_yaml(c, path, b.data ? b.data : "", b.len, err);
        ut_buf_free(&b);
        ut_free(names.items[i]);
    }
    ut_vec_free(&names);
    return nerr;
}

an_catalog *cli_load_catalog(const char *const *dirs, size_t n) { return cli_load_catalog_ex(dirs, n, NULL); }

an_catalog *cli_load_catalog_ex(const char *const *dirs, size_t n, size_t *nbuiltin) {
    an_catalog *c = an_catalog_new();
    ut_buf err;
    ut_buf_init(&err);
    int nerr = an_catalog_load_builtin(c, &err);
    if (nbuiltin) *nbuiltin = an_catalog_count(c);
    for (size_t i = 0; i < n; i++) nerr += load_dir(c, dirs[i], &err);
    if (!nerr) nerr = an_catalog_finalize(c, &err);
    if (nerr) {
        fprintf(stderr, "xpuify: error: the rules could not be loaded:\n%s", err.data ? err.data : "");
        ut_buf_free(&err);
        an_catalog_free(c);
        return NULL;
    }
    ut_buf_free(&err);
    return c;
}

bool cli_apply_selectors(const an_catalog *cat, const char *list, bool value, bool *enabled, const char *flag) {
    char *copy = ut_strdup(list), *save = NULL;
    bool ok = true;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        size_t tl = strlen(tok);
        while (tl && tok[tl - 1] == ' ') tok[--tl] = 0;
        if (!tl) continue;
        bool hit = false;
        for (size_t i = 0; i < an_catalog_count(cat); i++) {
            const an_rule *r = an_catalog_rule(cat, i);
            if (!strcasecmp(tok, "ALL") || !strncasecmp(r->code, tok, tl) || !strcmp(r->name, tok)) {
                enabled[i] = value;
                hit = true;
            }
        }
        if (!hit) {
            const char *near = an_catalog_suggest(cat, tok);
            fprintf(stderr, "xpuify: error: %s: `%s` matches no rule code, code prefix or rule name%s%s%s (see `xpuify rule --all`)\n",
                    flag, tok, near ? "; did you mean `" : "", near ? near : "", near ? "`?" : "");
            ok = false;
        }
    }
    ut_free(copy);
    return ok;
}

double cli_ms_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}
