/* an_context: the context facts of a Python file (see an_context.h). One walk over the tree records candidates;
 * the CUDA backends are decided after it, once every class, registration and sibling of the file is known. */
#include "analyzer/python/an_context.h"
#include "util/ut_find.h"
#include "analyzer/python/an_pyfield.h"
#include "analyzer/python/an_resolve.h"
#include "util/ut_buf.h"
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* deeper trees are not analyzed by the front end either (an_python.c) */
#define CTX_MAX_DEPTH 4000

typedef struct {
    TSNode node;      /* class_definition or function_definition */
    uint32_t start;   /* of the definition with its decorators */
    uint32_t end;
    bool is_class;
    char *registered; /* why it is registered for CUDA ("@register(\"cuda\")"), or NULL */
    bool kernel;      /* an operator's kernel (`@op.register_kernel("cuda")`): rule XPU110 reports the registration
                       * itself, so no XPU810, and its decorators stay outside the scope */
} scope;

/* `cuda = torch.cuda.is_available()`: a local that holds a CUDA availability test */
typedef struct {
    uint32_t name_start, name_end; /* the assigned name */
    uint32_t value_start, value_end;
    uint32_t scope_start, scope_end; /* the enclosing function's body, or the module */
} avail_local;

typedef struct {
    const char *src;
    an_pycontext *cx;
    UT_VEC(scope) scopes;
    UT_VEC(char *) registered; /* class names passed with "cuda" to a registry: register("cuda", CUDAAccelerator) */
    UT_VEC(uint32_t) registered_cls; /* `register("cuda", cls)` inside a class method: where the call is */
    UT_VEC(avail_local) avail_locals; /* `cuda = torch.cuda.is_available()` */
    bool counterparts;               /* the file names a counterpart of a CUDA setting (see on_block) */
} walker;

static const char *text(const walker *w, TSNode n) { return w->src + ts_node_start_byte(n); }
static size_t len(TSNode n) { return ts_node_end_byte(n) - ts_node_start_byte(n); }
static bool is(TSNode n, const char *t) { return !ts_node_is_null(n) && !strcmp(ts_node_type(n), t); }

static void add(walker *w, an_ctx_kind k, uint32_t s, uint32_t e) {
    an_ctx_fact f = {0};
    f.kind = k, f.start = s, f.end = e;
    ut_vec_push(&w->cx->kinds[k], f);
}

static void add_node(walker *w, an_ctx_kind k, TSNode n) { add(w, k, ts_node_start_byte(n), ts_node_end_byte(n)); }

/* a fact with the reason it is CUDA by design (XPU812 says it where a finding is left out for it) */
static void add_why(walker *w, an_ctx_kind k, uint32_t s, uint32_t e, const char *why) {
    an_ctx_fact f = {0};
    f.kind = k, f.start = s, f.end = e, f.why = ut_strdup(why);
    ut_vec_push(&w->cx->kinds[k], f);
}

static void add_node_why(walker *w, an_ctx_kind k, TSNode n, const char *why) {
    add_why(w, k, ts_node_start_byte(n), ts_node_end_byte(n), why);
}

static bool has(const char *s, size_t n, const char *pat) { return ut_memmem(s, n, pat, strlen(pat)) != NULL; }

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* a string literal whose value is one of the device types (quotes, no prefix or an r/b prefix) */
static bool string_is(const char *s, size_t n, const char *value) {
    size_t vl = strlen(value);
    while (n && (s[0] == 'r' || s[0] == 'b' || s[0] == 'R' || s[0] == 'B')) s++, n--;
    return n == vl + 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0] && !strncasecmp(s + 1, value, vl);
}

static const char *const other_devices[] = {"xpu", "mps", "npu", "hpu", "mlu", "xla", "musa", "mtia", "privateuseone",
                                            NULL};

static bool ident_char(char c);

/* `x.is_cuda` (an attribute of that name; not `is_cuda_available`) */
static bool is_cuda_attr(const char *s, size_t n) {
    for (const char *p = s; (p = ut_memmem(p, n - (size_t)(p - s), ".is_cuda", 8)); p++)
        if ((size_t)(p - s) + 8 >= n || !ident_char(p[8])) return true;
    return false;
}

/* `x.device.type == "cuda"`, `x.is_cuda`, `str(d).startswith("cuda")`: a test for CUDA devices, not for whether
 * CUDA is available */
static bool device_test(const char *s, size_t n) {
    static const char *const pats[] = {"== \"cuda\"", "== 'cuda'", "\"cuda\" ==", "'cuda' ==", "==\"cuda\"",
                                       "=='cuda'", "startswith(\"cuda", "startswith('cuda",
                                       "in (\"cuda\"", "in ('cuda'", "in [\"cuda\"", "in ['cuda'", NULL};
    for (int i = 0; pats[i]; i++)
        if (has(s, n, pats[i])) return true;
    return is_cuda_attr(s, n);
}

/* ---- the walk ---------------------------------------------------------------------------------------------- */

/* the last dotted component of a call's function (`register` of `accelerator_registry.register`) */
static void callee_last(const walker *w, TSNode call, const char **s, size_t *n) {
    TSNode f = an_py_field(call, "function", 8);
    *s = NULL, *n = 0;
    if (ts_node_is_null(f)) return;
    if (is(f, "attribute")) f = an_py_field(f, "attribute", 9);
    if (ts_node_is_null(f) || !is(f, "identifier")) return;
    *s = text(w, f), *n = len(f);
}

static bool starts(const char *s, size_t n, const char *p) { return n >= strlen(p) && !memcmp(s, p, strlen(p)); }

/* `@register("cuda")`, `@ACCELERATORS.register_module("cuda")`, `@torch.library.impl(lib, "op", "CUDA")`,
 * `@op.register_kernel("cuda")`: registered for CUDA and for no other device */
static bool registers_cuda(const walker *w, TSNode call) {
    const char *f;
    size_t fn;
    callee_last(w, call, &f, &fn);
    if (!f || !(starts(f, fn, "register") || (fn == 4 && !memcmp(f, "impl", 4)) || starts(f, fn, "impl_"))) return false;
    TSNode args = an_py_field(call, "arguments", 9);
    if (ts_node_is_null(args)) return false;
    bool cuda = false;
    uint32_t k = ts_node_named_child_count(args);
    for (uint32_t i = 0; i < k; i++) {
        TSNode a = ts_node_named_child(args, i);
        if (is(a, "keyword_argument")) a = an_py_field(a, "value", 5);
        if (!is(a, "string")) continue;
        if (string_is(text(w, a), len(a), "cuda")) cuda = true;
        for (int d = 0; other_devices[d]; d++)
            if (string_is(text(w, a), len(a), other_devices[d]) || string_is(text(w, a), len(a), "cpu")) return false;
    }
    return cuda;
}

static void on_decorated(walker *w, TSNode n) {
    TSNode def = an_py_field(n, "definition", 10);
    if (ts_node_is_null(def)) return;
    uint32_t k = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < k; i++) {
        TSNode d = ts_node_named_child(n, i);
        if (!is(d, "decorator")) continue;
        TSNode call = ts_node_named_child(d, 0);
        if (!is(call, "call") || !registers_cuda(w, call)) continue;
        size_t fl = len(call);
        const char *ft = text(w, call);
        const char *paren = memchr(ft, '(', fl);
        ut_buf why;
        ut_buf_init(&why);
        ut_buf_printf(&why, "registered for CUDA by `@%.*s(...)`", (int)(paren ? (size_t)(paren - ft) : fl), ft);
        const char *f;
        size_t fn;
        callee_last(w, call, &f, &fn);
        /* `op.register_kernel("cuda")`: what XPU110 reports (a bare `register_kernel("cuda")` is some registry) */
        bool kernel = f && fn == 15 && !memcmp(f, "register_kernel", 15) &&
                      is(an_py_field(call, "function", 8), "attribute");
        scope sc = {def, ts_node_start_byte(kernel ? def : n), ts_node_end_byte(n), is(def, "class_definition"),
                    ut_buf_take(&why), kernel};
        ut_vec_push(&w->scopes, sc);
        ut_buf_free(&why);
        return;
    }
}

