/* Unit tests for an_pyregion_units' import statements of a function or class definition (an_pyunit.imports_known): the
 * statements found are exactly its imports, each from its keyword to the end of its logical line; a definition
 * where an `import` word lies elsewhere (a docstring, a one-line `if`), an import in an except clause or sharing
 * its line with another statement is not known. And what the guard relies on (an_guard: select_units): those
 * statements parsed alone, as tree-sitter included ranges, give the bindings the whole file's tree gives there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyzer/python/an_pyregion.h"
#include "analyzer/python/an_resolve.h"
#include "util/ut_mem.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);

static an_source source_of(const char *text) {
    an_source s = {0};
    s.path = "t.py";
    s.text = ut_strdup(text);
    s.len = (uint32_t)strlen(text);
    an_source_index(&s);
    return s;
}

static void source_free(an_source *s) {
    ut_free(s->text);
    ut_free(s->line_starts);
    ut_free(s->cp_marks);
}

/* the unit of src that starts at the line holding `at` (a substring) */
static const an_pyunit *unit_at(const an_pyunits *pu, const an_source *src, const char *at) {
    const char *p = strstr(src->text, at);
    assert_non_null(p);
    uint32_t off = (uint32_t)(p - src->text);
    for (size_t i = 0; i < pu->units.len; i++)
        if (pu->units.items[i].span.start <= off && off < pu->units.items[i].span.end) return &pu->units.items[i];
    fail_msg("no unit holds %s", at);
    return NULL;
}

static char *span_text(const an_source *src, an_span s) { return ut_strndup(src->text + s.start, s.end - s.start); }

static const char *known =
    "import torch\n"
    "\n"
    "\n"
    "@decorate(1)\n"
    "def main(args):\n"
    "    x = 1\n"
    "    import wandb\n"
    "    if args.fast:\n"
    "        from flash_attn import (\n"
    "            flash_attn_func as fa,\n"
    "            flash_attn_varlen_func,\n"
    "        )\n"
    "    try:\n"
    "        import apex.amp as amp  # a comment\n"
    "    finally:\n"
    "        pass\n"
    "    def inner():\n"
    "        from . import helpers\n"
    "        return helpers\n"
    "    return x\n"
    "\n"
    "\n"
    "async def later():\n"
    "    import numpy as np\n"
    "    return np\n"
    "\n"
    "\n"
    "def none_at_all(x):\n"
    "    return x\n"
    "\n"
    "\n"
    "class Holder(Base):\n"
    "    import q\n"
    "\n"
    "    def load(self):\n"
    "        from r import s as t\n"
    "        return t\n";

static void test_imports_of_a_function(void **state) {
    (void)state;
    an_source src = source_of(known);
    an_pyunits pu;
    assert_true(an_pyregion_units(&src, &pu));
    const an_pyunit *m = unit_at(&pu, &src, "@decorate");
    assert_true(m->imports_known);
    assert_int_equal(m->nimports, 4);
    const char *want[] = {"import wandb\n",
                          "from flash_attn import (\n            flash_attn_func as fa,\n"
                          "            flash_attn_varlen_func,\n        )\n",
                          "import apex.amp as amp  # a comment\n", "from . import helpers\n"};
    for (size_t i = 0; i < 4; i++) {
        char *t = span_text(&src, pu.imports.items[m->ifirst + i]);
        assert_string_equal(t, want[i]);
        ut_free(t);
    }
    const an_pyunit *l = unit_at(&pu, &src, "async def later");
    assert_true(l->imports_known);
    assert_int_equal(l->nimports, 1);
    const an_pyunit *n = unit_at(&pu, &src, "def none_at_all");
    assert_true(n->imports_known);
    assert_int_equal(n->nimports, 0);
    const an_pyunit *c = unit_at(&pu, &src, "class Holder");
    assert_true(c->imports_known);
    assert_int_equal(c->nimports, 2);
    char *t = span_text(&src, pu.imports.items[c->ifirst + 1]);
    assert_string_equal(t, "from r import s as t\n");
    ut_free(t);
    assert_false(unit_at(&pu, &src, "import torch")->imports_known); /* not a definition */
    an_pyunits_free(&pu);
    source_free(&src);
}

/* each text's function (its last unit) has imports the scanner must not claim to know */
static const char *unsure[] = {
    /* in an except clause: a fallback binding there */
    "def f():\n    try:\n        import apex\n    except ImportError:\n        import fallback as apex\n    return apex\n",
    /* deeper inside one */
    "def f():\n    try:\n        pass\n    except ImportError:\n        if True:\n            import b\n",
    /* a one-line compound statement */
    "def f(x):\n    if x: import triton\n    return x\n",
    /* another statement on the import's line */
    "def f():\n    import triton; y = 1\n    return y\n",
    /* the word in a docstring */
    "def f():\n    \"\"\"Call after the import of torch.\"\"\"\n    import torch\n",
    /* in a comment */
    "def f():\n    # import wandb lazily\n    import wandb\n",
    /* in a string */
    "def f():\n    s = 'import x'\n    import wandb\n",
};

