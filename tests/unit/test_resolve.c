/* Unit tests for an_resolve: which qualified name a Python name or attribute chain stands for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyzer/python/an_resolve.h"
#include <string.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);

/* Parses src, finds the first node whose text equals `expr` (an identifier or attribute), resolves it. */
static char *resolve(const char *src, const char *expr) {
    TSParser *p = ts_parser_new();
    ts_parser_set_language(p, tree_sitter_python());
    TSTree *t = ts_parser_parse_string(p, NULL, src, (uint32_t)strlen(src));
    TSNode root = ts_tree_root_node(t);
    an_pyscope sc;
    an_pyscope_collect(&sc, root, src);
    const char *at = strstr(src, expr);
    /* skip occurrences inside import lines */
    while (at) {
        const char *ls = at;
        while (ls > src && ls[-1] != '\n') ls--;
        if (strncmp(ls, "import ", 7) && strncmp(ls, "from ", 5)) break;
        at = strstr(at + 1, expr);
    }
    assert_non_null(at);
    uint32_t s = (uint32_t)(at - src), e = s + (uint32_t)strlen(expr);
    TSNode n = ts_node_descendant_for_byte_range(root, s, e);
    while (ts_node_end_byte(n) - ts_node_start_byte(n) < e - s) n = ts_node_parent(n);
    ut_buf out;
    ut_buf_init(&out);
    char *r = NULL;
    if (an_pyscope_qualname(&sc, n, src, &out)) r = ut_buf_take(&out);
    ut_buf_free(&out);
    an_pyscope_free(&sc);
    ts_tree_delete(t);
    ts_parser_delete(p);
    return r;
}

#define EXPECT(src, expr, want)                                                                                       \
    do {                                                                                                              \
        char *got_ = resolve(src, expr);                                                                              \
        if (want == NULL) assert_null(got_);                                                                          \
        else { assert_non_null(got_); assert_string_equal(got_, (const char *)want); }                                \
        free(got_);                                                                                                   \
    } while (0)

