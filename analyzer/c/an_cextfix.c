/* an_cextfix: fixes that make PyTorch C++ extension code device-generic (rules XPC701-XPC703): `x.is_cuda()`
 * becomes `!x.is_cpu()` (unless the test routes tensors to a CUDA kernel), CUDA device guards built from a tensor's device become c10's device-generic guards, and
 * `kCUDA` given to `.device(...)` / `.to(...)` becomes the device of the function's first tensor parameter, and
 * (unsafe) a CUDA-only call statement of a C++ source is kept for CUDA builds under `#ifndef XPUIFY_NO_CUDA`. Each
 * edit only replaces text spelled in the file, next to the finding; anything less regular (a guard built from an
 * index, `kCUDA` compared or passed elsewhere, a function without a tensor parameter) stays a finding. */
#include "analyzer/c/an_cfix.h"
#include "analyzer/core/an_rule.h"
#include <ctype.h>
#include <stdio.h>

static bool idch(char c) { return isalnum((unsigned char)c) || c == '_'; }

static size_t skip_ws_back(const char *t, size_t i) { /* i: one past; returns one past the last non-space */
    while (i > 0 && isspace((unsigned char)t[i - 1])) i--;
    return i;
}

static size_t skip_ws(const char *t, size_t len, size_t i) {
    while (i < len && isspace((unsigned char)t[i])) i++;
    return i;
}

/* The member-access operator ending right before k (t[k-1]): 1 for `.`, 2 for `->`, 0 for none. */
static size_t member_op(const char *t, size_t k) {
    if (k >= 1 && t[k - 1] == '.') return 1;
    if (k >= 2 && t[k - 1] == '>' && t[k - 2] == '-') return 2;
    return 0;
}

/* From one past a closing bracket at t[i-1], back to the opening one; SIZE_MAX when unbalanced. */
static size_t match_back(const char *t, size_t i) {
    char close = t[i - 1], open = close == ')' ? '(' : close == ']' ? '[' : '{';
    int depth = 0;
    while (i > 0) {
        char c = t[--i];
        if (c == close) depth++;
        else if (c == open && --depth == 0) return i;
    }
    return SIZE_MAX;
}

/* From an opening bracket at t[i], one past its closing one; SIZE_MAX when unbalanced. */
static size_t match_fwd(const char *t, size_t len, size_t i) {
    char open = t[i], close = open == '(' ? ')' : open == '[' ? ']' : '}';
    int depth = 0;
    for (; i < len; i++) {
        if (t[i] == open) depth++;
        else if (t[i] == close && --depth == 0) return i + 1;
    }
    return SIZE_MAX;
}

/* The receiver of a member call whose `.`/`->` ends at `dot` (exclusive): a postfix chain of names, `::`, `.`, `->`
 * and balanced ()/[] groups (`x`, `self.w`, `t[0]`, `get(i).data`). Returns its start, or SIZE_MAX. */
static size_t receiver_start(const char *t, size_t dot) {
    size_t i = skip_ws_back(t, dot);
    size_t start = SIZE_MAX;
    for (;;) {
        size_t es = i;
        bool any = false;
        while (es > 0 && (t[es - 1] == ')' || t[es - 1] == ']')) {
            size_t o = match_back(t, es);
            if (o == SIZE_MAX) return SIZE_MAX;
            es = o, any = true;
            if (es > 0 && idch(t[es - 1])) break; /* a call's or an index's name comes next */
        }
        size_t j = es;
        while (j > 0 && idch(t[j - 1])) j--;
        if (j < es) {
            if (isdigit((unsigned char)t[j])) return SIZE_MAX;
            es = j, any = true;
        }
        if (!any) return start;
        start = es;
        size_t k = skip_ws_back(t, es), op = member_op(t, k);
        if (!op && k >= 2 && t[k - 1] == ':' && t[k - 2] == ':') op = 2;
        if (!op) return start;
        i = skip_ws_back(t, k - op);
    }
}