static void test_imports_it_cannot_vouch_for(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof unsure / sizeof *unsure; i++) {
        an_source src = source_of(unsure[i]);
        an_pyunits pu;
        assert_true(an_pyregion_units(&src, &pu));
        const an_pyunit *u = &pu.units.items[pu.units.len - 1];
        if (u->imports_known) fail_msg("sample %zu: imports claimed known", i);
        assert_int_equal(u->nimports, 0);
        an_pyunits_free(&pu);
        source_free(&src);
    }
}

static int binding_cmp(const void *a, const void *b) {
    const an_binding *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The bindings of the imports of every known function, parsed alone (top-level statements of a tree of included
 * ranges), equal the whole tree's bindings inside those functions: name, what it stands for, offsets, flags. */
static void test_imports_parsed_alone_bind_as_in_the_whole_file(void **state) {
    (void)state;
    const char *texts[] = {known, "def a():\n    import os.path\n    from x.y import (z,\n    w as v)\n\n\n"
                                  "class K:\n    import q\n\n\ndef b():\n    if 1:\n        import r as s\n"};
    for (size_t t = 0; t < 2; t++) {
        an_source src = source_of(texts[t]);
        an_pyunits pu;
        assert_true(an_pyregion_units(&src, &pu));
        TSParser *p = ts_parser_new();
        ts_parser_set_language(p, tree_sitter_python());
        TSTree *whole = ts_parser_parse_string(p, NULL, src.text, src.len);
        an_pyscope all;
        an_pyscope_collect(&all, ts_tree_root_node(whole), src.text);
        TSRange *rs = calloc(pu.imports.len + 1, sizeof *rs);
        uint32_t nr = 0;
        an_span_vec fns = {0};
        for (size_t u = 0; u < pu.units.len; u++) {
            const an_pyunit *x = &pu.units.items[u];
            if (!x->imports_known) continue;
            ut_vec_push(&fns, x->span);
            for (size_t k = 0; k < x->nimports; k++) {
                an_span s = pu.imports.items[x->ifirst + k];
                rs[nr++] = (TSRange){an_py_point_at(&src, s.start), an_py_point_at(&src, s.end), s.start, s.end};
            }
        }
        assert_true(nr > 0);
        ts_parser_set_included_ranges(p, rs, nr);
        TSTree *part = ts_parser_parse_string(p, NULL, src.text, src.len);
        TSNode root = ts_tree_root_node(part);
        assert_false(ts_node_has_error(root));
        uint32_t stmts = 0; /* one top-level import statement per range (and the comments on their lines) */
        for (uint32_t i = 0; i < ts_node_named_child_count(root); i++) {
            const char *ty = ts_node_type(ts_node_named_child(root, i));
            if (strcmp(ty, "comment")) {
                assert_true(!strcmp(ty, "import_statement") || !strcmp(ty, "import_from_statement"));
                stmts++;
            }
        }
        assert_int_equal(stmts, nr);
        an_pyscope alone;
        an_pyscope_collect(&alone, root, src.text);
        UT_VEC(an_binding) in_fns = {0};
        for (size_t i = 0; i < all.bindings.len; i++)
            if (an_spans_meet(&fns, all.bindings.items[i].start, all.bindings.items[i].end))
                ut_vec_push(&in_fns, all.bindings.items[i]);
        assert_int_equal(alone.bindings.len, in_fns.len);
        qsort(alone.bindings.items, alone.bindings.len, sizeof(an_binding), binding_cmp);
        qsort(in_fns.items, in_fns.len, sizeof(an_binding), binding_cmp);
        for (size_t i = 0; i < in_fns.len; i++) {
            const an_binding *a = &alone.bindings.items[i], *w = &in_fns.items[i];
            assert_string_equal(a->local, w->local);
            assert_string_equal(a->qual, w->qual);
            assert_int_equal(a->start, w->start);
            assert_int_equal(a->end, w->end);
            assert_int_equal(a->in_fallback, w->in_fallback);
            assert_int_equal(a->module, w->module);
        }
        ut_vec_free(&in_fns);
        ut_vec_free(&fns);
        an_pyscope_free(&alone);
        an_pyscope_free(&all);
        free(rs);
        ts_tree_delete(part);
        ts_tree_delete(whole);
        ts_parser_delete(p);
        an_pyunits_free(&pu);
        source_free(&src);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_imports_of_a_function),
        cmocka_unit_test(test_imports_it_cannot_vouch_for),
        cmocka_unit_test(test_imports_parsed_alone_bind_as_in_the_whole_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
