/* an_dispatch: multi-device dispatches of a Python file that have a CUDA branch and branches for other accelerators
 * (NPU, MLU, MPS, HPU, ROCm, ...) but none for XPU: an if/elif ladder (`if device.type == "cuda": torch.cuda.X()
 * elif device.type == "npu": torch.npu.X()`) or a dictionary keyed by device type (`{"cuda": torch.cuda.X, "npu":
 * torch.npu.X}`). Such code is CUDA-by-design where it stands (its CUDA branch must stay CUDA), and an unfinished
 * port: the way to support Intel GPUs is an XPU branch beside the CUDA one. Computed from the tree-sitter tree. */
#ifndef AN_DISPATCH_H
#define AN_DISPATCH_H
#include "analyzer/python/an_pyregion.h"
#include "util/ut_mem.h"
#include <stdint.h>
#include "analyzer/python/an_pynodes.h"
#include <tree_sitter/api.h>

typedef struct {
    uint32_t test_start, test_end;     /* the CUDA branch's test (the condition; a dictionary's "cuda" key) */
    uint32_t branch_start, branch_end; /* the CUDA branch: its test and body (a dictionary's "cuda" pair) */
    uint32_t call_start, call_end;     /* the first `torch.cuda.NAME` of the branch (0, 0: none; then `.cuda(`) */
    bool dict;                         /* a dictionary keyed by device type */
    char *others;                      /* the other devices the dispatch serves, as the message names them ("NPU") */
} an_dispatch;

typedef UT_VEC(an_dispatch) an_dispatches;

/* Every dispatch of the tree without an XPU branch, in document order. spans: the byte ranges the tree was parsed
 * from (n of them), or none (n 0): the whole file. */
void an_dispatch_collect(an_dispatches *out, TSNode root, const char *src, const an_span *spans, size_t n);
/* The same from the tree's node index (an_pynodes), built once for every collector */
void an_dispatch_collect_nodes(an_dispatches *out, const an_pynodes *nodes, const char *src, const an_span *spans,
                               size_t n);
void an_dispatch_free(an_dispatches *v);
#endif