/* `registry.register("cuda", CUDAAccelerator)`, `accelerator_registry.register("cuda", cls, ...)` */
static void on_registry_call(walker *w, TSNode call) {
    const char *f;
    size_t fn;
    callee_last(w, call, &f, &fn);
    if (!f || !starts(f, fn, "register")) return;
    TSNode args = an_py_field(call, "arguments", 9);
    if (ts_node_is_null(args) || ts_node_named_child_count(args) < 2) return;
    TSNode key = ts_node_named_child(args, 0), val = ts_node_named_child(args, 1);
    if (!is(key, "string") || !string_is(text(w, key), len(key), "cuda")) return;
    if (is(val, "attribute")) val = an_py_field(val, "attribute", 9);
    if (!is(val, "identifier")) return;
    if (len(val) == 3 && !memcmp(text(w, val), "cls", 3)) ut_vec_push(&w->registered_cls, ts_node_start_byte(call));
    else ut_vec_push(&w->registered, ut_strndup(text(w, val), len(val)));
}

/* `setattr(torch.cuda, "is_available", f)`, `monkeypatch.setattr(torch.cuda, ...)`, `mock.patch.object(torch.cuda,
 * ...)`: the first argument is what is set, not used */
static void on_setattr_call(walker *w, TSNode call) {
    const char *f;
    size_t fn;
    callee_last(w, call, &f, &fn);
    if (!f || !((fn == 7 && !memcmp(f, "setattr", 7)) || (fn == 6 && !memcmp(f, "object", 6)) ||
                (fn == 7 && !memcmp(f, "delattr", 7))))
        return;
    TSNode args = an_py_field(call, "arguments", 9);
    if (ts_node_is_null(args) || !ts_node_named_child_count(args)) return;
    TSNode a = ts_node_named_child(args, 0);
    if (is(a, "attribute") || is(a, "identifier")) add_node(w, AN_CTX_ASSIGN_TARGET, a);
}

/* a dictionary keyed by device type with CUDA and another accelerator: `{"cuda": torch.cuda.empty_cache, "xpu":
 * torch.xpu.empty_cache, "cpu": None}` */
static void on_dictionary(walker *w, TSNode n) {
    bool cuda = false, other = false, xpu = false;
    uint32_t k = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < k; i++) {
        TSNode p = ts_node_named_child(n, i);
        if (!is(p, "pair")) continue;
        TSNode key = an_py_field(p, "key", 3);
        if (!is(key, "string")) continue;
        if (string_is(text(w, key), len(key), "cuda")) cuda = true;
        if (string_is(text(w, key), len(key), "xpu")) xpu = true;
        for (int d = 0; other_devices[d]; d++)
            if (string_is(text(w, key), len(key), other_devices[d])) other = true;
    }
    /* CUDA by design (XPU812) only with its XPU entry: a table without one still lacks XPU */
    if (cuda && other && xpu) add_node_why(w, AN_CTX_MULTI_DEVICE, n, "is a table keyed by device type with an XPU entry");
    else if (cuda && other) add_node(w, AN_CTX_MULTI_DEVICE, n);
}

static void on_boolean(walker *w, TSNode n) {
    const char *s = text(w, n);
    size_t sl = len(n);
    /* `torch.cuda.device_count() > 1 or torch.xpu.device_count() > 1`: probes for several devices at once */
    if (has(s, sl, "cuda") && an_py_mentions_agnostic(s, sl)) {
        add_node_why(w, AN_CTX_MULTI_DEVICE, n, "probes CUDA and XPU (or any accelerator) together");
        return;
    }
    TSNode left = an_py_field(n, "left", 4), right = an_py_field(n, "right", 5);
    TSNode op = an_py_field(n, "operator", 8);
    if (ts_node_is_null(left) || ts_node_is_null(right) || ts_node_is_null(op) || len(op) != 3 ||
        memcmp(text(w, op), "and", 3))
        return;
    /* `torch.cuda.is_available() and torch.version.hip` (or `not torch.version.hip`, `torch.version.cuda`): the CUDA
     * test and the build's flavour together ask for a ROCm (or an NVIDIA) build of torch, which XPU is not
     * (pytorch_scatter's setup.py: a work-around for hipify's paths); the whole conjunction is CUDA by design */
    for (int side = 0; side < 2; side++) {
        TSNode a = side ? right : left, b = side ? left : right;
        if (has(text(w, a), len(a), "cuda.is_available()") && !an_py_mentions_agnostic(text(w, a), len(a)) &&
            (has(text(w, b), len(b), "torch.version.hip") || has(text(w, b), len(b), "torch.version.cuda")) &&
            !an_py_mentions_agnostic(text(w, b), len(b))) {
            add_node_why(w, AN_CTX_CORRECT_GUARD, n, "asks, with `torch.version`, for a ROCm or NVIDIA build of torch");
            return;
        }
    }
    /* `DEVICE_TYPE == "cuda" and torch.cuda.is_bf16_supported()`: the right operand runs on CUDA only; one that is
     * a device test itself (`x.is_cuda and not y.is_cuda`) is ported with the left one, so it stays a finding */
    if (device_test(text(w, left), len(left)) && !device_test(text(w, right), len(right)))
        add_node_why(w, AN_CTX_CUDA_ONLY, right, "runs only on a CUDA device (the operand after a CUDA device test and `and`)");
}

static void on_assignment(walker *w, TSNode n) {
    TSNode left = an_py_field(n, "left", 4);
    if (ts_node_is_null(left)) return;
    if (is(left, "attribute") || is(left, "identifier")) {
        add_node(w, AN_CTX_ASSIGN_TARGET, left);
        return;
    }
    if (!is(left, "pattern_list") && !is(left, "tuple_pattern")) return;
    uint32_t k = ts_node_named_child_count(left);
    for (uint32_t i = 0; i < k; i++) {
        TSNode t = ts_node_named_child(left, i);
        if (is(t, "attribute") || is(t, "identifier")) add_node(w, AN_CTX_ASSIGN_TARGET, t);
    }
}

an_ctx_exit an_ctx_block_exit(TSNode block, const char *src) {
    if (ts_node_is_null(block)) return AN_CTX_EXIT_NONE;
    TSNode last = {0};
    uint32_t k = ts_node_named_child_count(block);
    for (uint32_t i = k; i-- > 0;) {
        TSNode c = ts_node_named_child(block, i);
        if (!is(c, "comment")) { last = c; break; }
    }
    if (ts_node_is_null(last)) return AN_CTX_EXIT_NONE;
    if (is(last, "return_statement")) return AN_CTX_EXIT_RETURN;
    if (is(last, "raise_statement")) return AN_CTX_EXIT_RAISE;
    if (is(last, "continue_statement")) return AN_CTX_EXIT_CONTINUE;
    if (is(last, "break_statement")) return AN_CTX_EXIT_BREAK;
    if (!is(last, "expression_statement")) return AN_CTX_EXIT_NONE;
    TSNode call = ts_node_named_child(last, 0);
    if (!is(call, "call")) return AN_CTX_EXIT_NONE;
    walker w = {0};
    w.src = src;
    const char *f;
    size_t fn;
    callee_last(&w, call, &f, &fn);
    bool exits = f && ((fn == 4 && !memcmp(f, "skip", 4)) || (fn == 8 && !memcmp(f, "skipTest", 8)) ||
                       (fn == 4 && !memcmp(f, "exit", 4)) || (fn == 5 && !memcmp(f, "_exit", 5)));
    return exits ? AN_CTX_EXIT_RAISE : AN_CTX_EXIT_NONE;
}

static bool block_exits(const walker *w, TSNode block) { return an_ctx_block_exit(block, w->src) != AN_CTX_EXIT_NONE; }

/* the operand of a leading `not` (parentheses included), or a NULL node */
static TSNode negated(TSNode cond) {
    while (is(cond, "parenthesized_expression")) cond = ts_node_named_child(cond, 0);
    if (!is(cond, "not_operator")) return (TSNode){0};
    return an_py_field(cond, "argument", 8);
}

/* cuDNN beyond its settings: `torch.backends.cudnn.benchmark = True` (also deterministic, enabled, allow_tf32) is
 * a plain flag on every torch build that only tunes CUDA kernels; `cudnn.version()` or a read is a CUDA-only result.
 * The name `cudnn` itself only: a function named for it (`make_cudnn_deterministic()`) is its own body's business
 * (the guard judge follows it). */
