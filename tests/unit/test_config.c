/* Unit tests for the configuration module (the API the language server will call): glob matching, discovery of the
 * closest file, `extend`, command-line overrides and their origins, enabled rules, per-file ignores, excludes,
 * severities, and errors with file:line:column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "config/cf_config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256];

static void put(const char *rel, const char *text) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    char *s = strrchr(p, '/');
    *s = 0;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", p);
    assert_int_equal(system(cmd), 0);
    *s = '/';
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
}

static int setup(void **s) {
    (void)s;
    snprintf(root, sizeof root, "/tmp/xpuify-cfgtest-XXXXXX");
    if (!mkdtemp(root)) return 1;
    char real[256];
    if (realpath(root, real)) snprintf(root, sizeof root, "%s", real);
    return chdir(root);
}

static int teardown(void **s) {
    (void)s;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd);
}

static void globs(void **s) {
    (void)s;
    assert_true(cf_glob_match("tests", "a/tests/x.py"));      /* any component */
    assert_true(cf_glob_match("tests/", "tests/x.py"));
    assert_true(cf_glob_match("*_pb2.py", "p/q/m_pb2.py"));
    assert_false(cf_glob_match("*_pb2.py", "p/q/m.py"));
    assert_true(cf_glob_match("src/gen", "src/gen/a/b.py"));   /* anchored, covers what is below */
    assert_false(cf_glob_match("src/gen", "lib/src/gen/a.py"));
    assert_true(cf_glob_match("src/**/legacy_*.py", "src/a/b/legacy_x.py"));
    assert_true(cf_glob_match("src/**/legacy_*.py", "src/legacy_x.py"));
    assert_true(cf_glob_match("src/*.py", "src/b.py"));
    assert_false(cf_glob_match("src/*.py", "src/a/b.py"));
}

static an_catalog *catalog(void) {
    an_catalog *c = an_catalog_new();
    ut_buf e;
    ut_buf_init(&e);
    assert_int_equal(an_catalog_load_builtin(c, &e), 0);
    assert_int_equal(an_catalog_finalize(c, &e), 0);
    ut_buf_free(&e);
    return c;
}

static void discovery_extend_overrides(void **s) {
    (void)s;
    put(".xpuify.yml", "select: [XPU1, XPU2]\nper-file-ignores:\n  \"tests/\": [XPU101]\nexclude: [gen]\n"
                       "rule-options:\n  XPU202: {severity: error}\n");
    put("sub/.xpuify.yml", "extend: ../.xpuify.yml\nignore: [XPU202]\nfail-on: warning\n");
    put("sub/deep/x.py", "");
    an_catalog *cat = catalog();
    cf_store *st = cf_store_new();
    cf_store_override(st, CF_TARGET, "compat");
    ut_buf err;
    ut_buf_init(&err);
    const cf_config *top = cf_store_for_path(st, "a.py", &err);
    const cf_config *sub = cf_store_for_path(st, "sub/deep/x.py", &err);
    assert_non_null(top);
    assert_non_null(sub);
    assert_ptr_equal(sub, cf_store_for_path(st, "sub", &err)); /* cached per directory */
    assert_string_equal(sub->target, "compat");
    assert_string_equal(sub->origin[CF_TARGET].file, "command line");
    assert_string_equal(sub->origin[CF_IGNORE].file, "sub/.xpuify.yml");
    assert_int_equal(sub->origin[CF_IGNORE].line, 2);
    assert_string_equal(sub->origin[CF_SELECT].file, ".xpuify.yml"); /* inherited, with its origin */
    assert_int_equal(sub->fail_on, AN_SEV_WARNING);
    assert_int_equal(top->fail_on, AN_SEV_INFO);
    size_t n = an_catalog_count(cat);
    bool *en = calloc(n, sizeof(bool));
    assert_true(cf_config_enabled(sub, cat, en, &err));
    assert_true(en[an_catalog_find(cat, "XPU101")->index]);
    assert_false(en[an_catalog_find(cat, "XPU202")->index]);
    assert_false(en[an_catalog_find(cat, "XPU301")->index]);
    assert_true(cf_config_enabled(top, cat, en, &err));
    cf_config_file_enabled(top, cat, "tests/t.py", en);
    assert_false(en[an_catalog_find(cat, "XPU101")->index]);
    assert_true(cf_config_excludes(top, "gen/a.py", false));
    assert_false(cf_config_excludes(top, "a.py", false));
    assert_int_equal(cf_config_severity(top, an_catalog_find(cat, "XPU202")), AN_SEV_ERROR);
    assert_int_equal(cf_config_severity(top, an_catalog_find(cat, "XPU201")), AN_SEV_WARNING);
    free(en);
    ut_buf_free(&err);
    cf_store_free(st);
    an_catalog_free(cat);
}

static void errors_have_positions(void **s) {
    (void)s;
    put("bad/.xpuify.yml", "select: [XPU1]\nbogus: 1\ntarget: gpu\n");
    cf_store *st = cf_store_new();
    ut_buf err;
    ut_buf_init(&err);
    assert_null(cf_store_for_path(st, "bad/x.py", &err));
    assert_non_null(strstr(err.data, "bad/.xpuify.yml:2:1: unknown key `bogus`"));
    assert_non_null(strstr(err.data, "bad/.xpuify.yml:3:9: `target` must be one of"));
    ut_buf_free(&err);
    cf_store_free(st);
    /* --no-config: defaults, whatever is on disk */
    st = cf_store_new();
    cf_store_force(st, NULL, true);
    ut_buf_init(&err);
    const cf_config *c = cf_store_for_path(st, "bad/x.py", &err);
    assert_non_null(c);
    assert_null(c->path);
    assert_string_equal(c->target, "auto");
    ut_buf_free(&err);
    cf_store_free(st);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(globs), cmocka_unit_test(discovery_extend_overrides), cmocka_unit_test(errors_have_positions),
    };
    return cmocka_run_group_tests_name("config", tests, setup, teardown);
}
