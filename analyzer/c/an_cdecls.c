/* an_cdecls: fast-mode declarations from the API tables. A row's declaration is its `decl` text when it has one,
 * else a default by kind: an opaque handle for a type, `enum E { used enumerators }` for an enum, a declaration
 * that accepts any arguments for a function (C: `R f();`, C++: a variadic template), nothing for macros. Only the
 * rows a file mentions are declared, so the parse costs what the file costs, not what the tables hold. */
#include "analyzer/c/an_cdecls.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>

typedef UT_VEC(const an_entry *) rowvec;

static bool ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Every identifier chain `a::b::c` of the text: each suffix of it is looked up (`c`, `b::c`, `a::b::c`). */
void an_cdecls_each_row(const an_catalog *cat, const char *t, size_t n, void (*fn)(void *, const an_entry *),
                        void *ctx) {
    size_t i = 0;
    while (i < n) {
        if (!ident_start(t[i]) || (i && ident_char(t[i - 1]))) { i++; continue; }
        size_t chain = i, end = i;
        for (;;) {
            while (end < n && ident_char(t[end])) end++;
            if (end + 2 < n && t[end] == ':' && t[end + 1] == ':' && ident_start(t[end + 2])) { end += 2; continue; }
            break;
        }
        /* suffixes start at each component */
        for (size_t s = chain; s < end;) {
            const an_entry *e = an_catalog_lookup_c(cat, t + s, end - s);
            if (e && !e->wildcard) fn(ctx, e);
            const char *sep = NULL;
            for (size_t k = s; k + 1 < end; k++)
                if (t[k] == ':' && t[k + 1] == ':') { sep = t + k; break; }
            if (!sep) break;
            s = (size_t)(sep - t) + 2;
        }
        i = end;
    }
}

typedef struct {
    const an_catalog *cat;
    an_cmode mode;
    rowvec used;    /* rows the file mentions, plus their dependencies */
    rowvec emitted; /* in output order */
    ut_buf *out;
} gen;

static bool has(const rowvec *v, const an_entry *e) {
    for (size_t i = 0; i < v->len; i++)
        if (v->items[i] == e) return true;
    return false;
}

static void add_used(void *vg, const an_entry *e) {
    gen *g = vg;
    if (!has(&g->used, e)) ut_vec_push(&g->used, e);
}

static bool qualified(const char *name) { return strstr(name, "::") != NULL; }

static void emit(gen *g, const an_entry *e);

/* Rows named inside a declaration text come first. */
static void emit_deps(gen *g, const an_entry *self, const char *text) {
    if (!text) return;
    size_t n = strlen(text);
    for (size_t i = 0; i < n;) {
        if (!ident_start(text[i]) || (i && ident_char(text[i - 1]))) { i++; continue; }
        size_t e = i;
        while (e < n && ident_char(text[e])) e++;
        const an_entry *d = an_catalog_lookup_c(g->cat, text + i, e - i);
        if (d && d != self && !d->wildcard && d->kind != AN_KIND_HEADER) emit(g, d);
        i = e;
    }
}

static void open_namespaces(ut_buf *b, const char *name, const char **last) {
    const char *p = name, *sep;
    while ((sep = strstr(p, "::"))) {
        ut_buf_printf(b, "namespace %.*s { ", (int)(sep - p), p);
        p = sep + 2;
    }
    *last = p;
}

static void close_namespaces(ut_buf *b, const char *name) {
    for (const char *p = name; (p = strstr(p, "::")); p += 2) ut_buf_puts(b, "} ");
}

static void emit_function(gen *g, const an_entry *e) {
    const char *ret = e->returns ? e->returns : "int";
    emit_deps(g, e, ret);
    ut_buf *b = g->out;
    if (g->mode == AN_CMODE_C) {
        if (qualified(e->name)) return;
        ut_buf_printf(b, "%s %s();\n", ret, e->name);
        return;
    }
    const char *attrs = "";
    if (g->mode == AN_CMODE_CUDA) {
        emit_deps(g, e, "__host__ __device__"); /* their macros come first */
        attrs = "__host__ __device__ ";
    }
    const char *last;
    open_namespaces(b, e->name, &last);
    ut_buf_printf(b, "template <class... __XA> %s%s %s(__XA &&...);", attrs, ret, last);
    close_namespaces(b, e->name);
    ut_buf_putc(b, '\n');
}

