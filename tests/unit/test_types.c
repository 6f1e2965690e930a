/* Unit tests for an_types: which receivers of `.cuda()` are known torch tensors or modules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyzer/python/an_types.h"
#include <string.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);

/* Is the receiver of the n-th (0-based) `.cuda(` of src a torch value? */
static bool receiver_known(const char *src, int nth) {
    TSParser *p = ts_parser_new();
    ts_parser_set_language(p, tree_sitter_python());
    TSTree *t = ts_parser_parse_string(p, NULL, src, (uint32_t)strlen(src));
    an_pyscope sc;
    an_pyscope_collect(&sc, ts_tree_root_node(t), src);
    const char *at = src;
    for (int i = 0; i <= nth; i++) {
        at = strstr(i ? at + 1 : at, ".cuda(");
        assert_non_null(at);
    }
    /* the receiver: the node that ends where `.cuda` starts */
    uint32_t e = (uint32_t)(at - src);
    TSNode attr = ts_node_descendant_for_byte_range(ts_tree_root_node(t), e + 1, e + 5);
    while (strcmp(ts_node_type(attr), "attribute")) attr = ts_node_parent(attr);
    TSNode obj = ts_node_child_by_field_name(attr, "object", 6);
    bool r = an_types_is_torch(src, (uint32_t)strlen(src), &sc, ts_node_start_byte(obj), ts_node_end_byte(obj),
                               ts_node_start_byte(obj));
    an_pyscope_free(&sc);
    ts_tree_delete(t);
    ts_parser_delete(p);
    return r;
}

static void factories_and_methods(void **s) {
    (void)s;
    assert_true(receiver_known("import torch\nx = torch.zeros(3).cuda()\n", 0));
    assert_true(receiver_known("import torch as th\nx = th.randn(2, 2).float().cuda()\n", 0));
    assert_true(receiver_known("from torch import nn\nm = nn.Linear(2, 2).cuda()\n", 0));
    assert_true(receiver_known("import torchvision\nm = torchvision.models.resnet18().cuda()\n", 0));
    assert_false(receiver_known("import numpy as np\nx = np.zeros(3).cuda()\n", 0));
    assert_false(receiver_known("import torch\ng = torch.cuda.Stream().cuda()\n", 0));
}

static void module_classes(void **s) {
    (void)s;
    const char *src = "import torch.nn as nn\nclass A(nn.Module):\n    pass\nclass B(A):\n    pass\nclass C:\n    pass\n"
                      "a = A().cuda()\nb = B().cuda()\nc = C().cuda()\n";
    assert_true(receiver_known(src, 0));
    assert_true(receiver_known(src, 1));
    assert_false(receiver_known(src, 2));
    assert_false(receiver_known("from models import Net\nn = Net().cuda()\n", 0));
}

static void names(void **s) {
    (void)s;
    /* every assignment known; one unknown assignment makes the name unknown; x = x.method() keeps it */
    assert_true(receiver_known("import torch\ndef f():\n    w = torch.ones(2)\n    w = w.cuda()\n", 0));
    assert_false(receiver_known("import torch\ndef f(flag):\n    w = torch.ones(2)\n    if flag:\n        w = load()\n"
                                "    w.cuda()\n", 0));
    assert_false(receiver_known("def f(obj):\n    obj.cuda()\n", 0));
    /* a name of another function is not this one's */
    assert_false(receiver_known("import torch\ndef g():\n    w = torch.ones(2)\ndef f(w):\n    w.cuda()\n", 0));
    /* self attributes: any assignment in the file */
    assert_true(receiver_known("import torch\nclass T:\n    def __init__(self):\n        self.b = torch.empty(1)\n"
                               "    def go(self):\n        self.b.cuda()\n", 0));
}

static void annotations_and_loaders(void **s) {
    (void)s;
    assert_true(receiver_known("import torch\ndef f(x: torch.Tensor):\n    return x.cuda()\n", 0));
    assert_true(receiver_known("from torch import nn\ndef f(m: nn.Module, n):\n    return m.cuda()\n", 0));
    assert_false(receiver_known("import torch\ndef f(x: int):\n    return x.cuda()\n", 0));
    const char *loop = "from torch.utils.data import DataLoader\nimport torch\n"
                       "def train(ds):\n    loader = DataLoader(ds, batch_size=2)\n    for x, y in loader:\n"
                       "        x = x.cuda()\n    for i, (a, b) in enumerate(loader):\n        b.cuda()\n"
                       "    for z in other:\n        z.cuda()\n";
    assert_true(receiver_known(loop, 0));
    assert_true(receiver_known(loop, 1));
    assert_false(receiver_known(loop, 2));
}

static void uses_as_torch(void **s) {
    (void)s;
    /* a parameter also used with tensor-only methods; an untyped one beside it is not */
    const char *par = "def f(x, y):\n    n = x.size(0)\n    x = x.cuda()\n    y = y.cuda()\n    return x, y, n\n";
    assert_true(receiver_known(par, 0));
    assert_false(receiver_known(par, 1));
    /* a module used as one (`model.eval()`), and what `.cuda()` returns used as a tensor or module */
    assert_true(receiver_known("def f(model):\n    model.eval()\n    model.cuda()\n", 0));
    assert_true(receiver_known("def f(m):\n    m = m.cuda().half()\n", 0));
    assert_true(receiver_known("import lpips\nfn = lpips.LPIPS(net='alex').cuda().eval()\n", 0));
    assert_true(receiver_known("def f(w):\n    return w[0].cuda().float()\n", 0));
    /* a method only torch values have, before `.cuda()` */
    assert_true(receiver_known("def f(wav):\n    return wav.unsqueeze(0).float().cuda()\n", 0));
    assert_true(receiver_known("def f(model):\n    return model[0].eval().cuda()\n", 0));
    /* self attributes: the uses anywhere in the file */
    assert_true(receiver_known("class A:\n    def go(self):\n        self.model.cuda()\n    def n(self):\n"
                               "        return sum(p.numel() for p in self.model.parameters())\n", 0));
    /* no use that tells: unknown */
    assert_false(receiver_known("def f(model):\n    model.prepare(1)\n    model.cuda()\n", 0));
    /* a storage (map_location), a lambda's or a comprehension's own variable, an imported module: unknown */
    assert_false(receiver_known("import torch\nsd = torch.load('p', map_location=lambda storage, loc: storage.cuda())\n"
                                "def g(storage):\n    storage.size()\n    storage.cuda()\n", 1));
    assert_false(receiver_known("def f(x, xs):\n    x.size()\n    return [x.cuda() for x in xs]\n", 0));
    assert_false(receiver_known("def f(x, g):\n    x.size()\n    return g(lambda x: x.cuda())\n", 0));
    assert_false(receiver_known("import tvm\ndef f():\n    tvm.dim()\n    return tvm.cuda(0)\n", 0));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(factories_and_methods),
        cmocka_unit_test(module_classes),
        cmocka_unit_test(names),
        cmocka_unit_test(annotations_and_loaders),
        cmocka_unit_test(uses_as_torch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
