/* Unit tests for an_pynodes: the node index lists the nodes a tree cursor visits, in its order, with the depth, field
 * and symbol the cursor gives, and each node's `next` is the first node after its subtree (what the collectors of the
 * front end rely on to read it in place of a cursor walk); an_pykinds names a node's type as ts_node_type does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyzer/python/an_pyfield.h"
#include "analyzer/python/an_pynodes.h"
#include "tests/unit/unit_files.h"
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);

static const char *const samples[] = {
    "",
    "x = 1\n",
    "import torch\nx = torch.zeros(3).cuda()\nif torch.cuda.is_available():\n    y = x.to('cuda')\nelse:\n    y = x\n",
    "class M(nn.Module):\n    @property\n    def f(self, a, *b, c=1, **d):\n        try:\n            return {'cuda': a}[b]\n"
    "        except (KeyError, ValueError) as e:\n            pass\n",
    "def f(:\n  x = [1, 2,\n  y = f'{a!r:>{w}}' 'b'\n",                       /* errors and MISSING nodes */
    "a = (lambda x: x if x else -x)(3)\nwith open('f') as h, g() as k:\n    print(*h, sep='')\n",
    "async def g():\n    async for x in y:\n        await z\n    return [i for i in range(3) if i]\n",
    "x = 1 +\n",
};

/* the cursor's walk of the tree at root: every node, its depth, field and symbol, compared with the index */
static void compare_with_cursor(const an_pynodes *v, TSNode root) {
    TSTreeCursor cur = ts_tree_cursor_new(root);
    uint32_t i = 0, depth = 0;
    uint32_t *starts = calloc(v->len + 1, sizeof(uint32_t)); /* index of the open node at each depth */
    for (;;) {
        assert_true(i < v->len);
        TSNode n = ts_tree_cursor_current_node(&cur);
        assert_true(ts_node_eq(v->items[i].node, n));
        assert_int_equal(v->items[i].depth, depth);
        assert_int_equal(v->items[i].field, depth ? ts_tree_cursor_current_field_id(&cur) : 0);
        assert_int_equal(v->items[i].sym, ts_node_symbol(n));
        /* the parent: the open node one level up (the root has none) */
        assert_int_equal(v->items[i].parent, depth ? starts[depth - 1] : AN_PYNODE_NONE);
        starts[depth] = i;
        i++;
        if (ts_tree_cursor_goto_first_child(&cur)) {
            depth++;
            continue;
        }
        assert_int_equal(v->items[starts[depth]].next, i); /* a leaf: its subtree is itself */
        for (;;) {
            if (ts_tree_cursor_goto_next_sibling(&cur)) break;
            if (!ts_tree_cursor_goto_parent(&cur)) goto done;
            depth--;
            assert_int_equal(v->items[starts[depth]].next, i); /* the parent's subtree ends here */
        }
    }
done:
    assert_int_equal(i, v->len);
    assert_int_equal(v->items[0].next, v->len);
    free(starts);
    ts_tree_cursor_delete(&cur);
}

static void index_is_the_cursor_walk(void **state) {
    (void)state;
    TSParser *p = ts_parser_new();
    ts_parser_set_language(p, tree_sitter_python());
    for (size_t k = 0; k < sizeof samples / sizeof *samples; k++) {
        TSTree *t = ts_parser_parse_string(p, NULL, samples[k], (uint32_t)strlen(samples[k]));
        TSNode root = ts_tree_root_node(t);
        an_pynodes v;
        an_pynodes_build(&v, root);
        compare_with_cursor(&v, root);
        an_pynodes_free(&v);
        /* a subtree's index: the statement is its root (depth 0, no field) */
        if (ts_node_named_child_count(root)) {
            TSNode st = ts_node_named_child(root, 0);
            an_pynodes_build(&v, st);
            compare_with_cursor(&v, st);
            an_pynodes_free(&v);
        }
        ts_tree_delete(t);
    }
    ts_parser_delete(p);
}