static void add_edit(an_fix *f, size_t s, size_t e, const char *text) {
    an_edit ed = {(uint32_t)s, (uint32_t)e, ut_strdup(text)};
    ut_vec_push(&f->edits, ed);
}

static an_fix *new_fix(const char *title) {
    an_fix *f = ut_calloc(1, sizeof *f);
    f->applicability = AN_FIX_SAFE;
    f->title = ut_strdup(title);
    return f;
}

/* [a, b) calls a CUDA kernel or is compiled for CUDA only: a call of a function named for CUDA (`nms_rotated_cuda(`,
 * `lltm_cuda_forward(`, `cuda_nms(`), a kernel launch (`<<<`, `cudaLaunchKernel(`, `cuLaunchKernel(`), a `WITH_CUDA` /
 * `__CUDACC__` conditional. */
static bool routes_to_cuda(const char *t, size_t a, size_t b) {
    for (size_t i = a; i < b; i++) {
        if (t[i] == '<' && i + 2 < b && t[i + 1] == '<' && t[i + 2] == '<') return true;
        if (!idch(t[i]) || (i > a && idch(t[i - 1]))) continue;
        size_t e = i;
        while (e < b && idch(t[e])) e++;
        const char *w = t + i;
        size_t n = e - i;
        if ((memmem(w, n, "WITH_CUDA", 9) || memmem(w, n, "__CUDACC__", 10)) && i > a) {
            size_t ls = i;
            while (ls > a && t[ls - 1] != '\n') ls--;
            if (t[skip_ws(t, b, ls)] == '#') return true;
        }
        size_t p = skip_ws(t, b, e);
        bool call = p < b && t[p] == '(';
        bool named = memmem(w, n, "_cuda", 5) || (n > 5 && !memcmp(w, "cuda_", 5));
        if (call && named && !(n == 7 && !memcmp(w, "is_cuda", 7))) return true;
        /* a kernel launched through the runtime or driver API (stylegan2-ada's bias_act.cpp: cudaLaunchKernel) */
        if (call && ((n >= 10 && !memcmp(w, "cudaLaunch", 10)) || (n >= 8 && !memcmp(w, "cuLaunch", 8)))) return true;
        i = e - 1;
    }
    return false;
}

/* A source of an extension's CUDA backend: a file whose own directory is named `cuda` (pytorch_scatter's
 * `csrc/cuda/`, beside `csrc/cpu/`, whose `utils.cuh` defines the CHECK_CUDA that the kernels' launchers in the
 * other files of that directory use). Only the CUDA build compiles it, and every device test there guards CUDA
 * code by design: `!x.is_cpu()` would let XPU tensors through to CUDA kernels. (The directory of the file itself: a
 * project that lies below some directory named `cuda` is no backend. A single-file extension's `.cu` is judged by
 * what its tests route to, as any other file: its `on_device()` helpers are a hand port's starting point.) */
bool an_cext_cuda_backend_source(const char *path) {
    if (!path) return false;
    const char *base = strrchr(path, '/');
    if (!base) return false;
    const char *dir = base;
    while (dir > path && dir[-1] != '/') dir--;
    return base - dir == 4 && !memcmp(dir, "cuda", 4);
}

/* `if (x.is_cuda()) return op_cuda(x); return op_cpu(x);`, `TORCH_CHECK(x.is_cuda(), ...)` before `op_cuda_forward(x)`,
 * `#define CHECK_CUDA(x) TORCH_CHECK(x.is_cuda(), ...)` in a file that calls CUDA kernels: the test sends tensors
 * to a CUDA kernel, and `!x.is_cpu()` would send XPU tensors there too. What the test guards: an if's body, the
 * rest of the function that holds a check, the whole file for a macro. */