static bool uses_cudnn(const char *s, size_t n) {
    static const char *const flags[] = {"benchmark", "deterministic", "enabled", "allow_tf32", NULL};
    for (const char *p = ut_memmem(s, n, "cudnn", 5); p; p = ut_memmem(p + 5, n - (size_t)(p + 5 - s), "cudnn", 5)) {
        const char *q = p + 5, *end = s + n;
        if ((p > s && ident_char(p[-1])) || (q < end && ident_char(*q))) continue;
        bool setting = false;
        if (q < end && *q == '.')
            for (int i = 0; flags[i] && !setting; i++) {
                size_t fl = strlen(flags[i]);
                const char *r = q + 1 + fl;
                if (r > end || memcmp(q + 1, flags[i], fl)) continue;
                while (r < end && (*r == ' ' || *r == '\t')) r++;
                setting = r + 1 < end && r[0] == '=' && r[1] != '=';
            }
        if (!setting) return true;
    }
    return false;
}

bool an_ctx_uses_cuda_only_results(const char *s, size_t n) {
    static const char *const pats[] = {".major", ".minor", "multi_processor_count", "get_device_capability",
                                       "current_device()", "current_device_index()", "nvtx", "get_arch_list", NULL};
    for (int i = 0; pats[i]; i++)
        if (has(s, n, pats[i])) return true;
    return uses_cudnn(s, n);
}

static bool calls_cuda_kernel(const walker *w, TSNode n, unsigned depth);
static bool sets_cuda_flags_only(const walker *w, TSNode block);

static void on_if(walker *w, TSNode n) {
    TSNode cond = an_py_field(n, "condition", 9);
    TSNode body = an_py_field(n, "consequence", 11);
    if (!ts_node_is_null(cond) && !ts_node_is_null(body) && an_ctx_uses_cuda_only_results(text(w, body), len(body)))
        add_node(w, AN_CTX_RESULT_GUARD, cond);
    if (ts_node_is_null(cond) || ts_node_is_null(body)) return;
    /* `if torch.backends.cudnn.benchmark:`: the condition reads what it tests */
    add_node(w, AN_CTX_READ, cond);
    /* `if x.is_cuda: try: return dtw_cuda(x) ...`: the test routes CUDA tensors to a CUDA kernel, and every other
     * tensor to the code after it (or the else branch); testing for any accelerator would send XPU tensors into the
     * CUDA kernel */
    if (ts_node_is_null(negated(cond)) && device_test(text(w, cond), len(cond)) && calls_cuda_kernel(w, body, 0)) {
        add_node_why(w, AN_CTX_CORRECT_GUARD, cond, "routes CUDA devices to a CUDA kernel and the others past it");
        return;
    }
    /* `if args.allow_tf32 and torch.cuda.is_available(): torch.backends.cuda.matmul.allow_tf32 = True`: the branch
     * only sets CUDA flags, which are reported themselves; testing for another accelerator would change nothing */
    if (has(text(w, cond), len(cond), "cuda.is_available()") && !an_py_mentions_agnostic(text(w, cond), len(cond)) &&
        sets_cuda_flags_only(w, body)) {
        add_node_why(w, AN_CTX_CORRECT_GUARD, cond, "only guards CUDA backend flags, which other devices ignore");
        return;
    }
    TSNode arg = negated(cond);
    if (ts_node_is_null(arg) || !block_exits(w, body)) return;
    const char *s = text(w, arg);
    size_t sl = len(arg);
    /* `if not x.is_cuda: return fallback(x)`: what follows is the CUDA kernel's path, and the test routes to it */
    if (device_test(s, sl)) {
        add_node_why(w, AN_CTX_CORRECT_GUARD, cond, "sends every other device to the fallback before the CUDA path");
        return;
    }
    /* `if not torch.cuda.is_available(): return` is no fact: the test is a guard like any other (rule XPU105, whose
     * fix an_guard decides over the code after the exit), and the code after it is reported by its own rules: the
     * audit's labels call both findings to port, not CUDA by design */
}

/* ---- guards that route to CUDA kernels or CUDA builds ------------------------------------------------------- */

/* a call in the subtree whose callee is named for CUDA as a word of a longer name: `dtw_cuda(x)`,
 * `self.forward_cuda(x)`, `median_filter_cuda(x, w)`; not `.cuda()`, `torch.cuda.synchronize()` nor a mover such as
 * `to_cuda(x)` (which is what the test would port) */
static bool calls_cuda_kernel(const walker *w, TSNode n, unsigned depth) {
    if (depth > 64) return false;
    if (is(n, "call")) {
        const char *f;
        size_t fn;
        callee_last(w, n, &f, &fn);
        if (f && fn > 4 && an_ctx_named_for_cuda(f, fn, NULL) && !starts(f, fn, "to_") && !has(f, fn, "_to_cuda"))
            return true;
    }
    if (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda")) return false;
    uint32_t k = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < k; i++)
        if (calls_cuda_kernel(w, ts_node_named_child(n, i), depth + 1)) return true;
    return false;
}

/* every statement of the block sets a CUDA backend flag (`torch.backends.cuda.matmul.allow_tf32 = True`,
 * `cudnn.benchmark = True`): settings that XPU ignores, each reported by its own rule */
static bool sets_cuda_flags_only(const walker *w, TSNode block) {
    uint32_t k = ts_node_named_child_count(block), seen = 0;
    for (uint32_t i = 0; i < k; i++) {
        TSNode st = ts_node_named_child(block, i);
        if (is(st, "comment")) continue;
        if (!is(st, "expression_statement")) return false;
        TSNode a = ts_node_named_child(st, 0);
        if (!is(a, "assignment")) return false;
        TSNode l = an_py_field(a, "left", 4);
        if (!is(l, "attribute")) return false;
        const char *ls = text(w, l);
        size_t ll = len(l);
        if (!(has(ls, ll, "cudnn.") || has(ls, ll, "backends.cuda."))) return false;
        seen++;
    }
    return seen > 0;
}

/* text that names a package build: `onnxruntime-gpu`, `-cpu`, `faiss-gpu`, `jax[cuda12]` (s is a string literal, or a
 * line that holds one) */
static bool names_variant(const char *s, size_t sl) {
    static const char *const sfx[] = {"-gpu", "-cpu", "-cuda", "[cuda", NULL};
    for (int i = 0; sfx[i]; i++) {
        size_t pl = strlen(sfx[i]);
        for (const char *p = s; (p = ut_memmem(p, sl - (size_t)(p - s), sfx[i], pl)); p++) {
            size_t at = (size_t)(p - s) + pl;
            /* a word that ends there (`-gpu"`, `-gpu<=2`, `-cuda12`), preceded by a name or at the string's start */
            bool end = at >= sl || !isalpha((unsigned char)s[at]);
            bool begin = p > s && (ident_char(p[-1]) || p[-1] == '"' || p[-1] == '\'');
            if (end && begin) return true;
        }
    }
    return false;
}

/* a string that names a package build, or a conditional expression with one as a branch */
static bool package_variant(const walker *w, TSNode n, unsigned depth) {
    if (depth > 8) return false;
    while (is(n, "parenthesized_expression")) n = ts_node_named_child(n, 0);
    if (is(n, "conditional_expression")) {
        uint32_t k = ts_node_named_child_count(n);
        return (k > 0 && package_variant(w, ts_node_named_child(n, 0), depth + 1)) ||
               (k > 2 && package_variant(w, ts_node_named_child(n, 2), depth + 1));
    }
    return is(n, "string") && names_variant(text(w, n), len(n));
}

/* `"onnxruntime-gpu" if torch.cuda.is_available() else "onnxruntime"`: the CUDA test chooses the CUDA build of a
 * package, which is right as it is (a local that holds the test: decide_avail_locals) */
static void on_conditional(walker *w, TSNode n) {
    if (ts_node_named_child_count(n) < 3) return;
    TSNode cond = ts_node_named_child(n, 1);
    if (!package_variant(w, ts_node_named_child(n, 0), 0) && !package_variant(w, ts_node_named_child(n, 2), 0)) return;
    while (is(cond, "parenthesized_expression")) cond = ts_node_named_child(cond, 0);
    if (has(text(w, cond), len(cond), "cuda.is_available()") && !an_py_mentions_agnostic(text(w, cond), len(cond)))
        add_node_why(w, AN_CTX_CORRECT_GUARD, cond, "chooses the CUDA build of a package");
}

/* `cuda = torch.cuda.is_available()`: remembered with its scope, for on_conditional's choices */
static void note_avail_local(walker *w, TSNode asg) {
    TSNode l = an_py_field(asg, "left", 4), r = an_py_field(asg, "right", 5);
    if (!is(l, "identifier") || ts_node_is_null(r) || !has(text(w, r), len(r), "cuda.is_available()") ||
        an_py_mentions_agnostic(text(w, r), len(r)))
        return;
    avail_local a = {ts_node_start_byte(l), ts_node_end_byte(l), ts_node_start_byte(r), ts_node_end_byte(r), 0, 0};
    TSNode p = ts_node_parent(asg);
    while (!ts_node_is_null(p) && !is(p, "function_definition") && !is(p, "module")) p = ts_node_parent(p);
    if (ts_node_is_null(p)) return;
    a.scope_start = ts_node_start_byte(p), a.scope_end = ts_node_end_byte(p);
    ut_vec_push(&w->avail_locals, a);
}

