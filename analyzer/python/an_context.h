/* an_context: the context facts of a Python file: which scopes are the CUDA backend of a multi-backend design,
 * which code already handles several devices, which names are assignment targets or flag reads, and which CUDA
 * tests are correct guards. Computed once per file from the tree-sitter tree (and the file's path); the front end
 * filters its findings with them, so `check`, `fix` and the LSP see the same facts. */
#ifndef AN_CONTEXT_H
#define AN_CONTEXT_H
#include "util/ut_mem.h"
#include <stdbool.h>
#include <stdint.h>
#include "analyzer/python/an_pynodes.h"
#include <tree_sitter/api.h>

typedef enum {
    /* a class, function or module that is the CUDA member of a family of device backends: nothing inside is
     * rewritten (CUDAAccelerator next to MPSAccelerator, @register("cuda"), accelerators/cuda.py) */
    AN_CTX_CUDA_BACKEND,
    /* code that already handles several devices: a dispatch table keyed by device type, sibling probes in one
     * expression (`torch.cuda.device_count() > 1 or torch.xpu.device_count() > 1`) */
    AN_CTX_MULTI_DEVICE,
    /* code that runs only on CUDA: the operand after `DEV == "cuda" and`, the rest of a block after the import of an
     * NVIDIA-only library (`a if x.is_cuda else b` is not: b must work on XPU too; nor the code after
     * `if not torch.cuda.is_available(): return`, CUDA-only by its own test, which is a guard to port) */
    AN_CTX_CUDA_ONLY,
    /* a CUDA test that is right as it is: `if not x.is_cuda: return fallback(x)`, `dist.get_backend() == "nccl"` */
    AN_CTX_CORRECT_GUARD,
    /* what an assignment or setattr sets (`torch.cuda.is_available = ...`): a finding starting there is no use */
    AN_CTX_ASSIGN_TARGET,
    /* where a value is only read: an assert, a comparison, an f-string's interpolation */
    AN_CTX_READ,
    /* the XPU member of a family of device backends (XPUAccelerator next to CUDAAccelerator): its torch.xpu calls
     * are XPU-only by design */
    AN_CTX_XPU_BACKEND,
    /* the condition of an if whose branch reads CUDA-only results (`get_device_properties(0).major`): a guard that
     * must stay a CUDA test */
    AN_CTX_RESULT_GUARD,
    /* a CUDA setting whose XPU or device-generic counterpart the same block also sets: `CUDA_VISIBLE_DEVICES` next
     * to `ZE_AFFINITY_MASK`, `cudnn.deterministic = True` next to `torch.use_deterministic_algorithms(True)`, a
     * TF32 flag next to `torch.set_float32_matmul_precision(...)`: the advice of its rule is already followed */
    AN_CTX_COUNTERPART,
    /* a value that is only described: the value of a dictionary pair or of a subscript assignment (`env["cuda"] =
     * torch.version.cuda`), an argument of print or of a logger's method, an f-string's interpolation */
    AN_CTX_REPORT,
} an_ctx_kind;
#define AN_CTX_NKINDS (AN_CTX_REPORT + 1)

typedef struct {
    an_ctx_kind kind;
    uint32_t start, end;           /* the byte range the fact covers */
    uint32_t name_start, name_end; /* AN_CTX_CUDA_BACKEND: the class or function name (0, 0: a module) */
    char *name;                    /* AN_CTX_CUDA_BACKEND: the scope's name ("CUDAAccelerator", "cuda.py") */
    char *why;                     /* AN_CTX_CUDA_BACKEND: what makes it one ("a subclass of `Accelerator`"); the
                                    * design kinds (CORRECT_GUARD, CUDA_ONLY, MULTI_DEVICE, COUNTERPART): why the code
                                    * is CUDA by design, a phrase ("routes CUDA devices to a CUDA kernel ..."), or NULL */
    char *xpu_sibling;             /* AN_CTX_CUDA_BACKEND: the XPU sibling it has, or NULL */
} an_ctx_fact;

typedef UT_VEC(an_ctx_fact) an_ctx_facts;

typedef struct {
    /* per kind; after collection every kind but AN_CTX_CUDA_BACKEND keeps its outermost facts only, sorted by
     * start (a lookup is a binary search: files with thousands of findings and facts stay n log n) */
    an_ctx_facts kinds[AN_CTX_NKINDS];
} an_pycontext;

/* Walks the tree (the whole of it: the facts of the region the caller reports depend on code around it). path: the
 * file's path (a module's place in an accelerators/ or backends/ package), or NULL. */
void an_pycontext_collect(an_pycontext *cx, TSNode root, const char *src, const char *path);
/* The same from the tree's node index (an_pynodes), built once for every collector */
void an_pycontext_collect_nodes(an_pycontext *cx, const an_pynodes *nodes, const char *src, const char *path);
void an_pycontext_free(an_pycontext *cx);
/* A fact of that kind whose range holds [s, e) (of AN_CTX_CUDA_BACKEND: the innermost), or NULL. */
const an_ctx_fact *an_pycontext_find(const an_pycontext *cx, an_ctx_kind kind, uint32_t s, uint32_t e);
/* A name that stands for CUDA as a word of it: CUDAAccelerator, CudaBackend, AcceleratorCUDA, cuda_backend. When
 * it does, *tok and *toklen give where the word is. */
bool an_ctx_named_for_cuda(const char *s, size_t n, size_t *tok);
/* Code that uses what only CUDA devices have, also once its calls are ported to the helper or torch.accelerator:
 * compute capability fields, the current device index (an int: CUDA wherever it is used as a device), cuDNN, NVTX. */
bool an_ctx_uses_cuda_only_results(const char *s, size_t n);
/* How a block's last statement (comments aside) leaves it: `return`; `raise`, `pytest.skip(...)`,
 * `self.skipTest(...)`, `sys.exit(...)`, `os._exit(...)` (an exception or an exit that reaches the callers); `continue`;
 * `break`. An if whose body leaves this way is an early exit: the code after it runs only where its test let it. */
typedef enum { AN_CTX_EXIT_NONE, AN_CTX_EXIT_RETURN, AN_CTX_EXIT_RAISE, AN_CTX_EXIT_CONTINUE, AN_CTX_EXIT_BREAK } an_ctx_exit;
an_ctx_exit an_ctx_block_exit(TSNode block, const char *src);
/* A module of a library that runs on NVIDIA GPUs only (tensorrt, transformer_engine, pycuda, ...; `s` is a dotted
 * name): code after its import, in the import's block, is CUDA-only by design. */
bool an_ctx_nvidia_only_module(const char *s, size_t n);
#endif
