/* Unit tests for suppression comments: xpuify directives in Python and C comments, clang-tidy's NOLINT family (fed
 * as a C front end will feed them), logical-line coverage, blocks, and the unused-suppression findings with their
 * removal fixes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyzer/core/an_engine.h"
#include "analyzer/core/an_suppress.h"
#include <stdio.h>
#include <string.h>

static an_catalog *cat;

static int setup(void **s) {
    (void)s;
    cat = an_catalog_new();
    ut_buf err;
    ut_buf_init(&err);
    int n = an_catalog_load_builtin(cat, &err);
    if (!n) n = an_catalog_finalize(cat, &err);
    ut_buf_free(&err);
    return n;
}

static int teardown(void **s) {
    (void)s;
    an_catalog_free(cat);
    return 0;
}

/* Feeds every comment of a C-family text, the way a C front end hands over its comment nodes. */
static void feed_c(an_suppressions *sup, const an_source *src) {
    const char *t = src->text;
    for (uint32_t i = 0; i + 1 < src->len; i++) {
        if (t[i] == '/' && t[i + 1] == '/') {
            uint32_t e = i;
            while (e < src->len && t[e] != '\n') e++;
            an_suppress_add_comment(sup, src, i, e, "//");
            i = e;
        } else if (t[i] == '/' && t[i + 1] == '*') {
            const char *close = strstr(t + i + 2, "*/");
            uint32_t e = close ? (uint32_t)(close - t) + 2 : src->len;
            an_suppress_add_comment(sup, src, i, e, "/*");
            i = e - 1;
        }
    }
}

static an_diag at_line(const char *code, uint32_t line) {
    an_diag d = {0};
    d.rule = an_catalog_find(cat, code);
    d.line = line;
    return d;
}

static bool hidden(an_suppressions *s, const char *code, uint32_t line) {
    an_diag d = at_line(code, line);
    assert_non_null(d.rule);
    return an_suppress_hides(s, &d);
}

static void nolint_family(void **st) {
    (void)st;
    const char *c =
        "int a = cudaMalloc(p); // NOLINT(xpuify-XPU101)\n"            /* 1 */
        "int b = f(); // NOLINT(bugprone-foo)\n"                        /* 2: another tool's */
        "// NOLINTNEXTLINE(xpuify-*)\n"                                 /* 3 */
        "int c = g();\n"                                                /* 4 */
        "int d = h(); // NOLINT\n"                                      /* 5: bare */
        "/* NOLINTBEGIN(xpuify-cuda-stream-event) */\n"                 /* 6 */
        "int e = i();\n"                                                /* 7 */
        "// NOLINTEND(xpuify-cuda-stream-event)\n"                      /* 8 */
        "int f2 = j(); // NOLINT(bugprone-x, xpuify-XPU2*)\n"           /* 9: glob, mixed */
        "int g2 = k(); // NOLINTFOO(xpuify-XPU101)\n"                   /* 10: not a directive */
        "int h2 = l(); // xpuify: ignore[XPU101]\n";                    /* 11: xpuify spelling in C */
    an_source src;
    an_source_init_mem(&src, "k.cu", c, strlen(c));
    an_suppressions s = {0};
    feed_c(&s, &src);
    an_suppress_finish(&s, &src, NULL);
    assert_int_equal(s.items.len, 8);
    assert_true(hidden(&s, "XPU101", 1));
    assert_false(hidden(&s, "XPU202", 1));
    assert_false(hidden(&s, "XPU101", 2));
    assert_true(hidden(&s, "XPU101", 4));
    assert_true(hidden(&s, "XPU202", 4));
    assert_false(hidden(&s, "XPU101", 3));
    assert_true(hidden(&s, "XPU301", 5));
    assert_true(hidden(&s, "XPU202", 7));
    assert_false(hidden(&s, "XPU101", 7));
    assert_false(hidden(&s, "XPU202", 9 + 1));
    assert_true(hidden(&s, "XPU203", 9));
    assert_false(hidden(&s, "XPU101", 9));
    assert_false(hidden(&s, "XPU101", 10));
    assert_true(hidden(&s, "XPU101", 11));
    /* kinds and what each covers */
    assert_int_equal(s.items.items[0].syntax, AN_SUP_NOLINT);
    assert_true(s.items.items[1].foreign);
    assert_int_equal(s.items.items[2].first, 4);
    assert_true(s.items.items[3].foreign); /* bare NOLINT: never reported unused */
    assert_int_equal(s.items.items[4].kind, AN_SUP_DISABLE);
    assert_int_equal(s.items.items[4].last, 8);
    assert_int_equal(s.items.items[4].pair, 5);
    assert_true(s.items.items[6].codes.items[0].foreign);
    assert_true(s.items.items[6].codes.items[1].glob);
    assert_int_equal(s.items.items[7].syntax, AN_SUP_XPUIFY);
    an_suppress_free(&s);
    an_source_free(&src);
}

