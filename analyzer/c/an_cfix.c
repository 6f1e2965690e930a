/* an_cfix: portable-layer fixes for C/C++/CUDA. The findings come from the file's own tokens (an_c.c), so an edit
 * only ever replaces text spelled in the file: a name inside a macro body is renamed at the macro's definition,
 * and text a macro expansion produces is never touched. */
#include "analyzer/c/an_cfix.h"
#include "analyzer/c/an_c.h"
#include "analyzer/core/an_rule.h"
#include <ctype.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>

/* the layer a row belongs to: its library's header, the headers it replaces */
typedef struct {
    const char *include;          /* what the file includes ("xpuify_gpu.h", or a relative path to it) */
    const char *const *replaces;  /* includes the layer header stands in for */
} layer;

static const char *const gpu_replaces[] = {"cuda_runtime.h", "cuda_runtime_api.h", NULL};
static const char *const ccl_replaces[] = {"nccl.h", NULL};

static bool layer_of(const an_fix_options *opt, const an_diag *d, layer *out) {
    const char *lib = d->rule->library;
    if (!lib) return false;
    if (!strcmp(lib, "CUDA Runtime")) {
        out->include = opt->c_gpu_include ? opt->c_gpu_include : AN_CFIX_GPU_HEADER;
        out->replaces = gpu_replaces;
        return true;
    }
    if (!strcmp(lib, "NCCL")) {
        out->include = opt->c_ccl_include ? opt->c_ccl_include : AN_CFIX_CCL_HEADER;
        out->replaces = ccl_replaces;
        return true;
    }
    return false;
}

static const char *base_name(const char *p, size_t n, size_t *bn) {
    size_t i = n;
    while (i > 0 && p[i - 1] != '/') i--;
    *bn = n - i;
    return p + i;
}

/* ---- where a line may go ------------------------------------------------------------------------------------ */

/* past the backslash-newlines (line splices) at i */
static size_t splice(const char *t, size_t len, size_t i) {
    while (i + 1 < len && t[i] == '\\' && (t[i + 1] == '\n' || (t[i + 1] == '\r' && i + 2 < len && t[i + 2] == '\n')))
        i += t[i + 1] == '\n' ? 2 : 3;
    return i;
}

/* `'` inside a number is a C++14 digit separator (1'000), not a character literal (u8'x', L'x' are) */
static bool digit_separator(const char *t, size_t i) {
    size_t k = i;
    while (k > 0 && (isalnum((unsigned char)t[k - 1]) || t[k - 1] == '_' || t[k - 1] == '\'' || t[k - 1] == '.')) k--;
    return k < i && isdigit((unsigned char)t[k]);
}

/* `"` at i opens a raw string (R"d(...)d", with an optional u8/u/U/L prefix): its delimiter into d */
static bool raw_string(const char *t, size_t len, size_t i, char *d, size_t *dl) {
    if (i == 0 || t[i - 1] != 'R') return false;
    size_t k = i - 1;
    while (k > 0 && (isalnum((unsigned char)t[k - 1]) || t[k - 1] == '_')) k--;
    size_t pl = i - 1 - k;
    if (!(pl == 0 || (pl == 2 && !memcmp(t + k, "u8", 2)) || (pl == 1 && strchr("uUL", t[k])))) return false;
    size_t n = 0;
    for (size_t j = i + 1; j < len && n <= 16; j++, n++) {
        if (t[j] == '(') {
            memcpy(d, t + i + 1, n);
            *dl = n;
            return true;
        }
        if (t[j] == ')' || t[j] == '\\' || isspace((unsigned char)t[j])) return false;
    }
    return false;
}

