/* an_cfix: fixes of C/C++/CUDA findings: a CUDA runtime or NCCL name whose table row has a portable-layer name
 * (the `portable` column, when it is an identifier) becomes that name, and the file includes the layer header once
 * (in place of its <cuda_runtime.h> / <nccl.h> include, else before its first #include). Kernels and everything
 * without a portable name are left to a person (their findings stay). */
#ifndef AN_CFIX_H
#define AN_CFIX_H
#include "analyzer/core/an_diag.h"

#define AN_CFIX_GPU_HEADER "xpuify_gpu.h"
#define AN_CFIX_CCL_HEADER "xpuify_ccl.h"

void an_cfix_generate(const an_fix_options *opt, const an_source *src, an_diag_list *diags);
/* Where a fix may insert a line of its own (an #include, an #ifndef): at index i (0 <= i <= len), true when a
 * physical line starts at i in code, that is not inside a comment, a string, a character or raw string literal,
 * and not continued from the line above by a backslash-newline. Index len, when the text does not end with a
 * newline: whether "\n" + a line appended at the end starts in code. Heap, len + 1 entries. */
bool *an_cfix_code_lines(const char *text, size_t len);
/* PyTorch C++ extension fixes (an_cextfix.c): `x.is_cuda()` -> `!x.is_cpu()`, CUDA device guards -> c10's, and
 * `kCUDA` given to `.device()`/`.to()` -> the device of the function's first tensor parameter. */
void an_cextfix_generate(const an_fix_options *opt, const an_source *src, an_diag_list *diags);
/* A source of a PyTorch extension's CUDA backend: a file whose own directory is named `cuda` (pytorch_scatter's and
 * pytorch_cluster's `csrc/cuda/`, beside `csrc/cpu/`). Only the CUDA build compiles it: CUDA by design. */
bool an_cext_cuda_backend_source(const char *path);
/* CUDA kernels translated to OpenCL C (an_ckfix.c): one fix, on the first launch of a translated kernel, with the
 * host edits (the kernels kept for the CUDA backend, the xpu_launch_* stubs, the launches). */
#include "analyzer/c/an_c.h"
void an_cfix_kernels(an_c *c, const an_catalog *cat, const an_fix_options *opt, const an_source *src,
                     an_diag_list *diags);
#endif
