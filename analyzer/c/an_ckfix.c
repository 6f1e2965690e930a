/* an_ckfix: the kernel fix of a CUDA file: the translator's host edits (an_ckernel.c: kernels kept for the CUDA
 * backend, launch stubs, launches) as one fix, carried by the first launch of a translated kernel. The OpenCL C
 * file itself is written by `xpuify fix` beside the portable layer (cli_layers.c). */
#include "analyzer/c/an_cfix.h"
#include "analyzer/c/an_ckernel.h"
#include "analyzer/core/an_rule.h"
#include <stdio.h>
#include <string.h>

void an_cfix_kernels(an_c *c, const an_catalog *cat, const an_fix_options *opt, const an_source *src,
                     an_diag_list *diags) {
    if (!opt || opt->target == AN_TARGET_NONE || !memmem(src->text, src->len, "<<<", 3)) return;
    /* only CUDA runtime programs, whose host code moves to the portable layer: a PyTorch extension launches on
     * torch's streams and keeps its kernels (docs/c-kernels.md) */
    if (!memmem(src->text, src->len, "cuda_runtime", 12) && !memmem(src->text, src->len, "xpuify_gpu.h", 12)) return;
    if (memmem(src->text, src->len, "<torch/", 7) || memmem(src->text, src->len, "<ATen/", 6)) return;
    an_diag *carrier = NULL;
    for (size_t i = 0; i < diags->len && !carrier; i++) {
        an_diag *d = &diags->items[i];
        if (!d->fix && d->rule->builtin && !strcmp(d->rule->builtin, "cuda-kernel-launch")) carrier = d;
    }
    if (!carrier) return;
    char cl_name[512];
    an_ckernel_cl_name(src->path ? src->path : "kernels", cl_name, sizeof cl_name);
    an_ck_result r;
    if (!an_ckernel_translate(c, cat, src, cl_name, &r)) return;
    if (r.edits.len) {
        an_fix *f = ut_calloc(1, sizeof *f);
        f->applicability = AN_FIX_SAFE;
        ut_buf t;
        ut_buf_init(&t);
        ut_buf_printf(&t, "translate %d of %d kernel%s to OpenCL C (%s) and launch them through xpu_launch_* stubs",
                      r.translated, r.kernels, r.kernels == 1 ? "" : "s", cl_name);
        f->title = ut_buf_take(&t);
        for (size_t i = 0; i < r.edits.len; i++) {
            ut_vec_push(&f->edits, r.edits.items[i]);
            r.edits.items[i].text = NULL;
        }
        carrier->fix = f;
    }
    an_ck_result_free(&r);
}