static char *apply_fix(const an_source *src, const an_diag *d) {
    size_t n;
    return an_edits_apply(src->text, src->len, d->fix->edits.items, d->fix->edits.len, &n);
}

static void nolint_unused_fixes(void **st) {
    (void)st;
    const char *c =
        "int a = 1; // NOLINT(xpuify-XPU999)\n"
        "int b = 2; // NOLINT(bugprone-foo, xpuify-XPU101)\n"
        "// NOLINTNEXTLINE(xpuify-XPU202)\n"
        "int c = 3;\n";
    an_source src;
    an_source_init_mem(&src, "k.cu", c, strlen(c));
    an_suppressions s = {0};
    feed_c(&s, &src);
    an_suppress_finish(&s, &src, NULL);
    an_diag_list out = {0};
    const an_rule *unused = an_catalog_builtin(cat, "unused-suppression");
    assert_non_null(unused);
    an_suppress_report_unused(&s, &src, cat, unused, NULL, AN_LANG_PYTHON, &out);
    assert_int_equal(out.len, 3);
    assert_non_null(strstr(out.items[0].message, "`XPU999` names no rule"));
    char *t = apply_fix(&src, &out.items[0]);
    assert_string_equal(t, "int a = 1;\nint b = 2; // NOLINT(bugprone-foo, xpuify-XPU101)\n// NOLINTNEXTLINE(xpuify-XPU202)\nint c = 3;\n");
    free(t);
    t = apply_fix(&src, &out.items[1]); /* the other tool's check stays */
    assert_string_equal(t, "int a = 1; // NOLINT(xpuify-XPU999)\nint b = 2; // NOLINT(bugprone-foo)\n// NOLINTNEXTLINE(xpuify-XPU202)\nint c = 3;\n");
    free(t);
    t = apply_fix(&src, &out.items[2]); /* a comment alone on its line goes with its line */
    assert_string_equal(t, "int a = 1; // NOLINT(xpuify-XPU999)\nint b = 2; // NOLINT(bugprone-foo, xpuify-XPU101)\nint c = 3;\n");
    free(t);
    assert_int_equal(out.items[0].line, 1);
    assert_int_equal(out.items[0].col, 15);
    an_diag_list_free(&out);
    an_suppress_free(&s);
    an_source_free(&src);
}

static an_diag_list analyze_py(const char *py, const bool *en) {
    an_source src;
    an_source_init_mem(&src, "x.py", py, strlen(py));
    an_diag_list l = {0};
    an_engine_analyze_source(cat, AN_LANG_PYTHON, &src, en, NULL, &l);
    an_source_free(&src);
    return l;
}

static void python_directives(void **st) {
    (void)st;
    an_diag_list l = analyze_py(
        "import torch\n"
        "torch.cuda.synchronize()  # xpuify: ignore[XPU202]\n"
        "# xpuify: ignore[cuda-stream-event]\n"
        "# (a second comment line between)\n"
        "torch.cuda.synchronize(\n"
        "    torch.cuda.current_stream())\n"
        "x = y.cuda()  # noqa: E501  # xpuify: ignore[XPU1] legacy code\n"
        "# xpuify: disable[XPU2]\n"
        "torch.cuda.synchronize()\n"
        "# xpuify: enable[XPU2]\n"
        "torch.cuda.synchronize()\n", NULL);
    /* only the last line is reported: own-line ignore covers the whole two-line statement */
    assert_int_equal(l.len, 1);
    assert_string_equal(l.items[0].rule->code, "XPU202");
    assert_int_equal(l.items[0].line, 11);
    an_diag_list_free(&l);
    l = analyze_py("# xpuify: ignore-file[XPU202]\nimport torch\ntorch.cuda.synchronize()\nx.cuda()\n", NULL);
    assert_int_equal(l.len, 1);
    assert_string_equal(l.items[0].rule->code, "XPU101");
    an_diag_list_free(&l);
    l = analyze_py("import torch\nx = y.cuda()  # xpuify: ignore\n", NULL); /* no list: every rule */
    assert_int_equal(l.len, 0);
    an_diag_list_free(&l);
}

