/* Unit tests for output/out_dirs: the report's per-directory roll-up: rows always sum to the total, never exceed the
 * limit, split the largest directory first, show a one-child chain as its end, and cover exactly what they count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "output/out_dirs.h"
#include <stdio.h>
#include <string.h>

static out_dir_leaf leaf(const char *dir, size_t safe, size_t unsafe, size_t human) {
    return (out_dir_leaf){(char *)dir, {safe, unsafe, human}};
}

static size_t sum(const out_dir_rows *r) {
    size_t t = 0;
    for (size_t i = 0; i < r->len; i++) {
        assert_int_equal(r->items[i].count, r->items[i].n[0] + r->items[i].n[1] + r->items[i].n[2]);
        t += r->items[i].count;
    }
    return t;
}

/* every leaf is covered by exactly one row */
static void covers_once(const out_dir_rows *r, const out_dir_leaf *l, size_t n) {
    for (size_t i = 0; i < n; i++) {
        int k = 0;
        for (size_t j = 0; j < r->len; j++) k += out_dir_row_covers(&r->items[j], l[i].dir);
        assert_int_equal(k, 1);
    }
}

static void splits_the_largest_directory(void **s) {
    (void)s;
    out_dir_leaf l[] = {leaf("", 1, 0, 0), leaf("src", 2, 0, 0), leaf("src/a", 10, 5, 5), leaf("src/b", 5, 0, 0),
                        leaf("tests", 3, 0, 1), leaf("tools/x/y", 2, 0, 0)};
    out_dir_rows r;
    out_dirs_rollup(l, 6, 10, &r);
    assert_int_equal(sum(&r), 34);
    covers_once(&r, l, 6);
    /* src (27) split into src/a, src/b and its own files; tools/x/y is one chain; at equal counts a directory
     * comes before a directory's own files */
    const char *want[] = {"src/a/", "src/b/", "tests/", "tools/x/y/", "src/ (its own files)", "(top-level files)"};
    assert_int_equal(r.len, 6);
    for (size_t i = 0; i < 6; i++) assert_string_equal(r.items[i].label, want[i]);
    out_dir_rows_free(&r);
}

static void other_row_when_the_top_level_does_not_fit(void **s) {
    (void)s;
    char names[30][8];
    out_dir_leaf l[30];
    for (int i = 0; i < 30; i++) {
        snprintf(names[i], sizeof names[i], "d%02d", i);
        l[i] = leaf(names[i], (size_t)i + 1, 0, 0);
    }
    out_dir_rows r;
    out_dirs_rollup(l, 30, 20, &r);
    assert_int_equal(r.len, 20);
    assert_int_equal(sum(&r), 465);
    covers_once(&r, l, 30);
    assert_true(r.items[19].other);
    assert_string_equal(r.items[19].label, "other (11 directories)");
    assert_string_equal(r.items[0].label, "d29/");
    out_dir_rows_free(&r);
}

static void a_split_that_does_not_fit_stops(void **s) {
    (void)s;
    /* big/ has 5 subdirectories: with a limit of 4 it stays whole, and small/ (smaller) is not split either */
    out_dir_leaf l[] = {leaf("big/a", 9, 0, 0), leaf("big/b", 9, 0, 0), leaf("big/c", 9, 0, 0), leaf("big/d", 9, 0, 0),
                        leaf("big/e", 9, 0, 0), leaf("small/a", 1, 0, 0), leaf("small/b", 1, 0, 0)};
    out_dir_rows r;
    out_dirs_rollup(l, 7, 4, &r);
    assert_int_equal(r.len, 2);
    assert_string_equal(r.items[0].label, "big/");
    assert_string_equal(r.items[1].label, "small/");
    assert_int_equal(sum(&r), 47);
    out_dir_rows_free(&r);
    out_dirs_rollup(l, 0, 4, &r);
    assert_int_equal(r.len, 0);
    out_dir_rows_free(&r);
}

static void prefixes_are_whole_names(void **s) {
    (void)s;
    /* "lib" must not cover "library" */
    out_dir_leaf l[] = {leaf("lib/x", 3, 0, 0), leaf("lib/y", 3, 0, 0), leaf("library", 1, 0, 0)};
    out_dir_rows r;
    out_dirs_rollup(l, 3, 2, &r);
    assert_int_equal(r.len, 2);
    covers_once(&r, l, 3);
    assert_string_equal(r.items[0].label, "lib/");
    assert_false(out_dir_row_covers(&r.items[0], "library"));
    out_dir_rows_free(&r);
}

static void absolute_paths(void **s) {
    (void)s;
    /* files outside the project keep absolute paths: the roll-up must still end (it looped on the empty first
     * component once) */
    out_dir_leaf l[] = {leaf("/work/p/a", 3, 0, 0), leaf("/work/p/b", 2, 0, 0), leaf("/work/p", 1, 0, 0),
                        leaf("rel", 1, 0, 0), leaf("a//b", 1, 0, 0)};
    out_dir_rows r;
    out_dirs_rollup(l, 5, 20, &r);
    assert_int_equal(sum(&r), 8);
    covers_once(&r, l, 5);
    assert_string_equal(r.items[0].label, "/work/p/a/");
    out_dir_rows_free(&r);
}

/* random trees (relative and absolute, shared prefixes like "a" and "ab"): for every limit the rows end, fit, sum
 * to the total and cover each directory once */
static void random_trees_keep_the_invariants(void **s) {
    (void)s;
    unsigned seed = 12345;
    for (int round = 0; round < 200; round++) {
        char names[60][64];
        out_dir_leaf l[60];
        size_t n = 0, total = 0;
        int want = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 60;
        while ((int)n < want) {
            char d[64] = "";
            int depth = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 5;
            if (((seed = seed * 1103515245u + 12345u) >> 16) % 7 == 0) strcat(d, "/");
            for (int k = 0; k < depth; k++) {
                static const char *const part[] = {"a", "ab", "b", "src", "x"};
                if (k) strcat(d, "/");
                strcat(d, part[((seed = seed * 1103515245u + 12345u) >> 16) % 5]);
            }
            if (!strcmp(d, "/")) d[0] = 0;
            bool dup = false;
            for (size_t k = 0; k < n && !dup; k++) dup = !strcmp(names[k], d);
            if (dup) { want--; continue; }
            snprintf(names[n], sizeof names[n], "%s", d);
            size_t c = 1 + ((seed = seed * 1103515245u + 12345u) >> 16) % 9;
            l[n] = leaf(names[n], c, 0, 1);
            total += c + 1;
            n++;
        }
        for (size_t limit = 2; limit <= 25; limit += 1 + limit / 4) {
            out_dir_rows r;
            out_dirs_rollup(l, n, limit, &r);
            assert_true(r.len >= 1 && r.len <= limit);
            assert_int_equal(sum(&r), total);
            covers_once(&r, l, n);
            for (size_t k = 1; k < r.len; k++)
                if (!r.items[k].other) assert_true(r.items[k - 1].count >= r.items[k].count);
            out_dir_rows_free(&r);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(splits_the_largest_directory),
        cmocka_unit_test(other_row_when_the_top_level_does_not_fit),
        cmocka_unit_test(a_split_that_does_not_fit_stops),
        cmocka_unit_test(prefixes_are_whole_names),
        cmocka_unit_test(absolute_paths),
        cmocka_unit_test(random_trees_keep_the_invariants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