bool *an_cfix_code_lines(const char *t, size_t len) {
    enum { CODE, LINE_COMMENT, BLOCK_COMMENT, STRING, CHAR, RAW } st = CODE;
    bool *ok = ut_calloc(len + 1, sizeof(bool));
    ok[0] = true;
    char delim[17];
    size_t dl = 0;
    for (size_t i = 0; (i = splice(t, len, i)) < len;) {
        char c = t[i];
        size_t n = splice(t, len, i + 1);
        char next = n < len ? t[n] : 0;
        if (c == '\n' && st != BLOCK_COMMENT && st != RAW) {
            st = CODE; /* a newline ends a line comment, and an unterminated literal as clang reads it */
            ok[i + 1] = true;
            i++;
            continue;
        }
        switch (st) {
        case CODE:
            if (c == '/' && next == '/') { st = LINE_COMMENT; i = n + 1; continue; }
            if (c == '/' && next == '*') { st = BLOCK_COMMENT; i = n + 1; continue; }
            if (c == '"') st = raw_string(t, len, i, delim, &dl) ? RAW : STRING;
            else if (c == '\'' && !digit_separator(t, i)) st = CHAR;
            break;
        case BLOCK_COMMENT:
            if (c == '*' && next == '/') { st = CODE; i = n + 1; continue; }
            break;
        case STRING:
        case CHAR:
            if (c == '\\') { i = n + 1; continue; }
            if (c == (st == STRING ? '"' : '\'')) st = CODE;
            break;
        case RAW:
            if (c == ')' && len - i > dl + 1 && !memcmp(t + i + 1, delim, dl) && t[i + 1 + dl] == '"') {
                st = CODE;
                i += dl + 2;
                continue;
            }
            break;
        case LINE_COMMENT:
            break;
        }
        i++;
    }
    if (len && t[len - 1] != '\n') ok[len] = st != BLOCK_COMMENT && st != RAW && t[len - 1] != '\\';
    return ok;
}

/* The include edit for a layer: none when the file already includes the layer header (any path ending in its
 * name); else the <cuda_runtime.h>-style include becomes it; else it goes before the first #include, or after the
 * leading comments of a file without includes. */
static bool include_edit(const an_source *src, const layer *ly, an_edit *out) {
    const char *t = src->text;
    size_t len = src->len;
    size_t want_n;
    const char *want = base_name(ly->include, strlen(ly->include), &want_n);
    uint32_t first_include = UINT32_MAX;
    bool have_replace = false;
    uint32_t rs = 0, re = 0;
    /* only lines that start in code: a `#include` inside a comment or continued from the line above is none, and
     * a line inserted after a `// comment \` would be part of it */
    bool *code = an_cfix_code_lines(t, len);
    for (size_t ls = 0; ls < len;) {
        size_t le = ls;
        while (le < len && t[le] != '\n') le++;
        size_t i = ls;
        while (i < le && (t[i] == ' ' || t[i] == '\t')) i++;
        if (code[ls] && i < le && t[i] == '#') {
            i++;
            while (i < le && (t[i] == ' ' || t[i] == '\t')) i++;
            if (le - i > 7 && !strncmp(t + i, "include", 7)) {
                i += 7;
                while (i < le && (t[i] == ' ' || t[i] == '\t')) i++;
                if (i < le && (t[i] == '<' || t[i] == '"')) {
                    char close = t[i] == '<' ? '>' : '"';
                    size_t ns = i + 1, ne = ns;
                    while (ne < le && t[ne] != close) ne++;
                    if (ne < le) {
                        if (first_include == UINT32_MAX) first_include = (uint32_t)ls;
                        size_t bn;
                        const char *b = base_name(t + ns, ne - ns, &bn);
                        if (bn == want_n && !memcmp(b, want, bn)) { ut_free(code); return false; }
                        for (int k = 0; ly->replaces[k] && !have_replace; k++)
                            if (ne - ns == strlen(ly->replaces[k]) && !memcmp(t + ns, ly->replaces[k], ne - ns)) {
                                have_replace = true;
                                rs = (uint32_t)i, re = (uint32_t)ne + 1;
                            }
                    }
                }
            }
        }
        ls = le + 1;
    }
    ut_buf b;
    ut_buf_init(&b);
    if (have_replace) {
        ut_free(code);
        ut_buf_printf(&b, "\"%s\"", ly->include);
        *out = (an_edit){rs, re, ut_buf_take(&b)};
        return true;
    }
    uint32_t at = first_include;
    if (at == UINT32_MAX) {
        /* after the leading blank and comment lines: the first line that starts in code with something else;
         * none (a file that ends in a comment): the top */
        at = 0;
        for (size_t ls = 0; ls < len;) {
            size_t le = ls;
            while (le < len && t[le] != '\n') le++;
            size_t j = ls;
            while (j < le && isspace((unsigned char)t[j])) j++;
            if (code[ls] && j < le && !(j + 1 < le && t[j] == '/' && (t[j + 1] == '/' || t[j + 1] == '*'))) {
                at = (uint32_t)ls;
                break;
            }
            ls = le + 1;
        }
    }
    ut_free(code);
    ut_buf_printf(&b, "#include \"%s\"\n", ly->include);
    *out = (an_edit){at, at, ut_buf_take(&b)};
    return true;
}