static void emit_type(gen *g, const an_entry *e) {
    ut_buf *b = g->out;
    if (!qualified(e->name)) {
        /* `x_t` names are handles (typedefs of pointers) in CUDA's libraries; other names are structures used by
         * value (cudaDeviceProp, cudaExtent), also spelled `struct X` */
        size_t n = strlen(e->name);
        if (n > 2 && !strcmp(e->name + n - 2, "_t")) ut_buf_printf(b, "typedef struct __xpuify_%s *%s;\n", e->name, e->name);
        else ut_buf_printf(b, "typedef struct %s { int __xpuify_opaque; } %s;\n", e->name, e->name);
        return;
    }
    if (g->mode == AN_CMODE_C) return;
    const char *last;
    open_namespaces(b, e->name, &last);
    ut_buf_printf(b, "struct %s { template <class... __XA> %s(__XA &&...); };", last, last);
    close_namespaces(b, e->name);
    ut_buf_putc(b, '\n');
}

static void emit_enum(gen *g, const an_entry *e) {
    if (qualified(e->name)) return;
    ut_buf *b = g->out;
    ut_buf_printf(b, "typedef enum %s { ", e->name);
    for (size_t i = 0; i < g->used.len; i++) {
        const an_entry *x = g->used.items[i];
        if (x->kind == AN_KIND_ENUMERATOR && x->parent && !strcmp(x->parent, e->name) && !x->decl) {
            ut_buf_printf(b, "%s, ", x->name);
            ut_vec_push(&g->emitted, x);
        }
    }
    ut_buf_printf(b, "__xpuify_%s_end } %s;\n", e->name, e->name);
}

static void emit(gen *g, const an_entry *e) {
    if (has(&g->emitted, e)) return;
    ut_vec_push(&g->emitted, e);
    if (e->decl) {
        if (!strcmp(e->decl, "-")) return;
        emit_deps(g, e, e->decl);
        ut_buf_puts(g->out, e->decl);
        if (g->out->len && g->out->data[g->out->len - 1] != '\n') ut_buf_putc(g->out, '\n');
        return;
    }
    switch (e->kind) {
    case AN_KIND_FUNCTION: emit_function(g, e); break;
    case AN_KIND_TYPE: emit_type(g, e); break;
    case AN_KIND_ENUM: emit_enum(g, e); break;
    case AN_KIND_ENUMERATOR:
        if (qualified(e->name)) break;
        if (e->parent) {
            const an_entry *p = an_catalog_lookup_c(g->cat, e->parent, strlen(e->parent));
            if (p && p->kind == AN_KIND_ENUM) {
                g->emitted.len--; /* declared inside its enum */
                if (!has(&g->used, p)) ut_vec_push(&g->used, p);
                emit(g, p);
                if (!has(&g->emitted, e)) ut_vec_push(&g->emitted, e);
                break;
            }
        }
        ut_buf_printf(g->out, "enum { %s };\n", e->name);
        break;
    default: /* macros, methods, headers, qualifiers and variables without a decl: nothing to declare */
        break;
    }
}

/* NULL as the system headers define it: `__null` in C++ (a `float *p = NULL` initializes), `((void *)0)` in C */
static const char prelude_c[] =
    "typedef __SIZE_TYPE__ size_t;\ntypedef __PTRDIFF_TYPE__ ptrdiff_t;\ntypedef __INTPTR_TYPE__ intptr_t;\n"
    "typedef __UINTPTR_TYPE__ uintptr_t;\ntypedef __INT8_TYPE__ int8_t;\ntypedef __INT16_TYPE__ int16_t;\n"
    "typedef __INT32_TYPE__ int32_t;\ntypedef __INT64_TYPE__ int64_t;\ntypedef __UINT8_TYPE__ uint8_t;\n"
    "typedef __UINT16_TYPE__ uint16_t;\ntypedef __UINT32_TYPE__ uint32_t;\ntypedef __UINT64_TYPE__ uint64_t;\n"
    "#ifndef NULL\n#ifdef __cplusplus\n#define NULL __null\n#else\n#define NULL ((void *)0)\n#endif\n#endif\n";
