/* Unit tests for analyzer/python/an_qshare: patterns of one shape are written once with each owner's predicates
 * behind its marker; anything not understood is refused; and the shipped catalog's query set, built with shared
 * shapes, finds exactly the matches (rule, node) of the query compiled from the rules' texts as they are, over
 * every Python fixture of the repository. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyzer/core/an_catalog_int.h"
#include "analyzer/python/an_qshare.h"
#include "analyzer/python/an_query.h"
#include "unit_files.h"
#include <ftw.h>
#include <stdlib.h>
#include <string.h>

static void shapes_written_once(void **s) {
    (void)s;
    const char *texts[] = {
        "(call function: (_) @f arguments: (argument_list) @args (#resolves-to? @f \"torch.a\"))",
        "; a comment\n(call\n  function: (_) @report\n  arguments: (argument_list) @a\n"
        "  (#resolves-to? @report \"torch.b\") (#not-has-keyword? @a \"device\"))\n"
        "(attribute attribute: (identifier) @report (#eq? @report \"is_cuda\"))",
        /* a predicate naming the capture that follows the pattern; a string with parentheses and an @ */
        "(call (argument_list (string) @s (#match? @s \"^(a|@b)$\"))) @report",
    };
    an_qshare q;
    assert_true(an_qshare_build(texts, 3, &q));
    assert_int_equal(q.nowners, 4);
    assert_int_equal(q.nshapes, 3);
    assert_int_equal(q.owners[0].shape, 0);
    assert_int_equal(q.owners[1].shape, 0); /* the first two: one shape */
    assert_int_equal(q.owners[2].shape, 1);
    assert_int_equal(q.owners[3].shape, 2);
    assert_int_equal(q.owners[1].rule, 1);
    assert_int_equal(q.owners[2].rule, 1);
    assert_int_equal(an_qshare_capture(&q.owners[1], "report", 6), 0);
    assert_int_equal(an_qshare_capture(&q.owners[1], "a", 1), 1);
    assert_int_equal(an_qshare_capture(&q.owners[1], "f", 1), -1);
    assert_int_equal(an_qshare_capture(&q.owners[3], "report", 6), 1);
    const char *t = q.text.data;
    assert_non_null(strstr(t, "(( call function: ( _ ) @c0 arguments: ( argument_list ) @c1 )\n"
                              "  (#an-owner! \"0\") (#resolves-to? @c0 \"torch.a\")\n"
                              "  (#an-owner! \"1\") (#resolves-to? @c0 \"torch.b\") (#not-has-keyword? @c1 \"device\")\n)"));
    assert_non_null(strstr(t, "(( call ( argument_list ( string ) @c0 ) ) @c1\n"));
    assert_non_null(strstr(t, "(#an-owner! \"3\") (#match? @c0 \"^(a|@b)$\")"));
    assert_null(strstr(t, "torch.a\")\n  (#an-owner! \"2\")"));
    an_qshare_free(&q);
}

static void refused(void **s) {
    (void)s;
    const char *bad[] = {
        "(call function: (_) @f",                              /* unbalanced */
        "(call) @f)",                                          /* a stray parenthesis */
        "(#eq? @f \"x\") (call function: (_) @f)",             /* a predicate outside any pattern */
        "(call function: (_) @f (#eq? @g \"x\"))",             /* a capture the pattern lacks */
        "\"return\" @r",                                       /* a top-level anonymous node */
        "(call) *",                                            /* a top-level quantifier */
        "(call function: (_) @f (#an-owner! \"0\"))",          /* the marker itself */
        "(call function: (_) @f (#eq? @f \"unterminated))",    /* an unterminated string */
        "",                                                    /* no pattern */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        an_qshare q;
        if (an_qshare_build(&bad[i], 1, &q)) fail_msg("accepted: %s", bad[i]);
        assert_int_equal(q.nowners, 0);
        assert_null(q.owners);
    }
}

/* ---- the shipped catalog: shared shapes against the rules' texts as they are ---- */

typedef struct {
    const an_rule *rule;
    uint32_t start, end;
} hit;

typedef struct {
    hit *items;
    size_t len, cap;
} hits;