static void alias_module(void **s) { (void)s; EXPECT("import torch as t\nt.cuda.synchronize()\n", "t.cuda.synchronize", "torch.cuda.synchronize"); }
static void alias_submodule(void **s) { (void)s; EXPECT("import torch.cuda as tc\ntc.empty_cache()\n", "tc.empty_cache", "torch.cuda.empty_cache"); }
static void plain_dotted_import(void **s) { (void)s; EXPECT("import torch.cuda\ntorch.cuda.x()\n", "torch.cuda.x", "torch.cuda.x"); }
static void from_import_module(void **s) { (void)s; EXPECT("from torch import cuda\ncuda.manual_seed(1)\n", "cuda.manual_seed", "torch.cuda.manual_seed"); }
static void from_import_submodule(void **s) { (void)s; EXPECT("from torch.cuda import amp\namp.autocast()\n", "amp.autocast", "torch.cuda.amp.autocast"); }
static void from_import_name(void **s) { (void)s; EXPECT("from torch.cuda.amp import autocast, GradScaler\ns = GradScaler()\n", "GradScaler", "torch.cuda.amp.GradScaler"); }
static void from_import_alias(void **s) { (void)s; EXPECT("from torch.cuda.amp import GradScaler as GS\ns = GS()\n", "GS", "torch.cuda.amp.GradScaler"); }
static void unbound_root_is_itself(void **s) { (void)s; EXPECT("x = torch.cuda.is_available()\n", "torch.cuda.is_available", "torch.cuda.is_available"); }
static void local_import(void **s) { (void)s; EXPECT("def f():\n    import torch as th\n    th.cuda.synchronize()\n", "th.cuda.synchronize", "torch.cuda.synchronize"); }
static void relative_import_ignored(void **s) { (void)s; EXPECT("from . import cuda\ncuda.synchronize()\n", "cuda.synchronize", "cuda.synchronize"); }
static void call_in_chain_is_not_a_name(void **s) { (void)s; EXPECT("import torch\ntorch.cuda.get_device_properties(0).major\n", "torch.cuda.get_device_properties(0).major", NULL); }
static void fallback_import_resolves_to_primary(void **s) {
    (void)s;
    EXPECT("try:\n    from torch.amp import autocast\nexcept ImportError:\n    from torch.cuda.amp import autocast\nautocast('cuda')\n",
           "autocast", "torch.amp.autocast");
}
static void conflicting_imports_unresolved(void **s) {
    (void)s;
    EXPECT("if A:\n    from torch.amp import autocast\nelse:\n    from torch.cuda.amp import autocast\nautocast('cuda')\n",
           "autocast", NULL);
}
static void parameter_shadows_import(void **s) {
    (void)s;
    EXPECT("from torch.cuda import amp\ndef f(x, amp=None):\n    return amp.autocast()\n", "amp.autocast", NULL);
    EXPECT("from torch.cuda import amp\ng = lambda amp: amp.autocast()\n", "amp.autocast", NULL);
    EXPECT("from torch.cuda import amp\ndef f(x):\n    return amp.autocast()\n", "amp.autocast", "torch.cuda.amp.autocast");
    /* the parameter's function ends before the use; nested functions inside a shadowing one stay shadowed */
    EXPECT("from torch.cuda import amp\ndef f(amp):\n    pass\ndef g():\n    return amp.autocast()\n", "amp.autocast",
           "torch.cuda.amp.autocast");
    EXPECT("from torch.cuda import amp\ndef f(amp):\n    def g(x):\n        def h(y):\n            return amp.autocast()\n",
           "amp.autocast", NULL);
    EXPECT("from torch.cuda import amp\ndef f(x, *amp):\n    return amp.autocast()\n", "amp.autocast", NULL);
    EXPECT("from torch.cuda import amp\ndef f(x, amp: int = 0):\n    return amp.autocast()\n", "amp.autocast", NULL);
    EXPECT("from torch.cuda import amp\ndef f(ampx, am):\n    return amp.autocast()\n", "amp.autocast",
           "torch.cuda.amp.autocast");
}
static void same_import_twice_resolves(void **s) {
    (void)s;
    EXPECT("from torch.cuda.amp import autocast\nfrom torch.cuda.amp import autocast\nautocast()\n", "autocast", "torch.cuda.amp.autocast");
}
static void comment_inside_dotted_import(void **s) { (void)s; EXPECT("from torch.cuda.amp import (autocast,  # c\n GradScaler)\nGradScaler()\n", "GradScaler", "torch.cuda.amp.GradScaler"); }

/* the cached collection (an editor buffer) equals a plain one, before and after edits, and keeps only what the
 * last text holds */
static void same_scope(const an_pyscope *a, const an_pyscope *b) {
    assert_int_equal(a->bindings.len, b->bindings.len);
    for (size_t i = 0; i < a->bindings.len; i++) {
        assert_string_equal(a->bindings.items[i].local, b->bindings.items[i].local);
        assert_string_equal(a->bindings.items[i].qual, b->bindings.items[i].qual);
        assert_int_equal(a->bindings.items[i].start, b->bindings.items[i].start);
        assert_int_equal(a->bindings.items[i].end, b->bindings.items[i].end);
        assert_int_equal(a->bindings.items[i].in_fallback, b->bindings.items[i].in_fallback);
    }
    assert_int_equal(a->stars.len, b->stars.len);
    assert_int_equal(a->agnostic_names.len, b->agnostic_names.len);
    for (size_t i = 0; i < a->agnostic_names.len; i++) assert_string_equal(a->agnostic_names.items[i], b->agnostic_names.items[i]);
    assert_int_equal(a->shadows.len, b->shadows.len);
    for (size_t i = 0; i < a->shadows.len; i++) {
        assert_string_equal(a->shadows.items[i].name, b->shadows.items[i].name);
        assert_int_equal(a->shadows.items[i].start, b->shadows.items[i].start);
        assert_int_equal(a->shadows.items[i].end, b->shadows.items[i].end);
    }
}

