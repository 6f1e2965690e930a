/* Unit tests for the rule engine: YAML loading and its errors, the qualified-name index, prefilters, message
 * templates, query predicates, supersedes, syntax-error regions, guarded (device-agnostic) code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyzer/core/an_engine.h"
#include "analyzer/core/an_message.h"
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

static an_diag_list analyze(an_catalog *c, const char *py) {
    an_source src;
    an_source_init_mem(&src, "x.py", py, strlen(py));
    an_diag_list l = {0};
    an_engine_analyze_source(c, AN_LANG_PYTHON, &src, NULL, NULL, &l);
    an_source_free(&src);
    return l;
}

static const char *TABLE =
    "rules:\n"
    "  - code: T100\n    name: table\n    language: python\n    fix: safe\n    min_torch: '2.6'\n"
    "    message: '`{name}` -> `{replacement}` ({min_torch})'\n"
    "    qualnames:\n"
    "      - {name: torch.cuda.synchronize, replacement: torch.accelerator.synchronize}\n"
    "      - {name: torch.cuda.amp.autocast, replacement: torch.amp.autocast, min_torch: '1.10'}\n"
    "  - code: T101\n    name: catch-all\n    language: python\n    message: 'ns {name}'\n"
    "    qualnames: ['torch.cuda.*']\n";

static void exact_beats_wildcard(void **s) {
    (void)s;
    char *e;
    an_catalog *c = load(TABLE, &e);
    assert_null(e);
    assert_string_equal(an_catalog_lookup(c, "torch.cuda.synchronize", false)->rule->code, "T100");
    assert_string_equal(an_catalog_lookup(c, "torch.cuda.foo", false)->rule->code, "T101");
    assert_null(an_catalog_lookup(c, "torch.cuda.foo", true));
    assert_null(an_catalog_lookup(c, "torch.cudax", false));
    assert_null(an_catalog_lookup(c, "torch.cuda", false));
    an_catalog_free(c);
}

static void messages_and_entry_versions(void **s) {
    (void)s;
    char *e;
    an_catalog *c = load(TABLE, &e);
    an_diag_list l = analyze(c, "import torch\ntorch.cuda.synchronize()\nwith torch.cuda.amp.autocast():\n    torch.cuda.x\n");
    assert_int_equal(l.len, 3);
    assert_string_equal(l.items[0].message, "`torch.cuda.synchronize` -> `torch.accelerator.synchronize` (2.6)");
    assert_int_equal(l.items[0].line, 2);
    assert_int_equal(l.items[0].col, 1);
    assert_int_equal(l.items[0].end_col, 23);
    assert_string_equal(l.items[1].message, "`torch.cuda.amp.autocast` -> `torch.amp.autocast` (1.10)");
    assert_string_equal(l.items[2].message, "ns torch.cuda.x");
    an_diag_list_free(&l);
    an_catalog_free(c);
}

static void longest_exact_prefix_of_chain(void **s) {
    (void)s;
    char *e;
    an_catalog *c = load(TABLE, &e);
    an_diag_list l = analyze(c, "torch.cuda.synchronize.__doc__\n");
    assert_int_equal(l.len, 1);
    assert_string_equal(l.items[0].rule->code, "T100");
    assert_int_equal(l.items[0].end_col, 23); /* reported on the matching prefix */
    an_diag_list_free(&l);
    an_catalog_free(c);
}

static void prefilter_derives_triggers(void **s) {
    (void)s;
    char *e;
    an_catalog *c = load(TABLE, &e);
    assert_true(an_catalog_prefilter(c, AN_LANG_PYTHON, "from torch import cuda", 22, NULL));
    assert_false(an_catalog_prefilter(c, AN_LANG_PYTHON, "import torch\nx = 1\n", 19, NULL));
    /* suppression directives are read from the same literal scan; without a scan, from the text */
    static const char *texts[] = {"x = 1  # xpuify: ignore[XPU101]\n", "int x; // NOLINT\n", "x = 1  # xpuify ignore\n",
                                  "nolint = 1\n", "y = 2\n"};
    uint8_t found[256];
    assert_true(an_catalog_literal_count(c, AN_LANG_PYTHON) <= sizeof found);
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        size_t n = strlen(texts[i]);
        an_catalog_prefilter(c, AN_LANG_PYTHON, texts[i], n, found);
        bool want = i < 2;
        assert_int_equal(an_catalog_may_have_directives(c, AN_LANG_PYTHON, texts[i], n, found), want);
        assert_int_equal(an_catalog_may_have_directives(c, AN_LANG_PYTHON, texts[i], n, NULL), want);
    }
    an_catalog_free(c);
}

