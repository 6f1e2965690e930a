/* an_cfix: portable-layer fixes for C/C++/CUDA. The findings come from the file's own tokens (an_c.c), so an edit
 * only ever replaces text spelled in the file: a name inside a macro body is renamed at the macro's definition,
 * and text a macro expansion produces is never touched. */
#include "an_cfix.h"
#include "an_rule.h"
#include <ctype.h>
#include <stdio.h>

static bool is_identifier(const char *s, size_t n) {
    if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return false;
    return true;
}

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
    for (size_t ls = 0; ls < len;) {
        size_t le = ls;
        while (le < len && t[le] != '\n') le++;
        size_t i = ls;
        while (i < le && (t[i] == ' ' || t[i] == '\t')) i++;
        if (i < le && t[i] == '#') {
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
                        if (bn == want_n && !memcmp(b, want, bn)) return false;
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
        ut_buf_printf(&b, "\"%s\"", ly->include);
        *out = (an_edit){rs, re, ut_buf_take(&b)};
        return true;
    }
    uint32_t at = first_include;
    if (at == UINT32_MAX) {
        /* after leading blank lines and comments */
        size_t i = 0;
        for (;;) {
            size_t j = i;
            while (j < len && isspace((unsigned char)t[j])) j++;
            if (j + 1 < len && t[j] == '/' && t[j + 1] == '/') {
                while (j < len && t[j] != '\n') j++;
                i = j < len ? j + 1 : j;
            } else if (j + 1 < len && t[j] == '/' && t[j + 1] == '*') {
                const char *e = strstr(t + j + 2, "*/");
                if (!e) break;
                j = (size_t)(e - t) + 2;
                while (j < len && t[j] != '\n') j++;
                i = j < len ? j + 1 : j;
            } else {
                break;
            }
        }
        at = (uint32_t)i;
    }
    ut_buf_printf(&b, "#include \"%s\"\n", ly->include);
    *out = (an_edit){at, at, ut_buf_take(&b)};
    return true;
}

void an_cfix_generate(const an_fix_options *opt, const an_source *src, an_diag_list *diags) {
    if (!opt || opt->target == AN_TARGET_NONE) return;
    an_edit inc[2];
    int inc_state[2] = {0, 0}; /* 0 not computed, 1 edit, -1 none needed */
    for (size_t i = 0; i < diags->len; i++) {
        an_diag *d = &diags->items[i];
        const an_entry *e = d->entry;
        if (d->fix || !e || !e->replacement || !is_identifier(e->replacement, strlen(e->replacement))) continue;
        if (d->end <= d->start || d->end > src->len || !is_identifier(src->text + d->start, d->end - d->start)) continue;
        layer ly;
        if (!layer_of(opt, d, &ly)) continue;
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
        if (inc_state[k] == 1 && inc[k].start <= ed.start) {
            an_edit ie = {inc[k].start, inc[k].end, ut_strdup(inc[k].text)};
            ut_vec_push(&f->edits, ie);
            ut_vec_push(&f->edits, ed);
        } else {
            ut_vec_push(&f->edits, ed);
            if (inc_state[k] == 1) {
                an_edit ie = {inc[k].start, inc[k].end, ut_strdup(inc[k].text)};
                ut_vec_push(&f->edits, ie);
            }
        }
        d->fix = f;
    }
    for (int k = 0; k < 2; k++)
        if (inc_state[k] == 1) ut_free(inc[k].text);
}