static bool guards_cuda_kernel(const an_source *src, size_t at) {
    if (an_cext_cuda_backend_source(src->path)) return true;
    const char *t = src->text;
    size_t len = src->len;
    size_t ls = at;
    while (ls > 0 && t[ls - 1] != '\n') ls--;
    size_t q = skip_ws(t, at, ls);
    if (q < at && t[q] == '#') return routes_to_cuda(t, 0, len); /* a macro: every use in the file */
    /* the innermost unclosed `(` before the test, and the word before it */
    int depth = 0;
    size_t open = SIZE_MAX;
    for (size_t i = at; i > 0 && open == SIZE_MAX; i--) {
        char c = t[i - 1];
        if (c == ')') depth++;
        else if (c == '(' && depth-- == 0) open = i - 1;
        else if ((c == ';' || c == '{' || c == '}') && depth == 0) break;
    }
    if (open == SIZE_MAX) return false;
    size_t we = skip_ws_back(t, open), ws = we;
    while (ws > 0 && idch(t[ws - 1])) ws--;
    size_t close = match_fwd(t, len, open);
    if (close == SIZE_MAX) return false;
    if (we - ws == 2 && !memcmp(t + ws, "if", 2)) {
        size_t b = skip_ws(t, len, close);
        size_t end = b < len && t[b] == '{' ? match_fwd(t, len, b) : b;
        if (end == b) /* one statement */
            while (end < len && t[end] != ';') end++;
        return end != SIZE_MAX && routes_to_cuda(t, b, end < len ? end : len);
    }
    bool check = (we - ws >= 5 && memmem(t + ws, we - ws, "CHECK", 5)) || (we - ws >= 6 && memmem(t + ws, we - ws, "ASSERT", 6));
    if (!check) return false;
    /* the rest of the outermost block that holds the check (the function's body): a check inside a loop over the
     * tensors guards the launch after the loop (fairscale's multi_tensor_apply.cuh) */
    int open_braces = 0;
    for (size_t i = 0; i < at; i++) {
        if (t[i] == '{') open_braces++;
        else if (t[i] == '}' && open_braces > 0) open_braces--;
    }
    depth = open_braces;
    size_t end = open_braces ? close : len; /* outside any block (a macro's continued line): the rest of the file */
    while (end < len && depth > 0) {
        if (t[end] == '{') depth++;
        else if (t[end] == '}') depth--;
        end++;
    }
    return routes_to_cuda(t, close, end);
}

/* `x.is_cuda()` -> `!x.is_cpu()`; `!x.is_cuda()` -> `x.is_cpu()` (not where the test routes to a CUDA kernel) */
static an_fix *fix_is_cuda(const an_source *src, const an_diag *d) {
    const char *t = src->text;
    size_t len = src->len, s = d->start, e = d->end;
    if (e - s != 7 || memcmp(t + s, "is_cuda", 7)) return NULL;
    size_t p = skip_ws(t, len, e);
    if (p >= len || t[p] != '(') return NULL;
    size_t q = skip_ws(t, len, p + 1);
    if (q >= len || t[q] != ')') return NULL;
    size_t k = skip_ws_back(t, s), op = member_op(t, k);
    if (!op) return NULL;
    size_t dot = k - op;
    size_t rs = receiver_start(t, dot);
    if (rs == SIZE_MAX || rs >= dot) return NULL;
    size_t b = skip_ws_back(t, rs);
    if (guards_cuda_kernel(src, rs)) return NULL;
    /* `!x.is_cuda()`, not `!=` or a macro's `#x` */
    bool negated = b >= 1 && t[b - 1] == '!' && !(b < len && t[b] == '=');
    an_fix *f = new_fix("test for \"not on the CPU\" (`!x.is_cpu()`): true on CUDA as before, and on XPU");
    if (negated) add_edit(f, b - 1, b, "");
    else add_edit(f, rs, rs, "!");
    add_edit(f, s, e, "is_cpu");
    return f;
}

/* `at::cuda::OptionalCUDAGuard g(device_of(x))` -> `c10::OptionalDeviceGuard g(...)`; `CUDAGuard g(x.device())`
 * -> `c10::DeviceGuard g(...)`: only when the argument is a tensor's device (an index would not compile). */