static void yaml_errors_name_file_line(void **s) {
    (void)s;
    char *e;
    an_catalog *c = load("rules:\n  - code: T1\n    name: n\n    message: m\n    bogus: 1\n    qualnames: [a.b]\n", &e);
    assert_non_null(e);
    assert_non_null(strstr(e, "t.yml:5:5: unknown rule key `bogus`"));
    free(e);
    an_catalog_free(c);
    c = load("rules:\n  - code: T1\n    name: n\n    message: m\n", &e);
    assert_non_null(strstr(e, "needs exactly one of"));
    free(e);
    an_catalog_free(c);
    c = load("rules: [\n", &e);
    assert_non_null(strstr(e, "YAML error"));
    free(e);
    an_catalog_free(c);
    c = load("rules:\n  - {code: T1, name: a, message: m, qualnames: [x.y]}\n  - {code: T1, name: b, message: m, qualnames: [x.z]}\n", &e);
    assert_non_null(strstr(e, "defined twice"));
    free(e);
    an_catalog_free(c);
    c = load("rules:\n  - {code: T1, name: a, message: m, severity: loud, qualnames: [x.y]}\n", &e);
    assert_non_null(strstr(e, "`severity` must be one of"));
    free(e);
    an_catalog_free(c);
    c = load("rules:\n  - {code: 'T 1', name: \"a\\nb\", message: m, qualnames: [x.y]}\n", &e);
    assert_non_null(e);
    assert_non_null(strstr(e, "`code` must be letters, digits"));
    assert_non_null(strstr(e, "`name` must be letters, digits"));
    assert_null(strstr(e, "a\nb"));
    free(e);
    an_catalog_free(c);
    /* a key given twice is an error, not a silent replacement (and, under ASan, not a leak) */
    c = load("rules:\n  - code: T1\n    name: a\n    message: m\n    message: m2\n    qualnames: [x.y]\n", &e);
    assert_non_null(e);
    assert_non_null(strstr(e, "t.yml:5:5: `message` is given twice"));
    free(e);
    an_catalog_free(c);
    c = load("rules:\n  - code: T1\n    name: a\n    message: m\n    qualnames:\n      - {name: x.y, note: a, note: b}\n", &e);
    assert_non_null(e);
    assert_non_null(strstr(e, "`note` is given twice"));
    free(e);
    an_catalog_free(c);
}

static void query_errors_name_rule(void **s) {
    (void)s;
    char *e;
    an_catalog *c = load("rules:\n  - {code: Q1, name: q, message: m, triggers: [x], query: '(call (nonexistent_node) @report)'}\n", &e);
    assert_non_null(e);
    assert_non_null(strstr(e, "rule Q1: query unknown node type"));
    free(e);
    an_catalog_free(c);
    c = load("rules:\n  - {code: Q1, name: q, message: m, triggers: [x], query: '(call) @other'}\n", &e);
    assert_non_null(strstr(e, "no @report capture"));
    free(e);
    an_catalog_free(c);
    c = load("rules:\n  - {code: Q1, name: q, message: m, triggers: [x], query: '((call) @report (#frob? @report \"x\"))'}\n", &e);
    assert_non_null(strstr(e, "unknown predicate #frob?"));
    free(e);
    an_catalog_free(c);
    c = load("rules:\n  - {code: Q1, name: q, message: m, query: '(call) @report'}\n", &e);
    assert_non_null(strstr(e, "needs `triggers`"));
    free(e);
    an_catalog_free(c);
    /* a trigger that does not compile names its rule, and does not hide the others' */
    c = load("rules:\n  - {code: Q1, name: q, message: m, triggers: ['a)'], query: '(call) @report'}\n", &e);
    assert_non_null(e);
    assert_non_null(strstr(e, "t.yml:2: rule Q1: trigger `a)` does not compile"));
    free(e);
    an_catalog_free(c);
    /* every error is one line, even when the query quoted around the error spans lines */
    c = load("rules:\n  - code: Q1\n    name: q\n    message: m\n    triggers: [x]\n    query: |\n"
             "      (call\n        (nonexistent_node) @report\n        (identifier))\n", &e);
    assert_non_null(e);
    assert_non_null(strstr(e, "rule Q1: query unknown node type at offset 9: nonexistent_node) @report\n"));
    assert_int_equal(strchr(e, '\n') - e + 1, (long)strlen(e));
    free(e);
    an_catalog_free(c);
}