/* `pip("onnxruntime-gpu" if cuda else "onnxruntime")`: the use at `at` (nl bytes) is the condition of a conditional
 * expression on a line that names a package build. Read from the text: such a line need not hold a trigger, so check
 * may not have parsed it. */
static bool chooses_variant(const char *src, size_t n, uint32_t at, size_t nl) {
    uint32_t a = at, b = at + (uint32_t)nl;
    while (a > 0 && src[a - 1] == ' ') a--;
    if (a < 3 || memcmp(src + a - 3, " if", 3)) return false;
    while (b < n && src[b] == ' ') b++;
    if (b + 5 > n || memcmp(src + b, "else", 4) || ident_char(src[b + 4])) return false;
    uint32_t ls = at, le = at;
    while (ls > 0 && src[ls - 1] != '\n') ls--;
    while (le < n && src[le] != '\n') le++;
    return names_variant(src + ls, le - ls);
}

/* the use at `at` sits on a line whose code (its comment left out) names XPU too: `dev = "cuda"
 * if cuda_available else "xpu" if xpu_available else "cpu"`, `skipif(not (cuda_available or xpu_available))` */
static bool beside_xpu_probe(const char *src, size_t n, uint32_t at) {
    uint32_t ls = at, le = at;
    while (ls > 0 && src[ls - 1] != '\n') ls--;
    char q = 0;
    for (le = ls; le < n && src[le] != '\n' && (q || src[le] != '#'); le++)
        if (src[le] == '"' || src[le] == '\'') q = !q ? src[le] : q == src[le] ? 0 : q;
    for (uint32_t i = ls; i + 3 <= le; i++) /* xpu, is_xpu_available, RNGType.XPU; not a device-generic API */
        if (!strncasecmp(src + i, "xpu", 3) && (i == ls || !isalpha((unsigned char)src[i - 1])) &&
            (i + 3 == le || !isalpha((unsigned char)src[i + 3])))
            return true;
    return false;
}

/* a local whose every other use chooses a package build: its test is a correct guard; one whose every other use
 * sits beside an XPU probe: its test is one probe of a dispatch that serves XPU already */
static void decide_avail_locals(walker *w) {
    size_t n = strlen(w->src);
    for (size_t i = 0; i < w->avail_locals.len; i++) {
        const avail_local *a = &w->avail_locals.items[i];
        const char *nm = w->src + a->name_start;
        size_t nl = a->name_end - a->name_start, uses = 0, choices = 0, beside = 0;
        if (!nl || a->scope_end <= a->scope_start) continue; /* an empty name (a broken file) matches everywhere */
        const char *s = w->src + a->scope_start;
        size_t sl = a->scope_end - a->scope_start;
        for (const char *p = s; (p = ut_memmem(p, sl - (size_t)(p - s), nm, nl)); p += nl) {
            uint32_t at = (uint32_t)(p - w->src);
            if ((p > s && (ident_char(p[-1]) || p[-1] == '.')) || (at + nl < a->scope_end && ident_char(p[nl])))
                continue;
            if (at == a->name_start) continue;
            /* another assignment of the local (`except Exception: cuda_unavailable = True`) is no use of the test */
            const char *q = p + nl;
            while (q < w->src + n && (*q == ' ' || *q == '\t')) q++;
            if (q + 1 < w->src + n && q[0] == '=' && q[1] != '=') continue;
            uses++;
            choices += chooses_variant(w->src, n, at, nl);
            beside += beside_xpu_probe(w->src, n, at);
        }
        if (uses && uses == choices) {
            add_why(w, AN_CTX_CORRECT_GUARD, a->value_start, a->value_end, "chooses the CUDA build of a package");
        } else if (uses && uses == beside && !memchr(w->src + a->value_start, '"', a->value_end - a->value_start) &&
                   !memchr(w->src + a->value_start, '\'', a->value_end - a->value_start)) { /* a probe, no device chosen */
            ut_buf b;
            ut_buf_init(&b);
            ut_buf_printf(&b, "is kept in `%.*s`, and every use of it sits beside an XPU probe (a device dispatch that "
                              "already serves XPU)", (int)nl, nm);
            add_why(w, AN_CTX_MULTI_DEVICE, a->value_start, a->value_end, b.data);
            ut_buf_free(&b);
        }
    }
}

/* ---- branches for torch without XPU -------------------------------------------------------------------------- */

/* Upstream torch has an XPU device from 2.4 on: a branch that runs only on an older torch can meet no XPU device,
 * and its CUDA spellings (`torch.cuda.amp.GradScaler`, `torch.cuda.amp.custom_fwd`) are the fallbacks for APIs the
 * newer branch beside it uses device-generically. */
#define XPU_TORCH_MAJOR 2
#define XPU_TORCH_MINOR 4

typedef enum { VC_NONE, VC_LT, VC_LE, VC_GT, VC_GE } vcmp;

static vcmp vcmp_flip(vcmp c) { return c == VC_LT ? VC_GT : c == VC_LE ? VC_GE : c == VC_GT ? VC_LT : c == VC_GE ? VC_LE : VC_NONE; }

static vcmp vcmp_of(const char *s, size_t n) {
    if (n == 1 && s[0] == '<') return VC_LT;
    if (n == 1 && s[0] == '>') return VC_GT;
    if (n == 2 && s[0] == '<' && s[1] == '=') return VC_LE;
    if (n == 2 && s[0] == '>' && s[1] == '=') return VC_GE;
    return VC_NONE;
}

/* the first version number in s: "2.4.0" or "2, 4" (a tuple) or "2_4" (a flag's name); patch -1 when absent */
static bool version_in(const char *s, size_t n, int *maj, int *min, int *patch) {
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]) || (i && (isdigit((unsigned char)s[i - 1]) || isalpha((unsigned char)s[i - 1]))))
            continue;
        size_t j = i;
        int v[3] = {0, 0, -1}, k = 0;
        while (k < 3) {
            if (j >= n || !isdigit((unsigned char)s[j])) break;
            int x = 0;
            while (j < n && isdigit((unsigned char)s[j]) && x < 1000) x = x * 10 + (s[j++] - '0');
            v[k++] = x;
            size_t t = j;
            while (t < n && s[t] == ' ') t++;
            if (t < n && (s[t] == '.' || s[t] == '_' || s[t] == ',')) t++;
            else break;
            while (t < n && s[t] == ' ') t++;
            j = t;
        }
        if (k < 2) return false;
        *maj = v[0], *min = v[1], *patch = k == 3 ? v[2] : -1;
        return true;
    }
    return false;
}

/* the comparison word of a flag's name: `_TORCH_GREATER_EQUAL_2_4`, `TORCH_GE_2_1`, `IS_TORCH_LESS_THAN_2_3` */
static vcmp flag_cmp(const char *s, size_t n) {
    static const struct { const char *w; vcmp c; } words[] = {
        {"GREATER_EQUAL", VC_GE}, {"GREATER_OR_EQUAL", VC_GE}, {"_GE_", VC_GE}, {"_GEQ_", VC_GE}, {"AT_LEAST", VC_GE},
        {"LESS_EQUAL", VC_LE}, {"LESS_OR_EQUAL", VC_LE}, {"_LE_", VC_LE}, {"_LEQ_", VC_LE},
        {"GREATER_THAN", VC_GT}, {"_GT_", VC_GT}, {"LESS_THAN", VC_LT}, {"_LT_", VC_LT}, {"OLDER_THAN", VC_LT},
        {"OR_LATER", VC_GE}, {"OR_NEWER", VC_GE}, {"BEFORE", VC_LT}, {"BELOW", VC_LT},
    };
    char up[128];
    if (n >= sizeof up - 2) return VC_NONE;
    up[0] = '_';
    for (size_t i = 0; i < n; i++) up[i + 1] = (char)toupper((unsigned char)s[i]);
    up[n + 1] = 0;
    if (!strstr(up, "TORCH") && !strstr(up, "PT_")) return VC_NONE;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strstr(up, words[i].w)) return words[i].c;
    return VC_NONE;
}

