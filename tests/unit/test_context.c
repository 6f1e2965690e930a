/* Unit tests for an_context: the context facts of a Python file (CUDA backends, multi-device code, CUDA-only code,
 * correct guards, assignment targets, reads), each asked at the text it should (or should not) cover. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyzer/python/an_context.h"
#include <string.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);

typedef struct {
    TSParser *p;
    TSTree *t;
    an_pycontext cx;
    const char *src;
} parsed;

static void parse(parsed *x, const char *src, const char *path) {
    x->src = src;
    x->p = ts_parser_new();
    ts_parser_set_language(x->p, tree_sitter_python());
    x->t = ts_parser_parse_string(x->p, NULL, src, (uint32_t)strlen(src));
    an_pycontext_collect(&x->cx, ts_tree_root_node(x->t), src, path);
}

static void done(parsed *x) {
    an_pycontext_free(&x->cx);
    ts_tree_delete(x->t);
    ts_parser_delete(x->p);
}

/* the fact of that kind over the nth (0-based) occurrence of `at` in the source */
static const an_ctx_fact *fact_at(const parsed *x, an_ctx_kind k, const char *at, int nth) {
    const char *s = strstr(x->src, at);
    while (s && nth--) s = strstr(s + 1, at);
    assert_non_null(s);
    uint32_t a = (uint32_t)(s - x->src);
    return an_pycontext_find(&x->cx, k, a, a + (uint32_t)strlen(at));
}

static void backend_class_with_family_base(void **state) {
    (void)state;
    parsed x;
    parse(&x, "import torch\nclass Accelerator: pass\nclass CUDAAccelerator(Accelerator):\n"
              "    def n(self):\n        return torch.cuda.device_count()\n"
              "def other():\n    return torch.cuda.device_count()\n", "src/pkg/accelerator.py");
    const an_ctx_fact *f = fact_at(&x, AN_CTX_CUDA_BACKEND, "torch.cuda.device_count", 0);
    assert_non_null(f);
    assert_string_equal(f->name, "CUDAAccelerator");
    assert_string_equal(f->why, "a subclass of `Accelerator`");
    assert_null(f->xpu_sibling);
    assert_null(fact_at(&x, AN_CTX_CUDA_BACKEND, "torch.cuda.device_count", 1)); /* outside the class */
    done(&x);
}

static void backend_not_for_plain_modules(void **state) {
    (void)state;
    parsed x;
    parse(&x, "import torch\nclass CUDAGraphModule(torch.nn.Module):\n    def f(self):\n        torch.cuda.synchronize()\n"
              "class CudaHelper:\n    def f(self):\n        torch.cuda.synchronize()\n", NULL);
    assert_null(fact_at(&x, AN_CTX_CUDA_BACKEND, "torch.cuda.synchronize", 0));
    assert_null(fact_at(&x, AN_CTX_CUDA_BACKEND, "torch.cuda.synchronize", 1));
    done(&x);
}

static void backend_sibling_and_xpu_member(void **state) {
    (void)state;
    parsed x;
    parse(&x, "import torch\nclass CudaTimer:\n    def s(self):\n        torch.cuda.synchronize()\n"
              "class XpuTimer:\n    def s(self):\n        torch.xpu.synchronize()\n", NULL);
    const an_ctx_fact *f = fact_at(&x, AN_CTX_CUDA_BACKEND, "torch.cuda.synchronize", 0);
    assert_non_null(f);
    assert_string_equal(f->xpu_sibling, "XpuTimer");
    /* the XPU member of the family is XPU-only by design */
    assert_non_null(fact_at(&x, AN_CTX_XPU_BACKEND, "torch.xpu.synchronize", 0));
    assert_null(fact_at(&x, AN_CTX_MULTI_DEVICE, "torch.xpu.synchronize", 0));
    done(&x);
}