static void on_match(void *ctx, const an_rule *rule, TSNode n) {
    hits *h = ctx;
    if (h->len == h->cap) h->items = realloc(h->items, (h->cap = h->cap ? 2 * h->cap : 64) * sizeof *h->items);
    h->items[h->len++] = (hit){rule, ts_node_start_byte(n), ts_node_end_byte(n)};
}

/* the same answer for both sets: the node's own text */
static const char *cur_src;
static bool resolve_text(void *ctx, TSNode n, ut_buf *out) {
    (void)ctx;
    ut_buf_append(out, cur_src + ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
    return true;
}

static int hit_cmp(const void *a, const void *b) {
    const hit *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return strcmp(x->rule->code, y->rule->code);
}

static struct an_query_set *shared_set, *plain_set;
static TSParser *parser;
static size_t files, matches;

static int each_file(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)ftw;
    size_t n = strlen(path);
    if (flag != FTW_F || n < 3 || strcmp(path + n - 3, ".py")) return 0;
    size_t len;
    char *src = slurp(path, &len);
    if (!src) return 0;
    cur_src = src;
    TSTree *tree = ts_parser_parse_string(parser, NULL, src, (uint32_t)len);
    hits a = {0}, b = {0};
    an_query_run(shared_set, ts_tree_root_node(tree), src, resolve_text, NULL, on_match, &a);
    an_query_run(plain_set, ts_tree_root_node(tree), src, resolve_text, NULL, on_match, &b);
    if (a.len) qsort(a.items, a.len, sizeof *a.items, hit_cmp);
    if (b.len) qsort(b.items, b.len, sizeof *b.items, hit_cmp);
    if (a.len != b.len) fail_msg("%s: %zu matches with shared shapes, %zu without", path, a.len, b.len);
    for (size_t i = 0; i < a.len; i++)
        if (hit_cmp(&a.items[i], &b.items[i]) || a.items[i].rule != b.items[i].rule)
            fail_msg("%s: match %zu differs: %s %u-%u against %s %u-%u", path, i, a.items[i].rule->code,
                     a.items[i].start, a.items[i].end, b.items[i].rule->code, b.items[i].start, b.items[i].end);
    files++, matches += a.len;
    free(a.items), free(b.items);
    ts_tree_delete(tree);
    free(src);
    return 0;
}

static void shipped_catalog_same_matches(void **s) {
    (void)s;
    an_catalog *c = an_catalog_new();
    ut_buf err;
    ut_buf_init(&err);
    int nerr = an_catalog_load_builtin(c, &err);
    if (!nerr) nerr = an_catalog_finalize(c, &err);
    assert_int_equal(nerr, 0);
    unsetenv("XPUIFY_NO_QSHARE");
    shared_set = an_query_set_build(c, AN_LANG_PYTHON, &err, &nerr);
    setenv("XPUIFY_NO_QSHARE", "1", 1);
    plain_set = an_query_set_build(c, AN_LANG_PYTHON, &err, &nerr);
    unsetenv("XPUIFY_NO_QSHARE");
    assert_int_equal(nerr, 0);
    assert_non_null(shared_set);
    assert_non_null(plain_set);
    /* sharing happens: the shipped rules have patterns of one shape */
    const char *texts[256];
    size_t nt = 0;
    for (size_t i = 0; i < c->rules.len && nt < 256; i++)
        if (c->rules.items[i]->lang == AN_LANG_PYTHON && c->rules.items[i]->query) texts[nt++] = c->rules.items[i]->query;
    an_qshare q;
    assert_true(an_qshare_build(texts, nt, &q));
    assert_true(q.nshapes < q.nowners);
    an_qshare_free(&q);

    parser = ts_parser_new();
    ts_parser_set_language(parser, an_query_language(AN_LANG_PYTHON));
    files = matches = 0;
    assert_int_equal(nftw("fixtures", each_file, 16, FTW_PHYS), 0);
    print_message("%zu fixture files, %zu matches\n", files, matches);
    assert_true(files > 100);
    assert_true(matches > 200);
    ts_parser_delete(parser);
    an_query_set_free(shared_set);
    an_query_set_free(plain_set);
    ut_buf_free(&err);
    an_catalog_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shapes_written_once),
        cmocka_unit_test(refused),
        cmocka_unit_test(shipped_catalog_same_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
