/* fz_config: libFuzzer target for the configuration loader (`.xpuify.yml`: YAML, `extend`, paths, globs, rule
 * selection and options). Input: the text of a project's .xpuify.yml; beside it lie base.yml (for `extend`), a
 * sub-directory and a file to look up. Properties: no crash, leak or undefined behaviour; a lookup gives a
 * configuration or errors, never both nor neither; every error is one line naming a file of the project; a loaded
 * configuration selects rules, matches globs and prints without failing. */
#include "config/cf_config.h"
#include "fuzz/fz_common.h"
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[PATH_MAX], cfg[PATH_MAX + 32], file[PATH_MAX + 32];

static void setup(void) {
    snprintf(dir, sizeof dir, "/tmp/fz_config.XXXXXX");
    if (!mkdtemp(dir)) abort();
    char real[PATH_MAX];
    if (realpath(dir, real)) snprintf(dir, sizeof dir, "%s", real);
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/base.yml", dir);
    FILE *f = fopen(p, "w");
    if (!f) abort();
    fputs("select: [XPU1, XPU2]\nignore: [XPU209]\nper-file-ignores:\n  \"tests/\": [XPU101]\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/sub", dir);
    mkdir(p, 0755);
    snprintf(cfg, sizeof cfg, "%s/.xpuify.yml", dir);
    snprintf(file, sizeof file, "%s/sub/model.py", dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!*dir) setup();
    FILE *f = fopen(cfg, "wb");
    if (!f) abort();
    fwrite(data, 1, size, f);
    fclose(f);
    const an_catalog *cat = fz_builtin_catalog();
    cf_store *s = cf_store_new();
    ut_buf err;
    ut_buf_init(&err);
    const cf_config *c = cf_store_for_path(s, file, &err);
    FZ_ASSERT((c != NULL) != (err.len > 0), "a configuration %s and errors: %s", c ? "loaded" : "missing",
              err.data ? err.data : "(none)");
    for (char *line = err.data, *nl; line && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        FZ_ASSERT(nl, "an error without a final newline: %s", line);
        FZ_ASSERT(!strncmp(line, dir, strlen(dir)), "an error that names no file of the project: %.*s", (int)(nl - line), line);
    }
    if (c) {
        bool *en = ut_calloc(an_catalog_count(cat) + 1, sizeof(bool));
        ut_buf e2;
        ut_buf_init(&e2);
        if (cf_config_enabled(c, cat, en, &e2)) cf_config_file_enabled(c, cat, file, en);
        ut_buf_free(&e2);
        ut_free(en);
        cf_config_excludes(c, file, false);
        FILE *null = fopen("/dev/null", "w");
        if (null) {
            cf_config_print(c, false, null);
            cf_config_print(c, true, null);
            fclose(null);
        }
    }
    ut_buf_free(&err);
    cf_store_free(s);
    return 0;
}
