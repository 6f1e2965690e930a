/* The API tables against the real CUDA headers: every function declared in cuda_runtime_api.h and nccl.h must be
 * known to the tables. Runs where the headers exist ($CUDA_PATH, /usr/local/cuda); skipped (reported as skipped,
 * not passed) where they do not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyzer/c/an_capi.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static an_catalog *cat;
static char incdir[PATH_MAX / 2];

static bool find_include_dir(void) {
    /* $CUDA_PATH, when set, is the only place looked at (so CUDA_PATH=/nowhere runs the no-CUDA path) */
    const char *env = getenv("CUDA_PATH");
    const char *roots[] = {env && *env ? env : "/usr/local/cuda", NULL};
    for (int i = 0; roots[i]; i++) {
        if (!roots[i] || !*roots[i]) continue;
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/include/cuda_runtime_api.h", roots[i]);
        if (access(p, R_OK) == 0) {
            snprintf(incdir, sizeof incdir, "%s/include", roots[i]);
            return true;
        }
    }
    return false;
}

/* Every function the header declares is a function row of the tables; prints what is missing. */
static void check_header(const char *path) {
    const char *inc[] = {incdir};
    an_capi_decls d = {0};
    char *why = NULL;
    if (!an_capi_extract(path, inc, 1, &d, &why)) fail_msg("%s", why);
    size_t functions = 0, missing = 0;
    for (size_t i = 0; i < d.len; i++) {
        if (d.items[i].kind != AN_KIND_FUNCTION) continue;
        functions++;
        const an_entry *e = an_catalog_lookup_c(cat, d.items[i].name, strlen(d.items[i].name));
        if (!e || e->kind != AN_KIND_FUNCTION) {
            print_message("%s: %s is not in the API tables\n", path, d.items[i].name);
            missing++;
        }
    }
    print_message("%s: %zu functions, %zu known to the tables\n", path, functions, functions - missing);
    assert_true(functions > 10); /* the extraction itself works */
    assert_int_equal(missing, 0);
    an_capi_decls_free(&d);
}

static void runtime_api_fully_known(void **s) {
    (void)s;
    if (!find_include_dir()) skip();
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/cuda_runtime_api.h", incdir);
    check_header(p);
}

static void nccl_fully_known(void **s) {
    (void)s;
    if (!find_include_dir()) skip();
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/nccl.h", incdir);
    if (access(p, R_OK) != 0) snprintf(p, sizeof p, "/usr/include/nccl.h");
    if (access(p, R_OK) != 0) {
        print_message("nccl.h is in neither %s nor /usr/include\n", incdir);
        skip();
    }
    check_header(p);
}

/* The extraction finds what a header declares, macros and enumerators included (no CUDA needed). */
static void extraction_reads_a_header(void **s) {
    (void)s;
    char dir[] = "/tmp/xpuify-capi-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/lib.h", dir);
    FILE *f = fopen(p, "w");
    fputs("#define LIB_FLAG 1\n#define LIB_CALL(x) (x)\ntypedef struct lib_st *lib_t;\n"
          "typedef enum { libOk, libBad } libStatus;\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
          "libStatus libOpen(lib_t *h);\nint libClose(lib_t h);\n#ifdef __cplusplus\n}\n#endif\n", f);
    fclose(f);
    an_capi_decls d = {0};
    char *why = NULL;
    if (!an_capi_extract(p, NULL, 0, &d, &why)) fail_msg("%s", why);
    const char *want[][2] = {{"function", "libOpen"}, {"function", "libClose"}, {"type", "lib_t"},
                             {"enumerator", "libOk"}, {"enumerator", "LIB_FLAG"}, {"macro", "LIB_CALL"}};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        bool hit = false;
        for (size_t i = 0; i < d.len; i++)
            hit |= !strcmp(d.items[i].name, want[k][1]) && !strcmp(an_kind_name(d.items[i].kind), want[k][0]);
        if (!hit) fail_msg("%s %s not extracted", want[k][0], want[k][1]);
    }
    an_capi_decls_free(&d);
    unlink(p);
    rmdir(dir);
}

static int setup(void **s) {
    (void)s;
    cat = an_catalog_new();
    ut_buf err;
    ut_buf_init(&err);
    int n = an_catalog_load_builtin(cat, &err);
    if (!n) n = an_catalog_finalize(cat, &err);
    if (n) fprintf(stderr, "%s", err.data);
    ut_buf_free(&err);
    return n;
}

static int teardown(void **s) {
    (void)s;
    an_catalog_free(cat);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(extraction_reads_a_header),
        cmocka_unit_test(runtime_api_fully_known),
        cmocka_unit_test(nccl_fully_known),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