static const char *QUERIES =
    "rules:\n"
    "  - code: Q1\n    name: resolves\n    language: python\n    message: 'call {text}'\n    triggers: [zzz]\n"
    "    query: |\n"
    "      (call function: (_) @report arguments: (argument_list) @a\n"
    "        (#resolves-to? @report \"torch.amp.GradScaler\") (#not-has-positional? @a) (#not-has-keyword? @a \"device\"))\n"
    "  - code: Q2\n    name: strings\n    language: python\n    message: 's {text}'\n    triggers: [cuda]\n"
    "    supersedes: [Q3]\n"
    "    query: '((string) @report (#string-match? @report \"^cuda$\"))'\n"
    "  - code: Q3\n    name: inner\n    language: python\n    message: 'i'\n    triggers: [cuda]\n"
    "    query: '((string_content) @report (#eq? @report \"cuda\"))'\n";

static void predicates(void **s) {
    (void)s;
    char *e;
    an_catalog *c = load(QUERIES, &e);
    assert_null(e);
    an_diag_list l = analyze(c, "import torch.amp as A  # zzz\nA.GradScaler()\nA.GradScaler('xpu')\nA.GradScaler(device='xpu')\n"
                                "A.GradScaler(**kw)\nA.GradScaler(enabled=True)\n");
    assert_int_equal(l.len, 2);
    assert_int_equal(l.items[0].line, 2);
    assert_int_equal(l.items[1].line, 6);
    assert_string_equal(l.items[0].message, "call A.GradScaler");
    an_diag_list_free(&l);
    /* Q2 supersedes Q3 inside its range; f-string content is matched without prefix and quotes */
    l = analyze(c, "a = 'cuda'\nb = f\"cuda\"\nc = 'xcuda'\n");
    assert_int_equal(l.len, 2);
    assert_string_equal(l.items[0].rule->code, "Q2");
    assert_string_equal(l.items[1].rule->code, "Q2");
    an_diag_list_free(&l);
    an_catalog_free(c);
}

static void syntax_errors_keep_other_findings(void **s) {
    (void)s;
    char *e;
    an_catalog *c = an_catalog_new();
    ut_buf err;
    ut_buf_init(&err);
    assert_int_equal(an_catalog_load_builtin(c, &err), 0);
    assert_int_equal(an_catalog_finalize(c, &err), 0);
    ut_buf_free(&err);
    (void)e;
    an_diag_list l = analyze(c, "import torch\ntorch.cuda.synchronize()\ndef broken(:\n    pass\nx.cuda()\n");
    int syntax = 0, sync = 0, method = 0;
    for (size_t i = 0; i < l.len; i++) {
        if (!strcmp(l.items[i].rule->code, "XPU001")) syntax++;
        if (!strcmp(l.items[i].rule->code, "XPU202")) sync++;
        if (!strcmp(l.items[i].rule->code, "XPU101")) method++;
    }
    assert_int_equal(syntax, 1);
    assert_int_equal(sync, 1);
    assert_int_equal(method, 1);
    an_diag_list_free(&l);
    /* guarded device-agnostic code is not reported; outside the guard it is. The dispatch is recorded as CUDA by
     * design (XPU812, an info record at its test, whose scope is the if statement) */
    l = analyze(c, "import torch\nif torch.cuda.is_available():\n    torch.cuda.synchronize()\nelif torch.xpu.is_available():\n"
                   "    torch.xpu.synchronize()\ntorch.cuda.synchronize()\n");
    assert_int_equal(l.len, 2);
    assert_string_equal(l.items[0].rule->code, "XPU812");
    assert_int_equal(l.items[0].line, 2);
    assert_int_equal(l.items[1].line, 6);
    assert_string_equal(l.items[1].rule->code, "XPU202");
    an_diag_list_free(&l);
    an_catalog_free(c);
}

