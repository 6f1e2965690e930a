/* an_guard: whether the code a CUDA availability test guards is device-generic. Rewriting
 * `torch.cuda.is_available()` to a test for any accelerator changes nothing where CUDA is present and makes the
 * guarded code run on XPU and MPS too; that is safe only when that code does nothing CUDA-only. The guarded code
 * is what runs because the test is true: an if's body (an else/elif chain or the rest of the block for a negated
 * test), a conditional expression's arm, the later operands of `and`/`or`, a function or class skipped by
 * `skipIf`/`skipUnless`/`pytest.mark.skipif` on the test (a module or class by `pytestmark = ...`), the code after
 * an early exit (`if not torch.cuda.is_available(): return`, `pytest.skip(...)`, `raise`, `continue`; `assert
 * torch.cuda.is_available()`) with the callers it stops or answers (see after_exit), and the same for each later use
 * of a local (or private attribute) assigned from it. That code must name nothing CUDA-only (torch.cuda, `.cuda()`, a "cuda" or "nccl"
 * string, cuDNN and NVTX beyond harmless flag settings, CUDA-only libraries, names with a cuda word), read no
 * CUDA-only result (compute capability, the device index) and call only what is known: builtins, torch, the
 * standard library and a few device-generic libraries, methods of objects, and functions and classes whose bodies
 * pass the same test: of the same file, or of other modules of the project, found through their imports (absolute,
 * relative, re-exported by a package) and the project model's import roots (an_modfile), read once per file and
 * noted as dependencies of its findings (an_deps). A thing the caller's fixes port in the same pass counts as
 * ported; in another module, CUDA that its own fixes could port only leaves the verdict unproven. */
#ifndef AN_GUARD_H
#define AN_GUARD_H
#include "analyzer/core/an_source.h"
#include "analyzer/python/an_resolve.h"
#include <tree_sitter/api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    AN_GUARD_GENERIC,  /* every guarded thing is device-generic: the rewrite is safe */
    AN_GUARD_UNPROVEN, /* something xpuify cannot see into (an unknown callee, a value it cannot follow) */
    AN_GUARD_CUDA,     /* the guarded code does something CUDA-only: the test must stay a CUDA test */
} an_guard_kind;

typedef struct {
    an_guard_kind kind;
    char *why; /* GENERIC: NULL; otherwise what keeps it so, as a phrase ("calls `flash_attn_func`, ...") */
    bool after_exit; /* why is about the code after an early exit (`if not torch.cuda.is_available(): return`) */
    bool distributed; /* the guarded code runs torch.distributed work on the device (DDP, FSDP, collectives): no
                       * backend carries MPS tensors, so the test must be false there as it was */
    bool kernel; /* CUDA: the guarded code routes CUDA devices to a kernel the project compiles for the CPU and CUDA
                  * only (its own custom operator where setup.py builds a CUDAExtension): CUDA by design */
    /* CUDA by design for what the code says of itself (NULL: no such word; malloc'd): named, a CUDA verdict inside a
     * function or class named for CUDA (its name: `test_cuda_input_roundtrip`, `is_cuda_available`, `info_cuda`);
     * stated, a verdict that is not GENERIC where the test's own gate states CUDA is required (the skip reason, the
     * assert's message, the message of what its early exit raises or skips with: "int8 dynamic quant needs CUDA",
     * "CUDA required for APEX optimizers"), quoted */
    char *named;
    char *stated;
} an_guard_verdict;

/* Frees what a verdict holds and resets it (GENERIC, nothing said). */
void an_guard_verdict_clear(an_guard_verdict *v);

/* Whether the caller's fixes rewrite [s, e) safely in this pass (a ported torch.cuda call, a decided guard). */
typedef bool (*an_guard_ported_fn)(void *ctx, uint32_t s, uint32_t e);

typedef struct an_guard an_guard;

/* src: the whole file; tests: where its CUDA tests to be judged start (n of them). The file is parsed here (the
 * front end may have parsed only regions of it): first only the top-level statements that hold a test or an import,
 * then with the statements that define what a verdict reads beyond them (a function of the file, a method of a class
 * parsed in part), and whole when it reads more (the rest of the module); the verdicts are those over the whole
 * file's tree. */
an_guard *an_guard_new(const an_source *src, const uint32_t *tests, size_t n);
/* The same over a tree of the whole file the caller parsed already (its root) and its scope: neither is copied nor
 * freed, and both must outlive the guard. */
an_guard *an_guard_borrow(const an_source *src, TSNode root, const an_pyscope *scope);
/* The compat helper's module name (xpuify_device): a callee in it is device-generic by construction, not a module
 * of the project to read (NULL: none). */
void an_guard_set_helper(an_guard *g, const char *module);
/* [s, e): the reference to the CUDA test (`torch.cuda.is_available`, the callee of its call). */
void an_guard_judge(an_guard *g, uint32_t s, uint32_t e, an_guard_ported_fn ported, void *pctx, an_guard_verdict *out);
/* The statement that holds [s, e) (a test the guard judged), as the guard's tree holds it whole (a decorated
 * definition with its body, an if statement with its branches): false when there is none. rest: only what the test
 * gates there: the branch of the if or elif clause whose condition holds it, up to the end of the block that holds
 * the statement where that branch is an early exit (`if not torch.cuda.is_available(): return`) or the statement an
 * assert (what the exit protects). */
bool an_guard_holder(an_guard *g, uint32_t s, uint32_t e, bool rest, uint32_t *start, uint32_t *end);
void an_guard_free(an_guard *g);
/* Another module's safe fixes in the run under way: 1 when the run fixes the module at path (its text as the guard
 * read it), with *spans (malloc'd, 2 * *n offsets: [start, end) pairs sorted by start) the safe fixes its own
 * analysis makes; 0 when the run does not fix it; -1 when it is not asked here (the analysis of a module whose fixes
 * another file's guard asked for: no module's fixes count there, whatever the run). */
typedef int (*an_guard_fixes_fn)(const char *path, const char *text, size_t len, uint32_t **spans, size_t *n);
/* Set by the engine for the span of a run over a set of files (NULL: none, the language server's case): a guard's
 * callee in another module of the run counts that module's safe fixes as done. */
void an_guard_set_fixes_of(an_guard_fixes_fn fn);
/* The calling thread analyzes a module whose fixes another file's guard asked for (the engine's): no module's fixes
 * are asked from it. */
void an_guard_nested_thread(void);
#endif