/* Does the file include PyTorch's C++ API (<torch/...>, <ATen/...>, <c10/...>), as an extension's sources do? */
static bool torch_extension_source(const an_source *src) {
    static const char *const heads[] = {"<torch/", "<ATen/", "<c10/", "\"torch/", "\"ATen/", NULL};
    for (const char *p = src->text, *e = src->text + src->len; p < e && (p = memchr(p, '#', (size_t)(e - p))); p++) {
        const char *q = p + 1;
        while (q < e && (*q == ' ' || *q == '\t')) q++;
        if (e - q < 8 || strncmp(q, "include", 7)) continue;
        q += 7;
        while (q < e && (*q == ' ' || *q == '\t')) q++;
        for (int i = 0; heads[i]; i++)
            if ((size_t)(e - q) > strlen(heads[i]) && !strncmp(q, heads[i], strlen(heads[i]))) return true;
    }
    return false;
}

/* Is the file package data of a Python package (its directory holds an __init__.py)? */
static bool in_python_package(const char *path) {
    const char *slash = path ? strrchr(path, '/') : NULL;
    char init[4096];
    if (!slash) snprintf(init, sizeof init, "__init__.py");
    else if ((size_t)(slash - path) + 13 < sizeof init) snprintf(init, sizeof init, "%.*s/__init__.py", (int)(slash - path), path);
    else return false;
    return access(init, F_OK) == 0;
}

/* The runtime and library names of a file become the portable layer's (xpuify_gpu.h, xpuify_ccl.h). Not in a
 * PyTorch extension's source that lies in a Python package: torch's cpp_extension builds such sources at run time
 * from the installed package, whose data lists the package's own files only, so the layer's include does not
 * resolve there (peft's BOFT kernel, with `../../../../../xpuify_gpu.h`, would fail to build and peft fall back
 * silently, on CUDA too; a layer written beside it would not be in the package's data either). Nor in the sources
 * of an extension's CUDA backend (its `cuda/` directory, which only the CUDA build compiles: pytorch_cluster's
 * `csrc/cuda/fps_cuda.cu`): the layer would port nothing there, and its include at the project's root is no file
 * of the sdist. Their findings stay, without a fix, in check and fix alike. */
void an_cfix_generate(const an_fix_options *opt, const an_source *src, an_diag_list *diags) {
    if (!opt || opt->target == AN_TARGET_NONE) return;
    bool package_data = torch_extension_source(src) &&
                        (in_python_package(src->path) || an_cext_cuda_backend_source(src->path));
    an_edit inc[2];
    int inc_state[2] = {0, 0}; /* 0 not computed, 1 edit, -1 none needed */
    for (size_t i = 0; i < diags->len; i++) {
        an_diag *d = &diags->items[i];
        const an_entry *e = d->entry;
        if (d->fix || !e || !e->replacement || !an_c_identifier(e->replacement, strlen(e->replacement))) continue;
        if (d->rule->fix == AN_FIX_NONE) continue; /* the rule data says this rule has no fix */
        if (d->end <= d->start || d->end > src->len || !an_c_identifier(src->text + d->start, d->end - d->start)) continue;
        layer ly;
        if (!layer_of(opt, d, &ly)) continue;
        if (package_data) continue;
        int k = ly.replaces == gpu_replaces ? 0 : 1;
        if (!inc_state[k]) inc_state[k] = include_edit(src, &ly, &inc[k]) ? 1 : -1;
        an_fix *f = ut_calloc(1, sizeof *f);
        f->applicability = AN_FIX_SAFE;
        ut_buf t;
        ut_buf_init(&t);
        ut_buf_printf(&t, "use `%s` of the portable layer (%s)", e->replacement, ly.include);
        f->title = ut_buf_take(&t);
        /* the edits of a fix are sorted by position (an_edits_apply and every consumer rely on it): the include
         * edit, above the use in all but a broken file, comes first; an insertion goes before a replacement at the
         * same point */
        an_edit ed = {d->start, d->end, ut_strdup(e->replacement)};
        bool with_include = inc_state[k] == 1, include_first = with_include && inc[k].start <= ed.start;
        if (!include_first) ut_vec_push(&f->edits, ed);
        if (with_include) {
            an_edit ie = {inc[k].start, inc[k].end, ut_strdup(inc[k].text)};
            ut_vec_push(&f->edits, ie);
        }
        if (include_first) ut_vec_push(&f->edits, ed);
        d->fix = f;
    }
    for (int k = 0; k < 2; k++)
        if (inc_state[k] == 1) ut_free(inc[k].text);
}