static const char prelude_c_only[] = "#define bool _Bool\n#define true 1\n#define false 0\n";
static const char prelude_cxx[] = "namespace std { using ::size_t; using ::ptrdiff_t; using ::int8_t; using ::int16_t;"
                                  " using ::int32_t; using ::int64_t; using ::uint8_t; using ::uint16_t; using ::uint32_t;"
                                  " using ::uint64_t; }\n";

/* Cooperative groups' simple forms (what the kernel translator rewrites, docs/c-kernels.md), declared as CUDA's
 * <cooperative_groups.h> and <cooperative_groups/reduce.h> declare them, so that `cg::thread_block block = ...`,
 * `warp.shfl_down(v, o)` and `cg::reduce(warp, v, cg::plus<float>{})` parse into calls the translator can see. The
 * other groups (grid, coalesced, clusters) are declared as types too, so that their use is named, not dropped. */
static const char cooperative_groups_decls[] =
    "namespace cooperative_groups {\n"
    "struct thread_group { __device__ void sync() const; __device__ unsigned int thread_rank() const;"
    " __device__ unsigned long long size() const; __device__ unsigned long long num_threads() const; };\n"
    "struct thread_block : thread_group { __device__ dim3 group_index() const; __device__ dim3 thread_index() const;"
    " __device__ dim3 group_dim() const; __device__ dim3 dim_threads() const; };\n"
    "template <unsigned int N, class P = void> struct thread_block_tile : thread_group {"
    " __device__ unsigned int meta_group_rank() const; __device__ unsigned int meta_group_size() const;"
    " template <class T> __device__ T shfl(T v, int src) const;"
    " template <class T> __device__ T shfl_up(T v, unsigned int d) const;"
    " template <class T> __device__ T shfl_down(T v, unsigned int d) const;"
    " template <class T> __device__ T shfl_xor(T v, unsigned int m) const;"
    " __device__ int any(int p) const; __device__ int all(int p) const; __device__ unsigned int ballot(int p) const; };\n"
    "struct grid_group : thread_group { __device__ bool is_valid() const; };\n"
    "struct coalesced_group : thread_group { __device__ unsigned int meta_group_rank() const; };\n"
    "struct cluster_group : thread_group {};\n"
    "__device__ thread_block this_thread_block();\n__device__ grid_group this_grid();\n"
    "__device__ coalesced_group coalesced_threads();\n__device__ cluster_group this_cluster();\n"
    "template <unsigned int N, class G> __device__ thread_block_tile<N> tiled_partition(const G &g);\n"
    "__device__ thread_group tiled_partition(const thread_group &g, unsigned int n);\n"
    "template <class G> __device__ coalesced_group labeled_partition(const G &g, int label);\n"
    "template <class G> __device__ coalesced_group binary_partition(const G &g, bool pred);\n"
    "template <class G> __device__ void sync(const G &g);\n"
    "template <class T> struct plus { __device__ T operator()(T a, T b) const; };\n"
    "template <class T> struct less { __device__ T operator()(T a, T b) const; };\n"
    "template <class T> struct greater { __device__ T operator()(T a, T b) const; };\n"
    "template <class T> struct bit_and { __device__ T operator()(T a, T b) const; };\n"
    "template <class T> struct bit_or { __device__ T operator()(T a, T b) const; };\n"
    "template <class T> struct bit_xor { __device__ T operator()(T a, T b) const; };\n"
    "template <class G, class T, class Op> __device__ T reduce(const G &g, T v, Op op);\n"
    "template <class G, class T, class Op> __device__ T inclusive_scan(const G &g, T v, Op op);\n"
    "template <class G, class T, class Op> __device__ T exclusive_scan(const G &g, T v, Op op);\n"
    "}\n";