static void python_unused(void **st) {
    (void)st;
    const char *py = "import torch\n"
                     "x = 1  # xpuify: ignore[XPU101]\n"
                     "y = z.cuda()  # xpuify: ignore[XPU101, XPU202]\n"
                     "# xpuify: disable[XPU202]\n"
                     "w = 2\n"
                     "# xpuify: enable[XPU202]\n"
                     "v = 3  # xpuify: ignore[XPU101, XPU002]\n";
    an_diag_list l = analyze_py(py, NULL);
    assert_int_equal(l.len, 3);
    for (size_t i = 0; i < l.len; i++) assert_string_equal(l.items[i].rule->code, "XPU002");
    an_source src;
    an_source_init_mem(&src, "x.py", py, strlen(py));
    char *t = apply_fix(&src, &l.items[0]);
    assert_non_null(strstr(t, "\nx = 1\n"));
    free(t);
    t = apply_fix(&src, &l.items[1]);
    assert_non_null(strstr(t, "y = z.cuda()  # xpuify: ignore[XPU101]\n"));
    free(t);
    t = apply_fix(&src, &l.items[2]); /* the block and its enable both go */
    assert_non_null(strstr(t, "\nw = 2\nv = 3"));
    free(t);
    an_source_free(&src);
    an_diag_list_free(&l);
    /* a selector whose rule did not run is not called unused */
    bool *en = calloc(an_catalog_count(cat), sizeof(bool));
    for (size_t i = 0; i < an_catalog_count(cat); i++) en[i] = true;
    en[an_catalog_find(cat, "XPU101")->index] = false;
    l = analyze_py("x = 1  # xpuify: ignore[XPU101]\n", en);
    assert_int_equal(l.len, 0);
    an_diag_list_free(&l);
    en[an_catalog_find(cat, "XPU002")->index] = false;
    en[an_catalog_find(cat, "XPU101")->index] = true;
    l = analyze_py("x = 1  # xpuify: ignore[XPU101]\n", en);
    assert_int_equal(l.len, 0);
    an_diag_list_free(&l);
    free(en);
    /* ignore-file naming the rule turns it off for the file */
    l = analyze_py("# xpuify: ignore-file[unused-suppression]\nx = 1  # xpuify: ignore[XPU101]\n", NULL);
    assert_int_equal(l.len, 0);
    an_diag_list_free(&l);
}

static void line_info(void **st) {
    (void)st;
    const char *py = "def f(x,\n      y):\n    s = '''a\nb'''\n    return x + \\\n        y\n";
    an_source src;
    an_source_init_mem(&src, "x.py", py, strlen(py));
    an_line_info li = {0};
    assert_true(an_engine_line_info(AN_LANG_PYTHON, &src, &li, NULL));
    assert_int_equal(li.logical_end[1], 2); /* the def header spans two lines */
    assert_int_equal(li.logical_end[3], 4);
    assert_false(li.comment_ok[3]);        /* inside the string */
    assert_true(li.comment_ok[4]);
    assert_false(li.comment_ok[5]);        /* backslash continuation */
    assert_int_equal(li.stmt_start[6], 5);
    assert_int_equal(li.stmt_start[4], 3);
    an_line_info_free(&li);
    an_source_free(&src);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nolint_family), cmocka_unit_test(nolint_unused_fixes), cmocka_unit_test(python_directives),
        cmocka_unit_test(python_unused), cmocka_unit_test(line_info),
    };
    return cmocka_run_group_tests_name("suppress", tests, setup, teardown);
}