/* many top-level statements (tree-sitter's hidden repetition nodes) and deep nesting */
static void index_of_large_trees(void **state) {
    (void)state;
    size_t n = 3000;
    char *src = malloc(n * 32 + 4096);
    size_t at = 0;
    for (size_t i = 0; i < n; i++) at += (size_t)sprintf(src + at, "x%zu = x.cuda()\n", i);
    for (size_t i = 0; i < 200; i++) src[at++] = '(';
    src[at++] = '1';
    for (size_t i = 0; i < 200; i++) src[at++] = ')';
    src[at++] = '\n';
    src[at] = 0;
    TSParser *p = ts_parser_new();
    ts_parser_set_language(p, tree_sitter_python());
    TSTree *t = ts_parser_parse_string(p, NULL, src, (uint32_t)at);
    an_pynodes v;
    an_pynodes_build(&v, ts_tree_root_node(t));
    compare_with_cursor(&v, ts_tree_root_node(t));
    /* the top-level statements, stepped through by `next` from index 1 */
    uint32_t tops = 0;
    for (uint32_t i = 1; i < v.len; i = v.items[i].next) {
        assert_int_equal(v.items[i].depth, 1);
        assert_true(ts_node_eq(v.items[i].node, ts_node_child(ts_tree_root_node(t), tops)));
        tops++;
    }
    assert_int_equal(tops, ts_node_child_count(ts_tree_root_node(t)));
    an_pynodes_free(&v);
    ts_tree_delete(t);
    ts_parser_delete(p);
    free(src);
}

/* an_pykinds: a node's kind is the position of its type name (as ts_node_type gives it) in the list, plus one */
static void kinds_name_types(void **state) {
    (void)state;
    static const char *const names[] = {"call", "identifier", "ERROR", "string", NULL};
    an_pykinds k;
    an_pykinds_init(&k, tree_sitter_python(), names);
    TSParser *p = ts_parser_new();
    ts_parser_set_language(p, tree_sitter_python());
    for (size_t s = 0; s < sizeof samples / sizeof *samples; s++) {
        TSTree *t = ts_parser_parse_string(p, NULL, samples[s], (uint32_t)strlen(samples[s]));
        an_pynodes v;
        an_pynodes_build(&v, ts_tree_root_node(t));
        for (uint32_t i = 0; i < v.len; i++) {
            const char *type = ts_node_type(v.items[i].node);
            uint8_t want = 0;
            for (int j = 0; names[j]; j++)
                if (!strcmp(type, names[j])) want = (uint8_t)(j + 1);
            /* the error symbol lies past the table: an ERROR node has no kind (no collector asks for one) */
            if (v.items[i].sym == (TSSymbol)-1) want = 0;
            assert_int_equal(an_pykind_of(&k, v.items[i].sym), want);
            assert_int_equal(an_pykind(&k, v.items[i].node), want);
        }
        an_pynodes_free(&v);
        ts_tree_delete(t);
    }
    ts_parser_delete(p);
    free(k.kinds);
}

/* the index's list of fieldless node types is the grammar's: the named types of its node-types.json that have
 * children but no fields (a newer grammar that gives one of them a field fails here, not silently) */
static void fieldless_types_are_the_grammars(void **state) {
    (void)state;
    size_t n;
    char *text = slurp("node_modules/tree-sitter-python/src/node-types.json", &n);
    assert_non_null(text);
    cJSON *types = cJSON_Parse(text);
    assert_non_null(types);
    size_t want = 0, listed = 0;
    for (; an_pynodes_fieldless[listed]; listed++) {}
    cJSON *t;
    cJSON_ArrayForEach(t, types) {
        cJSON *named = cJSON_GetObjectItem(t, "named"), *fields = cJSON_GetObjectItem(t, "fields");
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(t, "type"));
        if (!cJSON_IsTrue(named)) continue; /* an anonymous node (a keyword) may share a named type's name */
        bool fieldless = cJSON_IsTrue(named) && !cJSON_GetObjectItem(t, "subtypes") &&
                         cJSON_GetObjectItem(t, "children") && (!fields || !cJSON_GetArraySize(fields));
        bool in_list = false;
        for (size_t i = 0; an_pynodes_fieldless[i]; i++) in_list |= type && !strcmp(an_pynodes_fieldless[i], type);
        if (fieldless != in_list) fail_msg("node type %s: fieldless %d, listed %d", type, fieldless, in_list);
        want += fieldless;
    }
    assert_int_equal(want, listed);
    cJSON_Delete(types);
    free(text);
}

/* an_pynodes_last_starting: the last node starting at or before a byte, from any hint, against a scan */
static void last_starting_is_a_scan(void **state) {
    (void)state;
    TSParser *p = ts_parser_new();
    ts_parser_set_language(p, tree_sitter_python());
    for (size_t k = 0; k < sizeof samples / sizeof *samples; k++) {
        uint32_t len = (uint32_t)strlen(samples[k]);
        TSTree *t = ts_parser_parse_string(p, NULL, samples[k], len);
        an_pynodes v;
        an_pynodes_build(&v, ts_tree_root_node(t));
        for (uint32_t s = 0; s <= len + 1; s++) {
            uint32_t want = AN_PYNODE_NONE;
            for (uint32_t i = 0; i < v.len; i++)
                if (ts_node_start_byte(v.items[i].node) <= s) want = i;
            uint32_t hints[] = {0, v.len / 2, v.len ? v.len - 1 : 0, v.len + 5, UINT32_MAX};
            for (size_t h = 0; h < sizeof hints / sizeof *hints; h++) {
                uint32_t hint = hints[h];
                assert_int_equal(an_pynodes_last_starting(&v, s, &hint), want);
            }
        }
        an_pynodes_free(&v);
        ts_tree_delete(t);
    }
    an_pynodes empty = {0};
    uint32_t hint = 3;
    assert_int_equal(an_pynodes_last_starting(&empty, 0, &hint), AN_PYNODE_NONE);
    ts_parser_delete(p);
}

