/* an_ckernel: CUDA kernels translated to OpenCL C 1.2 on libclang's AST (an_ckernel.c), and the host edits that
 * go with them: each translated kernel (and the __device__ functions it calls) is kept for the CUDA backend inside
 * `#if defined(XPU_BACKEND_CUDA)`, followed by a launch stub `xpu_launch_<kernel>` that calls the original kernel
 * with the CUDA backend and enqueues the translated one (xpu_cl_launch) with the OpenCL backend; each launch
 * `k<<<grid, block, shmem, stream>>>(args)` of such a kernel becomes a call of its stub. A kernel with a construct
 * the translator does not know stays CUDA-only, and each such construct is an issue (its line and what it is). */
#ifndef AN_CKERNEL_H
#define AN_CKERNEL_H
#include "analyzer/c/an_c.h"

typedef struct {
    int line;
    uint32_t off;    /* where the construct starts in the file */
    char *what;      /* the construct, in words */
    char *kernel;    /* the kernel it keeps CUDA-only */
} an_ck_issue;

typedef struct {
    char *cl;                    /* the OpenCL C file for the translated kernels; NULL when none was translated */
    UT_VEC(an_edit) edits;       /* the host file's edits (sorted, disjoint); empty when none was translated */
    UT_VEC(an_ck_issue) issues;  /* constructs that kept a kernel CUDA-only */
    UT_VEC(char *) kept;         /* the names of the kernels that stay CUDA-only (parallel to nothing: one each) */
    int kernels, translated;     /* __global__ definitions seen, and translated */
    char *unchecked;             /* why cl could not be compiled to check it (NULL: it was, and it compiles) */
} an_ck_result;

/* The name of the OpenCL C file for a source path (its base name + ".cl") into buf. */
void an_ckernel_cl_name(const char *path, char *buf, size_t sz);
/* The command that compiles a written <x>.cl to the <x>.spv the Level Zero backend loads (a printf format: the .cl
 * path, then its length less ".cl" and the path again): clang 14's OpenCL C 1.2 front end to LLVM bitcode for
 * spir64, then Khronos' LLVM-to-SPIR-V translator (Debian: clang-14, llvm-spirv-14). -O0: at -O2 llvm-spirv 14
 * writes loop blocks before their dominators and spirv-val rejects the module. */
#define AN_CKERNEL_SPIRV_CMD                                                                                          \
    "clang-14 -cc1 -triple spir64-unknown-unknown -cl-std=CL1.2 -finclude-default-header -O0 -emit-llvm-bc %s -o - "   \
    "| llvm-spirv-14 - -o %.*s.spv"
/* Translates the kernels of one file; cl_name is what the stubs load at run time. False when the file could not be
 * parsed (then out is empty). */
bool an_ckernel_translate(an_c *c, const an_catalog *cat, const an_source *src, const char *cl_name,
                          an_ck_result *out);
/* The same on a translation unit the caller parsed (an_c_parse_tu's arguments: the C front end's own parse). */
bool an_ckernel_translate_tu(void *tu, void *file, const an_source *src, const char *cl_name, an_ck_result *out);
/* Whether the kernels of a file are the translator's: it defines a __global__ function and is not a PyTorch
 * extension (those launch on torch's streams and keep their kernels: docs/c-kernels.md). */
bool an_ckernel_applies(const an_source *src);
void an_ck_result_free(an_ck_result *r);
#endif