/* the torch side of a comparison: `torch.__version__`, `Version(torch.__version__)`, `version.parse(torch.__version__)
 * .release`, `TORCH_VERSION`, `torch_version` */
static bool torch_version_side(const char *s, size_t n) {
    if (has(s, n, "torch.__version__")) return true;
    char up[96];
    if (n >= sizeof up) return false;
    for (size_t i = 0; i < n; i++) up[i] = (char)toupper((unsigned char)s[i]);
    up[n] = 0;
    return strstr(up, "TORCH_VERSION") && !memchr(s, '"', n) && !memchr(s, '\'', n);
}

/* cond (parentheses and a leading `not` taken off) is a test of the torch version: *c and *maj.*min.*patch, read as
 * "torch c version" */
static bool torch_version_test(const walker *w, TSNode cond, vcmp *c, int *maj, int *min, int *patch) {
    bool neg = false;
    for (;;) {
        while (is(cond, "parenthesized_expression")) cond = ts_node_named_child(cond, 0);
        if (!is(cond, "not_operator")) break;
        neg = !neg, cond = an_py_field(cond, "argument", 8);
    }
    *c = VC_NONE;
    if (is(cond, "identifier") || is(cond, "attribute")) {
        TSNode last = is(cond, "attribute") ? an_py_field(cond, "attribute", 9) : cond;
        if (ts_node_is_null(last) || !version_in(text(w, last), len(last), maj, min, patch)) return false;
        *c = flag_cmp(text(w, last), len(last));
    } else if (is(cond, "call")) {
        const char *f;
        size_t fn;
        callee_last(w, cond, &f, &fn);
        TSNode args = an_py_field(cond, "arguments", 9);
        if (!f || ts_node_is_null(args)) return false;
        uint32_t k = ts_node_named_child_count(args);
        /* `is_torch_version(">=", "2.4.0")` (accelerate, diffusers) */
        if (fn == 16 && !memcmp(f, "is_torch_version", 16) && k == 2) {
            TSNode op = ts_node_named_child(args, 0), v = ts_node_named_child(args, 1);
            if (!is(op, "string") || !is(v, "string") || len(op) < 3) return false;
            *c = vcmp_of(text(w, op) + 1, len(op) - 2);
            if (!version_in(text(w, v), len(v), maj, min, patch)) return false;
        } else if (starts(f, fn, "is_torch_greater_or_equal") && k >= 1 && is(ts_node_named_child(args, 0), "string")) {
            TSNode v = ts_node_named_child(args, 0); /* `is_torch_greater_or_equal("2.4")` (transformers) */
            *c = VC_GE;
            if (!version_in(text(w, v), len(v), maj, min, patch)) return false;
        } else {
            return false;
        }
    } else if (is(cond, "comparison_operator") && ts_node_named_child_count(cond) == 2 && ts_node_child_count(cond) == 3) {
        TSNode a = ts_node_named_child(cond, 0), b = ts_node_named_child(cond, 1), op = ts_node_child(cond, 1);
        vcmp oc = vcmp_of(text(w, op), len(op));
        if (oc == VC_NONE) return false;
        TSNode v;
        if (torch_version_side(text(w, a), len(a)) && !has(text(w, b), len(b), "torch")) v = b, *c = oc;
        else if (torch_version_side(text(w, b), len(b)) && !has(text(w, a), len(a), "torch")) v = a, *c = vcmp_flip(oc);
        else return false;
        if (!version_in(text(w, v), len(v), maj, min, patch)) return false;
    } else {
        return false;
    }
    if (*c == VC_NONE) return false;
    if (neg) *c = *c == VC_LT ? VC_GE : *c == VC_LE ? VC_GT : *c == VC_GT ? VC_LE : VC_LT;
    return true;
}

/* the test holds only on a torch older than 2.4 (*old_if_true), or fails only there (!*old_if_true) */
static bool torch_version_old_side(const walker *w, TSNode cond, bool *old_if_true) {
    vcmp c;
    int maj, min, patch;
    if (!torch_version_test(w, cond, &c, &maj, &min, &patch)) return false;
    /* the bound V: below it no XPU; `< V` and `>= V` split at V itself, `<= V` and `> V` just above it */
    bool below = maj < XPU_TORCH_MAJOR || (maj == XPU_TORCH_MAJOR && min < XPU_TORCH_MINOR);
    bool at = maj == XPU_TORCH_MAJOR && min == XPU_TORCH_MINOR && patch <= 0;
    if (c == VC_LT || c == VC_GE) {
        if (!below && !at) return false;
    } else if (!below) {
        return false;
    }
    *old_if_true = c == VC_LT || c == VC_LE;
    return true;
}

static const char old_torch_why[] = "runs only on torch older than 2.4, which has no XPU device (the branch for newer "
                                    "torch beside it is the one to port)";

/* `if Version(torch.__version__) < Version("2.4"): ... else: ...`: the old torch's branch */
static void old_torch_if(walker *w, TSNode n) {
    bool old_if_true;
    TSNode cond = an_py_field(n, "condition", 9);
    if (ts_node_is_null(cond) || !torch_version_old_side(w, cond, &old_if_true)) return;
    if (old_if_true) {
        TSNode body = an_py_field(n, "consequence", 11);
        if (!ts_node_is_null(body)) add_node_why(w, AN_CTX_CUDA_ONLY, body, old_torch_why);
        return;
    }
    /* the else branch, when no elif stands between (an elif's test decides its own branch) */
    uint32_t k = ts_node_named_child_count(n);
    TSNode alt = {0};
    for (uint32_t i = 0; i < k; i++) {
        TSNode ch = ts_node_named_child(n, i);
        if (is(ch, "elif_clause")) return;
        if (is(ch, "else_clause")) alt = an_py_field(ch, "body", 4);
    }
    if (!ts_node_is_null(alt)) add_node_why(w, AN_CTX_CUDA_ONLY, alt, old_torch_why);
}

/* `torch.amp.GradScaler if _TORCH_GREATER_EQUAL_2_4 else torch.cuda.amp.GradScaler` */
static void old_torch_conditional(walker *w, TSNode n) {
    bool old_if_true;
    if (ts_node_named_child_count(n) < 3 || !torch_version_old_side(w, ts_node_named_child(n, 1), &old_if_true)) return;
    add_node_why(w, AN_CTX_CUDA_ONLY, ts_node_named_child(n, old_if_true ? 0 : 2), old_torch_why);
}

/* ---- NVIDIA-only libraries ---------------------------------------------------------------------------------- */

bool an_ctx_nvidia_only_module(const char *s, size_t n) {
    static const char *const libs[] = {"tensorrt", "torch_tensorrt", "transformer_engine", "pycuda", "tensorrt_llm",
                                       NULL};
    size_t first = 0;
    while (first < n && s[first] != '.') first++;
    for (int i = 0; libs[i]; i++)
        if (first == strlen(libs[i]) && !memcmp(s, libs[i], first)) return true;
    return false;
}

/* `import tensorrt as trt`, `from transformer_engine.pytorch import fp8_autocast` */
static bool imports_nvidia_only(const walker *w, TSNode n) {
    TSNode m = is(n, "import_from_statement") ? an_py_field(n, "module_name", 11)
                                               : ts_node_named_child(n, 0);
    if (is(m, "aliased_import")) m = an_py_field(m, "name", 4);
    return is(m, "dotted_name") && an_ctx_nvidia_only_module(text(w, m), len(m));
}

static void on_import(walker *w, TSNode n) {
    if (!imports_nvidia_only(w, n)) return;
    TSNode parent = ts_node_parent(n);
    if (ts_node_is_null(parent) || (!is(parent, "block") && !is(parent, "module"))) return;
    if (ts_node_end_byte(parent) > ts_node_end_byte(n))
        add_why(w, AN_CTX_CUDA_ONLY, ts_node_end_byte(n), ts_node_end_byte(parent), "follows the import of a library that runs on NVIDIA GPUs only");
}

/* ---- counterparts in one block ------------------------------------------------------------------------------ */

/* a CUDA setting and what sets its XPU or device-generic counterpart (either in the same block) */
static const struct {
    const char *cuda;
    const char *counterpart[3];
} counterparts[] = {
    {"CUDA_VISIBLE_DEVICES", {"ZE_AFFINITY_MASK", "ONEAPI_DEVICE_SELECTOR", NULL}},
    {"cudnn.deterministic", {"use_deterministic_algorithms(", NULL, NULL}},
    {"allow_tf32", {"set_float32_matmul_precision(", "mkldnn.allow_tf32", NULL}},
};

