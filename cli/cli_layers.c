/* cli_layers: the portable C layers (xpuify_gpu.h, xpuify_ccl.h) that fixed C/C++/CUDA files include: where they
 * go, the include path each file gets, and writing each once. Shared by `xpuify fix` and `xpuify verify`. */
#include "analyzer/core/an_target.h"
#include "cli/cli_layers.h"
#include "analyzer/c/an_cfix.h"
#include "analyzer/c/an_ckernel.h"
#include "rewriters/rw_diff.h"
#include "rewriters/rw_project.h"
#include "rewriters/rw_target.h"
#include "rewriters/rw_write.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The portable C layers live in one directory of the project (--layer-dir, default: the first path, or its
 * directory); each file includes them by a path relative to its own directory. */
static void layer_include(const char *layer_dir, const char *file, const char *header, char *buf, size_t sz) {
    char ld[PATH_MAX], fd[PATH_MAX], fdir[PATH_MAX];
    snprintf(fdir, sizeof fdir, "%s", file);
    char *sl = strrchr(fdir, '/');
    if (sl) *sl = 0;
    else snprintf(fdir, sizeof fdir, ".");
    if (!realpath(layer_dir, ld) || !realpath(fdir, fd)) { snprintf(buf, sz, "%s", header); return; }
    size_t common = 0;
    for (size_t i = 0;; i++) {
        if ((ld[i] == '/' || !ld[i]) && (fd[i] == '/' || !fd[i])) common = i;
        if (!ld[i] || !fd[i] || ld[i] != fd[i]) break;
    }
    ut_buf b;
    ut_buf_init(&b);
    for (const char *p = fd + common; *p; p++)
        if (*p == '/') ut_buf_puts(&b, "../");
    if (ld[common] == '/') ut_buf_printf(&b, "%s/", ld + common + 1);
    ut_buf_puts(&b, header);
    snprintf(buf, sz, "%s", b.data);
    ut_buf_free(&b);
}

/* The GPU layer's revision in the text of a layer already written (XPUIFY_GPU_LAYER; 0 when it has none). */
static int layer_revision(const char *text, size_t n) {
    static const char key[] = "#define XPUIFY_GPU_LAYER ";
    const char *p = memmem(text, n, key, sizeof key - 1);
    return p ? atoi(p + sizeof key - 1) : 0;
}

/* A layer the project already has is the user's (never overwritten); one older than this xpuify's lacks what the
 * fixed code may now call (the Level Zero launcher of translated kernels): said once per run. */
static void warn_outdated_layer(const char *path) {
    static bool said;
    size_t tn;
    const char *t = an_template_text(AN_CFIX_GPU_HEADER, &tn);
    int want = t ? layer_revision(t, tn) : 0;
    an_source src;
    char *why = NULL;
    if (said || !want || an_source_load(&src, path, (size_t)4 << 20, &why) != AN_LOAD_OK) {
        ut_free(why);
        return;
    }
    int have = layer_revision(src.text, src.len);
    an_source_free(&src);
    if (have >= want) return;
    said = true;
    fprintf(stderr,
            "xpuify: warning: %s is an older portable layer (revision %d; this xpuify writes %d): kernels translated "
            "now may not launch through it on Level Zero; xpuify never overwrites it: delete it and run `xpuify fix` "
            "again, or merge your edits into the current one\n",
            path, have, want);
}

/* Writes (or, with --diff, shows) a layer header the fixed text includes and the project lacks. */
static bool write_layer(const char *layer_dir, const char *header, bool diff, bool quiet, ut_buf *patch) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", layer_dir, header);
    if (access(path, F_OK) == 0) {
        if (!strcmp(header, AN_CFIX_GPU_HEADER)) warn_outdated_layer(path);
        return true;
    }
    size_t n;
    const char *t = an_template_text(header, &n);
    if (!t) {
        fprintf(stderr, "xpuify: error: the %s template is missing from this build\n", header);
        return false;
    }
    if (diff) {
        rw_diff_new_file(path, t, n, patch);
        return true;
    }
    char *why;
    if (rw_create_atomic(path, t, n, &why) != 0) {
        fprintf(stderr, "xpuify: error: %s: cannot write the portable layer: %s\n", path, why);
        ut_free(why);
        return false;
    }
    if (!quiet) fprintf(stderr, "xpuify: wrote the portable layer %s\n", path);
    return true;
}