static an_fix *fix_guard(const an_source *src, const an_diag *d) {
    const char *t = src->text;
    size_t len = src->len, s = d->start, e = d->end;
    size_t ns = e;
    while (ns > s && idch(t[ns - 1])) ns--;
    const char *name = t + ns;
    size_t nn = e - ns;
    const char *to;
    if (nn == 17 && !memcmp(name, "OptionalCUDAGuard", 17)) to = "c10::OptionalDeviceGuard";
    else if (nn == 9 && !memcmp(name, "CUDAGuard", 9)) to = "c10::DeviceGuard";
    else return NULL;
    /* the qualifier spelled before the name must be at::cuda:: or c10::cuda:: (or none) */
    if (ns > s) {
        size_t ql = ns - s;
        if (!((ql == 10 && !memcmp(t + s, "at::cuda::", 10)) || (ql == 11 && !memcmp(t + s, "c10::cuda::", 11))))
            return NULL;
    }
    size_t v = skip_ws(t, len, e);
    size_t ve = v;
    while (ve < len && idch(t[ve])) ve++;
    if (ve == v) return NULL;
    size_t a = skip_ws(t, len, ve);
    if (a >= len || (t[a] != '(' && t[a] != '{')) return NULL;
    size_t ae = match_fwd(t, len, a);
    if (ae == SIZE_MAX) return NULL;
    size_t as = skip_ws(t, len, a + 1), aend = skip_ws_back(t, ae - 1);
    if (aend <= as) return NULL;
    bool of_device = (aend - as > 10 && !memcmp(t + as, "device_of(", 10)) ||
                     (aend - as > 9 && !memcmp(t + aend - 9, ".device()", 9));
    if (!of_device) return NULL;
    char title[96];
    snprintf(title, sizeof title, "use `%s`, which guards the device of whatever backend the tensor is on", to);
    an_fix *f = new_fix(title);
    add_edit(f, s, e, to);
    return f;
}

/* The first tensor parameter (`torch::Tensor a`, `const at::Tensor &a`) of the function whose body holds `at`. */
static bool first_tensor_param(const char *t, size_t at, char *out, size_t sz) {
    size_t i = at;
    while (i > 0) {
        /* the innermost unclosed `{` before i */
        int depth = 0;
        size_t open = SIZE_MAX;
        while (i > 0) {
            char c = t[--i];
            if (c == '}') depth++;
            else if (c == '{') {
                if (depth == 0) { open = i; break; }
                depth--;
            }
        }
        if (open == SIZE_MAX) return false;
        size_t k = skip_ws_back(t, open);
        if (k >= 5 && !memcmp(t + k - 5, "const", 5)) k = skip_ws_back(t, k - 5);
        if (k == 0 || t[k - 1] != ')') continue;
        size_t po = match_back(t, k);
        if (po == SIZE_MAX) return false;
        size_t ne = skip_ws_back(t, po), nb = ne;
        while (nb > 0 && idch(t[nb - 1])) nb--;
        if (nb == ne) continue; /* a lambda's `](...)` or a cast */
        static const char *const stmts[] = {"if", "for", "while", "switch", "catch", NULL};
        bool stmt = false;
        for (int m = 0; stmts[m]; m++)
            if (ne - nb == strlen(stmts[m]) && !memcmp(t + nb, stmts[m], ne - nb)) stmt = true;
        if (stmt) continue;
        /* the parameters, split at top-level commas */
        size_t ps = po + 1;
        while (ps < k - 1) {
            size_t pe = ps;
            int dd = 0;
            while (pe < k - 1 && !(dd == 0 && t[pe] == ',')) {
                if (t[pe] == '(' || t[pe] == '<' || t[pe] == '[') dd++;
                else if (t[pe] == ')' || t[pe] == '>' || t[pe] == ']') dd--;
                pe++;
            }
            size_t xe = skip_ws_back(t, pe), xb = xe;
            while (xb > ps && idch(t[xb - 1])) xb--;
            /* the type: `Tensor` as a whole word, not TensorList, optional<Tensor> or Tensor * */
            bool tensor = false;
            for (size_t y = ps; y + 6 <= xb; y++)
                if (!memcmp(t + y, "Tensor", 6) && (y == ps || !idch(t[y - 1])) && !idch(t[y + 6])) {
                    size_t z = y + 6;
                    bool ok = true;
                    for (; z < xb; z++)
                        if (t[z] != ' ' && t[z] != '&' && t[z] != '\t') ok = false;
                    for (size_t w = ps; w < y; w++)
                        if (t[w] == '<') ok = false;
                    if (ok) tensor = true;
                }
            if (tensor && xe > xb && xe - xb < sz) {
                memcpy(out, t + xb, xe - xb);
                out[xe - xb] = 0;
                return true;
            }
            ps = pe + 1;
        }
        return false;
    }
    return false;
}

