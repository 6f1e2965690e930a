/* Unit tests for the C and text front ends and their catalog: `api` tables (loading, errors, lookup), the
 * fast-mode declarations header (it must compile, for every row at once), token findings against the AST,
 * comment masking per text file type, pattern rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyzer/c/an_c.h"
#include "analyzer/c/an_cdecls.h"
#include "analyzer/c/an_clang.h"
#include "analyzer/core/an_engine.h"
#include "analyzer/text/an_text.h"
#include <stdio.h>
#include <string.h>

static an_catalog *load(const char *yaml, char **errors) {
    an_catalog *c = an_catalog_new();
    ut_buf err;
    ut_buf_init(&err);
    int n = an_catalog_load_yaml(c, "t.yml", yaml, strlen(yaml), &err);
    if (!n) n = an_catalog_finalize(c, &err);
    *errors = n ? ut_buf_take(&err) : NULL;
    ut_buf_free(&err);
    return c;
}

static an_catalog *builtin(void) {
    an_catalog *c = an_catalog_new();
    ut_buf err;
    ut_buf_init(&err);
    int n = an_catalog_load_builtin(c, &err);
    if (!n) n = an_catalog_finalize(c, &err);
    if (n) fail_msg("%s", err.data);
    ut_buf_free(&err);
    return c;
}

static an_diag_list analyze(an_catalog *c, an_lang lang, const char *path, const char *text) {
    an_source src;
    an_source_init_mem(&src, path, text, strlen(text));
    an_diag_list l = {0};
    an_engine_analyze_source(c, lang, &src, NULL, NULL, &l);
    an_source_free(&src);
    return l;
}

/* "CODE@line:col" for each finding, space-separated */
static char *summary(const an_diag_list *l) {
    ut_buf b;
    ut_buf_init(&b);
    for (size_t i = 0; i < l->len; i++)
        ut_buf_printf(&b, "%s%s@%u:%u", i ? " " : "", l->items[i].rule->code, l->items[i].line, l->items[i].col);
    return b.data ? ut_buf_take(&b) : ut_strdup("");
}

static const char *TABLE =
    "rules:\n"
    "  - code: C100\n    name: calls\n    language: c\n    kind: function\n    returns: myStatus\n"
    "    library: My Library\n    message: '`{name}` ({section}){mapping}'\n    triggers: ['\\bmy[A-Z]']\n"
    "    api:\n"
    "      - {name: myAlloc, section: memory, portable: xpuAlloc, sycl: 'sycl::malloc_device', aliases: [myAlloc_v2]}\n"
    "      - {name: myFree, section: memory, level_zero: zeMemFree, deprecated: '2.0'}\n"
    "      - {name: 'ns::helper', section: misc}\n"
    "      - {name: 'ns::*', section: misc, note: 'anything else in ns'}\n"
    "  - code: C101\n    name: consts\n    language: c\n    kind: enumerator\n    message: '`{name}`{mapping}'\n"
    "    triggers: ['\\bMY_']\n    api:\n"
    "      - {name: myStatus, kind: enum, sycl: 'an exception'}\n"
    "      - {name: myOk, enum: myStatus}\n"
    "      - {name: 'MY_*'}\n";

static void api_tables_load_and_look_up(void **s) {
    (void)s;
    char *e;
    an_catalog *c = load(TABLE, &e);
    if (e) fail_msg("%s", e);
    const an_entry *x = an_catalog_lookup_c(c, "myAlloc", 7);
    assert_non_null(x);
    assert_int_equal(x->kind, AN_KIND_FUNCTION);
    assert_string_equal(x->replacement, "xpuAlloc");
    assert_string_equal(x->returns, "myStatus"); /* the rule's default */
    const an_entry *a = an_catalog_lookup_c(c, "myAlloc_v2", 10);
    assert_non_null(a);
    assert_string_equal(a->alias_of, "myAlloc");
    assert_string_equal(a->sycl, "sycl::malloc_device");
    assert_false(an_catalog_lookup_c(c, "ns::helper", 10)->wildcard);
    assert_true(an_catalog_lookup_c(c, "ns::other", 9)->wildcard);
    assert_true(an_catalog_lookup_c(c, "MY_FLAG", 7)->wildcard);
    assert_null(an_catalog_lookup_c(c, "myAllocX", 8));
    assert_null(an_catalog_lookup_c(c, "myAll", 5));
    assert_null(an_catalog_lookup(c, "myAlloc", true)); /* the python index knows nothing of C rows */
    an_catalog_free(c);
}