void cli_layers_fix_for_file(void *ctx, const char *path, an_fix_options *fo, char *buf, size_t sz) {
    cli_layers *lc = ctx;
    cli_target_fix_for_file(lc->helper, path, fo, buf, sz);
    an_lang lang;
    if (!an_lang_for_path(path, &lang) || lang != AN_LANG_C) return;
    layer_include(lc->layer_dir, path, AN_CFIX_GPU_HEADER, lc->gpu, sizeof lc->gpu);
    layer_include(lc->layer_dir, path, AN_CFIX_CCL_HEADER, lc->ccl, sizeof lc->ccl);
    fo->c_gpu_include = lc->gpu, fo->c_ccl_include = lc->ccl;
}

/* The OpenCL C file of the kernels a fixed file launches through xpu_cl_launch: translated again from the file as
 * it is on disk (not yet written over), written (or shown) beside the layers; an existing one is replaced. */
static bool write_kernels(cli_layers *lc, const char *path, ut_buf *patch) {
    an_source src;
    char *lwhy = NULL;
    if (!lc->cat || an_source_load(&src, path, (size_t)64 << 20, &lwhy) != AN_LOAD_OK) { ut_free(lwhy); return true; }
    char name[512], dest[PATH_MAX + 600];
    an_ckernel_cl_name(path, name, sizeof name);
    snprintf(dest, sizeof dest, "%s/%s", lc->layer_dir, name);
    an_c *c = an_c_new(NULL);
    an_ck_result r;
    bool ok = true;
    if (an_ckernel_translate(c, lc->cat, &src, name, &r) && r.cl) {
        size_t n = strlen(r.cl);
        char *why;
        if (lc->diff) rw_diff_new_file(dest, r.cl, n, patch);
        else if (rw_create_atomic(dest, r.cl, n, &why) != 0 && (ut_free(why), unlink(dest), rw_create_atomic(dest, r.cl, n, &why)) != 0) {
            fprintf(stderr, "xpuify: error: %s: cannot write the translated kernels: %s\n", dest, why);
            ut_free(why);
            ok = false;
        } else if (!lc->quiet) {
            fprintf(stderr, "xpuify: wrote %d translated kernel%s to %s\n", r.translated, r.translated == 1 ? "" : "s", dest);
            if (!lc->spv_noted) { /* once a run: the .spv is a build product, made by the project's build */
                lc->spv_noted = true;
                size_t dl = strlen(dest) - 3; /* dest ends in ".cl" */
                fprintf(stderr, "xpuify: note: the Level Zero backend (XPU_BACKEND_LEVEL_ZERO) loads each such .cl compiled to "
                                "SPIR-V beside it; for this one: " AN_CKERNEL_SPIRV_CMD " (docs/c-kernels.md)\n",
                        dest, (int)dl, dest);
            }
        }
        for (size_t i = 0; i < r.issues.len; i++)
            if (!lc->quiet) fprintf(stderr, "xpuify: %s:%d: kept CUDA-only: %s\n", path, r.issues.items[i].line, r.issues.items[i].what);
        if (r.unchecked) fprintf(stderr, "xpuify: warning: %s was not compiled to check it: %s\n", dest, r.unchecked);
    }
    an_ck_result_free(&r);
    an_c_free(c);
    an_source_free(&src);
    return ok;
}

bool cli_layers_write(void *ctx, const char *path, an_lang lang, const an_fix_options *fo, const char *text,
                         ut_buf *patch) {
    cli_layers *lc = ctx;
    if (lang != AN_LANG_C) return true;
    if (strstr(text, "xpu_cl_launch(\"") && !write_kernels(lc, path, patch)) return false;
    static const char *const layers[2] = {AN_CFIX_GPU_HEADER, AN_CFIX_CCL_HEADER};
    for (int k = 0; k < 2; k++) {
        const char *inc = k ? fo->c_ccl_include : fo->c_gpu_include;
        if (!inc) continue;
        char q[PATH_MAX + 4];
        snprintf(q, sizeof q, "\"%s\"", inc);
        if (lc->done[k] || !strstr(text, q)) continue;
        lc->done[k] = true;
        if (!write_layer(lc->layer_dir, layers[k], lc->diff, lc->quiet, patch)) return false;
    }
    return true;
}