/* an_py_field with the tree's index set gives what ts_node_child_by_field_id gives, for every node of the index and
 * every field of the grammar (also fields the node cannot have: the null node), and for nodes of another tree or
 * none (no index for them: tree-sitter's answer) */
static void fields_from_the_index(const char *src, uint32_t len, TSParser *p) {
    TSTree *t = ts_parser_parse_string(p, NULL, src, len);
    TSTree *other = ts_parser_parse_string(p, NULL, src, len);
    an_pynodes v;
    an_pynodes_build(&v, ts_tree_root_node(t));
    compare_with_cursor(&v, ts_tree_root_node(t)); /* fields too (none asked under fieldless parents) */
    const TSLanguage *l = tree_sitter_python();
    uint32_t nf = ts_language_field_count(l);
    assert_null(an_py_field_index(&v));
    /* in the index's order, then backwards and strided: the search starts from the last node found */
    for (int order = 0; order < 3; order++)
        for (uint32_t k = 0; k < v.len; k++) {
            uint32_t i = order == 0 ? k : order == 1 ? v.len - 1 - k : (uint32_t)(((uint64_t)k * 7919) % v.len);
            TSNode n = v.items[i].node;
            for (uint32_t f = 1; f <= nf; f++) {
                const char *name = ts_language_field_name_for_id(l, (TSFieldId)f);
                if (!name) continue;
                TSNode want = ts_node_child_by_field_id(n, (TSFieldId)f);
                TSNode got = an_py_field(n, name, (uint32_t)strlen(name));
                if (!ts_node_eq(got, want))
                    fail_msg("field %s of %s at %u: index %s, tree-sitter %s", name, ts_node_type(n),
                             ts_node_start_byte(n), ts_node_is_null(got) ? "none" : ts_node_type(got),
                             ts_node_is_null(want) ? "none" : ts_node_type(want));
            }
        }
    /* a node of another tree of the same text: not found in the index, tree-sitter answers */
    TSNode o = ts_tree_root_node(other);
    if (ts_node_named_child_count(o)) {
        TSNode st = ts_node_named_child(o, 0);
        for (uint32_t f = 1; f <= nf; f++) {
            const char *name = ts_language_field_name_for_id(l, (TSFieldId)f);
            if (name) assert_true(ts_node_eq(an_py_field(st, name, (uint32_t)strlen(name)),
                                             ts_node_child_by_field_id(st, (TSFieldId)f)));
        }
    }
    assert_ptr_equal(an_py_field_index(NULL), &v);
    an_pynodes_free(&v);
    ts_tree_delete(other);
    ts_tree_delete(t);
}

static void field_fixtures(const char *dir, TSParser *p, int *files) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (n > 3 && !strcmp(e->d_name + n - 3, ".py")) {
            size_t len;
            char *src = slurp(path, &len);
            if (!src) continue;
            fields_from_the_index(src, (uint32_t)len, p);
            free(src);
            (*files)++;
        } else if (!strchr(e->d_name, '.')) {
            field_fixtures(path, p, files);
        }
    }
    closedir(d);
}

static void index_answers_fields(void **state) {
    (void)state;
    TSParser *p = ts_parser_new();
    ts_parser_set_language(p, tree_sitter_python());
    for (size_t k = 0; k < sizeof samples / sizeof *samples; k++)
        fields_from_the_index(samples[k], (uint32_t)strlen(samples[k]), p);
    int files = 0;
    field_fixtures("fixtures/python", p, &files);
    field_fixtures("fixtures/golden", p, &files);
    assert_true(files > 50); /* run from the repository root, as make unit does */
    ts_parser_delete(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(index_is_the_cursor_walk),
        cmocka_unit_test(index_of_large_trees),
        cmocka_unit_test(kinds_name_types),
        cmocka_unit_test(index_answers_fields),
        cmocka_unit_test(last_starting_is_a_scan),
        cmocka_unit_test(fieldless_types_are_the_grammars),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