/* `.device(torch::kCUDA)` / `.to(at::kCUDA)` -> the device of the function's first tensor parameter */
static an_fix *fix_kcuda(const an_source *src, const an_diag *d) {
    const char *t = src->text;
    size_t len = src->len, s = d->start, e = d->end;
    if (e - s < 5 || memcmp(t + e - 5, "kCUDA", 5)) return NULL;
    size_t a = skip_ws(t, len, e);
    if (a >= len || t[a] != ')') return NULL;
    size_t p = skip_ws_back(t, s);
    if (p == 0 || t[p - 1] != '(') return NULL;
    size_t me = skip_ws_back(t, p - 1), mb = me;
    while (mb > 0 && idch(t[mb - 1])) mb--;
    bool method = (me - mb == 6 && !memcmp(t + mb, "device", 6)) || (me - mb == 2 && !memcmp(t + mb, "to", 2));
    size_t k = skip_ws_back(t, mb);
    if (!method || !member_op(t, k)) return NULL;
    char param[128];
    if (!first_tensor_param(t, s, param, sizeof param)) return NULL;
    char rep[160], title[400];
    snprintf(rep, sizeof rep, "%s.device()", param);
    snprintf(title, sizeof title, "use the device of the input `%s` (`%s`)", param, rep);
    an_fix *f = new_fix(title);
    add_edit(f, s, e, rep);
    return f;
}

/* C++ sources (not .cu: nvcc compiles those for CUDA only) of an extension can be built without CUDA
 * (CppExtension/SyclExtension through the setup.py that `xpuify fix` writes, which defines XPUIFY_NO_CUDA). */
static bool cxx_source(const char *path) {
    const char *dot = path ? strrchr(path, '.') : NULL;
    if (!dot || strchr(dot, '/')) return false;
    return !strcmp(dot, ".cpp") || !strcmp(dot, ".cc") || !strcmp(dot, ".cxx") || !strcmp(dot, ".c++");
}

#define NO_CUDA_GUARD "#ifndef XPUIFY_NO_CUDA"

/* A CUDA-only call statement with no device-generic form (`at::cuda::device_synchronize();`,
 * `AT_CUDA_CHECK(cudaStreamSynchronize(s));`, `C10_CUDA_KERNEL_LAUNCH_CHECK();`) alone on its line in a C++
 * source: kept for CUDA builds under `#ifndef XPUIFY_NO_CUDA`. Declarations stay findings (their names are used
 * later). Unsafe: a build without CUDA skips the statement. */