static void cached_collection_equals_plain(void **s) {
    (void)s;
    static const char *const texts[] = {
        "import torch\ntry:\n    from torch.amp import GradScaler\nexcept ImportError:\n    from torch.cuda.amp import GradScaler\n"
        "use_xpu = torch.xpu.is_available()\ndef f(torch, x):\n    return torch.cuda.x(x)\nclass A:\n    def g(self, cuda):\n        g = lambda torch: torch\n",
        /* a statement added at the top: every later one moves */
        "from os import *\nimport torch\ntry:\n    from torch.amp import GradScaler\nexcept ImportError:\n    from torch.cuda.amp import GradScaler\n"
        "use_xpu = torch.xpu.is_available()\ndef f(torch, x):\n    return torch.cuda.x(x)\nclass A:\n    def g(self, cuda):\n        g = lambda torch: torch\n",
        /* a function edited, a probe removed, a duplicate statement */
        "from os import *\nimport torch\ndef f(x, torch):\n    return torch.cuda.x(x)\ndef f(x, torch):\n    return torch.cuda.x(x)\n",
        "", "import torch as t\n",
    };
    TSParser *p = ts_parser_new();
    ts_parser_set_language(p, tree_sitter_python());
    an_pyscope_cache *c = an_pyscope_cache_new();
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
            TSTree *t = ts_parser_parse_string(p, NULL, texts[i], (uint32_t)strlen(texts[i]));
            an_pyscope plain, cached;
            an_pyscope_collect(&plain, ts_tree_root_node(t), texts[i]);
            an_pyscope_collect_cached(&cached, ts_tree_root_node(t), texts[i], c);
            same_scope(&plain, &cached);
            an_pyscope_free(&plain), an_pyscope_free(&cached);
            ts_tree_delete(t);
        }
    an_pyscope_cache_free(c);
    ts_parser_delete(p);
}

static void lookup_reports_binding(void **s) {
    (void)s;
    const char *src = "import numpy as np\n";
    TSParser *p = ts_parser_new();
    ts_parser_set_language(p, tree_sitter_python());
    TSTree *t = ts_parser_parse_string(p, NULL, src, (uint32_t)strlen(src));
    an_pyscope sc;
    an_pyscope_collect(&sc, ts_tree_root_node(t), src);
    bool bound;
    assert_string_equal(an_pyscope_lookup(&sc, "np", 2, &bound), "numpy");
    assert_true(bound);
    assert_null(an_pyscope_lookup(&sc, "torch", 5, &bound));
    assert_false(bound);
    an_pyscope_free(&sc);
    ts_tree_delete(t);
    ts_parser_delete(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(alias_module), cmocka_unit_test(alias_submodule), cmocka_unit_test(plain_dotted_import),
        cmocka_unit_test(from_import_module), cmocka_unit_test(from_import_submodule),
        cmocka_unit_test(from_import_name), cmocka_unit_test(from_import_alias),
        cmocka_unit_test(unbound_root_is_itself), cmocka_unit_test(local_import),
        cmocka_unit_test(relative_import_ignored), cmocka_unit_test(call_in_chain_is_not_a_name),
        cmocka_unit_test(conflicting_imports_unresolved), cmocka_unit_test(fallback_import_resolves_to_primary),
        cmocka_unit_test(parameter_shadows_import), cmocka_unit_test(same_import_twice_resolves),
        cmocka_unit_test(comment_inside_dotted_import), cmocka_unit_test(lookup_reports_binding), cmocka_unit_test(cached_collection_equals_plain),
    };
    return cmocka_run_group_tests_name("resolve", tests, NULL, NULL);
}