static bool file_has_counterparts(const char *src, size_t n) {
    for (size_t i = 0; i < sizeof counterparts / sizeof *counterparts; i++)
        for (int j = 0; counterparts[i].counterpart[j]; j++)
            if (has(src, n, counterparts[i].counterpart[j])) return true;
    return false;
}

/* the columns of indentation of the line holding byte at, and where that line starts */
static uint32_t line_indent(const char *src, uint32_t at, uint32_t *ls) {
    while (at > 0 && src[at - 1] != '\n') at--;
    *ls = at;
    uint32_t k = 0;
    while (src[at + k] == ' ' || src[at + k] == '\t') k++;
    return k;
}

/* a line (from its first non-blank byte) that opens a definition: its body is another scope */
static bool opens_definition(const char *p, size_t n) {
    return (n > 4 && !memcmp(p, "def ", 4)) || (n > 6 && !memcmp(p, "class ", 6)) ||
           (n > 10 && !memcmp(p, "async def ", 10)) || (n > 1 && p[0] == '@');
}

/* One of pats on a line of the block that holds the statement [s, e): the lines around it as far as a line with less
 * indentation, without the bodies of definitions (read from the text: check parses only the statements that can hold
 * a finding, so the statement beside it may be no node of the tree) */
static bool block_has(const walker *w, uint32_t s, uint32_t e, const char *const *pats) {
    const char *src = w->src;
    size_t n = strlen(src);
    uint32_t ls, ind = line_indent(src, s, &ls);
    for (int dir = -1; dir <= 1; dir += 2) {
        uint32_t at = dir < 0 ? ls : e;
        bool pending = false, skipping = false; /* backwards: a match in a body whose header is still above */
        for (int lines = 0; lines < 400; lines++) {
            uint32_t a, b;
            if (dir < 0) {
                if (at == 0) break;
                b = at - 1, a = b; /* the line before: [a, b) */
                while (a > 0 && src[a - 1] != '\n') a--;
                at = a;
            } else {
                while (at < n && src[at] != '\n') at++; /* the rest of the statement's last line */
                if (at >= n) break;
                a = ++at;
                b = a;
                while (b < n && src[b] != '\n') b++;
                at = b;
            }
            uint32_t k = a;
            while (k < b && (src[k] == ' ' || src[k] == '\t')) k++;
            if (k == b || src[k] == '#') continue; /* blank or a comment */
            if (k - a < ind) break;                /* the block ends */
            bool hit = false;
            for (int i = 0; pats[i] && !hit; i++) hit = has(src + k, b - k, pats[i]);
            if (k - a == ind) {
                bool def = opens_definition(src + k, b - k);
                if (dir < 0) {
                    if (!def && (hit || pending)) return true;
                    pending = false;
                } else {
                    skipping = def;
                    if (hit && !def) return true;
                }
            } else if (dir < 0) {
                pending |= hit;
            } else if (hit && !skipping) {
                return true;
            }
        }
    }
    return false;
}

static void on_block(walker *w, TSNode block) {
    uint32_t k = ts_node_named_child_count(block);
    for (uint32_t i = 0; i < k; i++) {
        TSNode st = ts_node_named_child(block, i);
        if (!is(st, "expression_statement")) continue;
        const char *ss = text(w, st);
        size_t sn = len(st);
        for (size_t c = 0; c < sizeof counterparts / sizeof *counterparts; c++) {
            if (!has(ss, sn, counterparts[c].cuda)) continue;
            /* the setting itself is not its counterpart (`torch.backends.mkldnn.allow_tf32 = True`) */
            bool self = false;
            for (int j = 0; counterparts[c].counterpart[j]; j++) self |= has(ss, sn, counterparts[c].counterpart[j]);
            if (self || !block_has(w, ts_node_start_byte(st), ts_node_end_byte(st), counterparts[c].counterpart)) continue;
            /* the setting: the assignment's target, or the statement (`os.environ.setdefault(...)`) */
            TSNode a = ts_node_named_child(st, 0), l = {0};
            if (is(a, "assignment")) l = an_py_field(a, "left", 4);
            add_node_why(w, AN_CTX_COUNTERPART, ts_node_is_null(l) ? st : l, "is a CUDA setting whose XPU or device-generic twin is set beside it");
        }
    }
}

/* ---- described values ---------------------------------------------------------------------------------------- */

/* `print(...)`, `logger.info(...)`, `logging.warning(...)`: what the call is given is written out, not decided on */
static void on_report_call(walker *w, TSNode call) {
    static const char *const outs[] = {"print", "info", "debug", "warning", "warn", "error", "critical", "log", NULL};
    const char *f;
    size_t fn;
    callee_last(w, call, &f, &fn);
    if (!f) return;
    for (int i = 0; outs[i]; i++)
        if (fn == strlen(outs[i]) && !memcmp(f, outs[i], fn)) {
            TSNode args = an_py_field(call, "arguments", 9);
            if (!ts_node_is_null(args)) add_node(w, AN_CTX_REPORT, args);
            return;
        }
}

/* `env["cuda"] = torch.version.cuda`: a record's field */
static void on_record_field(walker *w, TSNode asg) {
    TSNode l = an_py_field(asg, "left", 4), r = an_py_field(asg, "right", 5);
    if (is(l, "subscript") && !ts_node_is_null(r)) {
        TSNode key = an_py_field(l, "subscript", 9);
        if (is(key, "string")) add_node(w, AN_CTX_REPORT, r);
    }
}

/* the node types visit acts on, by position + 1 (an_pykinds) */
enum {
    V_ASSIGNMENT = 1, V_ASSERT, V_BOOLEAN, V_BLOCK, V_CALL, V_CLASS, V_CONDITIONAL, V_COMPARISON, V_DICTIONARY,
    V_DECORATED, V_IF, V_INTERPOLATION, V_IMPORT, V_IMPORT_FROM, V_ELIF, V_PAIR, V_MODULE, V_WHILE
};
static const char *const visit_names[] = {"assignment", "assert_statement", "boolean_operator", "block", "call",
                                          "class_definition", "conditional_expression", "comparison_operator",
                                          "dictionary", "decorated_definition", "if_statement", "interpolation",
                                          "import_statement", "import_from_statement", "elif_clause", "pair",
                                          "module", "while_statement", NULL};

const TSLanguage *tree_sitter_python(void);
static an_pykinds vkinds;
static pthread_once_t vkinds_once = PTHREAD_ONCE_INIT;
static void vkinds_init(void) { an_pykinds_init(&vkinds, tree_sitter_python(), visit_names); }

/* the kind of n by its type name (a tree of another grammar than the one of vkinds) */
static uint8_t visit_kind_by_name(TSNode n) {
    const char *t = ts_node_type(n);
    for (int i = 0; visit_names[i]; i++)
        if (!strcmp(t, visit_names[i])) return (uint8_t)(i + 1);
    return 0;
}

/* the facts of a named node n of kind k (visit_names) */
static void visit(walker *w, TSNode n, uint8_t k) {
    switch (k) {
    case V_ASSIGNMENT: on_assignment(w, n), note_avail_local(w, n), on_record_field(w, n); break;
    case V_ASSERT: add_node(w, AN_CTX_READ, n); break;
    case V_BOOLEAN: on_boolean(w, n); break;
    case V_BLOCK:
        if (w->counterparts) on_block(w, n);
        break;
    case V_CALL: on_registry_call(w, n), on_setattr_call(w, n), on_report_call(w, n); break;
    case V_CLASS: {
        TSNode p = ts_node_parent(n);
        if (!is(p, "decorated_definition")) p = n;
        scope sc = {n, ts_node_start_byte(p), ts_node_end_byte(p), true, NULL, false};
        ut_vec_push(&w->scopes, sc);
        break;
    }
    case V_CONDITIONAL: on_conditional(w, n), old_torch_conditional(w, n); break;
    case V_COMPARISON:
        add_node(w, AN_CTX_READ, n);
        /* `dist.get_backend() == "nccl"`, `get_backend() == Backend.NCCL`: asks which backend runs; so does any
         * comparison with `Backend.NCCL`, or of a backend with "nccl" (fairscale's `self._backend != dist.Backend.NCCL`
         * picks NCCL's ordering guarantee: the run-time device's backend there would make gloo skip waits) */
        if (has(text(w, n), len(n), "get_backend(") || has(text(w, n), len(n), "Backend.NCCL") ||
            ((has(text(w, n), len(n), "\"nccl\"") || has(text(w, n), len(n), "'nccl'")) &&
             (has(text(w, n), len(n), "backend") || has(text(w, n), len(n), "Backend"))))
            add_node_why(w, AN_CTX_CORRECT_GUARD, n, "asks which distributed backend runs");
        break;
    case V_DICTIONARY: on_dictionary(w, n); break;
    case V_DECORATED: on_decorated(w, n); break;
    case V_IF: on_if(w, n), old_torch_if(w, n); break;
    case V_INTERPOLATION: add_node(w, AN_CTX_READ, n), add_node(w, AN_CTX_REPORT, n); break;
    case V_IMPORT:
    case V_IMPORT_FROM: on_import(w, n); break;
    case V_ELIF: {
        TSNode c = an_py_field(n, "condition", 9);
        if (!ts_node_is_null(c)) add_node(w, AN_CTX_READ, c); /* `elif cudnn.enabled:` reads the flag */
        break;
    }
    case V_PAIR: { /* `{"cuda_version": torch.version.cuda}` */
        TSNode v = an_py_field(n, "value", 5);
        if (!ts_node_is_null(v)) add_node(w, AN_CTX_REPORT, v);
        break;
    }
    case V_MODULE:
        if (w->counterparts) on_block(w, n);
        break;
    case V_WHILE: {
        TSNode c = an_py_field(n, "condition", 9);
        if (!ts_node_is_null(c)) add_node(w, AN_CTX_READ, c);
        break;
    }
    }
}