static void api_table_errors_name_the_problem(void **s) {
    (void)s;
    struct { const char *yaml, *want; } cases[] = {
        {"rules:\n  - {code: A1, name: a, language: python, message: m, api: [{name: x, kind: function}]}\n",
         "`api` tables are for c rules"},
        {"rules:\n  - {code: A1, name: a, language: c, message: m, triggers: [x], api: [{name: x, kind: thing}]}\n",
         "`kind` must be one of"},
        {"rules:\n  - {code: A1, name: a, language: c, message: m, triggers: [x], api: [{name: x}]}\n",
         "without `kind`"},
        {"rules:\n  - {code: A1, name: a, language: c, message: m, kind: function, api: [{name: x}]}\n",
         "needs `triggers`"},
        {"rules:\n  - {code: A1, name: a, language: c, message: m, triggers: [x], api: [{name: x, kind: function, colour: red}]}\n",
         "unknown key `colour` in an api entry"},
        {"rules:\n  - {code: A1, name: a, language: text, message: m, pattern: '(unclosed'}\n", "`pattern` does not compile"},
        {"rules:\n  - {code: A1, name: a, language: c, message: m, files: ['*.sh'], pattern: x}\n", "`files` only applies to text rules"},
        {"rules:\n  - {code: A1, name: a, language: c, message: m, kind: function, triggers: [x], api: [x]}\n"
         "  - {code: A2, name: b, language: c, message: m, kind: type, triggers: [x], api: [x]}\n",
         "`x` is in the tables of both A1 and A2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *e;
        an_catalog *c = load(cases[i].yaml, &e);
        if (!e || !strstr(e, cases[i].want)) fail_msg("case %zu: wanted \"%s\", got \"%s\"", i, cases[i].want, e ? e : "(no error)");
        ut_free(e);
        an_catalog_free(c);
    }
}

static void table_findings_messages_and_context(void **s) {
    (void)s;
    char *e;
    an_catalog *c = load(TABLE, &e);
    an_diag_list l = analyze(c, AN_LANG_C, "x.c",
                             "int f(void) {\n"
                             "  void *p; myAlloc(&p, 4); myFree(p);\n"     /* two calls */
                             "  int myAllocs = 0;\n"                        /* a longer user name */
                             "  return MY_CHECK(1) + MY_FLAG + myOk;\n"     /* a macro call is not a constant */
                             "}\n"
                             "/* myAlloc in a comment */ const char *m = \"myFree\";\n");
    char *sum = summary(&l);
    assert_string_equal(sum, "C100@2:12 C100@2:28 C101@4:24 C101@4:34");
    assert_string_equal(l.items[0].message, "`myAlloc` (memory); portable layer: `xpuAlloc`; SYCL: `sycl::malloc_device`");
    assert_string_equal(l.items[1].message, "`myFree` (memory) (deprecated in 2.0); Level Zero: `zeMemFree`");
    /* a constant without a mapping takes its enum's */
    assert_string_equal(l.items[3].message, "`myOk` (of `myStatus`); SYCL: `an exception`");
    ut_free(sum);
    an_diag_list_free(&l);
    an_catalog_free(c);
}

/* The generated declarations must compile, for every row of the tables at once, in each language mode: a broken
 * `decl` in the data would otherwise silently degrade every fast-mode parse. */
static void generated_declarations_compile(void **s) {
    (void)s;
    const char *why;
    if (!an_clang_load(&why)) fail_msg("%s", why);
    an_catalog *c = builtin();
    ut_buf all;
    ut_buf_init(&all);
    for (size_t i = 0; i < an_catalog_count(c); i++) {
        const an_rule *r = an_catalog_rule(c, i);
        if (r->lang != AN_LANG_C) continue;
        for (size_t j = 0; j < r->entries.len; j++)
            if (!r->entries.items[j]->wildcard && r->entries.items[j]->kind != AN_KIND_HEADER)
                ut_buf_printf(&all, "%s\n", r->entries.items[j]->name);
    }
    static const struct { const char *path, *lang, *std; } modes[] = {
        {"/t/x.c", "c", "-std=gnu11"}, {"/t/x.cpp", "c++", "-std=gnu++17"}, {"/t/x.cu", "cuda", "-std=gnu++17"}};
    for (int m = 0; m < 3; m++) {
        char *h = an_c_fast_header(c, modes[m].path, all.data, all.len);
        assert_non_null(strstr(h, m == 0 ? "cudaMalloc();" : "cudaMalloc(__XA &&...);"));
        struct CXUnsavedFile uf[2] = {{"/t/main", "", 0}, {"/t/decls.h", h, strlen(h)}};
        const char *args[] = {"-x", modes[m].lang, modes[m].std, "-nostdinc", "-include", "/t/decls.h", "-w",
                              "-ferror-limit=0", "--cuda-host-only", "-nocudainc", "-nocudalib", "--cuda-path=/nowhere"};
        int nargs = m == 2 ? 12 : 8;
        CXIndex idx = CL(clang_createIndex)(0, 0);
        CXTranslationUnit tu = NULL;
        assert_int_equal(CL(clang_parseTranslationUnit2)(idx, "/t/main", args, nargs, uf, 2, CXTranslationUnit_KeepGoing, &tu), CXError_Success);
        unsigned nd = CL(clang_getNumDiagnostics)(tu), errors = 0;
        for (unsigned i = 0; i < nd; i++) {
            CXDiagnostic d = CL(clang_getDiagnostic)(tu, i);
            if (CL(clang_getDiagnosticSeverity)(d) >= CXDiagnostic_Error) {
                char *msg = an_clang_take(CL(clang_getDiagnosticSpelling)(d));
                unsigned line;
                CL(clang_getExpansionLocation)(CL(clang_getDiagnosticLocation)(d), NULL, &line, NULL, NULL);
                print_message("%s: decls.h:%u: %s\n", modes[m].lang, line, msg);
                errors++;
                ut_free(msg);
            }
            CL(clang_disposeDiagnostic)(d);
        }
        CL(clang_disposeTranslationUnit)(tu);
        CL(clang_disposeIndex)(idx);
        ut_free(h);
        assert_int_equal(errors, 0);
    }
    ut_buf_free(&all);
    an_catalog_free(c);
}

/* Only what the file mentions is declared: the header stays small whatever the tables hold. */
static void generated_declarations_follow_the_file(void **s) {
    (void)s;
    an_catalog *c = builtin();
    const char *src = "void f(cudaStream_t s) { cudaStreamSynchronize(s); int k = cudaMemcpyHostToDevice; }";
    char *h = an_c_fast_header(c, "x.cpp", src, strlen(src));
    assert_non_null(strstr(h, "cudaStreamSynchronize(__XA &&...)"));
    assert_non_null(strstr(h, "cudaStream_t;"));
    assert_non_null(strstr(h, "cudaMemcpyHostToDevice"));
    assert_non_null(strstr(h, "cudaError_t")); /* the return type, a dependency */
    assert_null(strstr(h, "cudaMalloc"));
    assert_null(strstr(h, "ncclAllReduce"));
    assert_true(strlen(h) < 4096);
    ut_free(h);
    an_catalog_free(c);
}

static void masks_follow_each_file_type(void **s) {
    (void)s;
    struct { const char *path, *in, *out; } cases[] = {
        {"run.sh", "a # c\necho \"# no\" ${#x} b#c\n", "a    \necho \"# no\" ${#x} b#c\n"},
        {"Dockerfile", "# c\nRUN x # y\nENV A=\"#z\"\n", "   \nRUN x    \nENV A=\"#z\"\n"},
        {"a.yml", "k: v # c\nq: \"#x\" # d\nu: it's # e\n", "k: v    \nq: \"#x\"    \nu: it's    \n"},
        {"p.toml", "a = \"#x\" # c\nb = '''\n# in\n''' # d\n", "a = \"#x\"    \nb = '''\n# in\n'''    \n"},
        {"s.cfg", "; c\n  # d\nx = 1 # not a comment\n", "   \n     \nx = 1 # not a comment\n"},
        {"requirements.txt", "# c\npkg # d\nurl#egg=x\n", "   \npkg    \nurl#egg=x\n"},
        {"CMakeLists.txt", "a(\"#x\") # c\n#[[ b\nc ]] d\n", "a(\"#x\")    \n     \n     d\n"},
        {"Makefile", "A = 1 # c\nB = \\#x\n\techo \"#y\" # z\n", "A = 1    \nB = \\#x\n\techo \"#y\"    \n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        an_text_ranges r = {0};
        char *m = an_text_mask(an_text_kind_for_path(cases[i].path), cases[i].in, strlen(cases[i].in), &r);
        if (strcmp(m, cases[i].out)) fail_msg("%s: masked\n%s\nwanted\n%s", cases[i].path, m, cases[i].out);
        assert_true(r.len > 0);
        ut_free(m);
        ut_vec_free(&r);
    }
}

static void text_rules_read_their_files_only(void **s) {
    (void)s;
    char *e;
    an_catalog *c = load("rules:\n"
                         "  - {code: T1, name: t1, language: text, message: 'found {text}', pattern: '\\bNV_(?<report>[A-Z]+)'}\n"
                         "  - {code: T2, name: t2, language: text, message: m, files: ['Dockerfile*'], pattern: 'FROM'}\n",
                         &e);
    if (e) fail_msg("%s", e);
    an_diag_list l = analyze(c, AN_LANG_TEXT, "run.sh", "x NV_ONE # NV_TWO\nFROM y\n");
    char *sum = summary(&l);
    assert_string_equal(sum, "T1@1:6");
    assert_string_equal(l.items[0].message, "found ONE");
    ut_free(sum);
    an_diag_list_free(&l);
    l = analyze(c, AN_LANG_TEXT, "Dockerfile.gpu", "FROM y # NV_X\n# xpuify: ignore[T1]\nNV_Y\n");
    sum = summary(&l);
    assert_string_equal(sum, "T2@1:1");
    ut_free(sum);
    an_diag_list_free(&l);
    an_catalog_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_tables_load_and_look_up), cmocka_unit_test(api_table_errors_name_the_problem),
        cmocka_unit_test(table_findings_messages_and_context), cmocka_unit_test(generated_declarations_compile),
        cmocka_unit_test(generated_declarations_follow_the_file), cmocka_unit_test(masks_follow_each_file_type),
        cmocka_unit_test(text_rules_read_their_files_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