static void backend_registered(void **state) {
    (void)state;
    parsed x;
    parse(&x, "import torch\n@torch.library.impl(lib, \"op\", \"CUDA\")\ndef op_cuda(x):\n    torch.cuda.synchronize()\n"
              "@register(\"cuda\", \"cpu\")\ndef both(x):\n    torch.cuda.synchronize()\n"
              "class Thing:\n    def f(self):\n        torch.cuda.synchronize()\n"
              "registry.register(\"cuda\", Thing)\n", NULL);
    const an_ctx_fact *f = fact_at(&x, AN_CTX_CUDA_BACKEND, "torch.cuda.synchronize", 0);
    assert_non_null(f);
    assert_string_equal(f->name, "op_cuda");
    assert_null(fact_at(&x, AN_CTX_CUDA_BACKEND, "torch.cuda.synchronize", 1)); /* registered for the CPU too */
    f = fact_at(&x, AN_CTX_CUDA_BACKEND, "torch.cuda.synchronize", 2);
    assert_non_null(f);
    assert_string_equal(f->name, "Thing");
    done(&x);
}

static void backend_module_by_path(void **state) {
    (void)state;
    const char *src = "import torch\ndef n():\n    return torch.cuda.device_count()\n";
    parsed x;
    parse(&x, src, "lightning/fabric/accelerators/cuda.py");
    const an_ctx_fact *f = fact_at(&x, AN_CTX_CUDA_BACKEND, "torch.cuda", 0);
    assert_non_null(f);
    assert_string_equal(f->name, "cuda.py");
    assert_int_equal(f->name_end, 0);
    done(&x);
    parse(&x, src, "lightning/fabric/utilities/cuda.py");
    assert_null(fact_at(&x, AN_CTX_CUDA_BACKEND, "torch.cuda", 0));
    done(&x);
    parse(&x, src, "backends/torch_backend.py");
    assert_null(fact_at(&x, AN_CTX_CUDA_BACKEND, "torch.cuda", 0));
    done(&x);
}

static void multi_device(void **state) {
    (void)state;
    parsed x;
    parse(&x, "T = {\"cuda\": torch.cuda.empty_cache, \"xpu\": torch.xpu.empty_cache}\n"
              "U = {\"cuda\": torch.cuda.empty_cache, \"cpu\": None}\n"
              "n = torch.cuda.device_count() > 1 or torch.xpu.device_count() > 1\n"
              "m = torch.cuda.device_count() > 1 or flag\n", NULL);
    assert_non_null(fact_at(&x, AN_CTX_MULTI_DEVICE, "torch.cuda.empty_cache", 0));
    assert_null(fact_at(&x, AN_CTX_MULTI_DEVICE, "torch.cuda.empty_cache", 1));
    assert_non_null(fact_at(&x, AN_CTX_MULTI_DEVICE, "torch.cuda.device_count", 0));
    assert_null(fact_at(&x, AN_CTX_MULTI_DEVICE, "torch.cuda.device_count", 1));
    done(&x);
}

static void cuda_only(void **state) {
    (void)state;
    parsed x;
    parse(&x, "a = DEV == \"cuda\" and torch.cuda.is_bf16_supported()\n"
              "b = torch.cuda.is_available() and torch.cuda.is_bf16_supported()\n"
              "k = x.is_cuda and not y.is_cuda\n"
              "c = torch.cuda.is_bf16_supported() if x.is_cuda else False\n"
              "def f():\n    if not torch.cuda.is_available():\n        return\n    torch.cuda.synchronize()\n"
              "def g():\n    if not torch.cuda.is_available():\n        print('no')\n    torch.cuda.synchronize()\n", NULL);
    assert_non_null(fact_at(&x, AN_CTX_CUDA_ONLY, "torch.cuda.is_bf16_supported", 0));
    assert_null(fact_at(&x, AN_CTX_CUDA_ONLY, "torch.cuda.is_bf16_supported", 1));
    assert_null(fact_at(&x, AN_CTX_CUDA_ONLY, "y.is_cuda", 0)); /* a device test is ported with the left one */
    /* `a if x.is_cuda else b`: b still has to work on XPU, so a is not CUDA-only code */
    assert_null(fact_at(&x, AN_CTX_CUDA_ONLY, "torch.cuda.is_bf16_supported", 2));
    /* an early exit on the availability test is a guard to port (XPU105, an_guard), and the code after it too */
    assert_null(fact_at(&x, AN_CTX_CUDA_ONLY, "torch.cuda.synchronize", 0));
    assert_null(fact_at(&x, AN_CTX_CORRECT_GUARD, "torch.cuda.is_available", 1));
    assert_null(fact_at(&x, AN_CTX_CUDA_ONLY, "torch.cuda.synchronize", 1));
    assert_null(fact_at(&x, AN_CTX_CORRECT_GUARD, "torch.cuda.is_available", 2));
    done(&x);
}