/* ---- CUDA backends ------------------------------------------------------------------------------------------ */

/* word (4 letters at most, lower case) as a word of the name: CUDA, Cuda or cuda at a camel-case or underscore
 * boundary */
static bool named_for(const char *s, size_t n, const char *word, size_t *tok) {
    size_t wl = strlen(word);
    char wu[8], wt[8];
    for (size_t i = 0; i <= wl; i++) wu[i] = (char)toupper((unsigned char)word[i]), wt[i] = i ? word[i] : wu[0];
    for (size_t i = 0; i + wl <= n; i++) {
        if (strncasecmp(s + i, word, wl)) continue;
        bool upper = !memcmp(s + i, wu, wl), title = !memcmp(s + i, wt, wl), lower = !memcmp(s + i, word, wl);
        char before = i ? s[i - 1] : 0, after = i + wl < n ? s[i + wl] : 0;
        bool left = !before || before == '_' || (!lower && islower((unsigned char)before)) ||
                    (!lower && isdigit((unsigned char)before));
        bool right = !after || !isalpha((unsigned char)after) || (upper && isupper((unsigned char)after)) ||
                     (title && isupper((unsigned char)after)) || isdigit((unsigned char)after);
        if ((upper || title || lower) && left && right) {
            if (tok) *tok = i;
            return true;
        }
    }
    return false;
}

bool an_ctx_named_for_cuda(const char *s, size_t n, size_t *tok) { return named_for(s, n, "cuda", tok); }

/* the name without its device word (wl letters at tok): CUDAAccelerator -> Accelerator, cuda_backend -> backend */
static char *rest_of(const char *s, size_t n, size_t tok, size_t wl) {
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_printf(&b, "%.*s", (int)tok, s);
    size_t from = tok + wl;
    if (from < n && s[from] == '_' && (!tok || s[tok - 1] == '_')) from++;
    if (b.len && b.data[b.len - 1] == '_' && from >= n) b.data[--b.len] = 0;
    ut_buf_printf(&b, "%.*s", (int)(n - from), s + from);
    return ut_buf_take(&b);
}

static bool base_excluded(const char *b, size_t n) {
    static const char *const no[] = {"object", "Module", "ABC", "Exception", "Function", "Protocol", "Generic", "Enum",
                                     "TestCase", "NamedTuple", "dict", "Dict", "Tensor", "Dataset", "IntEnum",
                                     "RuntimeError", "str", "list", "tuple", "Extension", "BuildExtension",
                                     "CUDAExtension", "CppExtension", NULL};
    for (int i = 0; no[i]; i++)
        if (strlen(no[i]) == n && !memcmp(b, no[i], n)) return true;
    return false;
}

/* `class CUDAAccelerator(Accelerator)`: a base class named by the rest of the name (Accelerator, BaseAccelerator,
 * AcceleratorBase, DeepSpeedAccelerator) */
static bool family_base(const walker *w, TSNode cls, const char *rest, char **base) {
    TSNode sup = an_py_field(cls, "superclasses", 12);
    if (ts_node_is_null(sup) || strlen(rest) < 3) return false;
    uint32_t k = ts_node_named_child_count(sup);
    for (uint32_t i = 0; i < k; i++) {
        TSNode b = ts_node_named_child(sup, i);
        if (is(b, "attribute")) b = an_py_field(b, "attribute", 9);
        if (!is(b, "identifier")) continue;
        const char *bs = text(w, b);
        size_t bl = len(b), rl = strlen(rest);
        if (base_excluded(bs, bl)) continue;
        /* _Accelerator, BaseAccelerator, AbstractAccelerator, AcceleratorBase: the family's name is Accelerator */
        while (bl && *bs == '_') bs++, bl--;
        if (starts(bs, bl, "Base") && bl > 4 && isupper((unsigned char)bs[4])) bs += 4, bl -= 4;
        else if (starts(bs, bl, "Abstract") && bl > 8) bs += 8, bl -= 8;
        if (bl > 4 && !memcmp(bs + bl - 4, "Base", 4)) bl -= 4;
        /* the family's name is the rest of the class's (Accelerator), or ends with it (DeepSpeedAccelerator) */
        bool hit = bl >= rl && !memcmp(bs + bl - rl, rest, rl);
        if (hit) {
            *base = ut_strndup(bs, bl);
            return true;
        }
    }
    return false;
}

/* `class XPUAccelerator` next to `class CUDAAccelerator`: a class of that name in the file */
static bool has_class(const char *src, const char *name) {
    size_t nl = strlen(name);
    for (const char *p = src; (p = strstr(p, "class ")); p += 6) {
        if (p > src && ident_char(p[-1])) continue;
        const char *q = p + 6;
        while (*q == ' ') q++;
        if (!strncmp(q, name, nl) && !ident_char(q[nl])) return true;
    }
    return false;
}

/* a class named like name with its device word (wl letters at tok) replaced by one of devs */
static char *sibling(const char *src, const char *name, size_t tok, size_t wl, const char *const *devs) {
    for (int i = 0; devs[i]; i++) {
        ut_buf b;
        ut_buf_init(&b);
        ut_buf_printf(&b, "%.*s%s%s", (int)tok, name, devs[i], name + tok + wl);
        if (has_class(src, b.data)) return ut_buf_take(&b);
        ut_buf_free(&b);
    }
    return NULL;
}

/* `accelerators/cuda.py`, `backends/cuda_backend.py`: the CUDA module of a package of device backends */
static char *module_backend(const char *path, char **why, char **xpu) {
    if (!path) return NULL;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t bl = strlen(base);
    if (bl < 4 || strcmp(base + bl - 3, ".py")) return NULL;
    size_t tok;
    /* cuda.py, cuda_accelerator.py, backend_cuda.py; not test_cuda.py (a test of the backend) */
    if (!an_ctx_named_for_cuda(base, bl - 3, &tok) || starts(base, bl, "test_") || strstr(base, "_test.py"))
        return NULL;
    const char *dir_end = base > path ? base - 1 : NULL;
    if (!dir_end) return NULL;
    const char *dir = dir_end;
    while (dir > path && dir[-1] != '/') dir--;
    size_t dl = (size_t)(dir_end - dir);
    static const char *const pkgs[] = {"accelerators", "accelerator", "backends", "backend", "platforms", "platform",
                                       "devices", NULL};
    for (int i = 0; pkgs[i]; i++) {
        if (strlen(pkgs[i]) != dl || memcmp(dir, pkgs[i], dl)) continue;
        ut_buf b;
        ut_buf_init(&b);
        ut_buf_printf(&b, "the CUDA module of the `%.*s` package", (int)dl, dir);
        *why = ut_buf_take(&b);
        /* its XPU sibling is a file beside it (xpu_accelerator.py next to cuda_accelerator.py); a results-cache entry
         * made before the sibling existed keeps saying it is missing until the module itself changes */
        const char *word = base[tok] == 'c' ? "xpu" : base[tok + 1] == 'U' ? "XPU" : "Xpu";
        ut_buf_printf(&b, "%.*s%.*s%s%s", (int)(base - path), path, (int)tok, base, word, base + tok + 4);
        if (!access(b.data, F_OK)) *xpu = ut_strdup(b.data + (base - path));
        ut_buf_free(&b);
        return ut_strdup(base);
    }
    return NULL;
}

