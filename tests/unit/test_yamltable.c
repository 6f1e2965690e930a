/* Unit tests for ut_yaml_table: each built-in rule file's document rebuilt from the tables written at build time is
 * the document libyaml loads from the file's text (the embedded copy the binary also holds): node for node the same
 * type, tag, scalar value, length and style, list items and mapping pairs, start and end marks; and the catalog
 * loaded from the tables is the catalog loaded by parsing (the same rules, the same fingerprint). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyzer/core/an_engine.h"
#include "util/ut_yaml_table.h"
#include <stdio.h>
#include <string.h>

struct xp_embedded { const char *path; const char *text; size_t len; };
extern const struct xp_embedded xp_builtin_rules[];
extern const size_t xp_builtin_rules_count;
extern const ut_yaml_table xp_builtin_docs;

static void same_mark(yaml_mark_t a, yaml_mark_t b) {
    assert_int_equal(a.index, b.index);
    assert_int_equal(a.line, b.line);
    assert_int_equal(a.column, b.column);
}

static void tables_are_libyaml_documents(void **state) {
    (void)state;
    assert_int_equal(xp_builtin_docs.ndocs, xp_builtin_rules_count);
    size_t nodes = 0;
    for (size_t i = 0; i < xp_builtin_rules_count; i++) {
        assert_string_equal(xp_builtin_docs.docs[i].path, xp_builtin_rules[i].path);
        yaml_parser_t p;
        yaml_document_t want, got;
        assert_true(yaml_parser_initialize(&p));
        yaml_parser_set_input_string(&p, (const unsigned char *)xp_builtin_rules[i].text, xp_builtin_rules[i].len);
        assert_true(yaml_parser_load(&p, &want));
        assert_true(ut_yaml_table_doc(&xp_builtin_docs, i, &got));
        assert_int_equal(got.nodes.top - got.nodes.start, want.nodes.top - want.nodes.start);
        same_mark(got.start_mark, want.start_mark);
        same_mark(got.end_mark, want.end_mark);
        assert_int_equal(got.start_implicit, want.start_implicit);
        assert_int_equal(got.end_implicit, want.end_implicit);
        for (yaml_node_t *a = got.nodes.start, *b = want.nodes.start; b < want.nodes.top; a++, b++, nodes++) {
            assert_int_equal(a->type, b->type);
            if (!b->tag) assert_null(a->tag);
            else assert_string_equal((const char *)a->tag, (const char *)b->tag);
            same_mark(a->start_mark, b->start_mark);
            same_mark(a->end_mark, b->end_mark);
            if (b->type == YAML_SCALAR_NODE) {
                assert_int_equal(a->data.scalar.length, b->data.scalar.length);
                assert_memory_equal(a->data.scalar.value, b->data.scalar.value, b->data.scalar.length + 1);
                assert_int_equal(a->data.scalar.style, b->data.scalar.style);
            } else if (b->type == YAML_SEQUENCE_NODE) {
                size_t n = (size_t)(b->data.sequence.items.top - b->data.sequence.items.start);
                assert_int_equal(a->data.sequence.items.top - a->data.sequence.items.start, n);
                if (n) assert_memory_equal(a->data.sequence.items.start, b->data.sequence.items.start, n * sizeof(int));
                assert_int_equal(a->data.sequence.style, b->data.sequence.style);
            } else if (b->type == YAML_MAPPING_NODE) {
                size_t n = (size_t)(b->data.mapping.pairs.top - b->data.mapping.pairs.start);
                assert_int_equal(a->data.mapping.pairs.top - a->data.mapping.pairs.start, n);
                for (size_t k = 0; k < n; k++) {
                    assert_int_equal(a->data.mapping.pairs.start[k].key, b->data.mapping.pairs.start[k].key);
                    assert_int_equal(a->data.mapping.pairs.start[k].value, b->data.mapping.pairs.start[k].value);
                }
                assert_int_equal(a->data.mapping.style, b->data.mapping.style);
            }
        }
        ut_yaml_table_doc_free(&got);
        yaml_document_delete(&want);
        yaml_parser_delete(&p);
    }
    assert_true(nodes > 10000); /* the whole catalog was compared */
    assert_false(ut_yaml_table_doc(&xp_builtin_docs, xp_builtin_docs.ndocs, &(yaml_document_t){0}));
}

/* the built-in catalog from the tables and from the texts: the same rules in the same order, the same fingerprint */
static void catalog_from_tables_is_catalog_from_text(void **state) {
    (void)state;
    ut_buf err;
    ut_buf_init(&err);
    an_catalog *a = an_catalog_new(), *b = an_catalog_new();
    assert_int_equal(an_catalog_load_builtin(a, &err), 0);
    for (size_t i = 0; i < xp_builtin_rules_count; i++)
        assert_int_equal(an_catalog_load_yaml(b, xp_builtin_rules[i].path, xp_builtin_rules[i].text,
                                              xp_builtin_rules[i].len, &err), 0);
    assert_int_equal(an_catalog_finalize(a, &err), 0);
    assert_int_equal(an_catalog_finalize(b, &err), 0);
    assert_int_equal(err.len, 0);
    assert_memory_equal(an_catalog_fingerprint(a), an_catalog_fingerprint(b), 20);
    size_t n = an_catalog_count(a);
    assert_int_equal(n, an_catalog_count(b));
    assert_true(n > 100);
    for (size_t i = 0; i < n; i++) {
        const an_rule *x = an_catalog_rule(a, i), *y = an_catalog_rule(b, i);
        assert_string_equal(x->code, y->code);
        assert_string_equal(x->message, y->message);
        assert_int_equal(x->origin_line, y->origin_line);
    }
    an_catalog_free(a);
    an_catalog_free(b);
    ut_buf_free(&err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tables_are_libyaml_documents),
        cmocka_unit_test(catalog_from_tables_is_catalog_from_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