/* how a block's last statement leaves it (an early exit's body) */
static void block_exits(void **state) {
    (void)state;
    static const struct {
        const char *src;
        an_ctx_exit want;
    } cases[] = {
        {"if c:\n    return\n", AN_CTX_EXIT_RETURN},
        {"if c:\n    print('no')\n    return None  # done\n", AN_CTX_EXIT_RETURN},
        {"if c:\n    raise RuntimeError('x')\n", AN_CTX_EXIT_RAISE},
        {"if c:\n    pytest.skip('x')\n", AN_CTX_EXIT_RAISE},
        {"if c:\n    self.skipTest('x')\n", AN_CTX_EXIT_RAISE},
        {"if c:\n    sys.exit(1)\n", AN_CTX_EXIT_RAISE},
        {"if c:\n    os._exit(1)\n", AN_CTX_EXIT_RAISE},
        {"if c:\n    continue\n", AN_CTX_EXIT_CONTINUE},
        {"if c:\n    break\n", AN_CTX_EXIT_BREAK},
        {"if c:\n    x = 1\n", AN_CTX_EXIT_NONE},
        {"if c:\n    return\n    x = 1\n", AN_CTX_EXIT_NONE}, /* the last statement decides */
        {"if c:\n    log.skip_count('x')\n", AN_CTX_EXIT_NONE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TSParser *p = ts_parser_new();
        ts_parser_set_language(p, tree_sitter_python());
        TSTree *t = ts_parser_parse_string(p, NULL, cases[i].src, (uint32_t)strlen(cases[i].src));
        TSNode ifs = ts_node_named_child(ts_tree_root_node(t), 0);
        TSNode body = ts_node_child_by_field_name(ifs, "consequence", 11);
        assert_int_equal(an_ctx_block_exit(body, cases[i].src), cases[i].want);
        ts_tree_delete(t);
        ts_parser_delete(p);
    }
}

static void guards(void **state) {
    (void)state;
    parsed x;
    parse(&x, "def f(x):\n    if not x.is_cuda:\n        return g(x)\n    return k(x)\n"
              "def h(x):\n    if x.is_cuda:\n        x = x.half()\n"
              "ok = dist.get_backend() == Backend.NCCL\n", NULL);
    assert_non_null(fact_at(&x, AN_CTX_CORRECT_GUARD, "is_cuda", 0));
    assert_null(fact_at(&x, AN_CTX_CORRECT_GUARD, "is_cuda", 1));
    assert_non_null(fact_at(&x, AN_CTX_CORRECT_GUARD, "Backend.NCCL", 0));
    done(&x);
}

static void targets_and_reads(void **state) {
    (void)state;
    parsed x;
    parse(&x, "torch.cuda.is_available = lambda: True\nf = torch.cuda.is_available\n"
              "monkeypatch.setattr(torch.cuda, 'x', 1)\n"
              "assert torch.backends.cudnn.benchmark is False\nprint(f\"{torch.backends.cudnn.enabled}\")\n"
              "torch.backends.cudnn.enabled = False\n", NULL);
    const an_ctx_fact *t = fact_at(&x, AN_CTX_ASSIGN_TARGET, "torch.cuda.is_available", 0);
    assert_non_null(t);
    assert_int_equal(t->start, 0);
    assert_null(fact_at(&x, AN_CTX_ASSIGN_TARGET, "torch.cuda.is_available", 1));
    assert_non_null(fact_at(&x, AN_CTX_ASSIGN_TARGET, "torch.cuda", 2));
    assert_non_null(fact_at(&x, AN_CTX_READ, "torch.backends.cudnn.benchmark", 0));
    assert_non_null(fact_at(&x, AN_CTX_READ, "torch.backends.cudnn.enabled", 0));
    assert_null(fact_at(&x, AN_CTX_READ, "torch.backends.cudnn.enabled", 1));
    done(&x);
}

static void result_guards(void **state) {
    (void)state;
    parsed x;
    parse(&x, "if torch.cuda.is_available():\n    m = xpuify_device.get_device_properties(0).major\n"
              "if torch.cuda.is_available():\n    torch.cuda.synchronize()\n", NULL);
    assert_non_null(fact_at(&x, AN_CTX_RESULT_GUARD, "torch.cuda.is_available", 0));
    assert_null(fact_at(&x, AN_CTX_RESULT_GUARD, "torch.cuda.is_available", 1));
    done(&x);
}

static void kernel_routes_and_flag_guards(void **state) {
    (void)state;
    parsed x;
    parse(&x, "def f(x):\n    if x.is_cuda:\n        try:\n            return dtw_cuda(x)\n        except RuntimeError:\n"
              "            pass\n    return dtw_cpu(x)\n"
              "def g(x):\n    if x.is_cuda:\n        x = to_cuda(x)\n    return x\n"
              "def h(x):\n    if not x.is_cuda:\n        y = kernel_cuda(x)\n    return x\n"
              "if args.tf32 and torch.cuda.is_available():\n    torch.backends.cuda.matmul.allow_tf32 = True\n"
              "if torch.cuda.is_available():\n    torch.backends.cudnn.benchmark = True\n    model.cuda()\n",
          NULL);
    assert_non_null(fact_at(&x, AN_CTX_CORRECT_GUARD, "x.is_cuda", 0)); /* routes to dtw_cuda */
    assert_null(fact_at(&x, AN_CTX_CORRECT_GUARD, "x.is_cuda", 1));     /* to_cuda moves: the test is ported */
    assert_null(fact_at(&x, AN_CTX_CORRECT_GUARD, "x.is_cuda", 2));     /* negated, and no early exit */
    assert_non_null(fact_at(&x, AN_CTX_CORRECT_GUARD, "torch.cuda.is_available", 0)); /* only CUDA flags */
    assert_null(fact_at(&x, AN_CTX_CORRECT_GUARD, "torch.cuda.is_available", 1));     /* and a .cuda() */
    assert_non_null(fact_at(&x, AN_CTX_READ, "args.tf32", 0)); /* an if's condition reads */
    done(&x);
}

static void package_builds(void **state) {
    (void)state;
    parsed x;
    parse(&x, "def a(pip):\n    cuda = torch.cuda.is_available()\n    pip('ort-gpu' if cuda else 'ort')\n"
              "def b(pip):\n    cuda = torch.cuda.is_available()\n    pip('ort-gpu' if cuda else 'ort')\n    return cuda\n"
              "pip(f\"tf{'' if torch.cuda.is_available() else '-cpu'}\")\n"
              "b = 'nccl' if torch.cuda.is_available() else 'gloo'\n",
          NULL);
    assert_non_null(fact_at(&x, AN_CTX_CORRECT_GUARD, "torch.cuda.is_available()", 0));
    assert_null(fact_at(&x, AN_CTX_CORRECT_GUARD, "torch.cuda.is_available()", 1)); /* also returned */
    assert_non_null(fact_at(&x, AN_CTX_CORRECT_GUARD, "torch.cuda.is_available()", 2));
    assert_null(fact_at(&x, AN_CTX_CORRECT_GUARD, "torch.cuda.is_available()", 3)); /* a backend, no package */
    done(&x);
}

static void nvidia_only_imports(void **state) {
    (void)state;
    parsed x;
    parse(&x, "def f(d):\n    a = torch.device('cuda')\n    import tensorrt as trt\n    b = torch.device('cuda')\n"
              "def g(d):\n    from transformer_engine.pytorch import fp8_autocast\n    c = torch.device('cuda')\n"
              "def h(d):\n    import tensorflow\n    e = torch.device('cuda')\n",
          NULL);
    assert_null(fact_at(&x, AN_CTX_CUDA_ONLY, "torch.device", 0));
    assert_non_null(fact_at(&x, AN_CTX_CUDA_ONLY, "torch.device", 1));
    assert_non_null(fact_at(&x, AN_CTX_CUDA_ONLY, "torch.device", 2));
    assert_null(fact_at(&x, AN_CTX_CUDA_ONLY, "torch.device", 3));
    assert_true(an_ctx_nvidia_only_module("tensorrt", 8) && an_ctx_nvidia_only_module("pycuda.driver", 13));
    assert_false(an_ctx_nvidia_only_module("tensorrtx", 9) || an_ctx_nvidia_only_module("torch.cuda", 10));
    done(&x);
}

static void counterparts_and_reports(void **state) {
    (void)state;
    parsed x;
    parse(&x, "os.environ['CUDA_VISIBLE_DEVICES'] = '0'\nos.environ['ZE_AFFINITY_MASK'] = '0'\n"
              "def f():\n    torch.use_deterministic_algorithms(True)\n    torch.backends.cudnn.deterministic = True\n"
              "def g():\n    torch.backends.cudnn.deterministic = True\n"
              "info = {'cuda': torch.version.cuda}\nenv['cuda'] = torch.version.cuda\nprint(torch.version.cuda)\n"
              "v = torch.version.cuda\n",
          NULL);
    assert_non_null(fact_at(&x, AN_CTX_COUNTERPART, "CUDA_VISIBLE_DEVICES", 0));
    assert_non_null(fact_at(&x, AN_CTX_COUNTERPART, "torch.backends.cudnn.deterministic", 0));
    assert_null(fact_at(&x, AN_CTX_COUNTERPART, "torch.backends.cudnn.deterministic", 1)); /* another block */
    assert_non_null(fact_at(&x, AN_CTX_REPORT, "torch.version.cuda", 0));
    assert_non_null(fact_at(&x, AN_CTX_REPORT, "torch.version.cuda", 1));
    assert_non_null(fact_at(&x, AN_CTX_REPORT, "torch.version.cuda", 2));
    assert_null(fact_at(&x, AN_CTX_REPORT, "torch.version.cuda", 3));
    done(&x);
}

static void named_for_cuda(void **state) {
    (void)state;
    size_t tok;
    assert_true(an_ctx_named_for_cuda("CUDAAccelerator", 15, &tok) && tok == 0);
    assert_true(an_ctx_named_for_cuda("AcceleratorCUDA", 15, &tok) && tok == 11);
    assert_true(an_ctx_named_for_cuda("cuda_backend", 12, &tok));
    assert_true(an_ctx_named_for_cuda("CudaTimer", 9, &tok));
    assert_false(an_ctx_named_for_cuda("Barracuda", 9, &tok));
    assert_false(an_ctx_named_for_cuda("cudagraph", 9, &tok));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(backend_class_with_family_base), cmocka_unit_test(backend_not_for_plain_modules),
        cmocka_unit_test(backend_sibling_and_xpu_member), cmocka_unit_test(backend_registered),
        cmocka_unit_test(backend_module_by_path), cmocka_unit_test(multi_device), cmocka_unit_test(cuda_only), cmocka_unit_test(block_exits),
        cmocka_unit_test(guards), cmocka_unit_test(targets_and_reads), cmocka_unit_test(result_guards), cmocka_unit_test(named_for_cuda),
        cmocka_unit_test(kernel_routes_and_flag_guards), cmocka_unit_test(package_builds),
        cmocka_unit_test(nvidia_only_imports), cmocka_unit_test(counterparts_and_reports),
    };
    return cmocka_run_group_tests_name("context", tests, NULL, NULL);
}