static void add_backend(walker *w, uint32_t s, uint32_t e, TSNode name, char *label, char *why, char *xpu) {
    an_ctx_fact f = {0};
    f.kind = AN_CTX_CUDA_BACKEND, f.start = s, f.end = e;
    if (!ts_node_is_null(name)) f.name_start = ts_node_start_byte(name), f.name_end = ts_node_end_byte(name);
    f.name = label, f.why = why, f.xpu_sibling = xpu;
    ut_vec_push(&w->cx->kinds[AN_CTX_CUDA_BACKEND], f);
}

static void decide_backends(walker *w, const char *path, size_t srclen) {
    static const char *const xpu[] = {"XPU", "Xpu", "xpu", NULL};
    static const char *const others[] = {"MPS", "Mps", "CPU", "Cpu", "NPU", "Npu", "HPU", "Hpu", "ROCm", "Rocm", "HIP",
                                         "Hip", "XLA", "Xla", "TPU", "Tpu", "mps", "cpu", "npu", "hpu", "rocm", "hip",
                                         "xla", "tpu", NULL};
    char *mwhy = NULL, *mxpu = NULL, *mname = module_backend(path, &mwhy, &mxpu);
    if (mname) add_backend(w, 0, (uint32_t)srclen, (TSNode){0}, mname, mwhy, mxpu);
    for (size_t i = 0; i < w->scopes.len; i++) {
        scope *sc = &w->scopes.items[i];
        TSNode nm = an_py_field(sc->node, "name", 4);
        if (ts_node_is_null(nm)) continue;
        char *name = ut_strndup(text(w, nm), len(nm));
        char *why = sc->registered ? ut_strdup(sc->registered) : NULL;
        size_t tok = 0;
        bool named = an_ctx_named_for_cuda(name, strlen(name), &tok);
        char *xsib = named ? sibling(w->src, name, tok, 4, xpu) : NULL;
        /* a registered implementation's sibling is another registration, for "xpu" */
        if (why && !xsib && (strstr(w->src, "(\"xpu\"") || strstr(w->src, "('xpu'"))) xsib = ut_strdup("xpu");
        if (sc->is_class && !why) {
            for (size_t r = 0; r < w->registered.len && !why; r++)
                if (!strcmp(w->registered.items[r], name)) why = ut_strdup("registered for \"cuda\" by its registry");
            for (size_t r = 0; r < w->registered_cls.len && !why; r++)
                if (w->registered_cls.items[r] >= sc->start && w->registered_cls.items[r] < sc->end)
                    why = ut_strdup("registered for \"cuda\" by its registry");
        }
        if (sc->is_class && named && !why) {
            char *rest = rest_of(name, strlen(name), tok, 4), *base = NULL;
            char *osib = xsib ? NULL : sibling(w->src, name, tok, 4, others);
            ut_buf b;
            ut_buf_init(&b);
            if (family_base(w, sc->node, rest, &base)) ut_buf_printf(&b, "a subclass of `%s`", base);
            else if (xsib || osib) ut_buf_printf(&b, "a sibling of `%s`", xsib ? xsib : osib);
            else if (mname) ut_buf_printf(&b, "%s", mwhy);
            why = b.len ? ut_buf_take(&b) : NULL;
            ut_buf_free(&b);
            ut_free(rest), ut_free(base), ut_free(osib);
        }
        /* the XPU member of the family (XPUAccelerator next to CUDAAccelerator): XPU-only by design, as its CUDA
         * sibling is CUDA-only */
        size_t xt;
        if (!why && sc->is_class && !named && named_for(name, strlen(name), "xpu", &xt)) {
            static const char *const cuda[] = {"CUDA", "Cuda", "cuda", NULL};
            char *rest = rest_of(name, strlen(name), xt, 3), *base = NULL, *csib = sibling(w->src, name, xt, 3, cuda);
            bool fam = csib || family_base(w, sc->node, rest, &base);
            ut_free(rest), ut_free(base), ut_free(csib);
            if (fam) add(w, AN_CTX_XPU_BACKEND, sc->start, sc->end);
        }
        if (why) {
            if (!xsib && mxpu) xsib = ut_strdup(mxpu); /* the module's sibling speaks for its classes */
            if (!xsib && sc->kernel) xsib = ut_strdup("(its registration is reported by XPU110)");
            add_backend(w, sc->start, sc->end, nm, name, why, xsib);
        } else {
            ut_free(name), ut_free(xsib);
        }
    }
}

/* ---- lookups ------------------------------------------------------------------------------------------------ */

static int fact_cmp(const void *a, const void *b) {
    const an_ctx_fact *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end; /* the outer one first */
}

/* sorted, without the facts inside another (their ranges nest or are disjoint: they are syntax nodes) */
static void keep_outermost(an_ctx_facts *v) {
    if (v->len > 1) qsort(v->items, v->len, sizeof *v->items, fact_cmp);
    size_t k = 0;
    for (size_t i = 0; i < v->len; i++) {
        if (k && v->items[i].start >= v->items[k - 1].start && v->items[i].end <= v->items[k - 1].end) {
            ut_free(v->items[i].name), ut_free(v->items[i].why), ut_free(v->items[i].xpu_sibling);
            continue;
        }
        v->items[k++] = v->items[i];
    }
    v->len = k;
}

void an_pycontext_collect(an_pycontext *cx, TSNode root, const char *src, const char *path) {
    an_pynodes nodes;
    an_pynodes_build(&nodes, root);
    const an_pynodes *was = an_py_field_index(&nodes);
    an_pycontext_collect_nodes(cx, &nodes, src, path);
    an_py_field_index(was);
    an_pynodes_free(&nodes);
}

void an_pycontext_collect_nodes(an_pycontext *cx, const an_pynodes *nodes, const char *src, const char *path) {
    memset(cx, 0, sizeof *cx);
    walker w = {0};
    w.src = src, w.cx = cx;
    w.counterparts = file_has_counterparts(src, strlen(src));
    pthread_once(&vkinds_once, vkinds_init);
    bool py = nodes->len && ts_tree_language(nodes->items[0].node.tree) == vkinds.lang;
    for (uint32_t i = 0; i < nodes->len;) {
        const an_pynode *p = &nodes->items[i];
        uint8_t k = py ? an_pykind_of(&vkinds, p->sym) : visit_kind_by_name(p->node);
        if (k && ts_node_is_named(p->node)) visit(&w, p->node, k);
        i = p->depth < CTX_MAX_DEPTH ? i + 1 : p->next;
    }
    decide_backends(&w, path, strlen(src));
    decide_avail_locals(&w);
    for (int k = 0; k < AN_CTX_NKINDS; k++)
        if (k != AN_CTX_CUDA_BACKEND) keep_outermost(&cx->kinds[k]);
    for (size_t i = 0; i < w.scopes.len; i++) ut_free(w.scopes.items[i].registered);
    for (size_t i = 0; i < w.registered.len; i++) ut_free(w.registered.items[i]);
    ut_vec_free(&w.scopes);
    ut_vec_free(&w.registered);
    ut_vec_free(&w.registered_cls);
    ut_vec_free(&w.avail_locals);
}

void an_pycontext_free(an_pycontext *cx) {
    for (int k = 0; k < AN_CTX_NKINDS; k++) {
        for (size_t i = 0; i < cx->kinds[k].len; i++) {
            an_ctx_fact *f = &cx->kinds[k].items[i];
            ut_free(f->name), ut_free(f->why), ut_free(f->xpu_sibling);
        }
        ut_vec_free(&cx->kinds[k]);
    }
}

const an_ctx_fact *an_pycontext_find(const an_pycontext *cx, an_ctx_kind kind, uint32_t s, uint32_t e) {
    const an_ctx_facts *v = &cx->kinds[kind];
    if (kind == AN_CTX_CUDA_BACKEND) {
        const an_ctx_fact *best = NULL;
        for (size_t i = 0; i < v->len; i++) {
            const an_ctx_fact *f = &v->items[i];
            if (f->start <= s && e <= f->end && (!best || f->end - f->start < best->end - best->start)) best = f;
        }
        return best;
    }
    size_t lo = 0, hi = v->len; /* the last fact starting at or before s */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->items[mid].start <= s) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return NULL;
    const an_ctx_fact *f = &v->items[lo - 1];
    return e <= f->end ? f : NULL;
}