/* the rows that name cooperative groups' functions and types outside their namespace: declared by the block above */
static const char *const cooperative_groups_rows[] = {"this_thread_block", "this_grid", "this_cluster", "tiled_partition",
    "coalesced_threads", "thread_block", "thread_block_tile", "grid_group", "coalesced_group", NULL};

void an_cdecls_generate(const an_catalog *cat, an_cmode mode, const char *text, size_t len, bool launch_calls, ut_buf *out) {
    gen g = {cat, mode, {0}, {0}, out};
    ut_buf_puts(out, "/* generated by xpuify from its API tables (fast mode) */\n");
    ut_buf_puts(out, prelude_c);
    ut_buf_puts(out, mode == AN_CMODE_C ? prelude_c_only : prelude_cxx);
    an_cdecls_each_row(cat, text, len, add_used, &g);
    /* CUDA sources always get the language itself: qualifiers, built-in variables, dim3 */
    if (mode == AN_CMODE_CUDA) {
        static const char *const lang[] = {"__global__", "__device__", "__host__", "__shared__", "__constant__",
                                           "dim3", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", NULL};
        for (int i = 0; lang[i]; i++) {
            const an_entry *e = an_catalog_lookup_c(cat, lang[i], strlen(lang[i]));
            if (e && !e->wildcard && !has(&g.used, e)) ut_vec_push(&g.used, e);
        }
    }
    bool cg = mode == AN_CMODE_CUDA && len && memmem(text, len, "cooperative_groups", 18) != NULL;
    for (int i = 0; cg && cooperative_groups_rows[i]; i++) {
        const an_entry *e = an_catalog_lookup_c(cat, cooperative_groups_rows[i], strlen(cooperative_groups_rows[i]));
        if (e && !e->wildcard && !has(&g.emitted, e)) ut_vec_push(&g.emitted, e);
    }
    /* enums first so their used enumerators are known; then everything in table order */
    size_t n = g.used.len;
    for (size_t i = 0; i < n; i++)
        if (g.used.items[i]->kind == AN_KIND_ENUMERATOR || g.used.items[i]->kind == AN_KIND_ENUM) emit(&g, g.used.items[i]);
    for (size_t i = 0; i < g.used.len; i++) emit(&g, g.used.items[i]);
    if (cg) ut_buf_puts(out, cooperative_groups_decls);
    if (mode == AN_CMODE_CUDA) {
        /* what clang calls for `k<<<g, b, s, st>>>(...)`: the launch then parses as a call (a CUDAKernelCallExpr
         * whose callee is the kernel, for a template the specialization its arguments deduce). Fast mode's
         * --cuda-path has no version, and clang 14 then calls the pre-9.2 name, cudaConfigureCall: declared for
         * the analysis and the kernel translator's parses (launch_calls; unless the file names it itself: the
         * catalog declares it then). Fix's syntax-error count keeps a launch unresolved: clang's recovery from a
         * broken launch differs once it parses as a call, and the count compares the file before and after */
        const an_entry *d3 = an_catalog_lookup_c(cat, "dim3", 4);
        const char *dim = d3 && !d3->wildcard ? "dim3" : "__xpuify_dim3";
        if (strcmp(dim, "dim3"))
            ut_buf_puts(out, "struct __xpuify_dim3 { __xpuify_dim3(unsigned = 1, unsigned = 1, unsigned = 1); };\n");
        ut_buf_printf(out, "extern \"C\" int __cudaPushCallConfiguration(%s, %s, size_t = 0, void * = 0);\n", dim, dim);
        if (launch_calls && !memmem(text, len, "cudaConfigureCall", 17))
            ut_buf_printf(out, "extern \"C\" int cudaConfigureCall(%s, %s, size_t = 0, void * = 0);\n", dim, dim);
    }
    ut_vec_free(&g.used);
    ut_vec_free(&g.emitted);
}