/* The names region selection asks about for imports: rule names, their dotted prefixes, names under a rule's
 * name, and nothing that merely starts with the same letters. */
static void resolves_under(void **s) {
    (void)s;
    char *e;
    an_catalog *c = load(TABLE, &e);
    assert_null(e);
    const char *yes[] = {"torch", "torch.cuda", "torch.cuda.synchronize", "torch.cuda.amp", "torch.cuda.amp.autocast",
                         "torch.cuda.anything.below"};
    const char *no[] = {"torchvision", "torch.cud", "torch.cudax", "torch.nn", "numpy", "", "torch.", "cuda"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        assert_true(an_catalog_resolves_under(c, AN_LANG_PYTHON, yes[i], strlen(yes[i])));
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        assert_false(an_catalog_resolves_under(c, AN_LANG_PYTHON, no[i], strlen(no[i])));
    /* the length counts, not the terminator */
    assert_true(an_catalog_resolves_under(c, AN_LANG_PYTHON, "torch.cuda.stream_x", 10));
    an_catalog_free(c);
    /* without the catch-all, only the names themselves and their prefixes */
    c = load("rules:\n  - code: T200\n    name: sync\n    language: python\n    message: m\n"
             "    qualnames: [torch.cuda.synchronize]\n", &e);
    assert_null(e);
    assert_true(an_catalog_resolves_under(c, AN_LANG_PYTHON, "torch.cuda", 10));
    assert_true(an_catalog_resolves_under(c, AN_LANG_PYTHON, "torch.cuda.synchronize.x", 24));
    assert_false(an_catalog_resolves_under(c, AN_LANG_PYTHON, "torch.cuda.amp", 14));
    an_catalog_free(c);
}

static void message_template(void **s) {
    (void)s;
    an_message_vars v = {"a.b", NULL, "2.6", NULL, "careful"};
    char *m = an_message_format("`{name}` {replacement}{unknown} (>= {min_torch})", &v);
    assert_string_equal(m, "`a.b` {unknown} (>= 2.6). careful");
    free(m);
    /* a parenthesized group whose placeholder is empty is left out whole, with the space before it */
    an_message_vars w = {"a.b", "h.sync", NULL, NULL, NULL};
    m = an_message_format("use `{replacement}` (torch >= {min_torch}; same class) now (really)", &w);
    assert_string_equal(m, "use `h.sync` now (really)");
    free(m);
}

static void builtin_catalog_is_consistent(void **s) {
    (void)s;
    an_catalog *c = an_catalog_new();
    ut_buf err;
    ut_buf_init(&err);
    int n = an_catalog_load_builtin(c, &err);
    if (!n) n = an_catalog_finalize(c, &err);
    /* the shipped rules' queries are compiled on first use: every one of them compiles */
    if (!n) n = an_catalog_build_queries(c, &err);
    if (n) fprintf(stderr, "%s", err.data);
    assert_int_equal(n, 0);
    assert_non_null(an_catalog_queries(c, AN_LANG_PYTHON));
    ut_buf_free(&err);
    assert_true(an_catalog_count(c) > 40);
    for (size_t i = 0; i < an_catalog_count(c); i++) {
        const an_rule *r = an_catalog_rule(c, i);
        assert_non_null(r->doc);   /* every rule is documented */
        assert_true(strlen(r->code) >= 6);
        for (size_t j = 0; j < r->entries.len; j++) /* an entry with a fix names its replacement */
            if (r->entries.items[j]->fix != AN_FIX_NONE) assert_non_null(r->entries.items[j]->replacement);
    }
    an_catalog_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_beats_wildcard), cmocka_unit_test(messages_and_entry_versions),
        cmocka_unit_test(longest_exact_prefix_of_chain), cmocka_unit_test(prefilter_derives_triggers),
        cmocka_unit_test(yaml_errors_name_file_line), cmocka_unit_test(query_errors_name_rule),
        cmocka_unit_test(predicates), cmocka_unit_test(syntax_errors_keep_other_findings),
        cmocka_unit_test(message_template), cmocka_unit_test(builtin_catalog_is_consistent),
        cmocka_unit_test(resolves_under),
    };
    return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