static an_fix *fix_cuda_only_statement(const an_source *src, const an_diag *d, const char *code, const bool *lines) {
    const char *t = src->text;
    size_t len = src->len;
    size_t ls = d->start;
    while (ls > 0 && t[ls - 1] != '\n') ls--;
    size_t le = d->start;
    while (le < len && t[le] != '\n') le++;
    size_t b = skip_ws(t, le, ls);
    /* the statement: a (qualified) name, then a call that closes right before the `;` that ends the line */
    size_t n = b;
    for (;;) {
        size_t ns = n;
        while (n < le && idch(t[n])) n++;
        if (n == ns) return NULL;
        if (n + 1 < le && t[n] == ':' && t[n + 1] == ':') { n += 2; continue; }
        break;
    }
    size_t p = skip_ws(t, le, n);
    if (p >= le || t[p] != '(') return NULL;
    size_t pe = match_fwd(t, le, p);
    if (pe == SIZE_MAX) return NULL;
    size_t semi = skip_ws(t, le, pe);
    if (semi >= le || t[semi] != ';') return NULL;
    size_t rest = skip_ws(t, le, semi + 1);
    if (rest < le && !(rest + 1 < le && t[rest] == '/' && (t[rest + 1] == '/' || t[rest + 1] == '*'))) return NULL;
    if (le > ls && t[le - 1] == '\\') return NULL; /* a macro body line */
    /* the guard lines go where a line starts in code: not after a `\` that continues the line above (a macro
     * body, a `// comment \`), not inside a block comment that the statement's line opens */
    if (!lines[ls] || !lines[le < len ? le + 1 : len]) return NULL;
    if (d->start < b || d->start >= semi) return NULL;
    /* already guarded: the line before is the guard */
    if (ls > 0) {
        size_t pl = ls - 1, ps = pl;
        while (ps > 0 && t[ps - 1] != '\n') ps--;
        size_t q = skip_ws(t, pl, ps);
        if (pl - q >= strlen(NO_CUDA_GUARD) && !memcmp(t + q, NO_CUDA_GUARD, strlen(NO_CUDA_GUARD))) return NULL;
    }
    an_fix *f = new_fix("keep this CUDA-only statement for CUDA builds (`#ifndef XPUIFY_NO_CUDA`): a build without "
                        "CUDA skips it");
    f->applicability = AN_FIX_UNSAFE;
    char open[160];
    snprintf(open, sizeof open, NO_CUDA_GUARD "  // xpuify: CUDA-only (%s); builds without CUDA define XPUIFY_NO_CUDA\n",
             code);
    add_edit(f, ls, ls, open);
    if (le < len) add_edit(f, le + 1, le + 1, "#endif\n");
    else add_edit(f, le, le, "\n#endif\n");
    return f;
}

void an_cextfix_generate(const an_fix_options *opt, const an_source *src, an_diag_list *diags) {
    if (!opt || opt->target == AN_TARGET_NONE) return;
    bool cxx = cxx_source(src->path);
    uint32_t last_line_start = UINT32_MAX;
    bool *lines = NULL; /* an_cfix_code_lines, made once for the file when a statement fix needs it */
    for (size_t i = 0; i < diags->len; i++) {
        an_diag *d = &diags->items[i];
        if (d->fix || !d->rule || !d->rule->code || d->end <= d->start || d->end > src->len) continue;
        /* the rule data (`fix:` in rules/c) says which rules have fixes; `xpuify rule` and SARIF read the same */
        if (d->rule->fix == AN_FIX_NONE) continue;
        const char *c = d->rule->code;
        if (!strcmp(c, "XPC701")) d->fix = fix_is_cuda(src, d);
        else if (!strcmp(c, "XPC703")) d->fix = fix_guard(src, d);
        else if (!strcmp(c, "XPC702")) d->fix = fix_kcuda(src, d);
        if (!d->fix && cxx && (!strcmp(c, "XPC704") || !strcmp(c, "XPC705") || !strcmp(c, "XPC101"))) {
            /* one guard per line: the line's first finding carries it */
            uint32_t ls = d->start;
            while (ls > 0 && src->text[ls - 1] != '\n') ls--;
            if (ls == last_line_start) continue;
            if (!lines) lines = an_cfix_code_lines(src->text, src->len);
            d->fix = fix_cuda_only_statement(src, d, c, lines);
            if (d->fix) last_line_start = ls;
        }
    }
    ut_free(lines);
}
