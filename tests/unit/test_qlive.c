/* Unit tests for analyzer/core/an_qlive: which query set a file's literal scan gets (a narrowed set of the rules it
 * can match, none, or every rule's), that a kept set serves a file whose rules it holds, and the cases that never
 * narrow: a user's query rule, a shipped rule rooted above statements. tests/cli/test_qlive.py shows end to end that
 * the findings are those of every rule's set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyzer/core/an_catalog_int.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static an_catalog *shipped(const char *extra, bool extra_shipped) {
    an_catalog *c = an_catalog_new();
    ut_buf err;
    ut_buf_init(&err);
    int nerr = an_catalog_load_builtin(c, &err);
    if (extra) {
        size_t before = c->rules.len;
        nerr += an_catalog_load_yaml(c, "extra.yml", extra, strlen(extra), &err);
        for (size_t k = before; k < c->rules.len; k++) c->rules.items[k]->shipped = extra_shipped;
    }
    if (!nerr) nerr = an_catalog_finalize(c, &err);
    if (nerr) fprintf(stderr, "%s", err.data ? err.data : "");
    assert_int_equal(nerr, 0);
    ut_buf_free(&err);
    return c;
}

static const struct an_query_set *set_for(an_catalog *c, const char *text) {
    uint8_t found[4096];
    assert_true(an_catalog_literal_count(c, AN_LANG_PYTHON) <= sizeof found);
    an_catalog_prefilter(c, AN_LANG_PYTHON, text, strlen(text), found);
    return an_catalog_queries_for(c, AN_LANG_PYTHON, found, strlen(text));
}

static void sets_by_the_words_of_the_file(void **s) {
    (void)s;
    an_catalog *c = shipped(NULL, false);
    /* `.cuda()` alone: a narrowed set, and not every rule's set (that one is not even compiled yet) */
    const struct an_query_set *a = set_for(c, "import torch\nif x.is_cuda:\n    y = x.cuda()\n");
    assert_non_null(a);
    assert_false(atomic_load(&c->queries_ready));
    /* fewer words: the kept set holds its rules and serves it, no second set */
    const struct an_query_set *b = set_for(c, "import torch\ny = x.cuda()\n");
    assert_ptr_equal(a, b);
    size_t n, none, full, sets;
    an_catalog_queries_stats(c, &n, &none, &full, &sets);
    assert_int_equal(n, 2);
    assert_int_equal(sets, 1);
    /* only API-table words: no query at all */
    assert_null(set_for(c, "from torch import cuda\ncuda.synchronize()\n"));
    /* the words of many rules: every rule's set */
    const char *many = "import torch\nx.cuda()\nx.is_cuda\ntorch.device('cuda')\nGradScaler()\ncudnn.benchmark = 1\n"
                       "init_process_group(backend='nccl')\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\nnvidia-smi\n";
    const struct an_query_set *f = set_for(c, many);
    assert_ptr_equal(f, an_catalog_queries(c, AN_LANG_PYTHON));
    an_catalog_queries_stats(c, &n, &none, &full, &sets);
    assert_int_equal(none, 1);
    assert_int_equal(full, 1);
    /* without a literal scan (an editor's run): every rule's set */
    assert_ptr_equal(an_catalog_queries_for(c, AN_LANG_PYTHON, NULL, 10), an_catalog_queries(c, AN_LANG_PYTHON));
    an_catalog_free(c);
}

static const char USER_RULE[] =
    "rules:\n"
    "  - code: USR001\n"
    "    name: user-device-string\n"
    "    language: python\n"
    "    severity: warning\n"
    "    summary: a device string\n"
    "    message: \"device string {text}\"\n"
    "    triggers: ['\\bdevice\\b']\n"
    "    query: |\n"
    "      (keyword_argument name: (identifier) @k value: (string) @report (#eq? @k \"device\"))\n";

static const char CLASS_RULE[] =
    "rules:\n"
    "  - code: USR002\n"
    "    name: cuda-class\n"
    "    language: python\n"
    "    severity: warning\n"
    "    summary: a class\n"
    "    message: \"class {text}\"\n"
    "    triggers: ['CudaThing']\n"
    "    query: |\n"
    "      (class_definition name: (identifier) @report (#eq? @report \"CudaThing\"))\n";

static const char ATTR_RULE[] =
    "rules:\n"
    "  - code: USR003\n"
    "    name: cuda-thing\n"
    "    language: python\n"
    "    severity: warning\n"
    "    summary: an attribute\n"
    "    message: \"attribute {text}\"\n"
    "    triggers: ['CudaThing']\n"
    "    query: |\n"
    "      (attribute attribute: (identifier) @report (#eq? @report \"CudaThing\"))\n";

static void never_narrowed(void **s) {
    (void)s;
    /* a user's query rule: its triggers are not known to hold for its query */
    an_catalog *c = shipped(USER_RULE, false);
    assert_ptr_equal(set_for(c, "import torch\ny = x.cuda()\n"), an_catalog_queries(c, AN_LANG_PYTHON));
    an_catalog_free(c);
    /* a rule rooted at a definition, even a shipped one: the front end then reads whole definitions for every
     * rule's set, and a smaller set must not make it read less */
    c = shipped(CLASS_RULE, true);
    assert_ptr_equal(set_for(c, "import torch\ny = x.cuda()\n"), an_catalog_queries(c, AN_LANG_PYTHON));
    an_catalog_free(c);
    /* the same rule rooted below statements is narrowed like the others */
    c = shipped(ATTR_RULE, true);
    const struct an_query_set *n = set_for(c, "import torch\ny = x.cuda()\n");
    assert_non_null(n);
    assert_false(atomic_load(&c->queries_ready)); /* every rule's set was never needed */
    an_catalog_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sets_by_the_words_of_the_file),
        cmocka_unit_test(never_narrowed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
